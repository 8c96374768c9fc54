// SQLite through `node:sqlite` (Deno 2, Node 22.5+): no native addon. Loaded only when a SQLite store is
// opened, so that the rest of the server runs on a Node without it. Several processes may share the file:
// WAL lets readers go on while one writes, and the busy timeout makes a writer wait for the lock instead
// of failing.

import type { Row, SqlConnection, SqlDriver } from "./_sql_store.ts";

// The part of node:sqlite used here (Node 20's type definitions, which the project checks with, have none).
interface Statement {
  all(...params: unknown[]): Row[];
  run(...params: unknown[]): { changes: number | bigint };
}
interface DatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

const BUSY_TIMEOUT_MS = 10_000;

// A connection waiting for SQLite's lock blocks its whole thread: a second transaction of this process would
// wait for the first, which could then never go on. This process's transactions take turns here instead;
// other processes wait in SQLite's busy handler.
let turn: Promise<unknown> = Promise.resolve();

/** Opens (creating when missing) a SQLite database file, or `:memory:`. */
export async function openSqlite(file: string): Promise<SqlDriver> {
  const specifier = "node:sqlite";
  let sqlite: { DatabaseSync: new (path: string) => DatabaseSync };
  try {
    sqlite = await import(specifier);
  } catch (error) {
    throw new Error(`A SQLite store needs node:sqlite (Deno 2, Node 22.5 or later): ${(error as Error).message}`);
  }
  const db = new sqlite.DatabaseSync(file);
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (file !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA foreign_keys = ON");
  // Prepared once per text: the store runs the same few statements again and again.
  const statements = new Map<string, Statement>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, statement = db.prepare(sql));
    return statement;
  };
  const connection: SqlConnection = {
    query: (sql, params = []) => Promise.resolve(prepared(sql).all(...params)),
    run: (sql, params = []) => Promise.resolve(Number(prepared(sql).run(...params).changes)),
  };
  let closed = false;
  return {
    dialect: "sqlite",
    ...connection,
    exclusive(work) {
      const run = turn.then(async () => {
        db.exec("BEGIN IMMEDIATE");
        try {
          const result = await work(connection);
          db.exec("COMMIT");
          return result;
        } catch (error) {
          db.exec("ROLLBACK");
          throw error;
        }
      });
      turn = run.catch(() => {});
      return run;
    },
    close() {
      if (!closed) db.close();
      closed = true;
      return Promise.resolve();
    },
  };
}
