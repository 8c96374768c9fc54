/**
 * The `bash` tool: one shell command, checked by the command analysis, run in
 * its own process group (under bubblewrap where it works), with a timeout and
 * capped output.
 *
 * @module
 */

import * as v from "valibot";
import { fail, type ResourceLimitHit, textPrefix, type Tool, tool, type ToolFailure } from "@toolfence/core";
import { limitMessage, limitRemedy } from "@toolfence/policy";
import { codedFailure, readStreamForResult } from "../_shared/cmd_output.ts";
import { progressTicker } from "../_shared/progress_ticker.ts";
import { startCommand } from "./_prepare.ts";
import { stopOnAbort } from "../_shared/abort.ts";
import { COMMAND_FIELDS, MAX_OUTPUT_BYTES_FIELD, maxOutputCharsField } from "./_command_fields.ts";
import { COMMAND_NEEDS, COMMAND_OPTIONAL_NEEDS } from "./_command_needs.ts";
import { BASH_OUTPUT } from "./_outputs.ts";

const input = v.object({
  ...COMMAND_FIELDS,
  timeout_s: v.optional(
    v.pipe(
      v.number(),
      v.minValue(0.1),
      v.maxValue(3600),
      v.description("Seconds before the command and everything it started are killed. Default 300."),
    ),
    300,
  ),
  max_output_chars: maxOutputCharsField(" and the whole is stored as an artifact"),
  max_output_bytes: MAX_OUTPUT_BYTES_FIELD,
});

/** Arguments of `bash`, after defaults. */
export interface BashArgs {
  /** The command line, run with bash -c (or /bin/sh when bash is missing). */
  command: string;
  /** Folder to run in, relative to the workspace; the workspace folder when absent. */
  cwd?: string;
  /** Extra environment variables; those that change which programs or libraries load are refused. */
  env?: Record<string, string>;
  /** Seconds before the command and everything it started are killed. */
  timeout_s: number;
  /** Most characters of stdout, and of stderr, to return; longer output keeps its head and tail. */
  max_output_chars: number;
  /** Most bytes of stdout and stderr together to keep before the command is stopped; default 64 MiB. */
  max_output_bytes?: number;
}

/** What `bash` returns. */
export interface BashResult {
  /** The exit code; null when a signal ended the command. */
  exit_code: number | null;
  /** Standard output, possibly cut around a marker. */
  stdout: string;
  /** Standard error, possibly cut around a marker. */
  stderr: string;
  /** Wall time in milliseconds. */
  duration_ms: number;
  /** The signal that ended the command, when one did. */
  signal?: string;
  /** Present (true) when the command ran out of time and was killed. */
  timed_out?: true;
  /** Present (true) when the output passed its byte limit: the rest was dropped and the command stopped. */
  truncated?: true;
  /** Why the command was stopped: `output_limit` (see truncated) or `timeout`. */
  stop_reason?: "output_limit" | "timeout";
  /** The byte limit the output reached, when it did. */
  output_limit_bytes?: number;
  /** The resource limit the command hit (`memory`, `cpuSeconds`, ...) and its value, when it hit one. */
  resource_limit?: { limit: string; value: string };
  /** Whether the command ran under the OS sandbox (read-only system, no network). */
  sandboxed: boolean;
  /** Why it ran without the sandbox, when it did. */
  sandbox_reason?: string;
  /**
   * Protected files the command created (e.g. `.npmrc`, `.vscode/`), moved out
   * of the workspace: they change what programs do later, so only the file
   * tools (which ask the user) may create them.
   */
  protected_paths_moved?: { path: string; moved_to: string }[];
  /** The network requests and tunnels the egress proxy refused, with why (`CONNECT host:443: ...`). */
  network_refused?: string[];
}

