// The jq reader: filters that only transform their input run, the
// environment and modules ask, and the files jq reads (inputs, --rawfile,
// --slurpfile) are recorded; checked through checkCommand and against jq.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import process from "node:process";
import fc from "fast-check";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";
import { jqCommandProblem, jqFilterProblem } from "../../../policy/shell/_jq_filter.ts";
import type { PathOperand } from "../../../policy/shell/_path_operands.ts";
import type { BashWord } from "../../../policy/shell/_tree.ts";

const SEED = 20261201;

const word = (value: string): BashWord => ({ text: `'${value}'`, value, mayBeOption: value.startsWith("-") });

describe("jq filters", { timeout: 30_000 }, () => {
  test(
    "filters that transform their input run; the environment, modules and file names ask",
    { timeout: 30_000 },
    () => {
      for (
        const filter of [
          ".name",
          ".[] | {a: .b}",
          ".env",
          "$__loc__",
          "[inputs]",
          "map(select(.x > 1))",
        ]
      ) {
        assert.equal(jqFilterProblem(filter), undefined, filter);
      }
      for (
        const filter of [
          "env",
          "$ENV.HOME",
          "env | keys",
          "input_filename",
          '"\\(env)"',
          'import "x" as x; .',
          'include "x"; .',
          "modulemeta",
        ]
      ) {
        assert.ok(jqFilterProblem(filter) !== undefined, filter);
      }
    },
  );

  test(
    "the files jq reads are recorded, and options that load code or change the operands ask",
    { timeout: 30_000 },
    () => {
      const files: PathOperand[] = [];
      const line = [
        "-r",
        "--arg",
        "n",
        "v",
        "--rawfile",
        "t",
        "/etc/hosts",
        "--slurpfile",
        "s",
        "s.json",
        ".a",
        "a.json",
        "b.json",
      ];
      assert.equal(jqCommandProblem(line.map(word), files), undefined);
      assert.deepEqual(files.map((file) => [file.value, file.origin]), [
        ["/etc/hosts", "jq --rawfile"],
        ["s.json", "jq --slurpfile"],
        ["a.json", "jq input file"],
        ["b.json", "jq input file"],
      ]);
      for (
        const args of [
          ["-f", "p.jq", "a.json"],
          ["--from-file", "p.jq"],
          ["-L", "lib", "."],
          ["--args", ".", "x"],
          ["--jsonargs", ".", "1"],
          ["--run-tests", "t"],
          ["-Z", "."],
        ]
      ) {
        assert.ok(jqCommandProblem(args.map(word)) !== undefined, args.join(" "));
      }
      const fromFile: PathOperand[] = [];
      jqCommandProblem(["-nf", "p.jq", "a.json"].map(word), fromFile);
      assert.deepEqual(fromFile.map((file) => file.value), ["p.jq", "a.json"]);
    },
  );

  test("the installed jq reads these options as the reader does", { timeout: 30_000 }, (t) => {
    if (spawnSync("jq", ["--version"]).status !== 0) return t.skip("jq is not installed");
    // `--arg` takes two words: the filter is `$n`, not `v`.
    const run = spawnSync("jq", ["-nr", "--arg", "n", "v", "$n"], { encoding: "utf8" });
    assert.equal(run.stdout, "v\n");
    // With -f, the first operand is the filter's file, not the filter.
    const fromFile = spawnSync("jq", ["-n", "-f", "/dev/null"], { encoding: "utf8" });
    assert.equal(fromFile.status, 0, fromFile.stderr);
  });

  // jq 1.6 reads `'$' IDENT`: blanks and comments may stand between `$` and the name.
  const ENV_SPELLINGS = [
    "$ ENV.X",
    "$\tENV.X",
    "$\nENV.X",
    "$#c\nENV.X",
    "$ #a\n #b\n ENV.X",
    "$ # a \\\nENV.X",
    "$#a\\\\\nENV.X",
    '"\\($ ENV.X)"',
    ". as $x | $  ENV | .X",
  ];

  test("every spelling of $ENV with blanks or comments after the `$` asks", { timeout: 30_000 }, () => {
    for (const filter of [...ENV_SPELLINGS, "$ __prog_args"]) {
      assert.ok(jqFilterProblem(filter) !== undefined, JSON.stringify(filter));
    }
    // A comment that jq 1.7.1 continues past a newline, but 1.6 does not, is read both ways.
    assert.ok(jqFilterProblem("$ # a \\\n .y | env") !== undefined);
    // `$__loc__` names only the filter's own line; another variable that starts with ENV is not `$ENV`.
    for (const filter of ["$__loc__", "$ __loc__", ". as $x | $x", ". as $ENVX | $ENVX"]) {
      assert.equal(jqFilterProblem(filter), undefined, JSON.stringify(filter));
    }
    // Comments are read as text too: asking there costs little, and comments end differently across versions.
    assert.ok(jqFilterProblem("# $ENV\n.") !== undefined);
  });

  test("the installed jq reads the environment with each of those spellings", { timeout: 30_000 }, (t) => {
    if (spawnSync("jq", ["--version"]).status !== 0) return t.skip("jq is not installed");
    for (const filter of ENV_SPELLINGS) {
      const run = spawnSync("jq", ["-nr", filter], { encoding: "utf8", env: { ...process.env, X: "LEAKED" } });
      assert.equal(run.stdout, "LEAKED\n", `${JSON.stringify(filter)}: ${run.stderr}`);
    }
  });

  test(`a filter the installed jq runs to print the environment always asks (seed ${SEED})`, {
    timeout: 120_000,
    skip: DIFFERENTIAL_DENO_ONLY,
  }, (t) => {
    if (spawnSync("jq", ["--version"]).status !== 0) return t.skip("jq is not installed");
    // Filters built around `$`, a gap of blanks and comments (some continued with `\\`), and a name; and random ones.
    const gap = fc.array(fc.constantFrom(" ", "\t", "\n", "#c\n", "#c \\\n", "# $x\n"), { maxLength: 3 });
    const around = fc.constantFrom<[string, string]>(
      ["", ""],
      ["[", "][0]"],
      ['"\\(', ')"'],
      ["(", ")"],
      [". as $v | ", ""],
      ["def f: 1; ", ""],
      ["null | ", ""],
    );
    const core = fc.oneof(
      fc.tuple(gap, fc.constantFrom("ENV.X", "ENV | .X", "env.X", "__loc__", "v")).map(([blanks, name]) =>
        `$${blanks.join("")}${name}`
      ),
      fc.array(fc.constantFrom("$", " ", "#c\n", "ENV", "env", ".X", "|", ".", "\\", "\n"), { maxLength: 6 })
        .map((pieces) => pieces.join("")),
    );
    const filter = fc.tuple(around, core).map(([[before, after], middle]) => `${before}${middle}${after}`);
    let leaks = 0;
    fc.assert(
      fc.property(filter, (text) => {
        const run = spawnSync("jq", ["-nr", text], {
          encoding: "utf8",
          env: { ...process.env, X: "LEAKED" },
          timeout: 60_000,
        });
        if (!run.stdout.includes("LEAKED")) return;
        leaks++;
        assert.ok(jqFilterProblem(text) !== undefined, `${JSON.stringify(text)} printed the environment`);
      }),
      { seed: SEED, numRuns: 250 },
    );
    assert.ok(leaks >= 30, `only ${leaks} filters printed the environment, too few to tell`);
  });
});
