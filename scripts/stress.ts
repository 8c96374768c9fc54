/**
 * Runs a command beside busy loops, so that tests that race processes,
 * signals and timers meet the scheduling a loaded machine gives them: a wait
 * on an event that may already have fired, a kill that lands late, an output
 * limit reached between two reads.
 *
 * `--racing` runs {@linkcode RACING_TESTS} under `deno test`. Otherwise the
 * command after `--` is run. `--load N` busy loops (default: the
 * `TOOLFENCE_STRESS` variable, else 2) run until the command ends; the command
 * is ended (SIGTERM, then SIGKILL) after `--seconds S` (default 600), and the
 * script then exits 124. Otherwise it exits with the command's code.
 *
 * Requires --allow-run, --allow-env (the command gets the environment).
 *
 * @example
 * ```sh
 * deno task stress                                   # the racing tests beside 2 busy loops
 * deno run --allow-run --allow-env scripts/stress.ts --load 3 -- deno test -A tests/tools/cmd/
 * ```
 *
 * @module
 */

import process from "node:process";
import { type ChildProcess, spawn } from "node:child_process";
import { exited } from "../tests/_exited.ts";

/**
 * The tests whose outcome depends on timing: a job killed while it starts,
 * an undo racing a writer, background jobs and their ends, output limits
 * reached mid-stream, confined writes against swapped folders, publications
 * and atomic writes killed mid-way, path locks, parallel edits.
 */
export const RACING_TESTS: readonly string[] = [
  "tests/tools/cmd/job_kill_race_test.ts",
  "tests/tools/search/grep_swap_race_test.ts",
  "tests/tools/fs/read_swap_race_test.ts",
  "tests/tools/cmd/background_test.ts",
  "tests/tools/cmd/output_limit_test.ts",
  "tests/policy/file_history_test.ts",
  "tests/internal/confined_fs_test.ts",
  "tests/internal/path_lock_test.ts",
  "tests/policy/sandbox_secrets_test.ts",
  "tests/reliability/scratch_race_test.ts",
  "tests/reliability/publish_kill_test.ts",
  "tests/reliability/atomic_write_kill_test.ts",
  "tests/reliability/parallel_edits_test.ts",
];

/** Starts one process that spins on a core until it is killed. */
function busyLoop(): ChildProcess {
  return spawn(process.execPath, ["eval", "for (;;) {}"], { stdio: "ignore" });
}

/** Ends a process: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
async function end(child: ChildProcess, graceMs: number): Promise<void> {
  const gone = exited(child);
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await gone.catch(() => {});
  clearTimeout(timer);
}

/** Runs `command` beside `load` busy loops for at most `seconds`; resolves with its exit code (124 on time out). */
export async function stress(command: string[], load: number, seconds: number): Promise<number> {
  const loops = Array.from({ length: load }, busyLoop);
  let child: ChildProcess | undefined;
  // Ended from outside (CI's time limit, ^C): neither the loops nor the command may outlive the script.
  const abandon = () => {
    for (const loop of loops) loop.kill("SIGKILL");
    child?.kill("SIGTERM");
    process.exit(130);
  };
  process.once("SIGINT", abandon);
  process.once("SIGTERM", abandon);
  const started = performance.now();
  try {
    const running = child = spawn(command[0], command.slice(1), { stdio: "inherit" });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      console.error(`stress: ${command.join(" ")} still running after ${seconds} s; ending it`);
      end(running, 10_000);
    }, seconds * 1000);
    const { code, signal } = await exited(running);
    clearTimeout(timer);
    console.log(
      `stress: ${command[0]} ${command[1] ?? ""} beside ${load} busy loops: ` +
        `${timedOut ? "timed out" : `exit ${code ?? signal}`} in ${Math.round((performance.now() - started) / 1000)} s`,
    );
    return timedOut ? 124 : code ?? 1;
  } finally {
    process.off("SIGINT", abandon);
    process.off("SIGTERM", abandon);
    await Promise.all(loops.map((loop) => end(loop, 1_000)));
  }
}

function option(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const dashes = args.indexOf("--");
  const own = dashes >= 0 ? args.slice(0, dashes) : args;
  const load = Number(option(own, "--load") ?? process.env.TOOLFENCE_STRESS ?? 2);
  const seconds = Number(option(own, "--seconds") ?? 600);
  const command = own.includes("--racing")
    ? [process.execPath, "test", "-A", "--no-check", ...RACING_TESTS]
    : dashes >= 0
    ? args.slice(dashes + 1)
    : [];
  if (command.length === 0 || !Number.isInteger(load) || load < 0 || !(seconds > 0)) {
    console.error("usage: stress.ts [--load N] [--seconds S] (--racing | -- command ...)");
    process.exit(2);
  }
  process.exit(await stress(command, load, seconds));
}
