// The store on a SQL database: one implementation of the core's Store for SQLite and PostgreSQL, over a
// driver that runs statements written with `?` placeholders. JSON values are kept as text (both databases
// read them back the same), times as milliseconds since the epoch.

import type {
  ArtifactRef,
  AuditQuery,
  LateResult,
  PrunedCounts,
  Store,
  StoredAuditRecord,
  StoredCall,
  StoredEvent,
  StoredGrant,
  StoredQuestion,
  StoredSession,
} from "@toolfence/core";
import {
  ANSWERED_QUESTIONS_KEPT,
  DEFAULT_ARTIFACT_POOL_BYTES,
  DEFAULT_LATE_RESULTS_MAX_BYTES,
  DEFAULT_LATE_RESULTS_MAX_COUNT,
} from "@toolfence/core";
import { type Dialect, dialectSql, MIGRATIONS, SCHEMA_VERSION } from "./_store_migrations.ts";

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** What runs statements: a connection, or a transaction. */
export interface SqlConnection {
  /** Runs a statement and returns its rows. */
  query(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a statement and returns how many rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

/** A database, as the store uses it. */
export interface SqlDriver extends SqlConnection {
  /** Which SQL it speaks. */
  readonly dialect: Dialect;
  /** Runs `work` in one transaction holding a lock that other processes on the database wait for. */
  exclusive<T>(work: (tx: SqlConnection) => Promise<T>): Promise<T>;
  /** Closes the connections. */
  close(): Promise<void>;
}

const json = (value: unknown): string => JSON.stringify(value ?? null);
const parsed = (text: unknown): unknown => (text === null || text === undefined ? null : JSON.parse(String(text)));
const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function sessionOf(row: Row): StoredSession {
  return {
    id: String(row.id),
    tenant: String(row.tenant),
    generation: num(row.generation),
    owner: String(row.owner),
    createdAt: num(row.created_at),
    lastActive: num(row.last_active),
    endedAt: numOrNull(row.ended_at),
    data: parsed(row.data) as Record<string, unknown>,
  };
}

function questionOf(row: Row): StoredQuestion {
  return {
    id: String(row.id),
    tenant: String(row.tenant),
    sessionId: String(row.session_id),
    question: parsed(row.question) as Record<string, unknown>,
    askedAt: num(row.asked_at),
    answer: parsed(row.answer),
    answeredBy: row.answered_by === null ? null : String(row.answered_by),
    answeredAt: numOrNull(row.answered_at),
  };
}

function callOf(row: Row): StoredCall {
  return {
    sessionId: String(row.session_id),
    requestId: String(row.request_id),
    tenant: String(row.tenant),
    owner: String(row.owner),
    tool: String(row.tool),
    streamId: row.stream_id === null ? null : String(row.stream_id),
    startedAt: num(row.started_at),
    state: String(row.state) as StoredCall["state"],
    answer: parsed(row.answer),
    endedAt: numOrNull(row.ended_at),
  };
}

/** Brings a database's schema up to {@linkcode SCHEMA_VERSION}; refuses one newer than that. */
export async function migrate(driver: SqlDriver): Promise<void> {
  await driver.exclusive(async (tx) => {
    await tx.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)");
    const [row] = await tx.query("SELECT MAX(version) AS version FROM schema_version");
    const current = row?.version === null || row?.version === undefined ? 0 : num(row.version);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `The store's schema is version ${current}, newer than this toolfence knows (${SCHEMA_VERSION}): upgrade toolfence`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) await tx.run(dialectSql(statement, driver.dialect));
      await tx.run("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)", [migration.version, Date.now()]);
    }
  });
}

/** How many session ids one of prune's DELETE statements binds. */
const PRUNE_SLICE = 500;

/** Options of {@linkcode SqlStore}. */
export interface SqlStoreOptions {
  /** Most bytes of artifacts (their bytes and references) kept per tenant; default DEFAULT_ARTIFACT_POOL_BYTES. */
  maxTenantArtifactBytes?: number;
}

/** A {@linkcode Store} on a SQL database; {@linkcode migrate} it first. */
export class SqlStore implements Store {
  readonly #db: SqlDriver;
  readonly #maxTenantArtifactBytes: number;

  constructor(driver: SqlDriver, options: SqlStoreOptions = {}) {
    this.#db = driver;
    this.#maxTenantArtifactBytes = options.maxTenantArtifactBytes ?? DEFAULT_ARTIFACT_POOL_BYTES;
  }

