// Word values against bash: for generated words (quotes, escapes, `$'...'`,
// continuations, characters next to quotes), whenever the analysis says it
// knows a word's value before the command runs, bash must pass exactly that
// value (and as many words) to the command. The flag rules and the allowlist
// judge these values, so a wrong one is a bypass: `find . $'-'\delete` was
// two words for the parser and `-delete` for bash.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { analyzeBash } from "../../../policy/shell/_tree.ts";
import { seededRandom } from "./_random.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const sandboxed = spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-all", "/bin/true"]).status === 0;
const skip = DIFFERENTIAL_DENO_ONLY || (sandboxed ? false : "needs bubblewrap");

const PIECES = [
  "a",
  "-",
  "--",
  "x=y",
  "\\",
  "\\\\",
  "\\n",
  "\\\n",
  "'a b'",
  "'\\'",
  '"a"',
  '"\\$"',
  '"\\""',
  '"\\\\"',
  '"\\a"',
  '"\\\n"',
  '"\n"',
  "$'\\x41'",
  "$'\\101'",
  "$'\\u00e9'",
  "$'\\cA'",
  "$'\\''",
  "$'\\\"'",
  "$'\\e'",
  "$'\\z'",
  "$'a\\0b'",
  "$'\\x4'",
  "$'\\x4g'",
  "$'\\777'",
  "$'\\c?'",
  "$'\\c\\\\'",
  "$'\\\\'",
  "#",
  "=",
  "%",
  "@",
  ":",
  "é",
  '"é"',
  "\\ ",
  "\\'",
  '\\"',
  "\\#",
  "\\~",
  "\\*",
  "\\{",
  "\\}",
  "'\n'",
  "\\$",
  '"$"',
  "$",
  '"\'"',
  "'\"'",
  "\\;",
  "\\|",
  "\\&",
  "\\<",
  "\\(",
  '"\\\'"',
  '"\\`"',
  "''",
  '""',
  "\\!",
  "!",
  "]",
  "\\[",
  "$'\\E'",
  "$'\\x'",
  "$'\\c'",
];

const MARKER = "<<end of line>>";

/** What bash passes to `printf`, one string per line run. */
function bashArguments(lines: string[]): string[] {
  // Each line prints its arguments NUL-separated, then a marker no argument holds.
  const script = lines.map((line) => `${line}\n\nprintf '${MARKER}'\n`).join("");
  const result = spawnSync(
    "bwrap",
    ["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "/usr/bin/env", "-i", "/bin/bash", "-c", script],
    { encoding: "latin1", timeout: 60_000 },
  );
  return result.stdout.split(MARKER).slice(0, lines.length);
}

describe("word values", { skip }, () => {
  test("every value the analysis knows is the value bash passes", { timeout: 60_000 }, async () => {
    const seed = 20261201;
    const next = seededRandom(seed);
    const lines: string[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      let word = "";
      for (let j = 0, count = 1 + Math.floor(next() * 3); j < count; j++) {
        word += PIECES[Math.floor(next() * PIECES.length)];
      }
      const line = `printf '%s\\0' ${word}`;
      const analysis = await analyzeBash(line);
      if (!analysis.understood || analysis.problems.length > 0 || analysis.commands.length !== 1) continue;
      const words = analysis.commands[0].words.slice(2);
      if (words.length === 0 || words.some((w) => w.value === undefined)) continue;
      lines.push(line);
      // latin1 on both sides: bash's bytes, the analysis's UTF-8.
      expected.push(String.fromCharCode(...new TextEncoder().encode(words.map((w) => `${w.value}\0`).join(""))));
    }
    assert.ok(lines.length > 1000, `only ${lines.length} words compared (seed ${seed})`);
    const actual = bashArguments(lines);
    const wrong = lines.flatMap((line, i) =>
      actual[i] === expected[i] ? [] : [`${line} => ${JSON.stringify(actual[i])} not ${JSON.stringify(expected[i])}`]
    ).slice(0, 5);
    assert.deepEqual(wrong, [], `seed ${seed}: bash passes other words than the analysis says`);
  });
});
