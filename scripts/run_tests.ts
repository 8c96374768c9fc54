/**
 * Runs the Deno suite as several `deno test` processes at once, each taking
 * the next few test files from one queue, and prints one summary in `deno
 * test`'s own form (`ok | N passed (S steps) | N failed | N ignored (T)`), the
 * line `.ci/run` adds up.
 *
 * Why processes, not `deno test --parallel`: a few tests change what is
 * process-wide (`HOME`, the working folder) for a moment, and `--parallel`
 * runs files as workers of one process. Separate processes keep every file
 * as alone as it is under `deno test` (and as under `node --test`, which also
 * runs each file in its own process). Most tests wait on processes, timers
 * and sandboxes rather than compute, so on a 2-core machine three queues
 * finish the suite in well under the time of one.
 *
 * The queue starts with the files that took longest in the last run on this
 * machine (kept in `node_modules/.toolfence-test-times.json`; on a fresh
 * checkout, the times of a CI run committed in `tests/test_times.json`; a file
 * in neither weighs by its size), and hands out smaller batches as it
 * empties, so that no queue is left with a long file at the end. Each batch's
 * output is printed whole when it ends, so its lines stay together.
 *
 * `--beside COMMAND` (repeatable) runs a check that needs no test to have run
 * first (the type check: the tests run with `--no-check`) beside the queues,
 * from the start: its single core of work fills the time the tests spend
 * waiting. It counts in the summary as one test, passed or failed, and its
 * output is printed whole when it ends.
 *
 * Requires --allow-read, --allow-write (the timings file), --allow-run (deno),
 * --allow-env (the tests get the environment).
 *
 * @example
 * ```sh
 * deno run -A scripts/run_tests.ts                    # tests/, TEST_JOBS queues
 * deno run -A scripts/run_tests.ts --jobs 2 tests/core tests/policy
 * deno run -A scripts/run_tests.ts --beside "deno task check" tests/
 * ```
 *
 * @module
 */
import process from "node:process";
import { spawn } from "node:child_process";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { exited } from "../tests/_exited.ts";

/**
 * How many test files run at once, under `deno test` here and under `node
 * --test` in the npm build: `TOOLFENCE_TEST_JOBS`, else one more than the
 * cores (the tests mostly wait on processes and timers), at most 8.
 */
export const TEST_JOBS: number = Number(process.env.TOOLFENCE_TEST_JOBS) ||
  Math.min(8, os.availableParallelism() + 1);

/** The counts of one `deno test` summary line. */
export interface TestCounts {
  /** Tests passed. */
  passed: number;
  /** Steps passed. */
  passedSteps: number;
  /** Tests failed. */
  failed: number;
  /** Steps failed. */
  failedSteps: number;
  /** Tests ignored. */
  ignored: number;
}

/** Reads the counts from `deno test`'s summary line in `output`, or undefined when it printed none (it crashed or did not start). */
export function parseSummary(output: string): TestCounts | undefined {
  const line = output.split("\n").reverse().find((l) => /^(ok|FAILED) \| \d+ passed/.test(l));
  if (line === undefined) return undefined;
  const count = (pattern: RegExp) => Number(pattern.exec(line)?.[1] ?? 0);
  return {
    passed: count(/(\d+) passed/),
    passedSteps: count(/\d+ passed \((\d+) steps?\)/),
    failed: count(/(\d+) failed/),
    failedSteps: count(/\d+ failed \((\d+) steps?\)/),
    ignored: count(/(\d+) ignored/),
  };
}

/** Writes the counts as `deno test` would, with the wall time in seconds. */
export function formatSummary(counts: TestCounts, seconds: number): string {
  const steps = (n: number) => n > 0 ? ` (${n} step${n === 1 ? "" : "s"})` : "";
  const minutes = Math.floor(seconds / 60);
  const time = minutes > 0 ? `${minutes}m${Math.round(seconds % 60)}s` : `${Math.round(seconds)}s`;
  return `${counts.failed > 0 ? "FAILED" : "ok"} | ${counts.passed} passed${steps(counts.passedSteps)} | ` +
    `${counts.failed} failed${steps(counts.failedSteps)}${counts.ignored > 0 ? ` | ${counts.ignored} ignored` : ""} ` +
    `(${time})`;
}

