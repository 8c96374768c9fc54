/**
 * Background jobs: `bash_background`, `bash_read`, `bash_wait`, `bash_list`,
 * `bash_stop`. A job's output goes to files in the session temp dir (memory
 * stays bounded however much it prints); every job is killed when its session
 * closes.
 *
 * @module
 */

import * as v from "valibot";
import { fail, type ResourceLimitHit, ToolError, type ToolFailure } from "@toolfence/core";
import { limitMessage } from "@toolfence/policy";
import type { ToolContext } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { type Job, type JobStatus, jobStatus, SessionProcesses, sessionProcesses } from "./_jobs.ts";
import { outputUnavailable, peekStream } from "../_shared/cmd_output.ts";
import { whenAborted } from "../_shared/abort.ts";
import { startCommand } from "./_prepare.ts";
import { COMMAND_FIELDS, MAX_OUTPUT_BYTES_FIELD, maxOutputCharsField } from "./_command_fields.ts";
import { COMMAND_NEEDS, COMMAND_OPTIONAL_NEEDS, JOB_NEEDS } from "./_command_needs.ts";
import { BASH_BACKGROUND_OUTPUT, BASH_LIST_OUTPUT, BASH_WAIT_OUTPUT, JOB_REPORT_OUTPUT } from "./_outputs.ts";

export type { JobStatus } from "./_jobs.ts";

const JOB_ID = v.pipe(v.string(), v.description("The job id that bash_background returned, e.g. job-1."));
const MAX_OUTPUT_CHARS = maxOutputCharsField("");

/** A job's state and output so far, as `bash_read` and `bash_wait` return it. */
export interface JobReport {
  /** The job id. */
  id: string;
  /** `running`, `exited` (see exit_code) or `killed` (by a signal). */
  status: JobStatus;
  /** The exit code once exited; null while running or when killed. */
  exit_code: number | null;
  /** The signal that ended it, when one did. */
  signal?: string;
  /** Whether bash_stop (or the end of the session) ended it. */
  stopped?: true;
  /** Present (true) when its output passed the byte limit: the rest was dropped and the job stopped. */
  truncated?: true;
  /** Why the job was stopped by toolfence: `output_limit`. */
  stop_reason?: "output_limit";
  /** The byte limit its output reached, when it did. */
  output_limit_bytes?: number;
  /** The resource limit it hit (`memory`, `cpuSeconds`, ...) and its value, when it hit one. */
  resource_limit?: ResourceLimitHit;
  /** Protected files it created, moved out of the workspace once it ended (see `bash`). */
  protected_paths_moved?: { path: string; moved_to: string }[];
  /** Standard output so far, possibly cut around a marker. */
  stdout: string;
  /** Standard error so far, possibly cut around a marker. */
  stderr: string;
  /** The files holding the whole output (readable with read_file). */
  stdout_path: string;
  /** The file holding the whole error output. */
  stderr_path: string;
  /** Milliseconds since it started (until it ended, once it has). */
  duration_ms: number;
}

function findJob(ctx: ToolContext, id: string): Job {
  const table = sessionProcesses(ctx.session);
  const job = table.job(id);
  if (!job) {
    const known = table.jobs().map((j) => j.id);
    if (table.dropped(id)) {
      throw new ToolError(
        `Background job ${JSON.stringify(id)} ended and was dropped with its output: the session keeps at most ` +
          `${table.maxKeptJobs} ended jobs and ${table.maxKeptOutputBytes} bytes of their output`,
        {
          code: "unknown_job",
          kind: "semantic",
          recoveryHint: "Read a job's output before many more jobs end, or run the command again.",
          details: { known, dropped: true },
        },
      );
    }
    // A bare number is a process id, which no tool takes or gives: a host's pid would tell one tenant how many
    // processes the others start.
    const hint = /^\d+$/.test(id.trim()) ? ` (job ids are job-1, job-2, … per session, not process ids)` : "";
    throw new ToolError(`No background job ${JSON.stringify(id)} in this session${hint}`, {
      code: "unknown_job",
      kind: "semantic",
      recoveryHint: known.length ? `Use one of: ${known.join(", ")}.` : "Start one with bash_background first.",
      details: { known },
    });
  }
  return job;
}

