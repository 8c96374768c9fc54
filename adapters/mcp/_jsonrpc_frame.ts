// One line read from the client, judged as JSON-RPC 2.0 before the SDK sees
// it: either a message the SDK's protocol layer can take, or the error reply
// the specification names for it (-32700 for what is not JSON, -32600 for JSON
// that is not a request, notification or response). Messages without a
// usable id that cannot be answered (a broken notification) are dropped with
// a reason for the log.

// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { textPrefix, wellFormed } from "@toolfence/core";
import { mcpTypes } from "./_sdk.ts";

const { JSONRPCMessageSchema, JSONRPCNotificationSchema, JSONRPCRequestSchema } = mcpTypes;

/** The JSON-RPC 2.0 error codes the transport and server answer with. */
export const JSONRPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/**
 * A string the client sent, as an error message repeats it: whole up to `max`
 * characters, else cut with its length. A protocol error is a short sentence
 * for a model; a tool name, cursor or URI of megabytes was repeated whole (a
 * 1 MB URI answered with 2 MB, in the message and again in its data). A
 * lone surrogate in it is U+FFFD, as in a tool's result: JSON.stringify
 * writes one as "\ud800", which strict parsers (a Rust client's serde_json,
 * Anthropic's API, once the model's transcript holds it) refuse.
 */
export function echoed(text: string, max = 100): string {
  return wellFormed(text.length <= max ? text : `${textPrefix(text, max)}… (${text.length} characters)`);
}

/** A request id as an error message names it: a string one cut as {@linkcode echoed} cuts. */
export function shownId(id: string | number): string {
  return JSON.stringify(typeof id === "string" ? echoed(id) : id);
}

/** A JSON-RPC error reply. */
export interface JsonRpcErrorReply {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string; data?: unknown };
}

/** What one line is. */
export type Frame =
  | { kind: "message"; message: JSONRPCMessage }
  | { kind: "reply"; reply: JsonRpcErrorReply }
  | { kind: "drop"; reason: string };

/** What one line is where batches are taken (protocol 2025-03-26): one frame, or a batch of them. */
export type LineFrames = Frame | { kind: "batch"; frames: Frame[] };

/**
 * The protocol version whose clients may send JSON-RPC batches: 2025-03-26
 * added them, 2025-06-18 took them out again.
 */
export const BATCH_PROTOCOL_VERSION = "2025-03-26";

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });

// The messages judgeValue found to be requests (the SDK's strict JSONRPCRequestSchema passed), as given to it.
const judgedRequests = new WeakSet<object>();

/**
 * Whether `message` is a value {@linkcode judgeValue} judged a request: it
 * passed the SDK's strict `JSONRPCRequestSchema`, so it is neither of the
 * SDK's (equally strict) responses, which have no `method`.
 */
export function isJudgedRequest(message: unknown): boolean {
  return typeof message === "object" && message !== null && judgedRequests.has(message);
}

// MCP's ProgressToken is a string or any number; the SDK's schemas take integers alone, so a request whose token was
// 1.5 was refused (-32602) by them, here and again in the SDK's handlers. Such a token is carried past them under this
// key of `_meta` instead, and taken back (progressTokenOf) where progress is sent, which echoes it as it was sent.
const FRACTIONAL_PROGRESS_TOKEN = "toolfence/progressToken";

// `params` with a progress token that is no integer moved under FRACTIONAL_PROGRESS_TOKEN; else `params` itself.
function carryingFractionalToken(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params._meta;
  if (!isObject(meta) || typeof meta.progressToken !== "number" || Number.isInteger(meta.progressToken)) return params;
  const { progressToken, ...rest } = meta;
  return { ...params, _meta: { ...rest, [FRACTIONAL_PROGRESS_TOKEN]: progressToken } };
}

