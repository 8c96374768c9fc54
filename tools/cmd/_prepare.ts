/**
 * Everything between a command the model sent and a started process: the
 * environment check, the working folder, the command analysis (which may ask a
 * person), the OS sandbox, output files, and the start itself.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { access, constants, mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { requireFence } from "@toolfence/policy";
import { sandboxArgv } from "@toolfence/policy";
import { commandEnvironment, envAssignments } from "../_shared/cmd_env.ts";
import { type GroupProcess, spawnGroup } from "../_shared/cmd_process.ts";
import { sessionProcesses } from "./_jobs.ts";

/** What the model asked to run. */
export interface CommandRequest {
  /** The command line, run with `bash -c`. */
  command: string;
  /** Working folder, relative to the workspace; default the workdir. */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** A started command. */
export interface StartedCommand {
  /** Its process group. */
  process: GroupProcess;
  /** Settles when the group is gone (leader exited, leftovers ended). */
  gone: Promise<void>;
  /** File with its standard output. */
  stdoutPath: string;
  /** File with its standard error. */
  stderrPath: string;
  /** Whether it runs under bubblewrap. */
  sandboxed: boolean;
  /** The working folder it started in. */
  cwd: string;
}

/**
 * Checks and starts `request`; output goes to two new files in
 * `<session temp dir>/<folder>/`. A command that the policy refuses never
 * starts. Throws ToolErrors: `forbidden_env`, `outside_workspace`,
 * `not_a_directory`, `permission_denied`, `fence_denied`,
 * `sandbox_unavailable`, `spawn_failed`.
 */
export async function startCommand(
  ctx: ToolContext,
  request: CommandRequest,
  folder: string,
  name: string = randomUUID(),
): Promise<StartedCommand> {
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
  const wrapped = await sandboxArgv([shell, "-c", request.command], {
    workdir: cwd,
    writable: [ctx.workspace.workdir, tempDir],
    mode: ctx.policy.sandbox,
  });
  requireFence(ctx.policy.fence, "run", wrapped.argv[0]);
  ctx.signal.throwIfAborted();

  const dir = path.join(tempDir, folder);
  await mkdir(dir, { recursive: true });
  const stdoutPath = path.join(dir, `${name}.stdout`);
  const stderrPath = path.join(dir, `${name}.stderr`);
  const stdout = await open(stdoutPath, "wx", 0o600);
  let stderr;
  try {
    stderr = await open(stderrPath, "wx", 0o600);
    const process = await spawnGroup(wrapped.argv, { cwd, env, stdoutFd: stdout.fd, stderrFd: stderr.fd });
    const gone = sessionProcesses(ctx.session).track(process);
    return { process, gone, stdoutPath, stderrPath, sandboxed: wrapped.sandboxed, cwd };
  } finally {
    // The child has its own copies of the descriptors.
    await stdout.close();
    await stderr?.close();
  }
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
      await access(path.join(dir, "bash"), constants.X_OK);
      return "bash";
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === undefined) hidden = true;
    }
  }
  return hidden ? "bash" : "/bin/sh";
}
