/**
 * Step 5 of a call: attempts with a deadline, an abort signal, a grace period
 * for tools that do not stop, and retries with backoff.
 *
 * @module
 */

import type { AnyTool } from "./tool.ts";
import type { ToolContext } from "./context.ts";

/** Why a call was cancelled; carried as the abort reason. */
export class CancelReason extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CancelReason";
  }
}

/** The cancel reason of the calls a fail-fast batch stops. */
export const FAIL_FAST = "an earlier call in this batch failed (fail-fast)";

/** The reason a signal gives for aborting, in words for the model. */
export function reasonText(signal: AbortSignal): string {
  const reason = signal.reason;
  if (reason instanceof CancelReason) return reason.message;
  if (reason instanceof Error && reason.name !== "AbortError") return reason.message;
  return "the caller cancelled it";
}

/** Waits `ms`; resolves false early when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The wait before retry `attempt + 1`: exponential, capped, with the tool's jitter. */
export function backoffDelay(tool: AnyTool, attempt: number): number {
  const retry = tool.retry!;
  const base = retry.backoffMs ?? 100;
  const delay = Math.min(retry.maxBackoffMs ?? 5_000, base * 2 ** (attempt - 1));
  const jitter = retry.jitter === true ? 0.5 : typeof retry.jitter === "number" ? retry.jitter : 0;
  return Math.max(0, delay * (1 + (Math.random() * 2 - 1) * jitter));
}

/** How a tool's `execute` settled. */
export type SettledOutcome = { kind: "value"; value: unknown } | { kind: "thrown"; error: unknown };

/** How one attempt ended; a stopped one carries the tool's work, which settles when the tool does. */
export type AttemptOutcome =
  | SettledOutcome
  | { kind: "timeout"; stillRunning: boolean; work: Promise<SettledOutcome> }
  | { kind: "cancelled"; stillRunning: boolean; work: Promise<SettledOutcome> };

/**
 * Runs an attempt against its deadline and the caller's signal; a tool that
 * does not settle within `graceMs` of being stopped is reported as still running.
 */
export async function runAttempt(
  tool: AnyTool,
  args: Record<string, unknown>,
  makeContext: (signal: AbortSignal) => ToolContext,
  timeoutMs: number | undefined,
  outer: AbortSignal | undefined,
  graceMs: number,
): Promise<AttemptOutcome> {
  const controller = new AbortController();
  const forwardAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", forwardAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped!: (why: "timeout" | "cancelled") => void;
  const stop = new Promise<"timeout" | "cancelled">((resolve) => (stopped = resolve));
  controller.signal.addEventListener("abort", () => stopped("cancelled"), { once: true });
  if (timeoutMs !== undefined) timer = setTimeout(() => stopped("timeout"), timeoutMs);
  const work = (async () => await tool.execute(args, makeContext(controller.signal)))().then(
    (value): SettledOutcome => ({ kind: "value", value }),
    (error): SettledOutcome => ({ kind: "thrown", error }),
  );
  try {
    const first = await Promise.race([work, stop]);
    if (typeof first !== "string") return first;
    if (first === "timeout") controller.abort(new CancelReason(`timed out after ${timeoutMs} ms`));
    const settled = await Promise.race([work.then(() => true), sleep(graceMs).then(() => false)]);
    return { kind: first, stillRunning: !settled, work };
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", forwardAbort);
  }
}