/**
 * `bash(command, timeout_s = 300, cwd?, env?, max_output_chars = 16000, max_output_bytes = 64 MiB)`.
 *
 * Before anything starts, the command goes through `ctx.policy.authorizeCommand`
 * (the command analysis: allowed commands run, others ask a person or are
 * refused). It runs as `bash -c` in its own process group, under bubblewrap
 * when the session's sandbox mode and the machine allow (the workspace and the
 * session temp dir writable, the rest read-only, no network), with a scrubbed
 * environment (see `tools/cmd/_env.ts`). On timeout or cancel the whole group
 * gets SIGTERM, then SIGKILL after 5 s; when the shell exits, whatever it left
 * running is ended the same way. A non-zero exit ends the call as an `error`
 * (`command_failed`), a signal as `command_killed` (the message names it), the
 * timeout as `timed_out`, a resource limit it hit (see `policy/limits.ts`) as
 * `resource_limit` (the message names the limit and its value): each keeps the whole {@linkcode BashResult} (exit
 * code, stdout, stderr) as the output the model reads. Output streams to files in the session temp dir, so
 * memory stays bounded while the command runs; once stdout and stderr together
 * pass `max_output_bytes` (at most the session's maximum) the rest is dropped,
 * the command is stopped, and the result says `truncated: true`,
 * `stop_reason: "output_limit"`. A stream longer than `max_output_chars` is
 * cut to head and tail and stored whole (as kept) as an artifact. Failures
 * are coded ToolErrors, never raw runtime errors.
 *
 * Requires `--allow-run` (bash and bwrap, and stopping the process group at a
 * timeout, which Deno allows only with `--allow-run` for every program),
 * `--allow-env=NODE_V8_COVERAGE` (Deno's `node:child_process` reads it; the
 * inherited variables are passed on when granted), and `--allow-read` /
 * `--allow-write` for the workspace and the temp folder (see `needs`).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { bashTool } from "@toolfence/tools";
 * const box = new ToolBox().register(bashTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await box.call(session, "bash", { command: "ls" });
 * console.log(result.output);
 * await session.close();
 * ```
 */