/** Whether `name` is a file `deno test` runs when given its folder. */
export function isTestFileName(name: string): boolean {
  return /(^|[._])test\.(ts|tsx|mts|js|mjs|jsx)$/.test(name);
}

async function testFiles(root: string): Promise<string[]> {
  const info = await stat(root);
  if (info.isFile()) return [root];
  const files: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) files.push(...await testFiles(full));
    else if (isTestFileName(entry.name)) files.push(full);
  }
  return files;
}

/**
 * Splits `files` into batches for `jobs` queues, longest first: each batch
 * holds files until it weighs a third of an even share of what is left, so
 * batches shrink to single files as the queue empties.
 */
export function planBatches(files: readonly string[], weight: (file: string) => number, jobs: number): string[][] {
  const queue = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  let left = queue.reduce((sum, file) => sum + weight(file), 0);
  const batches: string[][] = [];
  while (queue.length > 0) {
    const share = left / (jobs * 3);
    const batch: string[] = [];
    let size = 0;
    while (queue.length > 0 && (batch.length === 0 || size + weight(queue[0]) <= share)) {
      const file = queue.shift()!;
      batch.push(file);
      size += weight(file);
    }
    left -= size;
    batches.push(batch);
  }
  return batches;
}

/**
 * Splits `files` into `parts` lists of about equal weight, for runners that
 * each take a fixed list (`node --test` per Node version): the heaviest file
 * goes to the lightest list, and each list keeps its files heaviest first, so
 * that no list ends with a long file alone.
 */
export function splitByWeight(files: readonly string[], weight: (file: string) => number, parts: number): string[][] {
  const lists = Array.from({ length: Math.max(1, parts) }, () => ({ files: [] as string[], weight: 0 }));
  for (const file of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = lists.reduce((min, list) => list.weight < min.weight ? list : min);
    lightest.files.push(file);
    lightest.weight += weight(file);
  }
  return lists.map((list) => list.files);
}

// The last run's times on this machine, written after each run; on a fresh checkout, the committed times of a CI run.
const TIMES_FILE = "node_modules/.toolfence-test-times.json";
const SEED_TIMES_FILE = "tests/test_times.json";

async function lastTimes(): Promise<Record<string, number>> {
  for (const file of [TIMES_FILE, SEED_TIMES_FILE]) {
    try {
      return JSON.parse(await readFile(file, "utf8"));
    } catch {
      // Not there (a fresh checkout has no timings of its own): the next one.
    }
  }
  return {};
}

/** The seconds each file's tests took, summed from the `name ... ok (1s)` lines under each `running N tests from ./file`. */
export function fileSeconds(output: string): Record<string, number> {
  const seconds: Record<string, number> = {};
  let file: string | undefined;
  for (const line of output.split("\n")) {
    const running = /^running \d+ tests? from \.\/(\S+)/.exec(line);
    if (running) {
      file = running[1];
      seconds[file] ??= 0;
      continue;
    }
    const result = /^\S.* \.\.\. (?:ok|FAILED|ignored) \(((?:\d+(?:ms|s|m|h))+)\)$/.exec(line);
    if (result && file !== undefined) {
      for (const [, value, unit] of result[1].matchAll(/(\d+)(ms|s|m|h)/g)) {
        seconds[file] += Number(value) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as "ms" | "s" | "m" | "h"];
      }
    }
  }
  return seconds;
}

interface BatchResult {
  output: string;
  counts: TestCounts;
}

/** Runs `program` to its end, its stdout and stderr together in `output`. */
async function runCollected(
  program: string,
  args: string[],
): Promise<{ output: string; code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn(program, args, {
    stdio: ["ignore", "pipe", "pipe"],
    // Without colours, so that the summary and the timings can be read from the output.
    env: { ...process.env, NO_COLOR: "1" },
  });
  const done = exited(child);
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (text: string) => output += text);
  child.stderr!.setEncoding("utf8").on("data", (text: string) => output += text);
  const ended = await done;
  return { output, ...ended };
}

