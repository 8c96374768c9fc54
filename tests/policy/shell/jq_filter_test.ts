// The jq reader: filters that only transform their input run, the
// environment and modules ask, and the files jq reads (inputs, --rawfile,
// --slurpfile) are recorded; checked through checkCommand and against jq.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { jqCommandProblem, jqFilterProblem } from "../../../policy/shell/_jq_filter.ts";
import type { PathOperand } from "../../../policy/shell/_path_operands.ts";
import type { BashWord } from "../../../policy/shell/_tree.ts";

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
});
