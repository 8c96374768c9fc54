/**
 * Late results: what a timed-out or cancelled tool did once it finally
 * settled, kept on its session and announced to listeners, never dropped.
 *
 * @module
 */

import type { AttemptId, ToolResult } from "./result.ts";

/**
 * What a tool that had been timed out or cancelled settled with, after its
 * call had ended: a whole {@linkcode ToolResult} of that settling (`status`
 * `success` when it returned a value, else the failure it threw or returned;
 * `latencyMs` up to the settling; the same `attemptId` as the reported result),
 * marked `lateResult`. Its `output` is whole (never cut): it is for the
 * developer, not the model.
 */
export interface LateResult extends ToolResult {
  /** The attempt that settled late: the same as the reported result's. */
  attemptId: AttemptId;
  /** Always true: this result came after the call had been reported. */
  lateResult: true;
  /** How the call had been reported. */
  reportedStatus: "timed_out" | "cancelled";
  /** Whether the session had been taken over (its generation moved on) before the tool settled. */
  staleOwner: boolean;
}

/**
 * A session's late results and the listeners told of each. Held by
 * `SessionBase.lateResults`.
 *
 * @example
 * ```ts
 * import { LateResults } from "@toolfence/core";
 * const late = new LateResults();
 * const off = late.onLateResult((r) => console.log(r.toolName));
 * console.log(late.list().length); // 0
 * off();
 * ```
 */
export class LateResults {
  #items: LateResult[] = [];
  #listeners = new Set<(late: LateResult) => void>();

  /** Every late result so far, oldest first. */
  list(): readonly LateResult[] {
    return [...this.#items];
  }

  /** Subscribes to late results; returns the unsubscribe function. */
  onLateResult(listener: (late: LateResult) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Keeps a late result and tells every listener (a failing listener is ignored). */
  record(late: LateResult): void {
    this.#items.push(late);
    for (const listener of this.#listeners) {
      try {
        listener(late);
      } catch {
        // A failing listener must not lose the late result for the others.
      }
    }
  }
}