async function report(ctx: ToolContext, job: Job, cap: number): Promise<JobReport> {
  const exit = job.process.exit;
  // The first report after the job's end gives what it changed in the workspace.
  if (exit !== undefined && job.changes !== undefined) {
    const { changes } = job;
    job.changes = undefined;
    await job.gone;
    await changes(ctx);
  }
  const shown = (file: string) => ctx.workspace.relative(file);
  // By the door's descriptor, never by path: the job may write the folder its output lies in.
  const peek = (stream: "stdout" | "stderr") => {
    const file = stream === "stdout" ? job.stdoutPath : job.stderrPath;
    return peekStream({ path: file, open: () => job.openOutput(stream) }, cap, shown(file)).catch((error) => {
      throw error instanceof ToolError ? error : outputUnavailable(file, error);
    });
  };
  const [stdout, stderr] = await Promise.all([peek("stdout"), peek("stderr")]);
  // The limit it hit is known once it is gone.
  // Also past the output limit, which would otherwise hide a limit hit before it (see bash's commandOutcome).
  const hit = exit === undefined ? undefined : await job.resourceLimit();
  return {
    id: job.id,
    status: jobStatus(exit),
    exit_code: exit?.code ?? null,
    ...(exit?.signal ? { signal: exit.signal } : {}),
    ...(job.stopRequested ? { stopped: true as const } : {}),
    ...(job.output.limitReached
      ? { truncated: true as const, stop_reason: "output_limit" as const, output_limit_bytes: job.output.limitBytes }
      : {}),
    ...(hit ? { resource_limit: hit } : {}),
    ...(job.quarantined.length > 0
      ? {
        protected_paths_moved: job.quarantined.map((q) => ({
          path: ctx.workspace.relative(q.path),
          moved_to: q.movedTo,
        })),
      }
      : {}),
    stdout: stdout.text,
    stderr: stderr.text,
    stdout_path: job.stdoutPath,
    stderr_path: job.stderrPath,
    duration_ms: (job.finishedAt ?? Date.now()) - job.startedAt,
  };
}

/**
 * A report of a job that failed on its own (a non-zero exit, or a signal it
 * was not sent by bash_stop or the output limit) as a `command_failed` or
 * `command_killed` failure that keeps the whole report; anything else as is.
 */
export function jobOutcome<R extends JobReport>(report: R): R | ToolFailure {
  if (report.status === "running" || report.stopped || (report.truncated && !report.resource_limit)) return report;
  if (report.resource_limit) {
    return fail(limitMessage(`Background job ${report.id}`, report.resource_limit), {
      code: "resource_limit",
      output: report,
      effectState: "none",
      details: { ...report.resource_limit },
    });
  }
  if (report.signal) {
    return fail(`Background job ${report.id} was killed by ${report.signal}`, {
      code: "command_killed",
      output: report,
      effectState: "none",
      details: { signal: report.signal },
    });
  }
  if (report.exit_code !== 0) {
    return fail(`Background job ${report.id} exited with code ${report.exit_code}`, {
      code: "command_failed",
      output: report,
      effectState: "none",
      details: { exitCode: report.exit_code },
    });
  }
  return report;
}

/** Arguments of `bash_background`. */
export interface BashBackgroundArgs {
  /** The command line, run with bash -c (or /bin/sh when bash is missing). */
  command: string;
  /** Folder to run in, relative to the workspace; the workspace folder when absent. */
  cwd?: string;
  /** Extra environment variables; those that change which programs or libraries load are refused. */
  env?: Record<string, string>;
  /** Most bytes of stdout and stderr together to keep before the job is stopped; default 64 MiB. */
  max_output_bytes?: number;
}

/**
 * `bash_background(command, cwd?, env?, max_output_bytes = 64 MiB)`: starts a command like `bash` does
 * (same command analysis, sandbox and environment) and returns at once with a
 * job id. At most 8 jobs run at once per session; all are killed when the
 * session closes. A job whose output passes `max_output_bytes` is stopped,
 * and `bash_read` then says `truncated: true`, `stop_reason: "output_limit"`.
 *
 * Requires what `bash` requires: `--allow-run`, `--allow-env=NODE_V8_COVERAGE`,
 * and `--allow-read` / `--allow-write` for the workspace and the temp folder.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { bashBackgroundTool } from "@toolfence/tools";
 * const box = new ToolBox().register(bashBackgroundTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "bash_background", { command: "ls" })).output);
 * await session.close();
 * ```
 */
