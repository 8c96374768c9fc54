/**
 * Batches of calls: segments of concurrency-safe calls run together, any other
 * call runs alone as a barrier, results in declaration order.
 *
 * @module
 */

import type { ToolResult } from "./result.ts";
import { isConcurrencySafe } from "./tool.ts";
import type { SessionBase } from "./session.ts";
import { type DeferredImage, deferredImagesMessage } from "./images.ts";
import {
  type BatchCall,
  type BatchClosure,
  type BatchOptions,
  type BatchResult,
  executeCall,
  type ExecutionEnvironment,
} from "./executor.ts";
import { CancelReason, FAIL_FAST, reasonText } from "./_call_attempts.ts";
import { tracedBatch } from "./telemetry.ts";

/**
 * Splits calls into segments: runs of concurrency-safe calls, and unsafe calls alone.
 *
 * @example
 * ```ts
 * import { planSegments } from "@toolfence/core";
 * console.log(planSegments([true, true, false, true], "parallel")); // [[0, 1], [2], [3]]
 * ```
 */
export function planSegments(
  safe: readonly boolean[],
  mode: "serial" | "parallel",
): number[][] {
  const segments: number[][] = [];
  let current: number[] = [];
  safe.forEach((isSafe, index) => {
    if (mode === "parallel" && isSafe) {
      current.push(index);
      return;
    }
    if (current.length) segments.push(current);
    current = [];
    segments.push([index]);
  });
  if (current.length) segments.push(current);
  return segments;
}

// As qitos's ActionExecutionPolicy: one call after another unless parallel is asked for.
const BATCH_MODE = "serial";

/**
 * Runs a batch: in parallel mode consecutive concurrency-safe calls share a
 * segment (at most `maxConcurrency` at once) and any other call runs alone as a
 * barrier. Results come back in declaration order. With `failFast` an error or
 * timeout cancels everything not yet finished (`cancelled`, `attempts: 0` for
 * calls that never started). The images its calls deferred are collected after
 * the batch (by call id: those of calls running elsewhere on the session stay queued).
 */
export function executeBatch<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  calls: readonly BatchCall[],
  options: BatchOptions<T> = {},
): Promise<BatchResult> {
  // An OpenTelemetry span around the batch, the calls' spans inside it (a no-op without an SDK).
  return tracedBatch(calls.length, options.mode ?? BATCH_MODE, () => executeBatchSteps(env, session, calls, options));
}

async function executeBatchSteps<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  calls: readonly BatchCall[],
  options: BatchOptions<T>,
): Promise<BatchResult> {
  const mode = options.mode ?? BATCH_MODE;
  const maxConcurrency = Math.max(1, options.maxConcurrency ?? 4);
  const batch = new AbortController();
  const forwardAbort = () => batch.abort(options.signal!.reason);
  if (options.signal?.aborted) forwardAbort();
  options.signal?.addEventListener("abort", forwardAbort, { once: true });
  const parallelNames = options.parallelToolNames ? new Set(options.parallelToolNames) : undefined;
  const safe = calls.map((call) => {
    if (parallelNames) return parallelNames.has(call.name);
    const tool = env.lookup(call.name);
    return tool ? isConcurrencySafe(tool) : true;
  });
  const results: ToolResult[] = new Array(calls.length);
  let closure: BatchClosure = { kind: "completed" };
  const runOne = async (index: number) => {
    const call = calls[index];
    const result = await executeCall(env, session, call.name, call.args, {
      context: options.context,
      callId: call.callId,
      signal: batch.signal,
      timeoutMs: call.timeoutMs,
      onProgress: options.onProgress,
      idempotencyKey: call.idempotencyKey,
    });
    results[index] = result;
    if (options.failFast && (result.status === "error" || result.status === "timed_out") && !batch.signal.aborted) {
      closure = {
        kind: "fail_fast",
        causedBy: {
          index,
          toolName: call.name,
          ...(call.callId !== undefined ? { callId: call.callId } : {}),
          status: result.status,
        },
      };
      batch.abort(new CancelReason(FAIL_FAST));
    }
  };
  try {
    for (const segment of planSegments(safe, mode)) {
      let next = 0;
      const worker = async () => {
        while (next < segment.length) await runOne(segment[next++]);
      };
      await Promise.all(Array.from({ length: Math.min(maxConcurrency, segment.length) }, worker));
    }
  } finally {
    options.signal?.removeEventListener("abort", forwardAbort);
  }
  // Cancelled by the caller only when its cancel stopped a call (not when it came after the last).
  if (closure.kind === "completed" && options.signal?.aborted && results.some((r) => r.status === "cancelled")) {
    closure = { kind: "cancelled", reason: reasonText(options.signal) };
  }
  for (const result of results) result.batchClosure = closure;
  const hooks = [...env.hooks.afterBatch.splice(0), ...session.hooks.afterBatch.splice(0)];
  for (const hook of hooks) await hook({ session, results });
  const images = takeBatchImages(session, calls);
  return { results, batchClosure: closure, images, imageMessage: deferredImagesMessage(images) };
}

// The images the batch's own calls deferred, by call id (an image without one goes with a batch that has a call
// without one). The session's other images stay queued: another batch or a framework's call running on the same
// session at the same time deferred them, and its conversation is where they go.
function takeBatchImages(session: SessionBase, calls: readonly BatchCall[]): DeferredImage[] {
  const ids = new Set(calls.map((call) => call.callId));
  const mine: DeferredImage[] = [];
  for (const image of session.takeDeferredImages()) {
    if (ids.has(image.callId)) mine.push(image);
    else void session.deferImage(image.data, { toolName: image.toolName, callId: image.callId, note: image.note });
  }
  return mine;
}
