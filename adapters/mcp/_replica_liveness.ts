// When a replica of a fleet counts as alive: it writes a heartbeat to the store every HEARTBEAT_MS, and one
// silent for DEAD_AFTER_MS (or gone: shut down, so forgotten) is dead. Shared by the server (which ends a
// dead replica's calls) and the console's store-backed queue (which hides a dead replica's questions).

import type { Store } from "@toolfence/core";

/** How often a replica says it is alive. */
export const HEARTBEAT_MS = 1_000;
/** How long a replica may be silent before its calls are ended as interrupted. */
export const DEAD_AFTER_MS = 5_000;

/** Whether `replica` wrote a heartbeat within DEAD_AFTER_MS and has not left. */
export async function replicaAlive(store: Store, replica: string): Promise<boolean> {
  const seen = await store.replicaSeenAt(replica);
  return seen !== undefined && Date.now() - seen < DEAD_AFTER_MS;
}

/** Lets the process end while `timer` is still set (under Deno and Node). */
export function unrefTimer(timer: ReturnType<typeof setInterval>): void {
  (timer as unknown as { unref?: () => void }).unref?.();
  if (typeof (globalThis as { Deno?: unknown }).Deno !== "undefined") {
    (globalThis as unknown as { Deno: { unrefTimer(id: number): void } }).Deno.unrefTimer(timer as unknown as number);
  }
}
