/**
 * The store: where a server keeps the state that must outlive one process or
 * be shared by several (a fleet of replicas behind a load balancer): MCP
 * sessions and their owner generation, the events of resumable streams, saved
 * grants, questions waiting for a person and their answers, calls and their
 * results (late ones included), artifacts (content-addressed blobs) and the
 * audit records.
 *
 * Every read and write names the tenant: a tenant's session id, question or
 * audit record is unknown to another tenant, exactly as on disk.
 *
 * `MemoryStore` keeps it in one process (the library's behaviour); the server
 * also has SQLite and PostgreSQL stores (see docs/fleet.md).
 *
 * @module
 */

import type { LateResult } from "./late_results.ts";
import type { ArtifactRef } from "./result.ts";

/** One MCP session, as every replica sees it. */
export interface StoredSession {
  /** The `Mcp-Session-Id`. */
  id: string;
  /** The tenant whose token opened it. */
  tenant: string;
  /** The owner generation: 0 when opened, one more at each take-over by another replica. */
  generation: number;
  /** The replica that holds it now. */
  owner: string;
  /** When it was opened (ms since the epoch). */
  createdAt: number;
  /** When a request last came for it. */
  lastActive: number;
  /** When it ended, or null while open. */
  endedAt: number | null;
  /** What a replica needs to rebuild the session (e.g. the client's initialize parameters). */
  data: Record<string, unknown>;
}

/** One message a session sent on one of its streams, kept for a client that resumes. */
export interface StoredEvent {
  /**
   * The event id (`Last-Event-ID`): opaque (random), never a count, so that
   * the ids a session sees tell nothing of other sessions' traffic; the
   * store keeps the order itself.
   */
  id: string;
  /** The stream it was sent on. */
  streamId: string;
  /** The JSON-RPC message. */
  message: unknown;
}

/** A grant a person saved ("always allow"), applied to every session of the tenant. */
export interface StoredGrant {
  /** The tenant it applies to. */
  tenant: string;
  /** What it grants: `command` (an allowlist entry), `write` (a real path), or a policy rule. */
  kind: "command" | "write" | "rule";
  /** The command line, path or rule text. */
  subject: string;
  /** Anything else the kind needs (e.g. a rule's decision). */
  data: Record<string, unknown>;
  /** When it was saved. */
  savedAt: number;
}

/** A question waiting for a person, and its answer once given. */
export interface StoredQuestion {
  /** Its id. */
  id: string;
  /** The tenant it belongs to. */
  tenant: string;
  /** The session that asked. */
  sessionId: string;
  /** What was asked. */
  question: Record<string, unknown>;
  /** When it was asked. */
  askedAt: number;
  /** The answer, or null while pending. */
  answer: unknown;
  /** Who answered (`person`, `client`, `auto`), or null while pending. */
  answeredBy: string | null;
  /** When it was answered, or null while pending. */
  answeredAt: number | null;
}

/** A tool call a replica started, and its outcome once known. */
export interface StoredCall {
  /** The session it belongs to. */
  sessionId: string;
  /**
   * The JSON-RPC request id, as text that keeps its type: a number's text; a
   * string itself, or its JSON text when it reads as a number or a quoted
   * string (`"42"` for the string 42).
   */
  requestId: string;
  /** The tenant. */
  tenant: string;
  /** The replica that ran it. */
  owner: string;
  /** The tool called. */
  tool: string;
  /** The SSE stream its answer goes out on (where a client resumes it), or null when not resumable. */
  streamId: string | null;
  /** When it started. */
  startedAt: number;
  /**
   * `running` until its answer is known; `done` with its answer; `interrupted`
   * when its replica stopped before it ended (its answer then says so, with
   * `reconciliationRequired` when it may have had effects).
   */
  state: "running" | "done" | "interrupted";
  /** The answer sent (or to send) to the client: a JSON-RPC result. */
  answer: unknown;
  /** When it ended. */
  endedAt: number | null;
}

