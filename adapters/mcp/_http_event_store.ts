// Resumable streams: the messages a session sent on its SSE streams, kept so
// that a client whose connection dropped can reconnect with Last-Event-ID and
// get what it missed. Each session has its own store (no event id of one
// session means anything in another), bounded in count so that a client that
// never reconnects cannot grow it without end.

// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** An in-memory event store keeping the last `limit` events of one session. */
export class BoundedEventStore implements EventStore {
  readonly #events = new Map<string, { stream: string; message: JSONRPCMessage }>();
  readonly #limit: number;
  #next = 0;

  constructor(limit = 1000) {
    this.#limit = limit;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}.${(this.#next++).toString(36).padStart(8, "0")}`;
    this.#events.set(id, { stream: streamId, message });
    while (this.#events.size > this.#limit) this.#events.delete(this.#events.keys().next().value!);
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
