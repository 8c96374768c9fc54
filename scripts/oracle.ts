/**
 * The long passes of the differential oracle for the shell-command analysis.
 * Needs Linux with bubblewrap and strace.
 *
 * The corpus pass: the corpus and the command lines of
 * tests/policy/shell/check_command_test.ts, with lines from the corpus's own
 * generator, run for real in a bubblewrap sandbox under strace and compared
 * with `checkCommand`:
 *
 * ```sh
 * deno run -A scripts/oracle.ts --runs 5000 [--seed 42] [--concurrency 4] [--no-corpus] [--shell sh]
 * ```
 *
 * `--shell sh` runs the lines with the POSIX shell, the bash tool's fallback
 * where bash is missing (execs only: sh cannot report its builtins).
 *
 * The grammar fuzzer (tests/oracle/_fuzz.ts): N lines from the bash grammar,
 * every allowed one run in the sandbox, each class of disagreement shrunk:
 *
 * ```sh
 * deno run -A scripts/oracle.ts --fuzz 100000 [--seed 42] [--concurrency 4] [--shrink 30] [--shrink-ms 60000]
 * deno run -A scripts/oracle.ts --fuzz 100000 --seed 42 --path 1234   # replay and shrink run 1234
 * deno run -A scripts/oracle.ts --fuzz 100000 --minutes 15   # as many of the 100,000 as fit in 15 minutes
 * ```
 *
 * Prints the totals and every bypass or disagreement (with its seed); exits 1
 * when there is one.
 *
 * @module
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { ExecTracer } from "../tests/oracle/_exec_trace.ts";
import { formatBypass, runOracle, summary } from "../tests/oracle/_oracle.ts";
import { commandLine, CORPUS } from "../tests/oracle/_corpus.ts";
import { policyTestCommands } from "../tests/oracle/_policy_corpus.ts";
import { formatFuzzReport, fuzz } from "../tests/oracle/_fuzz.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "5000" },
    fuzz: { type: "string" },
    path: { type: "string" },
    shrink: { type: "string", default: "30" },
    "shrink-ms": { type: "string", default: "60000" },
    minutes: { type: "string" },
    seed: { type: "string" },
    concurrency: { type: "string", default: "4" },
    "no-corpus": { type: "boolean", default: false },
    shell: { type: "string", default: "bash" },
  },
});
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const concurrency = Number(values.concurrency);
if (values.shell !== "bash" && values.shell !== "sh") throw new Error("--shell is bash or sh");
const tracer = await ExecTracer.create({ shell: values.shell });
try {
  if (values.fuzz !== undefined) await fuzzPass(Number(values.fuzz));
  else await corpusPass(Number(values.runs));
} finally {
  await tracer.dispose();
}

async function fuzzPass(runs: number): Promise<void> {
  console.error(`fuzz: seed ${seed}, ${runs} lines, ${concurrency} sandboxes at a time`);
  const report = await fuzz(tracer, {
    seed,
    runs,
    concurrency,
    shrinkClasses: Number(values.shrink),
    shrinkMs: Number(values["shrink-ms"]),
    budgetMs: values.minutes === undefined ? undefined : Number(values.minutes) * 60_000,
    only: values.path === undefined ? undefined : Number(values.path),
    onCase: (_, done) => {
      if (done % 1000 === 0) console.error(`${done}/${runs}`);
    },
  });
  console.log(formatFuzzReport(report));
  if (report.classes.length > 0) Deno.exitCode = 1;
}

async function corpusPass(runs: number): Promise<void> {
  const corpus = values["no-corpus"] ? [] : [...CORPUS, ...await policyTestCommands()];
  const commands = [...new Set([...corpus, ...fc.sample(commandLine, { seed, numRuns: runs })])];
  const started = performance.now();
  let done = 0;
  const totals = await runOracle(tracer, commands, {
    concurrency,
    onCase: (outcome) => {
      if (++done % 500 === 0) console.error(`${done}/${commands.length}`);
      for (const bypass of outcome.bypasses) console.log(formatBypass(bypass));
    },
  });
  console.log(`${summary(totals)} (seed ${seed}, ${Math.round((performance.now() - started) / 1000)} s)`);
  if (totals.bypasses.length > 0) Deno.exitCode = 1;
}
