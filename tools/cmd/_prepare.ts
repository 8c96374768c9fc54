/**
 * Everything between a command the model sent and a started process: the
 * environment check, the working folder, the command analysis (which may ask a
 * person), the OS sandbox, output files, and the start itself.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { type FileHandle, mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { requireFence } from "@toolfence/core";
import { type QuarantinedPath, sandboxArgv } from "@toolfence/policy";
import { isExecutableFile } from "@toolfence/policy";
import { commandEnvironment, envAssignments } from "../_shared/cmd_env.ts";
import { type GroupProcess, spawnGroup } from "../_shared/cmd_process.ts";
import { sessionProcesses } from "./_jobs.ts";
import { commandEgress } from "./_egress.ts";
import { watchWorkspace, type WorkspaceWatch } from "./workspace_changes.ts";
import { captureOutput, codedFailure, DEFAULT_OUTPUT_LIMIT_BYTES, type OutputCapture } from "../_shared/cmd_output.ts";

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

/** A started command. */
export interface StartedCommand {
  /** Its process group. */
  process: GroupProcess;
  /**
   * Settles when the group is gone (leader exited, leftovers ended), its
   * output is in the files, and the sandbox's placeholders are removed.
   */
  gone: Promise<void>;
  /** The output being copied into the files, within its byte limit. */
  output: OutputCapture;
  /**
   * Protected paths at the workspace root that did not exist and that the
   * command created, moved into the session temp dir once `gone` settles.
   */
  quarantined: QuarantinedPath[];
  /** File with its standard output. */
  stdoutPath: string;
  /** File with its standard error. */
  stderrPath: string;
  /** Whether it runs under bubblewrap. */
  sandboxed: boolean;
  /** Why it runs without bubblewrap, when it does. */
  sandboxReason?: string;
  /** The working folder it started in. */
  cwd: string;
  /** The workspace as it was right before the start; `finish()` once it is gone reports what it changed. */
  watch: WorkspaceWatch;
  /** The network requests and tunnels the egress proxy refused (filled while it runs). */
  networkRefused: string[];
}

/**
 * Checks and starts `request`; output goes to two new files in
 * `<session temp dir>/<folder>/`. A command that the policy refuses never
 * starts. The output is kept up to its byte limit; past it the command is
 * stopped (see `output.limitReached`). Throws ToolErrors: `forbidden_env`,
 * `outside_workspace`, `not_a_directory`, `permission_denied`,
 * `fence_denied`, `sandbox_unavailable`, `spawn_failed`, and
 * `command_start_failed` for anything else (never a raw runtime error).
 */
export async function startCommand(
  ctx: ToolContext,
  request: CommandRequest,
  folder: string,
  name: string = randomUUID(),
): Promise<StartedCommand> {
  try {
    return await start(ctx, request, folder, name);
  } catch (error) {
    throw codedFailure(error, "command_start_failed", "The command could not be started");
  }
}