export const bashBackgroundTool: Tool<BashBackgroundArgs> = tool({
  name: "bash_background",
  sessionState: true,
  description: "Start a shell command in the background and return its job id (job-1, job-2, … numbered per " +
    "session; no process id) at once.\n" +
    "Use it for servers, watchers and long builds. The same rules as bash apply (allowlist, asking the user, " +
    "sandbox). Follow the job with bash_read (output so far), bash_wait (until it ends or a timeout), " +
    "bash_list and bash_stop. Jobs are killed when the session ends.",
  input: v.object({ ...COMMAND_FIELDS, max_output_bytes: MAX_OUTPUT_BYTES_FIELD }),
  output: BASH_BACKGROUND_OUTPUT,
  destructive: true,
  openWorld: true,
  effects: ["reads", "writes_files", "runs_processes", "network"],
  needs: COMMAND_NEEDS,
  optionalNeeds: COMMAND_OPTIONAL_NEEDS,
  async run({ command, cwd, env, max_output_bytes }, ctx) {
    const table = sessionProcesses(ctx.session);
    const release = table.reserveJob();
    if (release === false) {
      throw new ToolError(
        `Already ${SessionProcesses.MAX_RUNNING_JOBS} background jobs are running in this session`,
        {
          code: "too_many_jobs",
          recoveryHint: "Wait for a job to finish or stop one with bash_stop, then try again.",
        },
      );
    }
    let run;
    try {
      run = await startCommand(ctx, { command, cwd, env, maxOutputBytes: max_output_bytes }, "jobs");
    } finally {
      // Added below in the same turn, so that no other call sees neither the place nor the job.
      release();
    }
    const job = table.addJob({
      command,
      process: run.process,
      stdoutPath: run.stdoutPath,
      stderrPath: run.stderrPath,
      openOutput: (stream) => run.openOutput(stream),
      sandboxed: run.sandboxed,
      output: run.output,
      gone: run.gone,
      quarantined: run.quarantined,
      resourceLimit: run.resourceLimit,
      startedAt: Date.now(),
      changes: run.changes,
      removeOutput: run.removeOutput,
    });
    return {
      id: job.id,
      status: "running",
      sandboxed: run.sandboxed,
      ...(run.sandboxReason !== undefined ? { sandbox_reason: run.sandboxReason } : {}),
      stdout_path: run.stdoutPath,
      stderr_path: run.stderrPath,
    };
  },
});

/** Arguments of `bash_read`. */
export interface BashReadArgs {
  /** The job id that bash_background returned, e.g. `job-1`. */
  id: string;
  /** Most characters of stdout, and of stderr, to return; longer output keeps its head and tail. */
  max_output_chars: number;
}

/**
 * `bash_read(id, max_output_chars = 16000)`: a job's status and its output so
 * far; reading does not consume anything. A job that ended with a non-zero
 * exit or a signal makes the call fail (`command_failed`, `command_killed`)
 * with the whole report as its output; so do `bash_wait` and `bash_stop`. Requires `--allow-read` for the temp folder.
 *
 * @example
 * ```ts
 * import { bashReadTool } from "@toolfence/tools";
 * console.log(bashReadTool.name); // "bash_read"
 * ```
 */
export const bashReadTool: Tool<BashReadArgs> = tool({
  name: "bash_read",
  sessionState: true,
  description: "Show a background job's status and its output so far (head and tail when long).\n" +
    "Reading does not consume the output: every call shows everything from the start. " +
    "A job that exited non-zero or was killed makes the call fail, with the same report.",
  input: v.object({ id: JOB_ID, max_output_chars: MAX_OUTPUT_CHARS }),
  output: JOB_REPORT_OUTPUT,
  effects: ["reads"],
  needs: JOB_NEEDS,
  run: async ({ id, max_output_chars }, ctx) => jobOutcome(await report(ctx, findJob(ctx, id), max_output_chars)),
});

/** Arguments of `bash_wait`. */
export interface BashWaitArgs {
  /** The job id that bash_background returned, e.g. `job-1`. */
  id: string;
  /** Most seconds to wait; 0 returns at once. */
  timeout_s: number;
  /** Most characters of stdout, and of stderr, to return; longer output keeps its head and tail. */
  max_output_chars: number;
}

