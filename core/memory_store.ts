/**
 * The store kept in one process's memory: the library's default, and what a
 * single server uses when no database is named.
 *
 * @module
 */

import { type LateResult, LateResults } from "./late_results.ts";
import type { ArtifactRef } from "./result.ts";
import { DEFAULT_ARTIFACT_POOL_BYTES } from "./artifacts.ts";
import {
  ANSWERED_QUESTIONS_KEPT,
  type AuditQuery,
  type PrunedCounts,
  type Store,
  type StoredAuditRecord,
  type StoredCall,
  type StoredEvent,
  type StoredGrant,
  type StoredQuestion,
  type StoredSession,
} from "./store.ts";

// Values go in and come out as copies, as they would through a database: a caller changing a record it
// read must not change the store.
const copy = <T>(value: T): T => structuredClone(value);

/** Options of {@linkcode MemoryStore}. */
export interface MemoryStoreOptions {
  /** Most bytes of artifacts (their bytes and references) kept per tenant; default DEFAULT_ARTIFACT_POOL_BYTES. */
  maxTenantArtifactBytes?: number;
}

/**
 * A {@linkcode Store} in memory: every replica must be this one process.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { MemoryStore } from "@toolfence/core";
 * const store = new MemoryStore();
 * await store.appendAudit("local", { type: "call", tool: "read_file" });
 * console.log((await store.audit()).length); // 1
 * ```
 */
export class MemoryStore implements Store {
  /** Always `memory`. */
  readonly kind = "memory";
  #sessions = new Map<string, StoredSession>();
  #events = new Map<string, (StoredEvent & { seq: number })[]>();
  #eventSeq = 0;
  #grants: StoredGrant[] = [];
  #questions = new Map<string, StoredQuestion>();
  #calls = new Map<string, StoredCall>();
  // Each session's late results by tenant, within the bounds a session's own LateResults keeps.
  #late = new Map<string, Map<string, LateResults>>();
  // Keyed `tenant\nsession`, each reference with its place in the order of every put.
  #artifacts = new Map<string, { ref: ArtifactRef; seq: number }[]>();
  #artifactSeq = 0;
  #blobs = new Map<string, Uint8Array>();
  readonly #maxTenantArtifactBytes: number;
  #audit: StoredAuditRecord[] = [];
  #replicas = new Map<string, number>();

  /** An empty store; `options.maxTenantArtifactBytes` bounds each tenant's artifacts. */
  constructor(options: MemoryStoreOptions = {}) {
    this.#maxTenantArtifactBytes = options.maxTenantArtifactBytes ?? DEFAULT_ARTIFACT_POOL_BYTES;
  }

