// Serving as one replica of a fleet: the state other replicas need goes to the shared store. A session's
// events go there as they are sent (so that a client may resume a stream on any replica); a call is recorded
// before its tool runs, with the stream its answer goes out on, and ended with that answer; each replica says
// it is alive every HEARTBEAT_MS, and the calls of a replica silent for DEAD_AFTER_MS (or gone) are ended as
// interrupted, their answer appended to their stream, where a resuming client reads it.

// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { makeResult, type Store, type StoredCall, type ToolBox } from "@toolfence/core";
import { resultMeta } from "./server.ts";
import { requestIdOf, requestKey } from "./_request_key.ts";
import { DEAD_AFTER_MS, HEARTBEAT_MS, replicaAlive, unrefTimer } from "./_replica_liveness.ts";

// The SDK's priming event (sent first on a stream, so that the client holds an event id to resume from).
const isPriming = (message: unknown): boolean =>
  typeof message === "object" && message !== null && Object.keys(message).length === 0;

/**
 * One session's events in the store. `claimStream` is set just before a
 * request is handed to the transport and taken by the priming event of the
 * stream the transport opens for it (the transport stores that event before
 * it hands the request on, in the same turn): so a call is recorded, with its
 * stream, before its tool starts. A recorded call's answer (its request id in
 * `answering`) ends the call in the store before the answer is kept as an
 * event, and both before the transport writes it to the client: a replica
 * killed once the client has its answer leaves no call running, for another
 * replica to end as interrupted against what the client saw.
 */
export class StoreEvents implements EventStore {
  claimStream?: (streamId: string) => Promise<void>;
  /** The request ids (their requestKey) of recorded calls whose answer is being sent. */
  readonly answering = new Set<string>();

  constructor(
    readonly store: Store,
    readonly sessionId: string,
    readonly finish: (key: string, answer: JSONRPCMessage) => Promise<unknown>,
    readonly keep = 256,
  ) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const claim = isPriming(message) ? this.claimStream : undefined;
    this.claimStream = undefined;
    if (claim) await claim(streamId);
    const key = "id" in message && message.id !== undefined ? requestKey(message.id) : undefined;
    if (key !== undefined && this.answering.delete(key)) {
      await this.finish(key, message);
    }
    return await this.store.appendEvent(this.sessionId, streamId, message, this.keep);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.store.eventStream(this.sessionId, eventId);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const found = await this.store.eventsAfter(this.sessionId, lastEventId);
    if (!found) return "";
    for (const event of found.events) await send(event.id, event.message as JSONRPCMessage);
    return found.streamId;
  }
}

/** The answer given for a call whose replica stopped before it ended. */
export function interruptedAnswer(call: StoredCall, toolbox: ToolBox): JSONRPCMessage {
  const tool = toolbox.has(call.tool) ? toolbox.get(call.tool) : undefined;
  const result = makeResult({
    toolName: call.tool,
    status: "cancelled",
    errorKind: "execution",
    errorCode: "replica_lost",
    error: `The server running ${call.tool} stopped before the call ended; what it did is unknown`,
    recoverable: true,
    recoveryHint: "Look at what the call would have changed before calling again.",
    declaredEffects: tool?.effects ?? null,
    attempts: 1,
    latencyMs: Date.now() - call.startedAt,
  });
  return {
    jsonrpc: "2.0",
    id: requestIdOf(call.requestId),
    result: {
      content: [{ type: "text", text: `Error: ${result.error}` }],
      isError: true,
      _meta: { "toolfence/result": resultMeta(result) },
    },
  } as JSONRPCMessage;
}

/** How many of a tenant's calls ended on a replica keep their answer in the store, the newest. */
export const ANSWERS_KEPT = 1024;

/** This replica's part of the fleet: its heartbeat, and the ending of other replicas' orphaned calls. */
export class FleetReplica {
  readonly #timer: ReturnType<typeof setInterval>;
  /** Per tenant, the calls ended here whose answer the store keeps (session and request key), oldest first. */
  readonly #answered = new Map<string, [string, string][]>();
  #beat: Promise<void> = Promise.resolve();

  constructor(readonly store: Store, readonly id: string, readonly toolbox: ToolBox) {
    this.#timer = setInterval(() => {
      this.#beat = this.#tick().catch(() => {});
    }, HEARTBEAT_MS);
    unrefTimer(this.#timer);
  }

  /**
   * Ends a call of `tenant` in the store with its answer, and drops the answers of the tenant's calls ended here
   * before its newest ANSWERS_KEPT (their rows stay: they ran). Each answer is up to the output's bound (60 KB of a
   * read_file) and every one stayed until its session was pruned: a client calling in a loop filled the store every
   * tenant shares.
   */
  async finishCall(tenant: string, sessionId: string, key: string, answer: unknown): Promise<void> {
    if (!await this.store.finishCall(sessionId, key, answer, Date.now())) return;
    let kept = this.#answered.get(tenant);
    if (!kept) this.#answered.set(tenant, kept = []);
    kept.push([sessionId, key]);
    while (kept.length > ANSWERS_KEPT) await this.store.forgetAnswer(...kept.shift()!);
  }

  /** Says this replica is alive (at start, then every tick). */
  async start(): Promise<void> {
    await this.store.heartbeat(this.id, Date.now());
  }

  async #tick(): Promise<void> {
    await this.store.heartbeat(this.id, Date.now());
    await this.settle(await this.store.runningCalls());
  }

  /** Ends as interrupted those of `calls` whose replica is gone; returns those still running on a live one. */
  async settle(calls: StoredCall[]): Promise<StoredCall[]> {
    const alive = new Map<string, boolean>();
    const running: StoredCall[] = [];
    for (const call of calls) {
      if (!alive.has(call.owner)) {
        alive.set(call.owner, call.owner === this.id || await replicaAlive(this.store, call.owner));
      }
      if (alive.get(call.owner)) {
        running.push(call);
        continue;
      }
      const answer = interruptedAnswer(call, this.toolbox);
      // Only the first to end it appends the answer; a call that ended meanwhile keeps its own.
      if (!await this.store.interruptCall(call.sessionId, call.requestId, answer, Date.now())) continue;
      if (call.streamId) await this.store.appendEvent(call.sessionId, call.streamId, answer, 256);
      // The replica that ran it could not audit it: the audit says how it ended, and who said so.
      await this.store.appendAudit(call.tenant, {
        time: new Date().toISOString(),
        type: "call",
        tool: call.tool,
        status: "cancelled",
        errorCode: "replica_lost",
        tenant: call.tenant,
        mcpSession: call.sessionId,
        requestId: requestIdOf(call.requestId),
        replica: call.owner,
        answeredBy: this.id,
      });
    }
    return running;
  }

  /**
   * Waits until no call of the session on `streamId` is running (each ended by
   * its replica, or as interrupted once that replica is gone), so that a resume
   * replays its answer.
   */
  async settleStream(tenant: string, sessionId: string, streamId: string): Promise<void> {
    // A live replica's call may run long: the client is then told what is known so far, and resumes again.
    const deadline = Date.now() + 3 * DEAD_AFTER_MS;
    while (Date.now() < deadline) {
      const calls = (await this.store.runningCalls({ sessionId })).filter((call) =>
        call.tenant === tenant && call.streamId === streamId
      );
      if ((await this.settle(calls)).length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Stops the heartbeat and says this replica left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beat;
    await this.store.forgetReplica(this.id).catch(() => {});
  }
}
