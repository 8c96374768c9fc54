// The bytes of answers a tenant's clients have not read, bounded.
//
// A response's bytes wait in the server until its client reads them: the SDK's transport puts each message on the
// request's stream whole, and the socket takes only what the client has read. A client that sends requests and reads
// none of the answers has the server hold them all, as long as its connections stay open: 120 `resources/read` of
// a 16 MiB artifact, on connections never read, took the server from 246 to 2,782 MiB and held it there (a tenant
// may hold 256 connections per address, and `resources/read` is no tool call: the cap on calls does not count it). Here each response's body is taken from the transport as it comes and counted against its tenant's
// budget until the connection has taken it (the server asks for the next chunk once it has written the previous one);
// a chunk that would take the tenant over the budget ends that response and its connection (the bytes are dropped;
// the events stay in the session's event store, so a client that reads may resume the stream with `Last-Event-ID`).
// The first answer of a tenant that holds none passes whatever its size, so that one large answer read promptly is
// always delivered.

import type { BodyBudgets } from "./_http_body.ts";

/**
 * `response` with its body counted against `key`'s share of `budgets` until sent; `cut` ends the connection when a
 * chunk would take `key` over.
 */
export function countingUnread(response: Response, budgets: BodyBudgets, key: string, cut: () => void): Response {
  if (!response.body) return response;
  const reader = response.body.getReader();
  const queue: Uint8Array[] = [];
  let queued = 0;
  // The chunk handed to the connection and not yet known to be written (it asks for the next one once it is).
  let handed = 0;
  let ended = false;
  let over = false;
  let wake: (() => void) | undefined;
  const give = (bytes: number) => bytes > 0 && budgets.give(key, bytes);
  const release = () => {
    give(queued + handed);
    queue.length = 0;
    queued = 0;
    handed = 0;
  };
  const stop = () => {
    ended = true;
    wake?.();
  };
  void (async () => {
    try {
      while (!ended) {
        const { done, value } = await reader.read();
        if (done || ended) break;
        if (!budgets.takeFirst(key, value.byteLength)) {
          over = true;
          void reader.cancel().catch(() => {});
          release();
          cut();
          break;
        }
        queue.push(value);
        queued += value.byteLength;
        wake?.();
      }
    } catch {
      // The transport's stream failed: the response ends with what it had.
    }
    stop();
  })();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      give(handed);
      handed = 0;
      while (queue.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const chunk = queue.shift();
      if (chunk) {
        queued -= chunk.byteLength;
        handed = chunk.byteLength;
        controller.enqueue(chunk);
        return;
      }
      release();
      if (over) {
        controller.error(new Error(`the client's unread answers would hold more than ${budgets.limit} bytes`));
      } else controller.close();
    },
    cancel(reason) {
      ended = true;
      release();
      void reader.cancel(reason).catch(() => {});
      wake?.();
    },
  }, { highWaterMark: 0 });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
