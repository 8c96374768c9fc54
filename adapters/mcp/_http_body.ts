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
  | { kind: "message"; message: JSONRPCMessage; held: number }
  | { kind: "batch"; frames: Frame[]; held: number }
  | { kind: "refuse"; status: number; body: ReturnType<typeof errorReply> };

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

// A body refused whole with 400 and a JSON-RPC error of `code` that has no id to answer.
function badRequest(code: number, message: string): JudgedBody {
  return { kind: "refuse", status: 400, body: errorReply(null, code, message) };
}

/** The answer to a batch where batches are not taken (any protocol but 2025-03-26). */
export function refusedBatch(): { kind: "refuse"; status: number; body: ReturnType<typeof errorReply> } {
  return {
    kind: "refuse",
    status: 400,
    body: errorReply(
      null,
      JSONRPC_ERRORS.invalidRequest,
      `Invalid request: batches are taken only under protocol ${BATCH_PROTOCOL_VERSION}; send one message per request`,
    ),
  };
}

/**
 * The most messages one batch may hold. A batch is served message by message, each with its own answer stream, and
 * its answer is joined from all of them: 20,000 pings (under a MiB) held the server for seconds, every tenant's
 * requests waiting, and grew it by 150 MiB. A larger batch is refused whole (-32600) before any of it is served.
 */
export const MAX_BATCH_MESSAGES = 256;

/**
 * The body bytes each tenant's requests may hold at once, as a multiple of the body limit: while they are read, and
 * then while the requests they carry are served. A body is held whole until it has been read, and reading waits on
 * the client: one tenant that sent 60 MiB on each of eight connections and then sent no more held 490 MiB of the
 * server, as long as the connections stayed open (a few hundred connections would take all its memory). A request
 * then holds its message until it is answered: eight calls writing 40 MiB each, waiting on a question in the
 * console, held 440 MiB (a tenant's 32 sessions of 16 calls, 32 GiB). A body that would take its tenant over the
 * budget is refused (429) as it comes; the budget frees as bodies are dropped and their requests answered. The first
 * {@linkcode FREE_BODY_BYTES} of each body are not counted, so that a tenant whose budget is held can still cancel.
 */
export const TENANT_BODY_BUDGET_BODIES = 2;

/** The bytes of each body that its tenant's budget does not count (at most a sixteenth of the body limit). */
export const FREE_BODY_BYTES = 64 * 1024;

/** The bytes of request bodies held, per tenant, against one budget each. */
export class BodyBudgets {
  readonly limit: number;
  readonly #held = new Map<string, number>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Takes `bytes` of `key`'s budget; false (taking nothing) when they would take it over. */
  take(key: string, bytes: number): boolean {
    const held = this.#held.get(key) ?? 0;
    if (held + bytes > this.limit) return false;
    this.#held.set(key, held + bytes);
    return true;
  }

  /** Takes `bytes` of `key`'s budget when they fit, or when `key` holds none (one item larger than the budget). */
  takeFirst(key: string, bytes: number): boolean {
    if (this.take(key, bytes)) return true;
    if (this.held(key) > 0) return false;
    this.#held.set(key, bytes);
    return true;
  }

  /** Gives back `bytes` of `key`'s budget. */
  give(key: string, bytes: number): void {
    const left = (this.#held.get(key) ?? 0) - bytes;
    if (left > 0) this.#held.set(key, left);
    else this.#held.delete(key);
  }

  /** The bytes `key` holds now (for tests). */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }
}

/**
 * The budget a body holds, given back once nothing holds it: the POST being served, and each of its requests that
 * is in flight.
 */
export class BodyLease {
  #count = 1;
  readonly #give: () => void;

  /** A lease held once (by the POST), giving back with `give` when the last hold is dropped. */
  constructor(give: () => void) {
    this.#give = give;
  }

