/**
 * Reading a workspace text file for the diagnostic tools, and running a
 * checker program to completion within a deadline, confined like a command.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { requireFence } from "@toolfence/core";
import { sandboxArgv, sandboxUnavailable } from "@toolfence/policy";
import { commandEnvironment } from "../_shared/cmd_env.ts";
import { captureOutput, codedFailure, outputUnavailable, peekStream } from "../_shared/cmd_output.ts";
import { type ProcessExit, spawnGroup } from "../_shared/cmd_process.ts";

/** The largest file the diagnostic tools read. */
export const MAX_TEXT_BYTES = 5 * 1024 * 1024;

/** A text file of the workspace. */
export interface TextFile {
  /** Absolute real path. */
  path: string;
  /** Path for display (relative to the workspace when inside it). */
  shown: string;
  /** The text, without a byte-order mark. */
  text: string;
}

/**
 * Reads a UTF-8 text file of the workspace (at most 5 MB, a regular file, no
 * NUL bytes); throws `not_a_file`, `file_too_large`, `binary_file`.
 */
export async function readTextFile(ctx: ToolContext, input: string): Promise<TextFile> {
  const file = (await ctx.policy.files.resolve(input)).path;
  const shown = ctx.workspace.relative(file);
  const handle = await open(file, "r");
  let bytes: Uint8Array;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      throw new ToolError(`${shown} is not a regular file`, { code: "not_a_file", kind: "semantic" });
    }
    if (stat.size > MAX_TEXT_BYTES) {
      throw new ToolError(`${shown} is ${stat.size} bytes; the limit is ${MAX_TEXT_BYTES}`, {
        code: "file_too_large",
        kind: "semantic",
        recoverable: false,
      });
    }
    bytes = new Uint8Array(stat.size);
    const { bytesRead } = await handle.read(bytes, 0, stat.size, 0);
    bytes = bytes.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if (bytes.includes(0)) {
    throw new ToolError(`${shown} is a binary file`, { code: "binary_file", kind: "semantic", recoverable: false });
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ToolError(`${shown} is not valid UTF-8`, { code: "not_utf8", kind: "semantic", recoverable: false });
  }
  return { path: file, shown, text: text.startsWith("\uFEFF") ? text.slice(1) : text };
}

/** How a checker program ended. */
export interface CheckerRun {
  exit: ProcessExit;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Whether it ran under the OS sandbox. */
  sandboxed: boolean;
}

/** Options of {@linkcode runChecker}. */
export interface CheckerOptions {
  /** The folder it starts in (absolute). */
  cwd: string;
  /** Milliseconds before it is killed. */
  timeoutMs: number;
  /** Extra variables. */
  env?: Record<string, string>;
  /** Absolute paths it may read besides the program and the workspace (bound read-only). */
  readable?: string[];
  /**
   * Where it does not run under the sandbox (sandbox `off`, or unavailable):
   * `ask` asks a person (never answered automatically) before it starts
   * unconfined; `refuse` throws `sandbox_unavailable` so that the caller can
   * judge another way.
   */
  unconfined: "ask" | "refuse";
  /** Called with the private writable folder (inside the sandbox too) to add variables. */
  privateEnv?: (privateDir: string) => Record<string, string> | Promise<Record<string, string>>;
  /** Extra read-only mounts `[host path, path inside]`, e.g. caches. */
  mounts?: (privateDir: string) => Promise<string[]>;
}

const OUTPUT_CAP = 200_000;
const OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Runs a checker (a fixed argv whose first element is the program's absolute
 * path, no shell) in its own process group, confined like a command: under
 * bubblewrap's `program` profile it sees only the system libraries, its own
 * binary, the workspace (read-only) and `readable`, writes only a private
 * folder in the session temp dir, and has no network. Without a working
 * sandbox it asks or refuses (see {@linkcode CheckerOptions.unconfined});
 * `sandbox: "required"` refuses with `sandbox_unavailable`. Output goes
 * through the bounded capture to files in the session temp dir; the checker
 * is killed with its group on timeout or cancel. Throws `fence_denied`,
 * `spawn_failed`, `sandbox_unavailable`, `permission_denied`, and
 * `checker_failed` for anything else (never a raw runtime error).
 */
export async function runChecker(ctx: ToolContext, argv: string[], options: CheckerOptions): Promise<CheckerRun> {
  try {
    return await runConfined(ctx, argv, options);
  } catch (error) {
    throw codedFailure(error, "checker_failed", `${path.basename(argv[0])} could not be run`);
  }
}

