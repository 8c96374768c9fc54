/**
 * Reading a workspace text file for the diagnostic tools, and running a
 * checker program to completion within a deadline.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { requireFence } from "@toolfence/policy";
import { commandEnvironment } from "../_shared/cmd_env.ts";
import { peekStream } from "../_shared/cmd_output.ts";
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
  const file = await ctx.policy.resolveForRead(input);
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
}

const OUTPUT_CAP = 200_000;

/**
 * Runs a checker (a fixed argv, no shell) in its own process group with the
 * scrubbed environment, output to files in the session temp dir, killed with
 * its group on timeout or cancel. Throws `fence_denied` when the runtime may
 * not start it and `spawn_failed` when it cannot be started.
 */
export async function runChecker(
  ctx: ToolContext,
  argv: string[],
  options: { cwd: string; timeoutMs: number; env?: Record<string, string> },
): Promise<CheckerRun> {
  requireFence(ctx.policy.fence, "run", argv[0]);
  const tempDir = await ctx.workspace.tempDir();
  const env = { ...commandEnvironment(ctx.policy.fence, tempDir), NO_COLOR: "1", ...options.env };
  const dir = path.join(tempDir, "checks");
  await mkdir(dir, { recursive: true });
  const base = path.join(dir, randomUUID());
  const out = await open(`${base}.stdout`, "wx", 0o600);
  const err = await open(`${base}.stderr`, "wx", 0o600);
  let timedOut = false;
  try {
    const started = await spawnGroup(argv, { cwd: options.cwd, env, stdoutFd: out.fd, stderrFd: err.fd });
    await Promise.all([out.close(), err.close()]);
    const timer = setTimeout(() => {
      timedOut = true;
      void started.terminate();
    }, options.timeoutMs);
    const onAbort = () => void started.terminate();
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    let exit: ProcessExit;
    try {
      exit = await started.exited;
      await started.terminate();
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
    ctx.signal.throwIfAborted();
    const read = async (file: string) => (await peekStream(file, OUTPUT_CAP, file)).text;
    return { exit, stdout: await read(`${base}.stdout`), stderr: await read(`${base}.stderr`), timedOut };
  } finally {
    await Promise.allSettled([out.close(), err.close()]);
    await Promise.all([rm(`${base}.stdout`, { force: true }), rm(`${base}.stderr`, { force: true })]);
  }
}