/** The progress token of a request's `_meta`, as the client sent it (see carryingFractionalToken). */
export function progressTokenOf(meta: Record<string, unknown> | undefined): string | number | undefined {
  const token = meta?.progressToken ?? meta?.[FRACTIONAL_PROGRESS_TOKEN];
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

/** An error reply. */
export function errorReply(
  id: string | number | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number") {
    // 1e400 is read as Infinity: no number at all, not a fraction.
    if (!Number.isFinite(value)) return "a number too large to read";
    if (!Number.isInteger(value)) return "a fractional number";
    // An integer past 2^53 is read rounded, so its answer could not carry the id sent: said as such, not "an integer".
    return Number.isSafeInteger(value) ? "an integer" : "an integer beyond ±2^53 (it cannot be echoed exactly)";
  }
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** A usable request id: a string or a safe integer (MCP allows no null and no fractions). */
function usableId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
}

/** The first problem zod found, as a short sentence ("params._meta: expected object"). */
function firstIssue(error: unknown): string {
  const issues = (error as { issues?: { path?: PropertyKey[]; message?: string }[] }).issues;
  const issue = issues?.[0];
  if (!issue) return "it does not have the shape of a JSON-RPC message";
  const where = (issue.path ?? []).map(String).join(".");
  return `${where || "the message"}: ${String(issue.message ?? "is invalid").slice(0, 200)}`;
}

/** Whether every problem zod found lies inside the request's params (none in its envelope). */
function issuesWithinParams(error: unknown): boolean {
  const issues = (error as { issues?: { path?: PropertyKey[] }[] }).issues;
  return Array.isArray(issues) && issues.length > 0 && issues.every((issue) => issue.path?.[0] === "params");
}

/**
 * Judges one line (without its newline). `text` is the decoded line when the
 * caller has it already.
 */
export function judgeLine(bytes: Uint8Array): Frame;
/**
 * With `batches`, a line holding a JSON array is a batch: each element
 * judged as a message of its own (an empty array is one `-32600`, as JSON-RPC
 * 2.0 says).
 */
export function judgeLine(bytes: Uint8Array, batches: true): LineFrames;
export function judgeLine(bytes: Uint8Array, batches = false): LineFrames {
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    return {
      kind: "reply",
      reply: errorReply(null, JSONRPC_ERRORS.parseError, "Parse error: the line is not valid UTF-8"),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message.slice(0, 200) : "invalid JSON";
    return { kind: "reply", reply: errorReply(null, JSONRPC_ERRORS.parseError, `Parse error: ${reason}`) };
  }
  if (batches && Array.isArray(value)) {
    if (value.length === 0) {
      return {
        kind: "reply",
        reply: errorReply(null, JSONRPC_ERRORS.invalidRequest, "Invalid request: an empty batch"),
      };
    }
    return { kind: "batch", frames: value.map((element) => judgeValue(element, "a message in a batch")) };
  }
  return judgeValue(value);
}

/**
 * Judges a parsed JSON value as a JSON-RPC message; `within` names where it
 * was found when an array there is not a batch.
 */