async function runConfined(ctx: ToolContext, argv: string[], options: CheckerOptions): Promise<CheckerRun> {
  requireFence(ctx.policy.fence, "run", argv[0]);
  const tempDir = await ctx.workspace.tempDir();
  const base = path.join(tempDir, "checks", randomUUID());
  const privateDir = path.join(tempDir, "checks", "private");
  await mkdir(privateDir, { recursive: true, mode: 0o700 });
  // The program is bound and started under a spelling of its path that is not
  // Deno's execPath: Deno's node:child_process rewrites the arguments of any
  // command line that contains its own executable (adding `run -A`).
  const program = `${path.dirname(argv[0])}/./${path.basename(argv[0])}`;
  const wrapped = await sandboxArgv([program, ...argv.slice(1)], {
    workdir: options.cwd,
    writable: [privateDir],
    readable: [...new Set([ctx.workspace.workdir, ...(options.readable ?? [])])],
    protectedPaths: [],
    profile: "program",
    mode: ctx.policy.sandbox,
    // spawnGroup starts it in a session of its own, with no terminal.
    callerSession: true,
  });
  if (!wrapped.sandboxed) await allowUnconfined(ctx, argv, options, wrapped.reason ?? "the sandbox is off");
  let finalArgv = wrapped.sandboxed ? wrapped.argv : argv;
  if (wrapped.sandboxed) {
    // The program and the extra mounts go right before the confinement options at the end.
    const at = finalArgv.indexOf("--unshare-all");
    const extra = ["--ro-bind", program, program, ...(options.mounts ? await options.mounts(privateDir) : [])];
    finalArgv = [...finalArgv.slice(0, at), ...extra, ...finalArgv.slice(at)];
  }
  requireFence(ctx.policy.fence, "run", finalArgv[0]);
  const env = {
    ...commandEnvironment(ctx.policy.fence, tempDir),
    NO_COLOR: "1",
    ...(wrapped.sandboxed ? { HOME: privateDir, TMPDIR: "/tmp" } : {}),
    ...(options.privateEnv ? await options.privateEnv(privateDir) : {}),
    ...options.env,
  };
  await mkdir(path.dirname(base), { recursive: true });
  const out = await open(`${base}.stdout`, "wx", 0o600);
  const err = await open(`${base}.stderr`, "wx", 0o600);
  let timedOut = false;
  try {
    const started = await spawnGroup(finalArgv, {
      cwd: options.cwd,
      env,
      extraFds: wrapped.fds,
      diesWithLeader: wrapped.sandboxed,
    });
    const capture = captureOutput(started, { stdout: out, stderr: err }, OUTPUT_LIMIT_BYTES, () => {
      void started.terminate();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      void started.terminate();
    }, options.timeoutMs);
    const onAbort = () => void started.terminate();
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    let exit: ProcessExit;
    try {
      exit = await started.exited;
      await capture.finished(started.terminate());
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
    ctx.signal.throwIfAborted();
    await Promise.all([out.close(), err.close()]);
    const read = async (file: string) => {
      try {
        return (await peekStream(file, OUTPUT_CAP, file)).text;
      } catch (error) {
        throw outputUnavailable(file, error);
      }
    };
    return {
      exit,
      stdout: await read(`${base}.stdout`),
      stderr: await read(`${base}.stderr`),
      timedOut,
      sandboxed: wrapped.sandboxed,
    };
  } finally {
    await Promise.allSettled([out.close(), err.close()]);
    await Promise.all([rm(`${base}.stdout`, { force: true }), rm(`${base}.stderr`, { force: true })]);
    await wrapped.release();
  }
}

async function allowUnconfined(ctx: ToolContext, argv: string[], options: CheckerOptions, reason: string) {
  if (options.unconfined === "refuse") throw sandboxUnavailable(reason);
  const program = path.basename(argv[0]);
  const outcome = await ctx.session.confirmOutcome({
    title: "Run a checker without the OS sandbox",
    message: `${program} would run without the OS sandbox (${reason}). It would see every file you can read ` +
      "and could use the network (registries named in the project's configuration). Run it anyway?",
    defaultChoice: false,
    requirePerson: true,
  }, ctx.signal);
  if (outcome.choice && outcome.source === "user") return;
  throw new ToolError(
    `${program} was not run: it needs the OS sandbox, and the user did not allow running it without`,
    {
      code: "permission_denied",
      kind: "policy",
      status: "skipped",
      recoverable: false,
      recoveryHint: "Do not retry; ask the user to install bubblewrap, or check another way.",
      details: { program: argv[0], reason },
    },
  );
}
