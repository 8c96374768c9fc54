/**
 * The session's maximum for how much output one command may keep: the
 * per-call `max_output_bytes` of `bash` and `bash_background` (default
 * 64 MiB) is cut to it.
 *
 * @module
 */

import type { SessionBase as Session } from "@toolfence/core";
import { SessionProcesses, sessionProcesses } from "./_jobs.ts";

/** The session maximum when none is set: 256 MiB. */
export const DEFAULT_SESSION_OUTPUT_MAXIMUM: number = SessionProcesses.DEFAULT_MAX_OUTPUT_BYTES;

/**
 * Sets the most bytes of stdout and stderr together that one command of
 * `session` may keep before it is stopped (at least 1 KiB). Commands already
 * running keep their limit.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { Session } from "@toolfence/policy";
 * import { setSessionOutputMaximum } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * setSessionOutputMaximum(session, 16 * 1024 * 1024);
 * await session.close();
 * ```
 */
export function setSessionOutputMaximum(session: Session, bytes: number): void {
  if (!Number.isInteger(bytes) || bytes < 1024) {
    throw new RangeError(`The output maximum must be a whole number of bytes, at least 1024, not ${bytes}`);
  }
  sessionProcesses(session).maxOutputBytes = bytes;
}

/**
 * The most bytes one command of `session` may keep.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { Session } from "@toolfence/policy";
 * import { sessionOutputMaximum } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log(sessionOutputMaximum(session)); // 268435456
 * await session.close();
 * ```
 */
export function sessionOutputMaximum(session: Session): number {
  return sessionProcesses(session).maxOutputBytes;
}
