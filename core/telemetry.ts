/**
 * OpenTelemetry spans for calls and batches, through `@opentelemetry/api`:
 * a no-op unless the application registers an SDK (a tracer provider).
 *
 * A call is a span named `ai.toolCall` with the attributes the Vercel AI SDK
 * gives its tool-call spans (`operation.name`, `ai.operationId`,
 * `ai.toolCall.name`, `ai.toolCall.id`), the OpenTelemetry GenAI ones
 * (`gen_ai.operation.name: "execute_tool"`, `gen_ai.tool.name`,
 * `gen_ai.tool.call.id`) and toolfence's own (`toolfence.status`,
 * `toolfence.error_code`, `toolfence.error_kind`, `toolfence.attempts`,
 * `toolfence.truncated`); its status is ERROR for anything but success.
 * Arguments and outputs are not recorded (they may hold secrets). A batch is
 * a `toolfence.batch` span (`toolfence.batch.size`, `toolfence.batch.mode`)
 * whose calls are its children.
 *
 * `@opentelemetry/api` is an optional peer on npm: it is loaded at the first
 * call after an application registered a tracer provider, and never without
 * one. A provider registered while toolfence cannot load the API (not
 * installed where toolfence resolves it) fails that call with `peer_missing`,
 * naming the package to install.
 *
 * @module
 */
import type { Span } from "@opentelemetry/api";
import type { ToolResult } from "./result.ts";
import { importPeer, type Peer } from "./peer.ts";

type OtelApi = typeof import("@opentelemetry/api");

const TRACER = "toolfence";

const OTEL_API: Peer = {
  name: "@opentelemetry/api",
  range: "^1.9.1",
  neededBy: "toolfence's tracing (a tracer provider is registered)",
};

// Where every copy of @opentelemetry/api 1.x keeps what an application registers (`trace` once a tracer provider is).
const OTEL_GLOBAL = Symbol.for("opentelemetry.js.api.1");

let api: OtelApi | undefined;
let loading: Promise<OtelApi> | undefined;

/**
 * Whether an SDK may record spans: an application registered a tracer
 * provider. Asked on every call, so a provider registered later is honoured at
 * once; without one a call skips the API, the span, its attributes and its
 * context switch (a tenth of a call), and the API is never loaded.
 */
export function tracing(): boolean {
  return (globalThis as Record<symbol, { trace?: unknown } | undefined>)[OTEL_GLOBAL]?.trace !== undefined;
}

/** Runs `traced` with the API, loading it at the first traced call (rejects with `peer_missing` without it). */
function withApi<R>(traced: (loaded: OtelApi) => Promise<R>): Promise<R> {
  if (api !== undefined) return traced(api);
  loading ??= importPeer(OTEL_API, () => import("@opentelemetry/api")).then((loaded) => api = loaded);
  return loading.then(traced);
}

/**
 * Runs one call inside an `ai.toolCall` span, ended with the result's
 * status. With no SDK registered the span is a no-op.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { tracedCall } from "@toolfence/core";
 * const result = await tracedCall("list_dir", "call_1", async () => ({ status: "success" }) as never);
 * console.log(result);
 * ```
 */
export function tracedCall(
  toolName: string,
  callId: string | undefined,
  run: () => Promise<ToolResult>,
): Promise<ToolResult> {
  return tracing() ? callSpan(toolName, callId, run) : run();
}

/**
 * {@linkcode tracedCall}'s span, for a caller that has asked {@linkcode tracing} already (the executor, which
 * makes no closure for an untraced call).
 */
export function callSpan(
  toolName: string,
  callId: string | undefined,
  run: () => Promise<ToolResult>,
): Promise<ToolResult> {
  return withApi(({ trace, SpanKind, SpanStatusCode }) =>
    trace.getTracer(TRACER).startActiveSpan("ai.toolCall", {
      kind: SpanKind.INTERNAL,
      attributes: {
        "operation.name": "ai.toolCall",
        "ai.operationId": "ai.toolCall",
        "ai.toolCall.name": toolName,
        ...(callId === undefined ? {} : { "ai.toolCall.id": callId, "gen_ai.tool.call.id": callId }),
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": toolName,
      },
    }, async (span: Span) => {
      try {
        const result = await run();
        span.setAttributes({
          "toolfence.status": result.status,
          "toolfence.attempts": result.attempts,
          "toolfence.truncated": result.truncated,
          ...(result.errorCode ? { "toolfence.error_code": result.errorCode } : {}),
          ...(result.errorKind
            ? { "toolfence.error_kind": result.errorKind, "error.type": result.errorCode ?? "" }
            : {}),
        });
        span.setStatus(
          result.status === "success"
            ? { code: SpanStatusCode.OK }
            : { code: SpanStatusCode.ERROR, message: `${result.status}/${result.errorKind}/${result.errorCode}` },
        );
        return result;
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
        throw error;
      } finally {
        span.end();
      }
    })
  );
}

/**
 * Runs a batch inside a `toolfence.batch` span; the calls' spans are its children.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { tracedBatch } from "@toolfence/core";
 * console.log(await tracedBatch(2, "parallel", async () => "done"));
 * ```
 */
export function tracedBatch<R>(size: number, mode: string, run: () => Promise<R>): Promise<R> {
  if (!tracing()) return run();
  return withApi(({ trace, SpanStatusCode }) =>
    trace.getTracer(TRACER).startActiveSpan("toolfence.batch", {
      attributes: { "toolfence.batch.size": size, "toolfence.batch.mode": mode },
    }, async (span: Span) => {
      try {
        return await run();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    })
  );
}