export function judgeValue(value: unknown, within?: string): Frame {
  const invalid = (id: string | number | null, why: string) => ({
    kind: "reply" as const,
    reply: errorReply(id, JSONRPC_ERRORS.invalidRequest, `Invalid request: ${why}`),
  });
  if (Array.isArray(value)) {
    return invalid(
      null,
      within === undefined
        ? `batches are taken only under protocol ${BATCH_PROTOCOL_VERSION}; send one message per line`
        : `${within} is a JSON object, not an array`,
    );
  }
  if (!isObject(value)) return invalid(null, `a message is a JSON object, not ${describe(value)}`);
  const hasId = "id" in value;
  const id = usableId(value.id) ? value.id : null;
  if (hasId && !usableId(value.id)) {
    // A response with a bad id cannot be answered either way.
    if (!("method" in value)) return { kind: "drop", reason: `a response with an unusable id (${describe(value.id)})` };
    return invalid(null, `the id must be a string or an integer, not ${describe(value.id)}`);
  }
  // An object that is no Request object of JSON-RPC 2.0 (no jsonrpc "2.0", a method that is no string, params that
  // are neither an object nor an array) is no notification either, id or not: JSON-RPC answers it -32600 with the id
  // null ({"foo": "boo"} and {"jsonrpc": "2.0", "method": 1, "params": "bar"} are the specification's own examples).
  // Only a well-formed notification goes unanswered, whatever its params hold.
  if (value.jsonrpc !== "2.0") return invalid(id, 'jsonrpc must be "2.0"');
  if ("method" in value) {
    if (typeof value.method !== "string") return invalid(id, `method must be a string, not ${describe(value.method)}`);
    if ("params" in value && !isObject(value.params) && !Array.isArray(value.params)) {
      return invalid(id, `params must be an object, not ${describe(value.params)}`);
    }
    if (Array.isArray(value.params)) {
      // Valid JSON-RPC, but no MCP method takes positional parameters.
      if (!hasId) return { kind: "drop", reason: "a notification with positional params" };
      return {
        kind: "reply",
        reply: errorReply(id, JSONRPC_ERRORS.invalidParams, "Invalid params: MCP methods take params as an object"),
      };
    }
  } else if (!hasId) {
    return invalid(null, "a message needs a method (a request or notification) or an id (a response)");
  } else if (!("result" in value) && !("error" in value)) {
    return invalid(id, "a request needs a method");
  }
  if (!hasId && value.method === "notifications/cancelled") return cancellation(value.params);
  const judged = hasId && "method" in value && isObject(value.params)
    ? { ...value, params: carryingFractionalToken(value.params) }
    : value;
  // The schema of the kind of message it claims to be names the field at fault; the union would not.
  const schema = "method" in judged ? (hasId ? JSONRPCRequestSchema : JSONRPCNotificationSchema) : JSONRPCMessageSchema;
  const checked = schema.safeParse(judged);
  if (!checked.success) {
    if (!hasId) return { kind: "drop", reason: `a malformed notification (${firstIssue(checked.error)})` };
    if (!("method" in judged)) return { kind: "drop", reason: `a malformed response (${firstIssue(checked.error)})` };
    // The envelope was judged above (jsonrpc, id, method, params an object): what the schema still finds wrong lies
    // inside params (params._meta.progressToken an object or null), and JSON-RPC 2.0 names that
    // "-32602 Invalid params", not "-32600 Invalid Request" (the JSON is a valid Request object).
    if (issuesWithinParams(checked.error)) {
      return {
        kind: "reply",
        reply: errorReply(id, JSONRPC_ERRORS.invalidParams, `Invalid params: ${firstIssue(checked.error)}`),
      };
    }
    return invalid(id, firstIssue(checked.error));
  }
  if (schema === JSONRPCRequestSchema) judgedRequests.add(judged);
  return { kind: "message", message: judged as JSONRPCMessage };
}

// A cancellation is acted on before the SDK sees it (the stdio transport frees the id it names, the HTTP server the
// request's slot and stream), and then by the SDK, whose strict schema dropped one whose `reason` was not a string:
// the call ran on to the end and answered, while its id had been freed for another request (two answers with one
// id) and its slot for another call (past the limit on calls in flight). So a cancellation counts by its id alone,
// everywhere: the rest (a reason that is no string, a `_meta` not of MCP's shape, fields of its own) is left out
// here, and one naming no request is dropped before anything acts on it.
function cancellation(params: unknown): Frame {
  const { requestId, reason } = isObject(params) ? params : {};
  if (!usableId(requestId)) {
    return {
      kind: "drop",
      reason: `a cancellation naming no request (its requestId is ${
        requestId === undefined ? "missing" : describe(requestId)
      })`,
    };
  }
  return {
    kind: "message",
    message: {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: typeof reason === "string" ? { requestId, reason } : { requestId },
    },
  };
}
