/**
 * Reading facts about the machine that a runtime may fence (Deno's
 * `--allow-sys`), without prompting: a fenced fact is simply left out.
 *
 * @module
 */

import { isRuntimePermissionError } from "@toolfence/policy";

interface DenoSysLike {
  permissions?: { querySync?(descriptor: { name: "sys"; kind: string }): { state: string } };
}

/**
 * `read()` when the runtime grants the `sys` permission `kind` (Deno) or has no
 * such fence (Node), else undefined. Asking first keeps Deno from prompting.
 */
export function sysFact<T>(kind: string, read: () => T): T | undefined {
  const deno = (globalThis as { Deno?: DenoSysLike }).Deno;
  const query = deno?.permissions?.querySync;
  if (query && query.call(deno!.permissions, { name: "sys", kind }).state !== "granted") return undefined;
  try {
    return read();
  } catch (error) {
    if (isRuntimePermissionError(error)) return undefined;
    throw error;
  }
}