/** One audit record as stored: the record and where it sits in the fleet's log. */
export interface StoredAuditRecord {
  /** Its position in the store's log: increasing, never reused. */
  seq: number;
  /** The tenant whose session made it. */
  tenant: string;
  /** The record (already redacted). */
  record: Record<string, unknown>;
}

/** What {@linkcode Store.audit} reads. */
export interface AuditQuery {
  /** Only this tenant's records; default every tenant's. */
  tenant?: string;
  /** Only records after this `seq`. */
  afterSeq?: number;
  /** At most this many; default all. */
  limit?: number;
}

/** What {@linkcode Store.prune} removed: how many of each. */
export interface PrunedCounts {
  /** Sessions that were over. */
  sessions: number;
  /** Their stream events. */
  events: number;
  /** Their calls, with their answers. */
  calls: number;
  /** Their questions, answered or not. */
  questions: number;
  /** Their late results. */
  lateResults: number;
  /** Their artifact references. */
  artifacts: number;
  /** Artifact bytes no remaining artifact names. */
  blobs: number;
  /** Replicas last seen before the time. */
  replicas: number;
}

/**
 * How many answered (or withdrawn) questions a store keeps per tenant, the newest; pending ones are all kept. Each holds
 * what it showed (a write's text before and after, up to 512 KiB): before, every one stayed until its session was
 * pruned, so that a client asking and cancelling in a loop filled the store every tenant shares.
 */
export const ANSWERED_QUESTIONS_KEPT = 256;

/**
 * The state a server keeps, shared by every replica that opens the same store.
 * Every method is atomic on its own; methods that decide a race (taking a
 * session over, answering a question, finishing a call) say who won.
 */
export interface Store {
  /** `memory`, `sqlite` or `postgres`. */
  readonly kind: string;

  /** Records a new session. */
  createSession(session: StoredSession): Promise<void>;
  /** The tenant's session of that id (ended ones too); undefined when unknown or another tenant's. */
  session(tenant: string, id: string): Promise<StoredSession | undefined>;
  /** How many open sessions the tenant holds. */
  openSessionCount(tenant: string): Promise<number>;
  /** Makes `owner` the holder of an open session, one generation on; undefined when it is not open. */
  takeOverSession(tenant: string, id: string, owner: string): Promise<StoredSession | undefined>;
  /** Notes a request for the session. */
  touchSession(id: string, at: number): Promise<void>;
  /**
   * Ends a session, dropping its events and its `data` (what a take-over needs: the client's initialize, up to
   * 256 KiB); returns whether it was open.
   */
  endSession(id: string, at: number): Promise<boolean>;

  /**
   * Keeps an event of a session's stream and returns its id, opaque (random: no count of any session's events
   * can be read from it); only the last `keep` of a session are kept.
   */
  appendEvent(sessionId: string, streamId: string, message: unknown, keep: number): Promise<string>;
  /** The stream of an event of the session; undefined when unknown. */
  eventStream(sessionId: string, eventId: string): Promise<string | undefined>;
  /** The events of the same stream after `eventId`, oldest first; undefined when `eventId` is unknown. */
  eventsAfter(sessionId: string, eventId: string): Promise<{ streamId: string; events: StoredEvent[] } | undefined>;

  /** Saves a grant (saving one already there does nothing). */
  saveGrant(grant: StoredGrant): Promise<void>;
  /** The tenant's grants, oldest first. */
  grants(tenant: string): Promise<StoredGrant[]>;
  /** Removes a grant; returns whether it was there. */
  revokeGrant(tenant: string, kind: StoredGrant["kind"], subject: string): Promise<boolean>;