  /** One more holder (a request in flight). */
  hold(): void {
    if (this.#count > 0) this.#count++;
  }

  /** A holder is done; the last one gives the budget back. */
  drop(): void {
    if (this.#count > 0 && --this.#count === 0) this.#give();
  }
}

/** A tenant's share of a {@linkcode BodyBudgets}: whose bodies a read counts against. */
export interface BodyBudget {
  budgets: BodyBudgets;
  key: string;
}

function overBudget(budget: BodyBudget, id: string | number | undefined): JudgedBody {
  return {
    kind: "refuse",
    status: 429,
    body: errorReply(
      id ?? null,
      -32000,
      `Too many request bytes at once: this tenant's requests being read and served would hold more than ` +
        `${budget.budgets.limit} bytes; send it again once others have been answered`,
      { limitBytes: budget.budgets.limit, retryAfterSec: 1 },
    ),
  };
}

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

type Read = Uint8Array | { over: string | number | undefined } | { busy: string | number | undefined };

// The body, at most `limit` bytes of it; each chunk is counted against the tenant's budget as it comes (beyond the
// body's free bytes), and given back if the body is dropped; a body read whole keeps what it counted (see counted()).
async function readCapped(request: Request, limit: number, budget?: BodyBudget): Promise<Read> {
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
  let whole = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      scanner.push(value);
      if (size + value.byteLength > limit) {
        await reader.cancel().catch(() => {});
        return { over: scanner.id };
      }
      const more = counted(size + value.byteLength, limit) - counted(size, limit);
      if (budget && more > 0 && !budget.budgets.take(budget.key, more)) {
        await reader.cancel().catch(() => {});
        return { busy: scanner.id };
      }
      size += value.byteLength;
      chunks.push(value);
    }
    whole = true;
  } finally {
    if (budget && !whole) budget.budgets.give(budget.key, counted(size, limit));
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** The bytes of a body of `size` its tenant's budget counts, under the body limit `limit`. */
export function counted(size: number, limit: number): number {
  return Math.max(0, size - Math.min(FREE_BODY_BYTES, Math.floor(limit / 16)));
}

function fromFrame(frame: Frame, held: number): JudgedBody {
  if (frame.kind === "message") return { ...frame, held };
  if (frame.kind === "reply") return { kind: "refuse", status: 400, body: frame.reply };
  return badRequest(JSONRPC_ERRORS.invalidRequest, `Invalid request: ${frame.reason}`);
}

/**
 * Reads and judges the body of `request`, reading at most `limit` bytes.
 * With `batches` (a client of {@linkcode BATCH_PROTOCOL_VERSION}), a JSON
 * array is a batch, each element judged as a message of its own. With
 * `budget`, the bytes read count against the tenant's budget, and a body that
 * would go over it is refused (429); a body judged a message or a batch keeps
 * the `held` bytes of the budget, which the caller gives back.
 */
export async function judgeBody(
  request: Request,
  limit: number,
  batches = false,
  budget?: BodyBudget,
): Promise<JudgedBody> {
  // A coded body (gzip, br) is not JSON until decoded, and this server decodes none: before, a gzip body was answered
  // "not valid UTF-8" and a body labelled br but sent plain was served as if unlabelled.
  const coding = request.headers.get("content-encoding")?.trim().toLowerCase();
  if (coding && coding !== "identity") {
    await request.body?.cancel().catch(() => {});
    return {
      kind: "refuse",
      status: 415,
      body: errorReply(
        null,
        JSONRPC_ERRORS.invalidRequest,
        `Unsupported Content-Encoding: ${coding.slice(0, 40)}; send the body uncompressed (no Content-Encoding)`,
      ),
    };
  }
  let bytes: Read;
  try {
    bytes = await readCapped(request, limit, budget);
  } catch {
    return badRequest(JSONRPC_ERRORS.parseError, "Parse error: the request body could not be read");
  }
  if ("busy" in bytes) return overBudget(budget!, bytes.busy);
  if (!(bytes instanceof Uint8Array)) return tooLarge(limit, bytes.over);
  const held = budget ? counted(bytes.byteLength, limit) : 0;
  const judged = judgeRead(bytes, batches, held);
  if (judged.kind === "refuse" && budget) budget.budgets.give(budget.key, held);
  return judged;
}

function judgeRead(bytes: Uint8Array, batches: boolean, held: number): JudgedBody {
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
    return { kind: "batch", frames: value.map((element) => judgeValue(element, "a message in a batch")), held };
  }
  if (Array.isArray(value)) return refusedBatch();
  return fromFrame(judgeValue(value), held);
}
