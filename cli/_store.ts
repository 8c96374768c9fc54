// The store of a fleet, opened for one command of the command line (audit, grants, prune) and closed after it.
import process from "node:process";
import type { Store } from "@toolfence/core";

/**
 * Opens the store at `address`, runs `work` on it and closes it; returns
 * `work`'s exit code, or 1 with the reason on stderr when the store cannot be
 * opened.
 */
export async function withStore(address: string, work: (store: Store) => Promise<number>): Promise<number> {
  // Loaded here: only these commands need the store (and, for PostgreSQL, its client).
  const { openStore } = await import("@toolfence/adapters/mcp");
  let store: Store;
  try {
    store = await openStore(address, { poolSize: 1 });
  } catch (error) {
    process.stderr.write(`toolfence: the store ${address} cannot be read: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