export const bashTool: Tool<BashArgs> = tool({
  name: "bash",
  description: "Run a shell command in the workspace and return its exit code, stdout and stderr.\n" +
    "Commands on the allowlist (read-only ones such as ls, cat, grep, git status, git diff) run at once; " +
    "anything else may ask the user first or be refused. A non-zero exit code, a signal or the timeout makes " +
    "the call fail; stdout, stderr and the exit code still come back. " +
    "The command and everything it starts are killed after timeout_s seconds. Long output is cut to its head " +
    "and tail; the marker names an artifact to page through with read_artifact. A command that prints more " +
    "than max_output_bytes (default 64 MiB) is stopped, and the result says truncated. " +
    "For servers and other long-running processes use bash_background.",
  input,
  output: BASH_OUTPUT,
  destructive: true,
  openWorld: true,
  effects: ["reads", "writes_files", "runs_processes", "network"],
  recordsFileChanges: true,
  needs: COMMAND_NEEDS,
  optionalNeeds: COMMAND_OPTIONAL_NEEDS,
  async run(
    { command, cwd, env, timeout_s, max_output_chars, max_output_bytes },
    ctx,
  ): Promise<BashResult | ToolFailure> {
    const started = performance.now();
    const run = await startCommand(ctx, { command, cwd, env, maxOutputBytes: max_output_bytes }, "bash");
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void run.process.terminate();
    }, timeout_s * 1000);
    const stopListening = stopOnAbort(ctx.signal, run.process);
    const stopTicking = progressTicker(ctx, (ran) => [`running for ${Math.round(ran)} s`]);
    try {
      const exit = await run.process.exited.finally(stopTicking);
      await run.gone;
      await run.changes(ctx);
      ctx.signal.throwIfAborted();
      const summary = `whole %s of bash ${JSON.stringify(command.slice(0, 200))}`;
      const stdout = await readStreamForResult(
        { path: run.stdoutPath, open: () => run.openOutput("stdout") },
        max_output_chars,
        ctx.artifacts,
        summary.replace("%s", "stdout"),
        run.output.limitBytes,
      );
      const stderr = await readStreamForResult(
        { path: run.stderrPath, open: () => run.openOutput("stderr") },
        max_output_chars,
        ctx.artifacts,
        summary.replace("%s", "stderr"),
        run.output.limitBytes,
      );
      const limited = run.output.limitReached;
      // Also past the output limit: a limit hit before it (a write past fileSize, its error discarded, then output
      // enough to reach the limit) was reported as a success, truncated, with the limit unnamed.
      const hit = await run.resourceLimit();
      // Why it stopped comes before the output, so that it survives a cut of the whole result.
      return commandOutcome(command, timeout_s, hit, {
        exit_code: exit.code,
        ...(exit.signal ? { signal: exit.signal } : {}),
        ...(timedOut && !limited ? { timed_out: true as const } : {}),
        ...(limited
          ? {
            truncated: true as const,
            stop_reason: "output_limit" as const,
            output_limit_bytes: run.output.limitBytes,
          }
          : timedOut
          ? { stop_reason: "timeout" as const }
          : {}),
        ...(hit ? { resource_limit: { limit: hit.limit, value: hit.value } } : {}),
        stdout: stdout.text,
        stderr: stderr.text,
        duration_ms: Math.round(performance.now() - started),
        sandboxed: run.sandboxed,
        ...(run.sandboxReason !== undefined ? { sandbox_reason: run.sandboxReason } : {}),
        ...(run.quarantined.length > 0
          ? {
            protected_paths_moved: run.quarantined.map((q) => ({
              path: ctx.workspace.relative(q.path),
              moved_to: q.movedTo,
            })),
          }
          : {}),
        ...(run.networkRefused.length > 0 ? { network_refused: [...run.networkRefused] } : {}),
      });
    } catch (error) {
      throw codedFailure(
        error,
        "command_result_failed",
        "The command ran, but its result could not be collected",
        ctx.signal,
      );
    } finally {
      clearTimeout(timer);
      stopListening();
      // At once, and through the door: never by path, as the command may have made their folder a link.
      run.removeOutput();
    }
  },
});

/**
 * How a finished command ends the call: success when it exited 0 (or
 * toolfence stopped it at the output limit, which the result says, and it
 * hit no resource limit before);
 * `timed_out`, `command_killed` (naming the signal) or `command_failed`
 * otherwise, each with the whole result as its output.
 */
function commandOutcome(
  command: string,
  timeoutS: number,
  hit: ResourceLimitHit | undefined,
  result: BashResult,
): BashResult | ToolFailure {
  if (result.truncated && !hit) return result;
  const shown = JSON.stringify(command.length > 200 ? `${textPrefix(command, 200)}...` : command);
  if (hit) {
    return fail(limitMessage(`bash ${shown}`, hit), {
      code: "resource_limit",
      output: result,
      effectState: "applied",
      recoveryHint: `Do the work in smaller steps, or ${limitRemedy(hit)}.`,
      details: { ...hit },
    });
  }
  if (result.timed_out) {
    return fail(`bash ${shown} ran out of time after ${timeoutS} s and was killed`, {
      status: "timed_out",
      code: "timeout",
      output: result,
      recoveryHint: "Give a longer timeout_s, or run it with bash_background.",
    });
  }
  if (result.signal) {
    return fail(`bash ${shown} was killed by ${result.signal}`, {
      code: "command_killed",
      output: result,
      effectState: "applied",
      details: { signal: result.signal },
    });
  }
  if (result.exit_code !== 0) {
    return fail(`bash ${shown} exited with code ${result.exit_code}`, {
      code: "command_failed",
      output: result,
      effectState: "applied",
      details: { exitCode: result.exit_code },
    });
  }
  return result;
}
