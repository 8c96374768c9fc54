// Resumable streams: the messages a session sent on its SSE streams, kept so
// that a client whose connection dropped can reconnect with Last-Event-ID and
// get what it missed. Each session has its own store (no event id of one
// session means anything in another), bounded in count and in size (a result
// may be large) so that a client that never reconnects cannot grow it without
// end; the oldest events go first.

// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** An in-memory event store keeping the last `limit` events of one session, at most `maxBytes` of them. */
export class BoundedEventStore implements EventStore {
  readonly #events = new Map<string, { stream: string; message: JSONRPCMessage; size: number }>();
  readonly #limit: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #next = 0;

  constructor(limit = 256, maxBytes = 8 * 1024 * 1024) {
    this.#limit = limit;
    this.#maxBytes = maxBytes;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}.${(this.#next++).toString(36).padStart(8, "0")}`;
    // UTF-16 length, twice: what the string costs in memory at most.
    const size = JSON.stringify(message).length * 2;
    this.#events.set(id, { stream: streamId, message, size });
    this.#bytes += size;
    while (this.#events.size > this.#limit || (this.#bytes > this.#maxBytes && this.#events.size > 0)) {
      const oldest = this.#events.keys().next().value!;
      this.#bytes -= this.#events.get(oldest)!.size;
      this.#events.delete(oldest);
    }
    return Promise.resolve(id);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.#events.get(eventId)?.stream);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.#events.get(lastEventId);
    if (!last) return "";
    let after = false;
    // Map order is insertion order, which is the order the events were sent in.
    for (const [id, event] of [...this.#events]) {
      if (id === lastEventId) {
        after = true;
        continue;
      }
      if (after && event.stream === last.stream) await send(id, event.message);
    }
    return last.stream;
  }
}

/**
 * `store`, telling `answered` the stream of each answer it keeps: a request's stream carries that request alone, so
 * an answer kept on it is its last event. The session's own GET stream carries no answer (`_GET_stream`, the SDK
 * transport's name for it) and is never over.
 */
export function notingAnswers(store: EventStore, answered: (streamId: string) => void): EventStore {
  return {
    storeEvent: async (streamId, message) => {
      const id = await store.storeEvent(streamId, message);
      if ("id" in message && ("result" in message || "error" in message)) answered(streamId);
      return id;
    },
    ...(store.getStreamIdForEventId ? { getStreamIdForEventId: (id) => store.getStreamIdForEventId!(id) } : {}),
    replayEventsAfter: (lastEventId, options) => store.replayEventsAfter(lastEventId, options),
  };
}
