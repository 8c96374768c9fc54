// The bounded pass of the grammar fuzzer (the long pass is
// `scripts/oracle.ts --fuzz N`): lines from the bash grammar, judged by
// checkCommand with its default options, every allowed one run for real in a
// sandbox under strace. Any program, write or connect the checker did not
// account for fails the test with the shrunk line and its seed.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import fc from "fast-check";
import { ExecTracer, oracleUnavailable } from "./_exec_trace.ts";
import { formatFuzzReport, fuzz, kindOf } from "./_fuzz.ts";
import { bashLine } from "./_grammar.ts";
import { compareRun, judgeCommand } from "./_oracle.ts";
import { FUZZ_REGRESSIONS } from "./_corpus.ts";
import { checkCommand, type CommandCheck } from "../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../policy/shell/allowlist.ts";

// A fixed seed keeps CI reproducible; ORACLE_FUZZ_SEED explores others, ORACLE_FUZZ_RUNS runs more.
const SEED = Number(process.env.ORACLE_FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.ORACLE_FUZZ_RUNS ?? 1200);

let tracer: ExecTracer | undefined;
const skip = oracleUnavailable();
before(async () => {
  if (skip === undefined) tracer = await ExecTracer.create();
});
after(() => tracer?.dispose());

describe("grammar fuzzer", () => {
  test(
    "the grammar reaches every construct it claims, and a fair share of its lines are allowed",
    { timeout: 240_000 },
    async () => {
      const lines = fc.sample(bashLine, { seed: SEED, numRuns: 4000 });
      const text = lines.join("\n");
      for (
        const construct of [
          "{ ",
          "( ",
          "if ",
          "while ",
          "until ",
          "for f in",
          "for ((",
          "case ",
          "select ",
          "f() {",
          "function f",
          "[[ ",
          "(( ",
          "coproc ",
          "[ ",
          "test ",
          "$((",
          "${x:-",
          "${HOME/",
          "${!",
          "${#",
          "$(",
          "`",
          "<(",
          ">(",
          "{a,b}",
          "~",
          "*",
          "@(",
          "'",
          '"',
          "$'",
          '$"',
          "\\",
          ">|",
          "<>",
          "&>",
          "&>>",
          ">&",
          "<&",
          "{fd}>",
          "<<EOF",
          "<<'EOF'",
          "<<-EOF",
          "<<<",
          "#",
          "\\\n",
          "! ",
          "time ",
          " & ",
          ";;",
          "x=1 ",
          "git stash",
          "sed -n",
          "-o out.txt",
          "deno test",
          "-rf",
          "--output=x",
          "sed -e",
          "awk '",
          "jq ",
          "find -L",
          "-newer",
          "git branch --",
          "git -C",
          "/srv/outside/secret",
          "../../srv/outside",
        ]
      ) {
        assert.ok(text.includes(construct), `no generated line has ${JSON.stringify(construct)}`);
      }
      let allowed = 0;
      for (const line of lines.slice(0, 500)) if ((await checkCommand(line)).verdict === "allow") allowed++;
      assert.ok(allowed >= 75, `only ${allowed} of 500 generated lines are allowed; the fuzzer would run too few`);
    },
  );

  test("the comparison flags a write, a connect and a program that an allowed line did not account for", {
    timeout: 240_000,
  }, async (t) => {
    if (!tracer) return t.skip(skip || "no tracer");
    // What a checker that misread each line would have said: allowed, with only the first command found.
    const allowedTrue = await checkCommand("true");
    const misread = (command: string, words: string[]): CommandCheck => ({
      ...allowedTrue,
      command,
      verdict: "allow",
      commands: [{ ...allowedTrue.commands[0], text: command, words }],
    });
    const kinds = async (command: string, words: string[]) => {
      const outcome = compareRun(misread(command, words), await tracer!.observe(command), DEFAULT_COMMAND_ALLOWLIST);
      return outcome.bypasses.map(kindOf);
    };
    assert.ok((await kinds("sort -o out.txt a.txt", ["sort"])).includes("write by sort"));
    assert.ok((await kinds("echo hi > /dev/tcp/127.0.0.1/9", ["echo", "hi"])).includes("connect by the shell"));
    assert.ok((await kinds("ls > a.txt", ["ls"])).includes("write by the shell"));
    assert.ok((await kinds("find . -name a.txt -delete", ["find"])).includes("write by find"));
    const ran = await kinds("ls; rm -f b.txt", ["ls"]);
    assert.ok(ran.some((kind) => kind.startsWith("ran rm")), ran.join(", "));
    // And what is no change at all is not flagged: the null device, git refreshing its index, name lookups.
    assert.deepEqual(await kinds("git status >/dev/null 2>&1", ["git", "status"]), []);
    assert.deepEqual(await kinds("ls -la", ["ls", "-la"]), []);
    assert.deepEqual(await kinds("sort -m < a.txt", ["sort", "-m"]), []);
    assert.ok((await kinds("sort -m -T /tmp < a.txt; : > /tmp/left", ["sort"])).includes("write by the shell"));
  });

  test("the fuzzer's past findings stay fixed", { timeout: 240_000 }, async (t) => {
    if (!tracer) return t.skip(skip || "no tracer");
    const outcomes = await Promise.all(
      FUZZ_REGRESSIONS.map((line) => judgeCommand(tracer!, line, DEFAULT_COMMAND_ALLOWLIST, 5000)),
    );
    const failing = outcomes.filter((outcome) => outcome.check.verdict === "allow" && outcome.bypasses.length > 0);
    assert.deepEqual(failing.map((outcome) => `${outcome.command} -> ${outcome.bypasses[0].ran}`), []);
  });

  test(
    `${RUNS} generated lines: no allowed line starts, writes, connects or reads outside what the checker did not account for`,
    { timeout: 240_000 },
    async (t) => {
      if (!tracer) return t.skip(skip || "no tracer");
      const report = await fuzz(tracer, { seed: SEED, runs: RUNS, concurrency: 4, shrinkClasses: 5, shrinkMs: 15_000 });
      console.log(formatFuzzReport(report));
      assert.ok(report.allowed >= RUNS / 10, `only ${report.allowed} lines were allowed and run`);
      assert.deepEqual(report.classes.map((c) => `${c.kind}: ${JSON.stringify(c.shrunk?.line ?? c.line)}`), []);
    },
  );
});
