// The one answer to a JSON-RPC batch POSTed under protocol 2025-03-26 (2025-06-18 took batches out again). The
// server serves a batch's messages one by one, in order, each as if it had come alone (every check a single message
// gets, each request its own answer stream), and joins what they got here:
// - nothing to answer (a batch of notifications and responses): 202 with no body, as for one notification;
// - only error replies (broken messages, requests refused before any tool ran): one JSON array;
// - else one event stream: the error replies first, then each request's stream, its events passed on whole as they
//   come, until every stream has ended.

import { errorReply, JSONRPC_ERRORS, type JsonRpcErrorReply } from "./_jsonrpc_frame.ts";

/** What one message of a batch got: the server's response to it alone, or the error reply to a broken message. */
export type BatchPart = Response | JsonRpcErrorReply;

const encoder = new TextEncoder();
const EVENT_END = "\n\n";

function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
}

async function repliesIn(response: Response): Promise<unknown[]> {
  const text = await response.text();
  if (text === "") return [];
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value : [value];
  } catch {
    return [errorReply(null, JSONRPC_ERRORS.internalError, `Internal error: an answer of HTTP ${response.status}`)];
  }
}

/** Joins the answers of a batch's messages, in the batch's order, into the one response to the batch. */
export async function joinBatchAnswers(parts: readonly BatchPart[]): Promise<Response> {
  const replies: unknown[] = [];
  const streams: ReadableStream<Uint8Array>[] = [];
  let sessionId: string | null = null;
  for (const part of parts) {
    if (!(part instanceof Response)) {
      replies.push(part);
      continue;
    }
    sessionId ??= part.headers.get("mcp-session-id");
    if (isEventStream(part) && part.body) streams.push(part.body);
    else replies.push(...await repliesIn(part));
  }
  const headers: Record<string, string> = sessionId === null ? {} : { "mcp-session-id": sessionId };
  if (streams.length === 0) {
    if (replies.length === 0) return new Response(null, { status: 202, headers });
    return new Response(JSON.stringify(replies), {
      status: 200,
      headers: { ...headers, "content-type": "application/json" },
    });
  }
  return new Response(joinedStream(replies, streams), {
    status: 200,
    headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" },
  });
}

// The replies as events, then the streams' events as each stream gives them: an event is passed on only once its
// end has come, so that two streams' events never interleave within one.
function joinedStream(replies: unknown[], streams: ReadableStream<Uint8Array>[]): ReadableStream<Uint8Array> {
  const readers = streams.map((stream) => stream.getReader());
  let open = readers.length;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const reply of replies) {
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(reply)}${EVENT_END}`));
      }
      for (const reader of readers) {
        void passEvents(reader, (bytes) => controller.enqueue(bytes)).finally(() => {
          if (--open > 0) return;
          try {
            controller.close();
          } catch {
            // cancelled by the client meanwhile
          }
        });
      }
    },
    cancel(reason) {
      for (const reader of readers) void reader.cancel(reason).catch(() => {});
    },
  });
}

async function passEvents(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  emit: (bytes: Uint8Array) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      const end = pending.lastIndexOf(EVENT_END);
      if (end < 0) continue;
      emit(encoder.encode(pending.slice(0, end + EVENT_END.length)));
      pending = pending.slice(end + EVENT_END.length);
    }
  } catch {
    // A stream that failed (its session closed) has said all it will: the others go on.
  }
}