  get kind(): string {
    return this.#db.dialect;
  }

  async createSession(session: StoredSession): Promise<void> {
    await this.#db.run(
      `INSERT INTO sessions (id, tenant, generation, owner, created_at, last_active, ended_at, data)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        session.id,
        session.tenant,
        session.generation,
        session.owner,
        session.createdAt,
        session.lastActive,
        session.endedAt,
        json(session.data),
      ],
    );
  }

  async session(tenant: string, id: string): Promise<StoredSession | undefined> {
    const [row] = await this.#db.query("SELECT * FROM sessions WHERE id = ? AND tenant = ?", [id, tenant]);
    return row && sessionOf(row);
  }

  async openSessionCount(tenant: string): Promise<number> {
    const [row] = await this.#db.query(
      "SELECT COUNT(*) AS n FROM sessions WHERE tenant = ? AND ended_at IS NULL",
      [tenant],
    );
    return num(row.n);
  }

  async takeOverSession(tenant: string, id: string, owner: string): Promise<StoredSession | undefined> {
    const [row] = await this.#db.query(
      `UPDATE sessions SET generation = generation + 1, owner = ?
       WHERE id = ? AND tenant = ? AND ended_at IS NULL RETURNING *`,
      [owner, id, tenant],
    );
    return row && sessionOf(row);
  }

  async touchSession(id: string, at: number): Promise<void> {
    await this.#db.run("UPDATE sessions SET last_active = ? WHERE id = ? AND last_active < ?", [at, id, at]);
  }

  async endSession(id: string, at: number): Promise<boolean> {
    // What only a take-over reads (the client's initialize, up to 256 KiB) goes with it: it stayed until a prune, and
    // a client opening and deleting sessions in a loop wrote 7 MB a second to the store every tenant shares.
    const ended = await this.#db.run(
      "UPDATE sessions SET ended_at = ?, data = '{}' WHERE id = ? AND ended_at IS NULL",
      [at, id],
    );
    await this.#db.run("DELETE FROM events WHERE session_id = ?", [id]);
    return ended === 1;
  }

  async appendEvent(sessionId: string, streamId: string, message: unknown, keep: number): Promise<string> {
    // The id handed out is opaque: `seq` orders the events but counts every session's (see Store.appendEvent).
    const eventId = crypto.randomUUID();
    await this.#db.run(
      "INSERT INTO events (session_id, event_id, stream_id, message) VALUES (?, ?, ?, ?)",
      [sessionId, eventId, streamId, json(message)],
    );
    // The session's newest `keep`, counted among its own events: the sequence is every session's, and a bound on it
    // (`seq > newest - keep`) let other tenants' traffic drop this session's events before it could resume them.
    await this.#db.run(
      `DELETE FROM events WHERE session_id = ? AND seq <= (
         SELECT seq FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      [sessionId, sessionId, Math.max(0, Math.floor(keep))],
    );
    return eventId;
  }