/**
 * `bash_wait(id, timeout_s = 30, max_output_chars = 16000)`: waits until the
 * job ends or `timeout_s` passes (0 only polls); on timeout the job keeps
 * running and the result says `timed_out: true`. Requires `--allow-read` for
 * the temp folder.
 *
 * @example
 * ```ts
 * import { bashWaitTool } from "@toolfence/tools";
 * console.log(bashWaitTool.name); // "bash_wait"
 * ```
 */
export const bashWaitTool: Tool<BashWaitArgs> = tool({
  name: "bash_wait",
  sessionState: true,
  description: "Wait for a background job to end, at most timeout_s seconds, then show its status and output.\n" +
    "On timeout the job keeps running (timed_out is true); timeout_s 0 just looks.",
  input: v.object({
    id: JOB_ID,
    timeout_s: v.optional(
      v.pipe(
        v.number(),
        v.minValue(0),
        v.maxValue(3600),
        v.description("Most seconds to wait; 0 returns at once. Default 30."),
      ),
      30,
    ),
    max_output_chars: MAX_OUTPUT_CHARS,
  }),
  output: BASH_WAIT_OUTPUT,
  effects: ["reads"],
  needs: JOB_NEEDS,
  async run({ id, timeout_s, max_output_chars }, ctx): Promise<(JobReport & { timed_out: boolean }) | ToolFailure> {
    const job = findJob(ctx, id);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let release = () => {};
    const waited = await Promise.race([
      job.gone.then(() => "exited" as const),
      new Promise<"timeout">((resolve) => timer = setTimeout(() => resolve("timeout"), timeout_s * 1000)),
      new Promise<"aborted">((resolve) => release = whenAborted(ctx.signal, () => resolve("aborted"))),
    ]);
    clearTimeout(timer);
    release();
    ctx.signal.throwIfAborted();
    return jobOutcome({ ...await report(ctx, job, max_output_chars), timed_out: waited === "timeout" });
  },
});

/**
 * `bash_list()`: every background job of the session with its status. It only
 * reads, and is listed exactly when `bash_background` is (it holds its needs).
 *
 * @example
 * ```ts
 * import { bashListTool } from "@toolfence/tools";
 * console.log(bashListTool.name); // "bash_list"
 * ```
 */
export const bashListTool: Tool<Record<string, never>> = tool({
  name: "bash_list",
  sessionState: true,
  description: "List this session's background jobs: id, command, status, exit code and start time.",
  input: v.object({}),
  output: BASH_LIST_OUTPUT,
  effects: ["reads"],
  needs: JOB_NEEDS,
  run: (_args, ctx) => ({
    jobs: sessionProcesses(ctx.session).jobs().map((job) => ({
      id: job.id,
      command: job.command,
      status: jobStatus(job.process.exit),
      exit_code: job.process.exit?.code ?? null,
      started_at: new Date(job.startedAt).toISOString(),
    })),
  }),
});

/** Arguments of `bash_stop`. */
export interface BashStopArgs {
  /** The job id that bash_background returned, e.g. `job-1`. */
  id: string;
}

/**
 * `bash_stop(id)`: SIGTERM to the job's process group, SIGKILL after 5 s;
 * returns once it is gone, with its final output. Stopping a finished job
 * just reports it. Requires `--allow-run` (signals) and `--allow-read` for the
 * temp folder.
 *
 * @example
 * ```ts
 * import { bashStopTool } from "@toolfence/tools";
 * console.log(bashStopTool.name); // "bash_stop"
 * ```
 */
export const bashStopTool: Tool<BashStopArgs> = tool({
  name: "bash_stop",
  sessionState: true,
  description: "Stop a background job and everything it started (SIGTERM, then SIGKILL after 5 seconds).\n" +
    "Returns its final status and output.",
  input: v.object({ id: JOB_ID }),
  output: JOB_REPORT_OUTPUT,
  destructive: true,
  idempotent: true,
  effects: ["reads", "runs_processes"],
  needs: JOB_NEEDS,
  async run({ id }, ctx) {
    const job = findJob(ctx, id);
    if (job.process.exit === undefined) job.stopRequested = true;
    await job.process.terminate();
    await job.gone;
    return jobOutcome(await report(ctx, job, 16_000));
  },
});