async function start(ctx: ToolContext, request: CommandRequest, folder: string, name: string): Promise<StartedCommand> {
  const tempDir = await ctx.workspace.tempDir();
  // The environment is checked first, so that nobody is asked about a command
  // that would be refused anyway.
  const env = commandEnvironment(ctx.policy.fence, tempDir, request.env);
  const cwd = await ctx.policy.resolveForRead(request.cwd ?? ".");
  if (!(await stat(cwd)).isDirectory()) {
    throw new ToolError(`cwd ${request.cwd} is not a folder`, {
      code: "not_a_directory",
      kind: "semantic",
      recoveryHint: "Pass a folder inside the workspace as cwd, or leave it out.",
      details: { cwd },
    });
  }
  // Variables from the model are judged as assignments before the command.
  await ctx.policy.authorizeCommand(envAssignments(request.env) + request.command, ctx.signal);
  const shell = await findShell(env.PATH);
  const egress = await commandEgress(ctx, request.command);
  if (egress) Object.assign(env, egress.env);
  const wrapped = await sandboxArgv([shell, "-c", request.command], {
    ...(egress ? { network: egress.network } : {}),
    workdir: cwd,
    writable: [ctx.workspace.workdir, tempDir],
    workspace: ctx.workspace.workdir,
    quarantine: path.join(tempDir, "protected-created"),
    mode: ctx.policy.sandbox,
    ...(ctx.policy.hiddenPaths?.length ? { hiddenPaths: ctx.policy.hiddenPaths } : {}),
    // spawnGroup starts it in a session of its own, with no terminal.
    callerSession: true,
  }).catch(async (error) => {
    await egress?.close();
    throw error;
  });
  const release = () => wrapped.release().finally(() => egress?.close());
  try {
    requireFence(ctx.policy.fence, "run", wrapped.argv[0]);
    ctx.signal.throwIfAborted();
    const limit = outputLimit(ctx, request.maxOutputBytes);
    const dir = path.join(tempDir, folder);
    await mkdir(dir, { recursive: true });
    const stdoutPath = path.join(dir, `${name}.stdout`);
    const stderrPath = path.join(dir, `${name}.stderr`);
    const files = await openOutputFiles(stdoutPath, stderrPath);
    // The last thing before the start, so that every change after it is the command's.
    const watch = await watchWorkspace(ctx);
    let process: GroupProcess;
    try {
      process = await spawnGroup(wrapped.argv, { cwd, env, extraFds: wrapped.fds, diesWithLeader: wrapped.sandboxed });
    } catch (error) {
      await Promise.allSettled([files.stdout.close(), files.stderr.close()]);
      throw error;
    }
    const output = captureOutput(process, files, limit, () => void process.terminate());
    const groupGone = sessionProcesses(ctx.session).track(process);
    const quarantined: QuarantinedPath[] = [];
    const gone = output.finished(groupGone)
      .finally(() => Promise.allSettled([files.stdout.close(), files.stderr.close()]))
      .then(release)
      .then((moved) => void quarantined.push(...moved));
    return {
      process,
      gone,
      output,
      stdoutPath,
      stderrPath,
      quarantined,
      sandboxed: wrapped.sandboxed,
      ...(wrapped.reason !== undefined && !wrapped.sandboxed ? { sandboxReason: wrapped.reason } : {}),
      cwd,
      watch,
      networkRefused: egress?.refusals ?? [],
    };
  } catch (error) {
    await release();
    throw error;
  }
}

async function openOutputFiles(
  stdoutPath: string,
  stderrPath: string,
): Promise<{ stdout: FileHandle; stderr: FileHandle }> {
  const stdout = await open(stdoutPath, "wx", 0o600);
  try {
    return { stdout, stderr: await open(stderrPath, "wx", 0o600) };
  } catch (error) {
    await stdout.close();
    throw error;
  }
}

// The per-call limit, never above the session's maximum.
function outputLimit(ctx: ToolContext, requested: number | undefined): number {
  return Math.min(requested ?? DEFAULT_OUTPUT_LIMIT_BYTES, sessionProcesses(ctx.session).maxOutputBytes);
}

const shells = new Map<string, string>();

// bash when it is on the PATH the command gets, else the POSIX shell. Under a
// fence that hides the folders, the name is left for the runtime to find.
async function findShell(searchPath: string | undefined): Promise<string> {
  const key = searchPath ?? "";
  const known = shells.get(key);
  if (known) return known;
  const found = await searchShell(searchPath);
  shells.set(key, found);
  return found;
}

async function searchShell(searchPath: string | undefined): Promise<string> {
  let hidden = false;
  for (const dir of (searchPath ?? "").split(":")) {
    if (!path.isAbsolute(dir)) continue;
    try {
      if (await isExecutableFile(path.join(dir, "bash"))) return "bash";
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === undefined) hidden = true;
    }
  }
  return hidden ? "bash" : "/bin/sh";
}