  /** The stream and place of an event of the session; undefined when unknown. */
  async #event(sessionId: string, eventId: string): Promise<{ streamId: string; seq: number } | undefined> {
    // Ids are UUIDs (or, kept from schema 1, decimal numbers): anything longer is no id of this store.
    if (eventId.length > 64) return undefined;
    const [row] = await this.#db.query(
      "SELECT stream_id, seq FROM events WHERE session_id = ? AND event_id = ?",
      [sessionId, eventId],
    );
    return row && { streamId: String(row.stream_id), seq: num(row.seq) };
  }

  async eventStream(sessionId: string, eventId: string): Promise<string | undefined> {
    return (await this.#event(sessionId, eventId))?.streamId;
  }

  async eventsAfter(
    sessionId: string,
    eventId: string,
  ): Promise<{ streamId: string; events: StoredEvent[] } | undefined> {
    const last = await this.#event(sessionId, eventId);
    if (last === undefined) return undefined;
    const { streamId } = last;
    const rows = await this.#db.query(
      "SELECT event_id, message FROM events WHERE session_id = ? AND stream_id = ? AND seq > ? ORDER BY seq",
      [sessionId, streamId, last.seq],
    );
    return {
      streamId,
      events: rows.map((row) => ({ id: String(row.event_id), streamId, message: parsed(row.message) })),
    };
  }

  async saveGrant(grant: StoredGrant): Promise<void> {
    await this.#db.run(
      `INSERT INTO grants (tenant, kind, subject, data, saved_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
      [grant.tenant, grant.kind, grant.subject, json(grant.data), grant.savedAt],
    );
  }

  async grants(tenant: string): Promise<StoredGrant[]> {
    const rows = await this.#db.query(
      "SELECT * FROM grants WHERE tenant = ? ORDER BY saved_at, kind, subject",
      [tenant],
    );
    return rows.map((row) => ({
      tenant: String(row.tenant),
      kind: String(row.kind) as StoredGrant["kind"],
      subject: String(row.subject),
      data: parsed(row.data) as Record<string, unknown>,
      savedAt: num(row.saved_at),
    }));
  }

  async revokeGrant(tenant: string, kind: StoredGrant["kind"], subject: string): Promise<boolean> {
    return await this.#db.run(
      "DELETE FROM grants WHERE tenant = ? AND kind = ? AND subject = ?",
      [tenant, kind, subject],
    ) === 1;
  }

  async askQuestion(question: StoredQuestion): Promise<void> {
    await this.#db.run(
      `INSERT INTO questions (id, tenant, session_id, question, asked_at, answer, answered_by, answered_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        question.id,
        question.tenant,
        question.sessionId,
        json(question.question),
        question.askedAt,
        question.answeredAt === null ? null : json(question.answer),
        question.answeredBy,
        question.answeredAt,
      ],
    );
    await this.#db.run(
      "DELETE FROM questions WHERE id IN (SELECT id FROM (SELECT id, " +
        "ROW_NUMBER() OVER (ORDER BY asked_at DESC, id DESC) AS n " +
        "FROM questions WHERE tenant = ? AND answered_at IS NOT NULL) AS answered WHERE n > ?)",
      [question.tenant, ANSWERED_QUESTIONS_KEPT],
    );
  }

  async answerQuestion(tenant: string, id: string, answer: unknown, answeredBy: string, at: number): Promise<boolean> {
    return await this.#db.run(
      `UPDATE questions SET answer = ?, answered_by = ?, answered_at = ?
       WHERE id = ? AND tenant = ? AND answered_at IS NULL`,
      [json(answer), answeredBy, at, id, tenant],
    ) === 1;
  }

  async question(tenant: string, id: string): Promise<StoredQuestion | undefined> {
    const [row] = await this.#db.query("SELECT * FROM questions WHERE id = ? AND tenant = ?", [id, tenant]);
    return row && questionOf(row);
  }

  async pendingQuestions(tenant: string): Promise<StoredQuestion[]> {
    const rows = await this.#db.query(
      "SELECT * FROM questions WHERE tenant = ? AND answered_at IS NULL ORDER BY asked_at, id",
      [tenant],
    );
    return rows.map(questionOf);
  }

  async startCall(call: StoredCall): Promise<void> {
    await this.#db.run(
      `INSERT INTO calls (session_id, request_id, tenant, owner, tool, stream_id, started_at, state, answer, ended_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id, request_id) DO UPDATE SET tenant = excluded.tenant, owner = excluded.owner,
         tool = excluded.tool, stream_id = excluded.stream_id, started_at = excluded.started_at, state = excluded.state, answer = excluded.answer,
         ended_at = excluded.ended_at`,
      [
        call.sessionId,
        call.requestId,
        call.tenant,
        call.owner,
        call.tool,
        call.streamId,
        call.startedAt,
        call.state,
        call.answer === null ? null : json(call.answer),
        call.endedAt,
      ],
    );
  }

  async #end(sessionId: string, requestId: string, state: string, answer: unknown, at: number): Promise<boolean> {
    return await this.#db.run(
      `UPDATE calls SET state = ?, answer = ?, ended_at = ?
       WHERE session_id = ? AND request_id = ? AND state = 'running'`,
      [state, json(answer), at, sessionId, requestId],
    ) === 1;
  }

  async forgetAnswer(sessionId: string, requestId: string): Promise<void> {
    await this.#db.run(
      "UPDATE calls SET answer = NULL WHERE session_id = ? AND request_id = ? AND state <> 'running'",
      [sessionId, requestId],
    );
  }

  finishCall(sessionId: string, requestId: string, answer: unknown, at: number): Promise<boolean> {
    return this.#end(sessionId, requestId, "done", answer, at);
  }

  interruptCall(sessionId: string, requestId: string, answer: unknown, at: number): Promise<boolean> {
    return this.#end(sessionId, requestId, "interrupted", answer, at);
  }

  async call(tenant: string, sessionId: string, requestId: string): Promise<StoredCall | undefined> {
    const [row] = await this.#db.query(
      "SELECT * FROM calls WHERE session_id = ? AND request_id = ? AND tenant = ?",
      [sessionId, requestId, tenant],
    );
    return row && callOf(row);
  }

  async runningCalls(filter: { owner?: string; sessionId?: string } = {}): Promise<StoredCall[]> {
    const where = ["state = 'running'"];
    const params: unknown[] = [];
    if (filter.owner !== undefined) {
      where.push("owner = ?");
      params.push(filter.owner);
    }
    if (filter.sessionId !== undefined) {
      where.push("session_id = ?");
      params.push(filter.sessionId);
    }
    const rows = await this.#db.query(`SELECT * FROM calls WHERE ${where.join(" AND ")} ORDER BY started_at`, params);
    return rows.map(callOf);
  }

  async recordLateResult(tenant: string, sessionId: string, late: LateResult): Promise<void> {
    await this.#db.run(
      "INSERT INTO late_results (tenant, session_id, result) VALUES (?, ?, ?)",
      [tenant, sessionId, json(late)],
    );
    // The session's bounds, as its LateResults keeps them: from the newest back, as many as fit (the newest always).
    // Before, every late result of a fleet's session stayed in the store, and its resource listed them all.
    await this.#db.run(
      "DELETE FROM late_results WHERE seq IN (SELECT seq FROM (SELECT seq, " +
        "ROW_NUMBER() OVER (ORDER BY seq DESC) AS n, " +
        "SUM(LENGTH(result)) OVER (ORDER BY seq DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS held " +
        "FROM late_results WHERE session_id = ? AND tenant = ?) AS newest WHERE n > 1 AND (n > ? OR held > ?))",
      [sessionId, tenant, DEFAULT_LATE_RESULTS_MAX_COUNT, DEFAULT_LATE_RESULTS_MAX_BYTES],
    );
  }

  async lateResults(tenant: string, sessionId: string): Promise<LateResult[]> {
    const rows = await this.#db.query(
      "SELECT result FROM late_results WHERE session_id = ? AND tenant = ? ORDER BY seq",
      [sessionId, tenant],
    );
    return rows.map((row) => parsed(row.result) as LateResult);
  }

  async putArtifact(tenant: string, sessionId: string, ref: ArtifactRef, bytes: Uint8Array): Promise<void> {
    // A blob is shared by the tenant's sessions, never across tenants: a put of bytes already there is quicker (no
    // write), and alice's `cat` of 18 MB answered in about 130 ms when bob's session had made the very same output,
    // 250 ms when nobody had (one guess, one answer: whether another tenant has seen those bytes). Its key is the
    // hash and the tenant; the reference keeps the hash alone. (Rows of schema 1 are keyed by the hash: still read.)
    const blob = `${ref.sha256}:${tenant}`;
    // The blob and the reference that names it go in together, never apart from prune's sweep of unnamed blobs.
    await this.#db.exclusive(async (tx) => {
      await tx.run("INSERT INTO blobs (sha256, bytes) VALUES (?, ?) ON CONFLICT DO NOTHING", [blob, bytes]);
      await tx.run(
        "INSERT INTO artifacts (tenant, session_id, id, sha256, ref) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [tenant, sessionId, ref.id, blob, json(ref)],
      );
      // The tenant's newest artifacts, as many as fit its bound (the newest always), as a replica's pool keeps them.
      // Before, every artifact of every session stayed until a prune, which spares the sessions still open: one
      // tenant's session writing outputs in a loop filled the database every replica and tenant shares. A blob shared
      // by several references counts for each (never fewer bytes than are kept).
      const dropped = await tx.query(
        "DELETE FROM artifacts WHERE seq IN (SELECT seq FROM (SELECT artifacts.seq AS seq, " +
          "ROW_NUMBER() OVER (ORDER BY artifacts.seq DESC) AS n, " +
          "SUM(LENGTH(blobs.bytes) + LENGTH(artifacts.ref)) OVER " +
          "(ORDER BY artifacts.seq DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS held " +
          "FROM artifacts JOIN blobs ON blobs.sha256 = artifacts.sha256 WHERE artifacts.tenant = ?) AS newest " +
          "WHERE n > 1 AND held > ?) RETURNING sha256",
        [tenant, this.#maxTenantArtifactBytes],
      );
      for (const sha256 of new Set(dropped.map((row) => String(row.sha256)))) {
        await tx.run(
          "DELETE FROM blobs WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM artifacts WHERE artifacts.sha256 = ?)",
          [sha256, sha256],
        );
      }
    });
  }

  async artifact(
    tenant: string,
    sessionId: string,
    id: string,
  ): Promise<{ ref: ArtifactRef; bytes: Uint8Array } | undefined> {
    const [row] = await this.#db.query(
      `SELECT artifacts.ref AS ref, blobs.bytes AS bytes FROM artifacts JOIN blobs ON blobs.sha256 = artifacts.sha256
       WHERE artifacts.tenant = ? AND artifacts.session_id = ? AND artifacts.id = ?`,
      [tenant, sessionId, id],
    );
    if (!row) return undefined;
    const bytes = row.bytes as Uint8Array;
    return { ref: parsed(row.ref) as ArtifactRef, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) };
  }

  async artifacts(tenant: string, sessionId: string): Promise<ArtifactRef[]> {
    const rows = await this.#db.query(
      "SELECT ref FROM artifacts WHERE tenant = ? AND session_id = ? ORDER BY seq",
      [tenant, sessionId],
    );
    return rows.map((row) => parsed(row.ref) as ArtifactRef);
  }

  async heartbeat(replica: string, at: number): Promise<void> {
    await this.#db.run(
      `INSERT INTO replicas (id, seen_at) VALUES (?, ?)
       ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at WHERE replicas.seen_at < excluded.seen_at`,
      [replica, at],
    );
  }

  async replicaSeenAt(replica: string): Promise<number | undefined> {
    const [row] = await this.#db.query("SELECT seen_at FROM replicas WHERE id = ?", [replica]);
    return row && num(row.seen_at);
  }

  async forgetReplica(replica: string): Promise<void> {
    await this.#db.run("DELETE FROM replicas WHERE id = ?", [replica]);
  }

  async appendAudit(tenant: string, record: Record<string, unknown>): Promise<number> {
    const [row] = await this.#db.query(
      "INSERT INTO audit (tenant, record) VALUES (?, ?) RETURNING seq",
      [tenant, json(record)],
    );
    return num(row.seq);
  }

  async audit(query: AuditQuery = {}): Promise<StoredAuditRecord[]> {
    const where = ["seq > ?"];
    const params: unknown[] = [query.afterSeq ?? 0];
    if (query.tenant !== undefined) {
      where.push("tenant = ?");
      params.push(query.tenant);
    }
    let sql = `SELECT seq, tenant, record FROM audit WHERE ${where.join(" AND ")} ORDER BY seq`;
    if (query.limit !== undefined) {
      sql += " LIMIT ?";
      params.push(query.limit);
    }
    const rows = await this.#db.query(sql, params);
    return rows.map((row) => ({
      seq: num(row.seq),
      tenant: String(row.tenant),
      record: parsed(row.record) as Record<string, unknown>,
    }));
  }

  prune(before: number): Promise<PrunedCounts> {
    return this.#db.exclusive(async (tx) => {
      // The sessions are chosen once, so that every table loses the same ones (each of PostgreSQL's statements
      // sees what was committed when it began), and deleted in slices of bound parameters.
      const ids = (await tx.query(
        `SELECT id FROM sessions WHERE COALESCE(ended_at, last_active) < ?
         AND id NOT IN (SELECT session_id FROM calls WHERE state = 'running')`,
        [before],
      )).map((row) => String(row.id));
      const ofOver = async (table: string, column = "session_id") => {
        let removed = 0;
        for (let at = 0; at < ids.length; at += PRUNE_SLICE) {
          const slice = ids.slice(at, at + PRUNE_SLICE);
          removed += await tx.run(
            `DELETE FROM ${table} WHERE ${column} IN (${slice.map(() => "?").join(", ")})`,
            slice,
          );
        }
        return removed;
      };
      const events = await ofOver("events");
      const calls = await ofOver("calls");
      const questions = await ofOver("questions");
      const lateResults = await ofOver("late_results");
      const artifacts = await ofOver("artifacts");
      const sessions = await ofOver("sessions", "id");
      const blobs = await tx.run("DELETE FROM blobs WHERE sha256 NOT IN (SELECT sha256 FROM artifacts)");
      const replicas = await tx.run("DELETE FROM replicas WHERE seen_at < ?", [before]);
      return { sessions, events, calls, questions, lateResults, artifacts, blobs, replicas };
    });
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
