// Blanks before a closing double quote: tree-sitter-bash folds them into the
// closing quote's token, and the word's value lost them (`a" "b` read as `ab`,
// `sh -c ""git" "push" origin"` as `gitpush origin`), so that a deny rule or
// the allowlist judged other words than bash runs. Each case against bash.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { analyzeBash } from "../../../policy/shell/_tree.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const CASES = [
  `" "`,
  `a" "b`,
  `"" " "`,
  `a"  "b`,
  `" x "`,
  `"a\t"`,
  `""git" "push" origin"`,
  `" \\" "`,
  `"x"" "`,
  `"a b  "c`,
  `'x'" "'y'`,
];

test("blanks before a closing quote are part of the word, as bash reads it", {
  timeout: 60_000,
  skip: DIFFERENTIAL_DENO_ONLY,
}, async () => {
  for (const words of CASES) {
    const line = `printf '%s\\0' ${words}`;
    const analysis = await analyzeBash(line);
    const ours = analysis.commands[0].words.slice(2).map((word) => word.value);
    const bash = execFileSync("bash", ["-c", line], { encoding: "utf8" }).split("\0").slice(0, -1);
    assert.deepEqual(ours, bash, line);
  }
});