  createSession(session: StoredSession): Promise<void> {
    if (this.#sessions.has(session.id)) return Promise.reject(new Error(`Session ${session.id} exists already`));
    this.#sessions.set(session.id, copy(session));
    return Promise.resolve();
  }

  session(tenant: string, id: string): Promise<StoredSession | undefined> {
    const found = this.#sessions.get(id);
    return Promise.resolve(found?.tenant === tenant ? copy(found) : undefined);
  }

  openSessionCount(tenant: string): Promise<number> {
    let count = 0;
    for (const session of this.#sessions.values()) {
      if (session.tenant === tenant && session.endedAt === null) count++;
    }
    return Promise.resolve(count);
  }

  takeOverSession(tenant: string, id: string, owner: string): Promise<StoredSession | undefined> {
    const found = this.#sessions.get(id);
    if (found?.tenant !== tenant || found.endedAt !== null) return Promise.resolve(undefined);
    found.generation++;
    found.owner = owner;
    return Promise.resolve(copy(found));
  }

  touchSession(id: string, at: number): Promise<void> {
    const found = this.#sessions.get(id);
    if (found) found.lastActive = Math.max(found.lastActive, at);
    return Promise.resolve();
  }

  endSession(id: string, at: number): Promise<boolean> {
    const found = this.#sessions.get(id);
    if (!found || found.endedAt !== null) return Promise.resolve(false);
    found.endedAt = at;
    found.data = {};
    this.#events.delete(id);
    return Promise.resolve(true);
  }

  appendEvent(sessionId: string, streamId: string, message: unknown, keep: number): Promise<string> {
    // The order is the store's; the id handed out is opaque (see Store.appendEvent): a count would tell one
    // session how many events every other session (another tenant's) sent meanwhile.
    const seq = ++this.#eventSeq;
    const id = crypto.randomUUID();
    let events = this.#events.get(sessionId);
    if (!events) this.#events.set(sessionId, events = []);
    events.push({ id, seq, streamId, message: copy(message) });
    if (events.length > keep) events.splice(0, events.length - keep);
    return Promise.resolve(id);
  }

  eventStream(sessionId: string, eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.#events.get(sessionId)?.find((event) => event.id === eventId)?.streamId);
  }

  eventsAfter(sessionId: string, eventId: string): Promise<{ streamId: string; events: StoredEvent[] } | undefined> {
    const events = this.#events.get(sessionId) ?? [];
    const last = events.find((event) => event.id === eventId);
    if (!last) return Promise.resolve(undefined);
    const after = events.filter((event) => event.seq > last.seq && event.streamId === last.streamId);
    return Promise.resolve({
      streamId: last.streamId,
      events: after.map(({ id, streamId, message }) => ({ id, streamId, message: copy(message) })),
    });
  }

  saveGrant(grant: StoredGrant): Promise<void> {
    const known = this.#grants.some((g) =>
      g.tenant === grant.tenant && g.kind === grant.kind && g.subject === grant.subject
    );
    if (!known) this.#grants.push(copy(grant));
    return Promise.resolve();
  }

