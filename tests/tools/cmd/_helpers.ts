// Shared checks for the shell tool tests: whether processes are alive, found
// by pid or by a unique word in their command line.

import { readdir, readFile } from "node:fs/promises";
import process from "node:process";
import { execFileSync } from "node:child_process";
import { ToolBox } from "../../../toolbox.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import type { Host } from "../../../core/mod.ts";
import { cmdTools } from "../../../tools/cmd/mod.ts";
import type { ToolResult } from "../../../core/result.ts";
import assert from "node:assert/strict";

/** A toolbox with the cmd group. */
export function cmdBox(): ToolBox {
  return new ToolBox().register(...cmdTools());
}

/**
 * A person who lets every command run and says no to every network destination not on the list, noting each
 * network question's message in `asked`.
 */
export function denyingNetworkHost(asked: string[]): Host {
  return callbackHost({
    choose: (request) => {
      if (request.title !== "Network destination") return request.options[0].value as never;
      asked.push(request.message);
      return "deny" as never;
    },
    confirm: () => true,
  });
}

/** Whether a process with this pid exists (and is not a zombie). */
export async function pidAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Pids of live processes whose command line contains every one of `words` as an argument. */
export async function pidsWithArgs(...words: string[]): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = (await readFile(`/proc/${entry}/cmdline`, "utf8")).split("\0");
      if (words.every((w) => args.includes(w)) && await pidAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * Polls `check` every 50 ms until it is true or `ms` pass; returns its last answer. The bound only ends a hang: what
 * is awaited comes at once on a quiet machine, and seconds late on a loaded one.
 */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 60_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A unique number usable as a `sleep` duration that marks a process. */
/** SIGKILLs every `sleep <marker>` still running: a test's cleanup, whatever its assertions said. */
export async function killSleeps(marker: string): Promise<void> {
  for (const pid of await pidsWithArgs("sleep", marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

export function markerSeconds(): string {
  return `${300 + Math.floor(Math.random() * 600)}.${Math.floor(Math.random() * 1e6)}`;
}

/** Asserts a successful result and returns its output. */
export function okOutput<T = Record<string, unknown>>(result: ToolResult): T {
  assert.equal(result.status, "success", `${result.errorCode}: ${result.error}`);
  return result.output as T;
}

/** The output of a call that failed with `status` and `code` (a failed command keeps its whole result). */
export function failedOutput<T = Record<string, unknown>>(
  result: ToolResult,
  status: ToolResult["status"],
  code: string,
): T {
  assert.equal(result.status, status, `${result.status} ${result.errorCode}: ${result.error}`);
  assert.equal(result.errorCode, code, result.error);
  assert.notEqual(result.output, null, "the failure kept no output");
  return result.output as T;
}

/** Whether `program` is on this machine's PATH (a probe that needs it is skipped otherwise). */
export function installed(program: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A seeded random whole number below `n`. */
export type Next = (n: number) => number;
/** One shell operation of a random script on the names `x` and `y`. */
export type ScriptOp = (x: string, y: string, tag: string, next: Next) => string;

/**
 * `scripts` seeded random shell scripts: each of `count(next)` operations of `ops` on two of `names`, every one run
 * whether an earlier one failed.
 */
export function randomScripts(
  seed: number,
  names: readonly string[],
  scripts: number,
  count: (next: Next) => number,
  ops: readonly ScriptOp[],
): string[] {
  const next: Next = (n) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pick = () => names[next(names.length)];
  return Array.from({ length: scripts }, (_, round) => {
    const parts: string[] = [];
    for (let i = 0, n = count(next); i < n; i++) {
      const [x, y] = [pick(), pick()];
      parts.push(`{ ${ops[next(ops.length)](x, y, `${round}${i}`, next)}; } 2>/dev/null`);
    }
    return parts.join("; ") + "; true";
  });
}
