// One POST body read and judged as JSON-RPC before the SDK's transport sees
// it, with the same judgement the stdio transport makes of a line
// (_jsonrpc_frame.ts): a body larger than the limit stops being read and is
// answered 413 (naming the request's id when it came before the cut), what is
// not UTF-8 JSON is -32700, what is not a message is -32600, and so on. A
// broken notification, which JSON-RPC cannot answer, still gets an HTTP 400
// with its reason: over HTTP every request has someone waiting.

import { IdScanner } from "./_id_scan.ts";
import { BATCH_PROTOCOL_VERSION, errorReply, type Frame, JSONRPC_ERRORS, judgeValue } from "./_jsonrpc_frame.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** A body judged: the message, a batch's messages each judged, or the HTTP status and JSON-RPC error body to answer. */
export type JudgedBody =
  | { kind: "message"; message: JSONRPCMessage }
  | { kind: "batch"; frames: Frame[] }
  | { kind: "refuse"; status: number; body: ReturnType<typeof errorReply> };

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

// A body refused whole with 400 and a JSON-RPC error of `code` that has no id to answer.
function badRequest(code: number, message: string): JudgedBody {
  return { kind: "refuse", status: 400, body: errorReply(null, code, message) };
}

/**
 * The most messages one batch may hold. A batch is served message by message, each with its own answer stream, and
 * its answer is joined from all of them: 20,000 pings (under a MiB) held the server for seconds, every tenant's
 * requests waiting, and grew it by 150 MiB. A larger batch is refused whole (-32600) before any of it is served.
 */
export const MAX_BATCH_MESSAGES = 256;

function tooLarge(limit: number, id: string | number | undefined): JudgedBody {
  const mib = Math.round(limit / 1024 / 1024 * 100) / 100;
  return {
    kind: "refuse",
    status: 413,
    body: errorReply(
      id ?? null,
      JSONRPC_ERRORS.invalidRequest,
      `Request too large: the body is over the server's limit of ${limit} bytes (${mib} MiB)`,
      { limitBytes: limit },
    ),
  };
}

async function readCapped(
  request: Request,
  limit: number,
): Promise<Uint8Array | { over: string | number | undefined }> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) {
    await request.body?.cancel().catch(() => {});
    return { over: undefined };
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const scanner = new IdScanner();
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    scanner.push(value);
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { over: scanner.id };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

function fromFrame(frame: Frame): JudgedBody {
  if (frame.kind === "message") return frame;
  if (frame.kind === "reply") return { kind: "refuse", status: 400, body: frame.reply };
  return badRequest(JSONRPC_ERRORS.invalidRequest, `Invalid request: ${frame.reason}`);
}

/**
 * Reads and judges the body of `request`, reading at most `limit` bytes.
 * With `batches` (a client of {@linkcode BATCH_PROTOCOL_VERSION}), a JSON
 * array is a batch, each element judged as a message of its own.
 */
export async function judgeBody(request: Request, limit: number, batches = false): Promise<JudgedBody> {
  let bytes: Uint8Array | { over: string | number | undefined };
  try {
    bytes = await readCapped(request, limit);
  } catch {
    return badRequest(JSONRPC_ERRORS.parseError, "Parse error: the request body could not be read");
  }
  if (!(bytes instanceof Uint8Array)) return tooLarge(limit, bytes.over);
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    return badRequest(JSONRPC_ERRORS.parseError, "Parse error: the body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message.slice(0, 200) : "invalid JSON";
    return badRequest(JSONRPC_ERRORS.parseError, `Parse error: ${reason}`);
  }
  if (Array.isArray(value) && batches) {
    if (value.length === 0) {
      return badRequest(JSONRPC_ERRORS.invalidRequest, "Invalid request: an empty batch");
    }
    if (value.length > MAX_BATCH_MESSAGES) {
      return badRequest(
        JSONRPC_ERRORS.invalidRequest,
        `Invalid request: a batch of ${value.length} messages; at most ${MAX_BATCH_MESSAGES} go in one`,
      );
    }
    return { kind: "batch", frames: value.map((element) => judgeValue(element, "a message in a batch")) };
  }
  if (Array.isArray(value)) {
    return badRequest(
      JSONRPC_ERRORS.invalidRequest,
      `Invalid request: batches are taken only under protocol ${BATCH_PROTOCOL_VERSION}; send one message per request`,
    );
  }
  return fromFrame(judgeValue(value));
}