  grants(tenant: string): Promise<StoredGrant[]> {
    return Promise.resolve(copy(this.#grants.filter((grant) => grant.tenant === tenant)));
  }

  revokeGrant(tenant: string, kind: StoredGrant["kind"], subject: string): Promise<boolean> {
    const index = this.#grants.findIndex((g) => g.tenant === tenant && g.kind === kind && g.subject === subject);
    if (index >= 0) this.#grants.splice(index, 1);
    return Promise.resolve(index >= 0);
  }

  askQuestion(question: StoredQuestion): Promise<void> {
    if (this.#questions.has(question.id)) return Promise.reject(new Error(`Question ${question.id} exists already`));
    this.#questions.set(question.id, copy(question));
    const answered = [...this.#questions.values()].filter((q) => q.tenant === question.tenant && q.answeredAt !== null);
    answered.sort((a, b) => b.askedAt - a.askedAt || (b.id < a.id ? -1 : 1));
    for (const old of answered.slice(ANSWERED_QUESTIONS_KEPT)) this.#questions.delete(old.id);
    return Promise.resolve();
  }

  answerQuestion(tenant: string, id: string, answer: unknown, answeredBy: string, at: number): Promise<boolean> {
    const found = this.#questions.get(id);
    if (found?.tenant !== tenant || found.answeredAt !== null) return Promise.resolve(false);
    Object.assign(found, { answer: copy(answer), answeredBy, answeredAt: at });
    return Promise.resolve(true);
  }

  question(tenant: string, id: string): Promise<StoredQuestion | undefined> {
    const found = this.#questions.get(id);
    return Promise.resolve(found?.tenant === tenant ? copy(found) : undefined);
  }

  pendingQuestions(tenant: string): Promise<StoredQuestion[]> {
    return Promise.resolve(
      copy([...this.#questions.values()].filter((q) => q.tenant === tenant && q.answeredAt === null)),
    );
  }

  startCall(call: StoredCall): Promise<void> {
    this.#calls.set(`${call.sessionId}\n${call.requestId}`, copy(call));
    return Promise.resolve();
  }

  #end(sessionId: string, requestId: string, state: StoredCall["state"], answer: unknown, at: number): boolean {
    const found = this.#calls.get(`${sessionId}\n${requestId}`);
    if (found?.state !== "running") return false;
    Object.assign(found, { state, answer: copy(answer), endedAt: at });
    return true;
  }

  forgetAnswer(sessionId: string, requestId: string): Promise<void> {
    const found = this.#calls.get(`${sessionId}\n${requestId}`);
    if (found && found.state !== "running") found.answer = null;
    return Promise.resolve();
  }

  finishCall(sessionId: string, requestId: string, answer: unknown, at: number): Promise<boolean> {
    return Promise.resolve(this.#end(sessionId, requestId, "done", answer, at));
  }

  interruptCall(sessionId: string, requestId: string, answer: unknown, at: number): Promise<boolean> {
    return Promise.resolve(this.#end(sessionId, requestId, "interrupted", answer, at));
  }

  call(tenant: string, sessionId: string, requestId: string): Promise<StoredCall | undefined> {
    const found = this.#calls.get(`${sessionId}\n${requestId}`);
    return Promise.resolve(found?.tenant === tenant ? copy(found) : undefined);
  }

  runningCalls(filter: { owner?: string; sessionId?: string } = {}): Promise<StoredCall[]> {
    return Promise.resolve(
      copy(
        [...this.#calls.values()].filter((call) =>
          call.state === "running" && (filter.owner === undefined || call.owner === filter.owner) &&
          (filter.sessionId === undefined || call.sessionId === filter.sessionId)
        ),
      ),
    );
  }

  recordLateResult(tenant: string, sessionId: string, late: LateResult): Promise<void> {
    let tenants = this.#late.get(sessionId);
    if (!tenants) this.#late.set(sessionId, tenants = new Map());
    let kept = tenants.get(tenant);
    if (!kept) tenants.set(tenant, kept = new LateResults());
    kept.record(copy(late));
    return Promise.resolve();
  }

  lateResults(tenant: string, sessionId: string): Promise<LateResult[]> {
    return Promise.resolve(copy([...this.#late.get(sessionId)?.get(tenant)?.list() ?? []]));
  }

  putArtifact(tenant: string, sessionId: string, ref: ArtifactRef, bytes: Uint8Array): Promise<void> {
    const key = `${tenant}\n${sessionId}`;
    let refs = this.#artifacts.get(key);
    if (!refs) this.#artifacts.set(key, refs = []);
    if (!refs.some((known) => known.ref.id === ref.id)) refs.push({ ref: copy(ref), seq: ++this.#artifactSeq });
    // Blobs are shared by a tenant's sessions, never across tenants (see the SQL store: a put of bytes another
    // tenant had stored answered quicker, telling that it had them).
    const blob = `${ref.sha256}:${tenant}`;
    if (!this.#blobs.has(blob)) this.#blobs.set(blob, bytes.slice());
    this.#boundArtifacts(tenant);
    return Promise.resolve();
  }

  // The tenant's newest artifacts, as many as fit its bound (the newest always), each reference counting its blob,
  // as the SQL store keeps them.
  #boundArtifacts(tenant: string): void {
    const cost = (ref: ArtifactRef) =>
      (this.#blobs.get(`${ref.sha256}:${tenant}`)?.byteLength ?? 0) + JSON.stringify(ref).length;
    const held = [...this.#artifacts].filter(([key]) => key.slice(0, key.indexOf("\n")) === tenant)
      .flatMap(([key, refs]) => refs.map((item) => ({ key, ...item })))
      .sort((a, b) => b.seq - a.seq);
    let total = 0;
    const dropped = held.filter((item, n) => (total += cost(item.ref)) > this.#maxTenantArtifactBytes && n > 0);
    if (dropped.length === 0) return;
    for (const { key, seq } of dropped) {
      const refs = this.#artifacts.get(key)!.filter((item) => item.seq !== seq);
      if (refs.length === 0) this.#artifacts.delete(key);
      else this.#artifacts.set(key, refs);
    }
    this.#sweepBlobs();
  }

  // Removes the blobs no artifact names; returns how many.
  #sweepBlobs(): number {
    // Keys of #artifacts are `tenant\nsession`; blobs are keyed `sha256:tenant`.
    const named = new Set(
      [...this.#artifacts].flatMap(([key, refs]) =>
        refs.map(({ ref }) => `${ref.sha256}:${key.slice(0, key.indexOf("\n"))}`)
      ),
    );
    let removed = 0;
    for (const hash of this.#blobs.keys()) {
      if (!named.has(hash) && this.#blobs.delete(hash)) removed++;
    }
    return removed;
  }

  artifact(
    tenant: string,
    sessionId: string,
    id: string,
  ): Promise<{ ref: ArtifactRef; bytes: Uint8Array } | undefined> {
    const ref = this.#artifacts.get(`${tenant}\n${sessionId}`)?.find((known) => known.ref.id === id)?.ref;
    const bytes = ref && this.#blobs.get(`${ref.sha256}:${tenant}`);
    return Promise.resolve(ref && bytes ? { ref: copy(ref), bytes: bytes.slice() } : undefined);
  }

  artifacts(tenant: string, sessionId: string): Promise<ArtifactRef[]> {
    return Promise.resolve(copy((this.#artifacts.get(`${tenant}\n${sessionId}`) ?? []).map(({ ref }) => ref)));
  }

  heartbeat(replica: string, at: number): Promise<void> {
    this.#replicas.set(replica, Math.max(at, this.#replicas.get(replica) ?? 0));
    return Promise.resolve();
  }

  replicaSeenAt(replica: string): Promise<number | undefined> {
    return Promise.resolve(this.#replicas.get(replica));
  }

  forgetReplica(replica: string): Promise<void> {
    this.#replicas.delete(replica);
    return Promise.resolve();
  }

  appendAudit(tenant: string, record: Record<string, unknown>): Promise<number> {
    const seq = this.#audit.length + 1;
    this.#audit.push({ seq, tenant, record: copy(record) });
    return Promise.resolve(seq);
  }

  audit(query: AuditQuery = {}): Promise<StoredAuditRecord[]> {
    const found = this.#audit.filter((item) =>
      (query.tenant === undefined || item.tenant === query.tenant) && item.seq > (query.afterSeq ?? 0)
    );
    return Promise.resolve(copy(query.limit === undefined ? found : found.slice(0, query.limit)));
  }

  prune(before: number): Promise<PrunedCounts> {
    const counts: PrunedCounts = {
      sessions: 0,
      events: 0,
      calls: 0,
      questions: 0,
      lateResults: 0,
      artifacts: 0,
      blobs: 0,
      replicas: 0,
    };
    const running = new Set([...this.#calls.values()].filter((c) => c.state === "running").map((c) => c.sessionId));
    const over = [...this.#sessions.values()].filter((session) =>
      (session.endedAt ?? session.lastActive) < before && !running.has(session.id)
    );
    for (const session of over) {
      this.#sessions.delete(session.id);
      counts.sessions++;
      counts.events += this.#events.get(session.id)?.length ?? 0;
      this.#events.delete(session.id);
      for (const kept of this.#late.get(session.id)?.values() ?? []) counts.lateResults += kept.list().length;
      this.#late.delete(session.id);
      const key = `${session.tenant}\n${session.id}`;
      counts.artifacts += this.#artifacts.get(key)?.length ?? 0;
      this.#artifacts.delete(key);
    }
    const gone = new Set(over.map((session) => session.id));
    for (const [key, call] of this.#calls) {
      if (gone.has(call.sessionId) && this.#calls.delete(key)) counts.calls++;
    }
    for (const [id, question] of this.#questions) {
      if (gone.has(question.sessionId) && this.#questions.delete(id)) counts.questions++;
    }
    counts.blobs = this.#sweepBlobs();
    for (const [replica, seen] of this.#replicas) {
      if (seen < before && this.#replicas.delete(replica)) counts.replicas++;
    }
    return Promise.resolve(counts);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
