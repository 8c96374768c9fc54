// The SDK validates each request's params with zod before its handler runs,
// and a failed validation leaves as a -32603 internal error whose message is
// zod's JSON dump of every issue (or, for tools/call, a -32602 with that
// dump). Clients should get -32602 with one short sentence. The SDK keeps its
// handlers in a private map, so every registered handler (the SDK's own ping
// and initialize too) is wrapped once the server is set up; the tests of the
// MCP server pin the SDK's behaviour so that an upgrade that moves the map
// fails loudly there.

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { mcpTypes } from "./_sdk.ts";
import { echoed } from "./_jsonrpc_frame.ts";

const { ErrorCode, McpError } = mcpTypes;
// @ts-types="@modelcontextprotocol/sdk/types"

interface ZodLikeIssue {
  path?: PropertyKey[];
  message?: string;
  code?: string;
  expected?: unknown;
}

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

function issuesOf(error: unknown): ZodLikeIssue[] | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const issues = (error as { issues?: unknown }).issues;
  return Array.isArray(issues) ? issues as ZodLikeIssue[] : undefined;
}

/** One short sentence for the first issue: `params.name: expected string`. */
export function describeIssues(issues: readonly ZodLikeIssue[]): string {
  const first = issues[0];
  if (!first) return "Invalid params";
  const path = (first.path ?? []).map(String).join(".") || "params";
  let reason = String(first.message ?? "is invalid");
  // zod's messages are already short ("Invalid input: expected string, received number"); keep them so.
  if (reason.length > 160) reason = reason.slice(0, 160) + "…";
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
  return `Invalid params: ${path}: ${reason}${more}`;
}

// The SDK's McpError prefixes its message with "MCP error <code>: "; the code is already the reply's code.
function protocolError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}

function mapped(error: unknown): unknown {
  const issues = issuesOf(error);
  if (issues) return protocolError(ErrorCode.InvalidParams, describeIssues(issues));
  // The SDK's tools/call check wraps zod's message text; re-read what it can, never pass the dump on.
  if (error instanceof McpError && error.code === ErrorCode.InvalidParams) {
    const dump = /^MCP error -?\d+: Invalid tools\/call request: (.*)$/s.exec(error.message)?.[1];
    if (dump !== undefined) {
      try {
        const parsed = JSON.parse(dump);
        if (Array.isArray(parsed)) return protocolError(ErrorCode.InvalidParams, describeIssues(parsed));
      } catch {
        // not a zod dump
      }
      return protocolError(ErrorCode.InvalidParams, "Invalid params: not a valid tools/call request");
    }
  }
  if (error instanceof McpError) {
    return protocolError(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);
  }
  return error;
}

/**
 * Answers a request for a method `server` has no handler for with `-32601`
 * naming the method and the fix: the SDK's own answer, "Method not found",
 * named neither, so a model could not tell a typo from a capability the
 * server lacks (prompts, completion). A notification's method sent with an id
 * is told to go without one. Call once every handler is registered.
 */
export function answerUnknownMethods(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  // Another SDK version's layout keeps the SDK's own answer rather than refusing to serve.
  if (!(handlers instanceof Map)) return;
  const methods = [...handlers.keys()].filter((method) => method !== "initialize").sort().join(", ");
  server.fallbackRequestHandler = (request) => {
    const method = JSON.stringify(echoed(request.method));
    const message = request.method.startsWith("notifications/")
      ? `Method not found: ${method} is a notification; send it without an id`
      : `Method not found: ${method}; this server answers ${methods}`;
    return Promise.reject(protocolError(ErrorCode.MethodNotFound, message));
  };
}

/**
 * Wraps every request handler registered on `server` so that a params
 * validation failure answers `-32602` with a short message.
 */
export function answerInvalidParams(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  if (!(handlers instanceof Map)) {
    throw new Error("The MCP SDK no longer keeps _requestHandlers; update _param_errors.ts");
  }
  for (const [method, handler] of handlers) {
    handlers.set(method, (request, extra) => {
      try {
        return handler(request, extra).catch((error) => Promise.reject(mapped(error)));
      } catch (error) {
        return Promise.reject(mapped(error));
      }
    });
  }
}
