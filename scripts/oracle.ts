/**
 * The long pass of the differential oracle for the shell-command analysis:
 * generated command lines (and the corpus, with the command lines of
 * tests/policy/shell/check_command_test.ts) run for real in a bubblewrap sandbox
 * under strace, compared with `checkCommand`. Needs Linux with bubblewrap and
 * strace.
 *
 * ```sh
 * deno run -A scripts/oracle.ts --runs 5000 [--seed 42] [--concurrency 4] [--no-corpus] [--shell sh]
 * ```
 *
 * `--shell sh` runs the lines with the POSIX shell, the bash tool's fallback
 * where bash is missing (execs only: sh cannot report its builtins).
 * Prints the totals and every bypass; exits 1 when there is one.
 *
 * @module
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { ExecTracer } from "../tests/oracle/_exec_trace.ts";
import { formatBypass, runOracle, summary } from "../tests/oracle/_oracle.ts";
import { commandLine, CORPUS } from "../tests/oracle/_corpus.ts";
import { policyTestCommands } from "../tests/oracle/_policy_corpus.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "5000" },
    seed: { type: "string" },
    concurrency: { type: "string", default: "4" },
    "no-corpus": { type: "boolean", default: false },
    shell: { type: "string", default: "bash" },
  },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const corpus = values["no-corpus"] ? [] : [...CORPUS, ...await policyTestCommands()];
const commands = [...new Set([...corpus, ...fc.sample(commandLine, { seed, numRuns: runs })])];

if (values.shell !== "bash" && values.shell !== "sh") throw new Error("--shell is bash or sh");
const tracer = await ExecTracer.create({ shell: values.shell });
const started = performance.now();
let done = 0;
try {
  const totals = await runOracle(tracer, commands, {
    concurrency: Number(values.concurrency),
    onCase: (outcome) => {
      if (++done % 500 === 0) console.error(`${done}/${commands.length}`);
      for (const bypass of outcome.bypasses) console.log(formatBypass(bypass));
    },
  });
  console.log(`${summary(totals)} (seed ${seed}, ${Math.round((performance.now() - started) / 1000)} s)`);
  if (totals.bypasses.length > 0) Deno.exitCode = 1;
} finally {
  await tracer.dispose();
}
