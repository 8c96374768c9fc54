// PostgreSQL through `postgres` (porsager's client: no dependencies of its own, pure JavaScript, kept up,
// pipelining and a pool built in). Loaded only when a PostgreSQL store is opened, so that it is an
// optional peer of the npm package: a server without a fleet never installs it.

import { importPeer } from "@toolfence/core";
import { POSTGRES } from "../_peers.ts";
import type { Row, SqlConnection, SqlDriver } from "./_sql_store.ts";

// Any number: one lock id, the same in every replica, held while migrating.
const MIGRATION_LOCK = 7_265_906_131;

// The store's statements use `?`; PostgreSQL numbers its parameters (none of the statements has a `?` in a
// string literal).
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

interface Result extends Array<Row> {
  count: number;
}
interface Sql {
  unsafe(query: string, params?: unknown[]): Promise<Result>;
  begin<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  end(options?: { timeout?: number }): Promise<void>;
}

function connectionOf(sql: Sql): SqlConnection {
  return {
    query: (text, params = []) => sql.unsafe(numbered(text), [...params]),
    run: async (text, params = []) => (await sql.unsafe(numbered(text), [...params])).count,
  };
}

/** Connects to a PostgreSQL database (`postgres://user:password@host:port/database`). */
export async function openPostgres(url: string, poolSize = 10): Promise<SqlDriver> {
  const { default: postgres } = await importPeer(POSTGRES, () => import("postgres"));
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    connection: { application_name: "toolfence" },
  }) as unknown as Sql;
  try {
    await sql.unsafe("SELECT 1");
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw new Error(`Cannot reach the PostgreSQL store: ${(error as Error).message}`);
  }
  return {
    dialect: "postgres",
    ...connectionOf(sql),
    exclusive: (work) =>
      sql.begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
        return await work(connectionOf(tx));
      }),
    close: () => sql.end({ timeout: 5 }),
  };
}
