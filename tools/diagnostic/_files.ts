/**
 * Reading a workspace text file for the diagnostic tools, and running a
 * checker program to completion within a deadline through the process door.
 *
 * @module
 */

import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ProcessExit, ToolContext } from "@toolfence/core";
import { openFileOnly, readFully } from "../_shared/fs_open.ts";
import { codedFailure, outputUnavailable, peekStream } from "../_shared/cmd_output.ts";
import { stopOnAbort } from "../_shared/abort.ts";
import { limitMessage, limitRemedy } from "@toolfence/policy";

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
 *
 * The file is opened by the file door (`openRegularFile`), never by its path: an open of the resolved path follows
 * whatever link is there by then, and a file swapped for a link to a file outside the workspace (or a denied one)
 * between the resolution and the open gave its text to the diff (`tests/tools/diagnostic/diff_files_test.ts`).
 */
export async function readTextFile(ctx: ToolContext, input: string): Promise<TextFile> {
  const target = await ctx.policy.files.resolve(input);
  const file = target.path;
  const shown = ctx.workspace.relative(file);
  const opened = await openFileOnly(ctx.policy.files, target, shown);
  let bytes: Uint8Array;
  try {
    if (opened.stat.size > MAX_TEXT_BYTES) {
      throw new ToolError(`${shown} is ${opened.stat.size} bytes; the limit is ${MAX_TEXT_BYTES}`, {
        code: "file_too_large",
        kind: "semantic",
        recoverable: false,
      });
    }
    bytes = new Uint8Array(opened.stat.size);
    const bytesRead = await readFully(opened.handle, bytes, opened.stat.size, 0);
    bytes = bytes.subarray(0, bytesRead);
  } finally {
    await opened.handle.close();
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
  privateEnv?: (privateDir: string) => Record<string, string>;
  /** Host folders bound read-only at another place inside, e.g. caches under the private folder. */
  readOnlyBinds?: (privateDir: string) => Promise<readonly { from: string; to: string }[]>;
}

const OUTPUT_CAP = 200_000;
const OUTPUT_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Runs a checker (a fixed argv whose first element is the program's absolute
 * path, no shell) to completion through the policy's process door
 * (`ctx.policy.processes`, a `program` request): in the sandbox's one read
 * view it sees the system folders, its own binary, the workspace (read-only,
 * hidden paths masked) and `readable`, writes only a private folder in the
 * session temp dir, and has no network. Without a working sandbox the door
 * asks or refuses (see {@linkcode CheckerOptions.unconfined});
 * `sandbox: "required"` refuses with `sandbox_unavailable`. Output goes
 * through the door's bounded capture to files in the session temp dir; the
 * checker is killed with its group on timeout or cancel. Throws
 * `fence_denied`, `spawn_failed`, `sandbox_unavailable`, `permission_denied`,
 * `resource_limit` (naming the limit it hit), and `checker_failed` for anything else (never a raw runtime error).
 */
export async function runChecker(ctx: ToolContext, argv: string[], options: CheckerOptions): Promise<CheckerRun> {
  try {
    return await runToEnd(ctx, argv, options);
  } catch (error) {
    throw codedFailure(error, "checker_failed", `${path.basename(argv[0])} could not be run`, ctx.signal);
  }
}

async function runToEnd(ctx: ToolContext, argv: string[], options: CheckerOptions): Promise<CheckerRun> {
  const started = await ctx.policy.processes.start({
    kind: "program",
    argv,
    cwd: options.cwd,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.readable !== undefined ? { readable: options.readable } : {}),
    ...(options.privateEnv !== undefined ? { privateEnv: options.privateEnv } : {}),
    ...(options.readOnlyBinds !== undefined ? { readOnlyBinds: options.readOnlyBinds } : {}),
    unconfined: options.unconfined,
    maxOutputBytes: OUTPUT_LIMIT_BYTES,
    outputFolder: "checks",
  }, ctx.signal);
  let timedOut = false;
  try {
    const timer = setTimeout(() => {
      timedOut = true;
      void started.process.terminate();
    }, options.timeoutMs);
    const stopListening = stopOnAbort(ctx.signal, started.process);
    let exit: ProcessExit;
    try {
      exit = await started.process.exited;
      await started.gone;
    } finally {
      clearTimeout(timer);
      stopListening();
    }
    ctx.signal.throwIfAborted();
    const hit = timedOut || started.output.limitReached ? undefined : await started.resourceLimit();
    if (hit) {
      throw new ToolError(limitMessage(path.basename(argv[0]), hit), {
        code: "resource_limit",
        recoveryHint: `Check fewer files at once, or ${limitRemedy(hit)}.`,
        details: { ...hit, exit },
      });
    }
    // By the door's descriptor, never by path: the checker may write the folder its output lies in.
    const read = async (stream: "stdout" | "stderr") => {
      const file = stream === "stdout" ? started.stdoutPath : started.stderrPath;
      try {
        return (await peekStream({ path: file, open: () => started.openOutput(stream) }, OUTPUT_CAP, file)).text;
      } catch (error) {
        if (error instanceof ToolError) throw error;
        throw outputUnavailable(file, error);
      }
    };
    return {
      exit,
      stdout: await read("stdout"),
      stderr: await read("stderr"),
      timedOut,
      sandboxed: started.sandboxed,
    };
  } finally {
    void started.process.terminate();
    await started.gone.catch(() => {});
    // Through the door, never by path: a command of the session may have made their folder a link.
    started.removeOutput();
  }
}
