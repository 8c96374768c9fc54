import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { commandPatternMatches, commandPatternMayMatch } from "../../../policy/config/rules.ts";

const word = fc.constantFrom("git", "push", "rm", "-rf", "/", "--force", "origin", "main", "a b", "*", "x");
const token = fc.constantFrom("git", "push", "rm", "-rf", "/", "--force", "origin", "main", "*", "?", "pu*", "[gp]*");

describe("command patterns", () => {
  test("a plain pattern matches the command's first words, token by token", { timeout: 60_000 }, () => {
    assert.equal(commandPatternMatches({ pattern: "git push", glob: false }, ["git", "push", "origin"]), true);
    assert.equal(commandPatternMatches({ pattern: "git push", glob: false }, ["git", "pull"]), false);
    assert.equal(commandPatternMatches({ pattern: "git push", glob: false }, ["git"]), false);
    assert.equal(commandPatternMatches({ pattern: "git", glob: false }, []), false);
  });

  test("a glob pattern is matched over the joined words, so `*` reaches across them", { timeout: 60_000 }, () => {
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
  test("a glob rule is matched in linear time, as the expression it replaced matched", { timeout: 60_000 }, () => {
    // `*git*push*--force*` as a regular expression of `[^]*` took 95 s against a line of 21,000 characters.
    const rule = { pattern: "*git*push*--force*", glob: true };
    const started = performance.now();
    assert.equal(commandPatternMatches(rule, ["echo", "gitpush".repeat(14_000)]), false);
    assert.ok(performance.now() - started < 5_000, `took ${performance.now() - started} ms`);
    assert.equal(commandPatternMatches(rule, ["x", "git", "y", "push", "--force"]), true);
    // The expression the rules were matched with before, on lines short enough for it: the same answers.
    const expression = (pattern: string) => {
      let out = "";
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === "*") out += "[^]*";
        else if (c === "?") out += "[^]";
        else if (c === "[" && pattern.indexOf("]", i + 2) >= 0) {
          const end = pattern.indexOf("]", i + 2);
          let body = pattern.slice(i + 1, end);
          const negated = body.startsWith("!") || body.startsWith("^");
          if (negated) body = body.slice(1);
          out += `[${negated ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
          i = end;
        } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      }
      return new RegExp(`^${out}$`, "u");
    };
    const piece = fc.constantFrom("*", "?", "a", "b", " ", "[ab]", "[!a]", "[a-c]", "[^b]", "[", "]", "-", "ä", "😀");
    const letter = fc.constantFrom("a", "b", "c", " ", "-", "[", "]", "ä", "😀");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.array(letter, { minLength: 1, maxLength: 10 }), (p, l) => {
        const pattern = p.join("").trim().split(/\s+/).join(" ");
        if (pattern === "") return;
        const line = l.join("");
        let before: RegExp;
        try {
          before = expression(pattern);
        } catch {
          return; // A range out of order (`[*- ]`) made the expression throw: the rule matched nothing.
        }
        assert.equal(
          commandPatternMatches({ pattern, glob: true }, [line]),
          before.test(line),
          `${pattern} against ${JSON.stringify(line)}`,
        );
      }),
      { seed: 20261206, numRuns: 20_000 },
    );
  });
});