  /**
   * Records a question asked, and keeps the tenant's newest {@linkcode ANSWERED_QUESTIONS_KEPT} answered (or
   * withdrawn) ones, never dropping a pending one.
   */
  askQuestion(question: StoredQuestion): Promise<void>;
  /** Answers a pending question; false when it was already answered or is unknown (the first answer wins). */
  answerQuestion(tenant: string, id: string, answer: unknown, answeredBy: string, at: number): Promise<boolean>;
  /** The tenant's question of that id. */
  question(tenant: string, id: string): Promise<StoredQuestion | undefined>;
  /** The tenant's unanswered questions, oldest first. */
  pendingQuestions(tenant: string): Promise<StoredQuestion[]>;

  /** Records a call started (a call already recorded for that session and request id is replaced). */
  startCall(call: StoredCall): Promise<void>;
  /** Records a running call's answer; false when it was no longer running (e.g. marked interrupted). */
  finishCall(sessionId: string, requestId: string, answer: unknown, at: number): Promise<boolean>;
  /**
   * Marks a running call interrupted with the answer to give for it; false
   * when it had ended already (its own answer stands).
   */
  interruptCall(sessionId: string, requestId: string, answer: unknown, at: number): Promise<boolean>;
  /** Drops the answer of an ended call (its row stays: it ran); the call then reads with `answer` null. */
  forgetAnswer(sessionId: string, requestId: string): Promise<void>;
  /** The tenant's call of that session and request id. */
  call(tenant: string, sessionId: string, requestId: string): Promise<StoredCall | undefined>;
  /** The calls still running, of one replica or one session when asked (to account for them when it is gone). */
  runningCalls(filter?: { owner?: string; sessionId?: string }): Promise<StoredCall[]>;

  /**
   * Keeps a late result of a session, within the bounds a session's LateResults keeps (the newest always, then as many
   * as fit from the newest back, by DEFAULT_LATE_RESULTS_MAX_COUNT and DEFAULT_LATE_RESULTS_MAX_BYTES).
   */
  recordLateResult(tenant: string, sessionId: string, late: LateResult): Promise<void>;
  /** The session's late results, oldest first. */
  lateResults(tenant: string, sessionId: string): Promise<LateResult[]>;

  /**
   * Keeps an artifact of a session: its reference, and its bytes once per hash and tenant (blobs are shared by the
   * tenant's sessions). The tenant's artifacts are bounded (by default DEFAULT_ARTIFACT_POOL_BYTES, each reference
   * counting its blob): past it, its oldest are dropped, never the one just kept.
   */
  putArtifact(tenant: string, sessionId: string, ref: ArtifactRef, bytes: Uint8Array): Promise<void>;
  /** An artifact's reference and bytes; undefined when the session has none of that id. */
  artifact(
    tenant: string,
    sessionId: string,
    id: string,
  ): Promise<{ ref: ArtifactRef; bytes: Uint8Array } | undefined>;
  /** The session's artifact references, in the order kept. */
  artifacts(tenant: string, sessionId: string): Promise<ArtifactRef[]>;

  /** Notes that a replica is alive. */
  heartbeat(replica: string, at: number): Promise<void>;
  /** When a replica last said it was alive; undefined once it left (or never came). */
  replicaSeenAt(replica: string): Promise<number | undefined>;
  /** Notes that a replica left (shut down). */
  forgetReplica(replica: string): Promise<void>;

  /** Appends an audit record (already redacted) and returns its `seq`. */
  appendAudit(tenant: string, record: Record<string, unknown>): Promise<number>;
  /** Audit records in `seq` order. */
  audit(query?: AuditQuery): Promise<StoredAuditRecord[]>;

  /**
   * Removes what is over before `before` (epoch ms): each session that ended
   * then, or was last active then and never ended (its replica died), and has
   * no running call, with its events, calls, questions, late results and
   * artifacts; then the blobs no artifact names, and the replicas last seen
   * before it. Grants and the audit stay. Atomic: a session is removed whole
   * or not at all.
   */
  prune(before: number): Promise<PrunedCounts>;

  /** Releases the store's connections. */
  close(): Promise<void>;
}
