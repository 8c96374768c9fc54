import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { commandPatternMatches, commandPatternMayMatch } from "../../../policy/config/rules.ts";

const word = fc.constantFrom("git", "push", "rm", "-rf", "/", "--force", "origin", "main", "a b", "*", "x");
const token = fc.constantFrom("git", "push", "rm", "-rf", "/", "--force", "origin", "main", "*", "?", "pu*", "[gp]*");

describe("command patterns", () => {
  test("a plain pattern matches the command's first words, token by token", { timeout: 10_000 }, () => {
    assert.equal(commandPatternMatches({ pattern: "git push", glob: false }, ["git", "push", "origin"]), true);
    assert.equal(commandPatternMatches({ pattern: "git push", glob: false }, ["git", "pull"]), false);
    assert.equal(commandPatternMatches({ pattern: "git push", glob: false }, ["git"]), false);
    assert.equal(commandPatternMatches({ pattern: "git", glob: false }, []), false);
  });

  test("a glob pattern is matched over the joined words, so `*` reaches across them", { timeout: 10_000 }, () => {
    assert.equal(commandPatternMatches({ pattern: "rm *-rf*", glob: true }, ["rm", "-v", "-rf", "/"]), true);
    assert.equal(commandPatternMatches({ pattern: "rm -r?", glob: true }, ["rm", "-rf"]), true);
    assert.equal(commandPatternMatches({ pattern: "rm -r?", glob: true }, ["rm", "-rf", "x"]), false);
  });

  // The judge asks when a command's next word is known only at run time and the rule may still match it; a rule
  // that matches a command must never be ruled out from any of its known prefixes. Seeded: about one generated
  // command in thirty matches its rule, so an unseeded run could fall under the floor below by chance.
  test("no command a rule matches is ruled out from a known prefix of it", { timeout: 60_000 }, () => {
    let matched = 0;
    fc.assert(
      fc.property(
        fc.array(token, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(word, { minLength: 1, maxLength: 6 }),
        (tokens, glob, words) => {
          const rule = { pattern: tokens.join(" "), glob };
          if (!commandPatternMatches(rule, words)) return;
          matched++;
          for (let known = 0; known < words.length; known++) {
            assert.equal(commandPatternMayMatch(rule, words.slice(0, known)), true, `${rule.pattern} / ${known}`);
          }
        },
      ),
      { numRuns: 12_000, seed: 20261202 },
    );
    console.log(`command patterns: ${matched} of 12,000 generated commands matched their rule`);
    assert.ok(matched > 100, `only ${matched} generated commands matched their rule`);
  });
});
