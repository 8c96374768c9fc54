// The bounded pass of the differential oracle (the long pass is
// scripts/oracle.ts): the corpus plus generated command lines, each run for
// real in a sandbox under strace and compared with checkCommand's verdict.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import fc from "fast-check";
import { ExecTracer, oracleUnavailable } from "./_exec_trace.ts";
import { formatBypass, judgeCommand, runOracle, summary } from "./_oracle.ts";
import { commandLine, CORPUS } from "./_corpus.ts";
import { policyTestCommands } from "./_policy_corpus.ts";

const GENERATED = 150;
// A fixed seed keeps CI reproducible; ORACLE_SEED explores others.
const SEED = Number(process.env.ORACLE_SEED ?? 20261129);

let tracer: ExecTracer | undefined;
const skip = oracleUnavailable();
before(async () => {
  if (skip === undefined) tracer = await ExecTracer.create();
});
after(() => tracer?.dispose());

describe("command oracle", () => {
  test(
    "the sandbox sees what ran: execs by any name, programs started by programs, builtins",
    { timeout: 360_000 },
    async (t) => {
      if (!tracer) return t.skip(skip || "no tracer");
      const substitution = await tracer.observe("echo $(rm a.txt)");
      assert.ok(substitution.execs.some((e) => e.path === "/usr/bin/rm" && e.spawnedBy === "shell"));
      const disguised = await tracer.observe("exec -a ls /bin/r[m] a.txt");
      assert.deepEqual(disguised.execs.map((e) => [e.path, e.argv[0]]), [["/bin/rm", "ls"]]);
      const found = await tracer.observe("find . -name a.txt -exec rm {} \\;");
      const rm = found.execs.find((e) => e.path.endsWith("/rm"));
      assert.ok(rm !== undefined && rm.spawnedBy !== "shell" && rm.spawnedBy.path.endsWith("/find"));
      const missing = await tracer.observe("python -c 1");
      assert.deepEqual(missing.execs.map((e) => e.argv), [["python", "-c", "1"]]);
      const evaluated = await tracer.observe("eval 'echo hi'");
      assert.deepEqual(evaluated.traced.map((t) => t.words), [["eval", "echo hi"], ["echo", "hi"]]);
      const outside = await judgeCommand(tracer, "PATH=bin ls");
      assert.ok(outside.check.verdict === "ask" || outside.bypasses.length === 0);
    },
  );

  test(`corpus, policy tests and ${GENERATED} generated lines: no program runs that an allowed line did not permit`, {
    timeout: 360_000,
  }, async (t) => {
    if (!tracer) return t.skip(skip || "no tracer");
    const generated = fc.sample(commandLine, { seed: SEED, numRuns: GENERATED });
    const commands = [...new Set([...CORPUS, ...await policyTestCommands(), ...generated])];
    const started = performance.now();
    const totals = await runOracle(tracer, commands, { concurrency: 4 });
    console.log(`${summary(totals)} (seed ${SEED}, ${Math.round(performance.now() - started)} ms)`);
    for (const bypass of totals.bypasses) console.log(formatBypass(bypass));
    assert.equal(totals.cases, commands.length);
    assert.ok(totals.allowed > 50, "the corpus must exercise allowed command lines");
    assert.deepEqual(totals.bypasses.map((b) => `${b.command} -> ${b.ran}`), []);
  });
});
