/**
 * Waiting for a child process to end without missing it: the `exit` event may
 * fire while a test awaits something else, before a listener is attached, and
 * a listener attached then waits forever. The child's state is checked first.
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
 * Resolves once `child` has exited: at once if it already has, else on its
 * `exit` event. Rejects if the child could not be started.
 */
export function exited(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve, reject) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", reject);
  });
}