async function runBatch(files: string[]): Promise<BatchResult> {
  const { output, code, signal } = await runCollected(process.execPath, ["test", "-A", "--no-check", ...files]);
  const counts = parseSummary(output);
  if (counts === undefined || (code !== 0 && counts.failed === 0)) {
    // No summary, or a failing exit with none failed: the run itself broke (a crash, a module that did not load).
    const reason = `deno test ${files.join(" ")} ended with ${signal ?? `exit ${code}`} and no failing test`;
    return {
      output: `${output}\n${reason}\n`,
      counts: { passed: counts?.passed ?? 0, passedSteps: 0, failed: 1, failedSteps: 0, ignored: 0 },
    };
  }
  return { output, counts };
}

/** Runs `command` with `sh -c`; its result counts as one test, passed when it exits 0. */
async function runBeside(command: string): Promise<BatchResult> {
  const started = performance.now();
  const { output, code, signal } = await runCollected("sh", ["-c", command]);
  const ok = code === 0;
  const seconds = Math.round((performance.now() - started) / 1000);
  return {
    output: `${output}${command} ... ${ok ? "ok" : `FAILED (${signal ?? `exit ${code}`})`} (${seconds}s)\n`,
    counts: { passed: ok ? 1 : 0, passedSteps: 0, failed: ok ? 0 : 1, failedSteps: 0, ignored: 0 },
  };
}

/**
 * Runs the test files under `roots` in `jobs` queues, and each of `beside` beside them (see the module's text);
 * resolves with the summed counts.
 */
export async function runSuite(
  roots: readonly string[],
  jobs: number,
  beside: readonly string[] = [],
): Promise<TestCounts> {
  const files = (await Promise.all(roots.map(testFiles))).flat();
  const times = await lastTimes();
  const sizes = new Map(await Promise.all(files.map(async (f) => [f, (await stat(f)).size] as const)));
  // A file never timed weighs what its size suggests (a second per 4 KB), so new files are not all put last.
  const weight = (file: string) => times[file] ?? sizes.get(file)! / 4096;
  const batches = planBatches(files, weight, jobs);
  const total: TestCounts = { passed: 0, passedSteps: 0, failed: 0, failedSteps: 0, ignored: 0 };
  const failedBatches: string[][] = [];
  const report = (result: BatchResult, what: string[]) => {
    process.stdout.write(result.output.endsWith("\n") ? result.output : `${result.output}\n`);
    for (const key of Object.keys(total) as (keyof TestCounts)[]) total[key] += result.counts[key];
    if (result.counts.failed > 0) failedBatches.push(what);
  };
  const worker = async () => {
    for (let batch = batches.shift(); batch !== undefined; batch = batches.shift()) {
      const result = await runBatch(batch);
      report(result, batch);
      Object.assign(times, fileSeconds(result.output));
    }
  };
  await Promise.all([
    ...beside.map(async (command) => report(await runBeside(command), [command])),
    ...Array.from({ length: Math.max(1, jobs) }, worker),
  ]);
  await writeFile(TIMES_FILE, JSON.stringify(times, null, 1)).catch(() => {});
  if (failedBatches.length > 0) {
    console.log(`\nFailures are in the output of: ${failedBatches.map((b) => b.join(" ")).join("; ")}`);
  }
  return total;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    options: { jobs: { type: "string" }, beside: { type: "string", multiple: true } },
    allowPositionals: true,
  });
  const jobs = values.jobs === undefined ? TEST_JOBS : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.error("usage: run_tests.ts [--jobs N] [--beside COMMAND ...] [file or folder ...]");
    process.exit(2);
  }
  const started = performance.now();
  const counts = await runSuite(positionals.length > 0 ? positionals : ["tests"], jobs, values.beside ?? []);
  console.log(`\n${formatSummary(counts, (performance.now() - started) / 1000)}`);
  process.exit(counts.failed > 0 ? 1 : 0);
}
