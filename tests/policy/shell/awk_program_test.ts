// The awk reader against the installed gawk: gawk --sandbox refuses, when
// they run, exactly the things that run commands or open other files; every
// generated program the reader finds harmless runs under --sandbox as it runs
// without it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import fc from "fast-check";
import { awkCommandProblem, awkProgramProblem } from "../../../policy/shell/_awk_program.ts";
import type { PathOperand } from "../../../policy/shell/_path_operands.ts";
import type { BashWord } from "../../../policy/shell/_tree.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const SEED = Number(process.env.TEST_SEED ?? 20261201);
const RUNS = Number(process.env.AWK_PROGRAM_RUNS ?? 300);
const word = (value: string): BashWord => ({ text: `'${value}'`, value, mayBeOption: value.startsWith("-") });

describe("awk programs", { timeout: 120_000 }, () => {
  test("everyday programs run; commands, pipes, other files and redirections ask", { timeout: 120_000 }, () => {
    for (
      const program of [
        "{print $1}",
        "$3 > 100 {print $1}",
        "NR>1",
        "{ print (a > b) }",
        "{ s += $2 } END { print s / NR / 2 }",
        "/a|b/ { n++ } END { print n }",
        '{ print "system | getline > x" }',
        "{ while ((getline line) > 0) n++ }",
        'BEGIN { FS = ":" } { print $1, length($0) }',
        "{ close(x); fflush() }",
      ]
    ) {
      assert.equal(awkProgramProblem(program), undefined, program);
    }
    for (
      const program of [
        'BEGIN{system("rm x")}',
        "BEGIN { system (x) }",
        '{ print > "f" }',
        '{ print $1 >> "f" }',
        '{ printf("%s", $1) > "f" }',
        '{ print | "sh" }',
        '{ "id" | getline x }',
        '{ getline line < "/etc/passwd" }',
        '{ print |& "cmd" }',
        'BEGIN{f="sys" "tem"; @f("id")}',
        '@include "x.awk"',
        'BEGIN { ARGV[1] = "/etc/shadow"; ARGC = 2 }',
        "/[/]/ { print }",
        '{ print "unterminated }',
      ]
    ) {
      assert.ok(awkProgramProblem(program) !== undefined, program);
    }
  });

  test("operands are input files, except assignments; -f records its file", { timeout: 120_000 }, () => {
    const files: PathOperand[] = [];
    assert.equal(
      awkCommandProblem(["-F:", "{print $1}", "a.txt", "n=1", "/etc/passwd"].map(word), "awk", files),
      undefined,
    );
    assert.deepEqual(files.map((file) => file.value), ["a.txt", "/etc/passwd"]);
    const fromFile: PathOperand[] = [];
    assert.match(awkCommandProblem(["-f", "prog.awk", "a.txt"].map(word), "awk", fromFile) ?? "", /loads awk code/);
    assert.deepEqual(fromFile.map((file) => file.value), ["prog.awk", "a.txt"]);
    for (const line of [["-e", "x"], ["-i", "x.awk"], ["-l", "x"], ["-E", "x.awk"], ["--exec", "x"], ["-W", "exec"]]) {
      assert.ok(awkCommandProblem(line.map(word), "gawk") !== undefined, line.join(" "));
    }
  });

  test(`${RUNS} generated programs: each one read as harmless runs under gawk --sandbox (seed ${SEED})`, {
    timeout: 120_000,
    skip: DIFFERENTIAL_DENO_ONLY,
  }, (t) => {
    if (spawnSync("gawk", ["--version"]).status !== 0) return t.skip("gawk is not installed");
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "awk-program-"));
    const statement = fc.constantFrom(
      "print 1",
      "print (1 > 2)",
      "x = 4 / 2 / 1",
      'if ("a" ~ /b|c/) n++',
      'print "system(1) | getline"',
      "getline",
      "close(x)",
      'y = length("ab")',
      'system("true")',
      'print "x" > "out"',
      'printf("%s", 1) >> "out"',
      '"true" | getline v',
      'getline v < "in"',
      'print 1 | "cat"',
      'ARGV[1] = "in"; ARGC = 2',
      'print 1 > "/dev/null"',
    );
    const program = fc.array(statement, { minLength: 1, maxLength: 4 }).map((parts) => `BEGIN { ${parts.join("; ")} }`);
    fs.writeFileSync(path.join(cwd, "in"), "x\n");
    let harmless = 0;
    try {
      fc.assert(
        fc.property(program, (text) => {
          const run = (sandbox: boolean) =>
            spawnSync("gawk", [...(sandbox ? ["--sandbox"] : []), text], {
              cwd,
              input: "",
              encoding: "utf8",
              timeout: 5000,
            });
          const problem = awkProgramProblem(text);
          if (problem !== undefined) return;
          harmless++;
          const sandboxed = run(true);
          assert.ok(
            !/sandbox/.test(sandboxed.stderr),
            `${text} was read as harmless; gawk --sandbox: ${sandboxed.stderr}`,
          );
        }),
        { seed: SEED, numRuns: RUNS },
      );
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
    console.log(`awk programs: ${RUNS} generated, ${harmless} read as harmless`);
    assert.ok(harmless >= RUNS / 20, `only ${harmless} programs read as harmless`);
  });
});
