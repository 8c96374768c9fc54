/**
 * Everything between a command the model sent and a started process: the
 * policy's process door judges it (the environment, the working folder, the
 * command analysis, which may ask a person), sandboxes, spawns and bounds it;
 * this adds the output limit of the session and the session's process table.
 * The door also reports what the command changed in the workspace.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { type StartedProcess, type ToolContext, ToolError } from "@toolfence/core";
import { codedFailure, DEFAULT_OUTPUT_LIMIT_BYTES } from "../_shared/cmd_output.ts";
import { SessionProcesses, sessionProcesses } from "./_jobs.ts";
import { commandEgress } from "./_egress.ts";

/** What the model asked to run. */
export interface CommandRequest {
  /** The command line, run with `bash -c`. */
  command: string;
  /** Working folder, relative to the workspace; default the workdir. */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Byte limit of stdout and stderr together (default 64 MiB, at most the session's maximum). */
  maxOutputBytes?: number;
}

/** A started command; `changes()` once it is gone reports what it changed in the workspace. */
export interface StartedCommand extends StartedProcess {
  /** The network requests and tunnels the egress proxy refused (filled while it runs). */
  networkRefused: string[];
}

/**
 * Checks and starts `request` through `ctx.policy.processes`; output goes to
 * two new files in `<session temp dir>/<folder>/`. A command that the policy
 * refuses never starts. The output is kept up to its byte limit; past it the
 * command is stopped (see `output.limitReached`). Throws ToolErrors:
 * `too_many_commands`, `forbidden_env`, `outside_workspace`, `not_a_directory`,
 * `permission_denied`, `fence_denied`, `sandbox_unavailable`, `spawn_failed`,
 * and `command_start_failed` for anything else (never a raw runtime error).
 */
export async function startCommand(
  ctx: ToolContext,
  request: CommandRequest,
  folder: string,
  name: string = randomUUID(),
): Promise<StartedCommand> {
  const table = sessionProcesses(ctx.session);
  // Counted before any await, so that calls made at once cannot all pass the check (see MAX_RUNNING_COMMANDS):
  // before, 40 bash calls made at once in one session ran 40 sandboxes at once, each with the whole of the limits.
  const count = runningCommands.get(ctx.workspace) ?? { open: 0 };
  runningCommands.set(ctx.workspace, count);
  if (count.open >= SessionProcesses.MAX_RUNNING_COMMANDS) {
    throw new ToolError(
      `Already ${SessionProcesses.MAX_RUNNING_COMMANDS} shell commands are running in this session ` +
        "(bash calls and background jobs together, its sub-agents' included)",
      {
        code: "too_many_commands",
        recoveryHint: "Wait for a command to finish (or stop a background job with bash_stop), then try again.",
        details: { max: SessionProcesses.MAX_RUNNING_COMMANDS },
      },
    );
  }
  count.open++;
  let started: StartedCommand;
  try {
    started = await startReserved(ctx, request, folder, name, table);
  } catch (error) {
    count.open--;
    throw error;
  }
  // Its place comes back once its process group is gone.
  void started.gone.catch(() => {}).finally(() => count.open--);
  return started;
}

// Shell commands running, by workspace: a session and its sub-agents share theirs.
const runningCommands = new WeakMap<object, { open: number }>();

async function startReserved(
  ctx: ToolContext,
  request: CommandRequest,
  folder: string,
  name: string,
  table: SessionProcesses,
): Promise<StartedCommand> {
  const egress = await commandEgress(ctx, request.command).catch((error) => {
    throw codedFailure(error, "command_start_failed", "The command could not be started", ctx.signal);
  });
  try {
    const started = await ctx.policy.processes.start({
      ...(egress ? { egress: { network: egress.network, env: egress.env } } : {}),
      kind: "shell",
      command: request.command,
      call: ctx,
      ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
      ...(request.env !== undefined ? { env: request.env } : {}),
      maxOutputBytes: outputLimit(ctx, request.maxOutputBytes),
      outputFolder: folder,
      name,
    }, ctx.signal);
    void table.track(started.process, started.gone);
    // An abort between the door's return and here (a background job's call keeps no listener) stops it too.
    if (ctx.signal.aborted) {
      void started.process.terminate();
      await started.gone.catch(() => {});
      // Through the door, never by path: a command of the session may have made their folder a link.
      started.removeOutput();
      ctx.signal.throwIfAborted();
    }
    const gone = started.gone.finally(() => egress?.close());
    return { ...started, gone, networkRefused: egress?.refusals ?? [] };
  } catch (error) {
    await egress?.close();
    throw codedFailure(error, "command_start_failed", "The command could not be started", ctx.signal);
  }
}

// The per-call limit, never above the session's maximum.
function outputLimit(ctx: ToolContext, requested: number | undefined): number {
  return Math.min(requested ?? DEFAULT_OUTPUT_LIMIT_BYTES, sessionProcesses(ctx.session).maxOutputBytes);
}
