// The store's schema, as an ordered list of migrations. A database remembers which it has had in
// `schema_version`; opening a store applies the missing ones in order, in one transaction, under a lock (so
// that replicas starting together migrate once). A database whose schema is newer than this code knows is
// refused: an older replica must not write rows a newer one would misread. docs/fleet.md documents the schema.

/** What a dialect writes differently. */
const DIALECT = {
  sqlite: { serial: "seq INTEGER PRIMARY KEY AUTOINCREMENT", blob: "BLOB" },
  postgres: { serial: "seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", blob: "BYTEA" },
} as const;

/** The SQL dialects a store speaks. */
export type Dialect = keyof typeof DIALECT;

/** One migration: its version and its statements (`{SERIAL}` and `{BLOB}` written per dialect). */
interface Migration {
  version: number;
  statements: string[];
}

/** Every migration, oldest first; a new one is appended, an applied one never changed. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, generation INTEGER NOT NULL,
        owner TEXT NOT NULL, created_at BIGINT NOT NULL, last_active BIGINT NOT NULL, ended_at BIGINT,
        data TEXT NOT NULL)`,
      `CREATE INDEX sessions_open ON sessions (tenant, ended_at)`,
      `CREATE TABLE events ({SERIAL}, session_id TEXT NOT NULL, stream_id TEXT NOT NULL, message TEXT NOT NULL)`,
      `CREATE INDEX events_session ON events (session_id, seq)`,
      `CREATE TABLE grants (tenant TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL, data TEXT NOT NULL,
        saved_at BIGINT NOT NULL, PRIMARY KEY (tenant, kind, subject))`,
      `CREATE TABLE questions (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT NOT NULL,
        question TEXT NOT NULL, asked_at BIGINT NOT NULL, answer TEXT, answered_by TEXT, answered_at BIGINT)`,
      `CREATE INDEX questions_pending ON questions (tenant, answered_at)`,
      `CREATE TABLE calls (session_id TEXT NOT NULL, request_id TEXT NOT NULL, tenant TEXT NOT NULL,
        owner TEXT NOT NULL, tool TEXT NOT NULL, stream_id TEXT, started_at BIGINT NOT NULL, state TEXT NOT NULL,
        answer TEXT, ended_at BIGINT, PRIMARY KEY (session_id, request_id))`,
      `CREATE INDEX calls_running ON calls (state, owner)`,
      `CREATE TABLE late_results ({SERIAL}, tenant TEXT NOT NULL, session_id TEXT NOT NULL, result TEXT NOT NULL)`,
      `CREATE INDEX late_results_session ON late_results (session_id, seq)`,
      `CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, bytes {BLOB} NOT NULL)`,
      `CREATE TABLE artifacts ({SERIAL}, tenant TEXT NOT NULL, session_id TEXT NOT NULL, id TEXT NOT NULL,
        sha256 TEXT NOT NULL REFERENCES blobs (sha256), ref TEXT NOT NULL, UNIQUE (tenant, session_id, id))`,
      `CREATE TABLE audit ({SERIAL}, tenant TEXT NOT NULL, record TEXT NOT NULL)`,
      `CREATE INDEX audit_tenant ON audit (tenant, seq)`,
      `CREATE TABLE replicas (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL)`,
    ],
  },
  {
    // An event's id (`Last-Event-ID`) was its `seq`, one sequence for the whole store: the ids a session saw told it
    // how many events other sessions (other tenants) had sent in between. Events now have an opaque id of their
    // own; the events already kept keep their old id (their `seq` as text), so a client holding one still resumes.
    version: 2,
    statements: [
      `ALTER TABLE events ADD COLUMN event_id TEXT`,
      `UPDATE events SET event_id = CAST(seq AS TEXT)`,
      `CREATE UNIQUE INDEX events_event_id ON events (session_id, event_id)`,
    ],
  },
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** A statement of a migration written for a dialect. */
export function dialectSql(statement: string, dialect: Dialect): string {
  return statement.replaceAll("{SERIAL}", DIALECT[dialect].serial).replaceAll("{BLOB}", DIALECT[dialect].blob);
}
