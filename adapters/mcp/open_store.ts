/**
 * Opening the store a server keeps its shared state in, from its address:
 * `memory` (this process only), `sqlite:PATH` (a file, which several
 * processes of one machine may share) or `postgres://user@host:port/db` (a
 * fleet of replicas). A database's schema is brought up to date on opening
 * (see docs/fleet.md).
 *
 * @module
 */

import { MemoryStore, type Store } from "@toolfence/core";
import { migrate, SqlStore } from "./_sql_store.ts";

/** Options of {@linkcode openStore}. */
export interface OpenStoreOptions {
  /** PostgreSQL: connections kept open at most; default 10. */
  poolSize?: number;
  /**
   * Most bytes of artifacts kept per tenant (their bytes and references, the newest first); default
   * `DEFAULT_ARTIFACT_POOL_BYTES`, what a replica's sessions hold in memory.
   */
  maxTenantArtifactBytes?: number;
}

/**
 * Opens the store named by `address` and migrates its schema. Refuses an
 * address of an unknown kind, and a database whose schema is newer than this
 * toolfence.
 *
 * Requires `--allow-read` and `--allow-write` for a SQLite file, `--allow-net`
 * (and `--allow-env`, for the PG* variables) for PostgreSQL.
 *
 * @example
 * ```ts
 * import { openStore } from "@toolfence/adapters/mcp";
 * const store = await openStore("memory");
 * await store.appendAudit("local", { type: "decision", decision: "deny" });
 * console.log((await store.audit()).length); // 1
 * await store.close();
 * ```
 */
export async function openStore(address: string, options: OpenStoreOptions = {}): Promise<Store> {
  const { maxTenantArtifactBytes } = options;
  if (address === "memory") return new MemoryStore({ maxTenantArtifactBytes });
  let driver;
  if (address.startsWith("sqlite:")) {
    const file = address.slice("sqlite:".length);
    if (file === "") throw new Error("A SQLite store needs a file: sqlite:PATH");
    const { openSqlite } = await import("./_sqlite_driver.ts");
    driver = await openSqlite(file);
  } else if (/^postgres(ql)?:\/\//.test(address)) {
    const { openPostgres } = await import("./_postgres_driver.ts");
    driver = await openPostgres(address, options.poolSize);
  } else {
    throw new Error(
      `Unknown store ${JSON.stringify(address)}: give memory, sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`,
    );
  }
  try {
    await migrate(driver);
  } catch (error) {
    await driver.close();
    throw error;
  }
  return new SqlStore(driver, { maxTenantArtifactBytes });
}
