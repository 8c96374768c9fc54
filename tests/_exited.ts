/**
 * Waiting for a child process to end without missing it: the `exit` event may
 * fire while a test awaits something else, before a listener is attached, and
 * a listener attached then waits forever. Take the promise right after the
 * spawn (it listens from then on); taken later, the child's state is checked
 * first.
 *
 * @module
 */

import type { ChildProcess } from "node:child_process";

/** How a child ended: its exit code, or the signal that ended it. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Resolves once `child` has exited: at once if it is known to have, else on
 * its `exit` event. Rejects if the child could not be started.
 */
export function exited(child: ChildProcess): Promise<Exit> {
  // Deno's child_process sets signalCode when kill() is called, before the child has exited: there a killed child's
  // state tells nothing, and only a promise taken before the kill is sure.
  const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
  if (child.exitCode !== null || (child.signalCode !== null && !(isDeno && child.killed))) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", reject);
  });
}
