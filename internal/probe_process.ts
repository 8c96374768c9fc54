/**
 * Runs a short probe process to completion, on the runtime's own process API:
 * Deno's `node:child_process` needs `--allow-env` for every spawn, while
 * `Deno.Command` needs only `--allow-run` for the program.
 *
 * @module
 */
import { execFile } from "node:child_process";

interface DenoCommandLike {
  Command: new (file: string, options: Record<string, unknown>) => {
    output(): Promise<{ success: boolean; stdout: Uint8Array; stderr: Uint8Array }>;
  };
}

/** The outcome of a probe: whether it exited with 0, and its error output or failure. */
export interface ProbeOutcome {
  /** Whether it exited with 0. */
  ok: boolean;
  /** Its error output, or why it could not run. */
  message: string;
}

// One run to its end, with its output as text: `ok` false when it could not run, failed or ran out of time.
async function runToEnd(
  file: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const deno = (globalThis as unknown as { Deno?: DenoCommandLike }).Deno;
  if (typeof deno?.Command === "function") {
    try {
      const out = await new deno.Command(file, {
        args: [...args],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(timeoutMs),
      }).output();
      const text = new TextDecoder();
      return { ok: out.success, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
    } catch (error) {
      return { ok: false, stdout: "", stderr: (error as Error).message };
    }
  }
  return await new Promise((resolve) => {
    try {
      execFile(
        file,
        [...args],
        { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" },
        (error, stdout, stderr) => resolve({ ok: error === null, stdout, stderr: stderr || (error?.message ?? "") }),
      );
    } catch (error) {
      resolve({ ok: false, stdout: "", stderr: (error as Error).message });
    }
  });
}

/** Runs `file` with `args`, no input, for at most `timeoutMs`; never throws. */
export async function runProbe(
  file: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const run = await runToEnd(file, args, timeoutMs);
  return { ok: run.ok, message: run.stderr.trim() };
}

/**
 * Runs `file` with `args`, no input, for at most `timeoutMs`, and returns what
 * it wrote to its standard output (decoded as UTF-8, not trimmed), or
 * undefined when it could not run, failed or ran out of time; never throws.
 */
async function probeOutput(
  file: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<string | undefined> {
  const run = await runToEnd(file, args, timeoutMs);
  return run.ok ? run.stdout : undefined;
}

// How long a child shell's look may take. A command waits for it, and is refused when it fails (the sandbox would show
// what it could not judge): 5 s was too short on a loaded 2-core machine, where a spawn alone can take seconds.
const SHELL_LOOK_MS = 30_000;

/**
 * Runs the POSIX shell script `script` (`/bin/sh -c`, its `$@` being `args`)
 * as {@linkcode probeOutput} runs a program, for at most 30 s: what a server
 * whose runtime may not read a folder asks a child to look at for it.
 */
export function shellOutput(script: string, args: readonly string[]): Promise<string | undefined> {
  return probeOutput("/bin/sh", ["-c", script, "sh", ...args], SHELL_LOOK_MS);
}
