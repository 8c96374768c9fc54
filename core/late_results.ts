/**
 * Late results: what a timed-out or cancelled tool did once it finally
 * settled, kept on its session and announced to listeners. A session keeps at
 * most {@linkcode DEFAULT_LATE_RESULTS_MAX_COUNT} of them and
 * {@linkcode DEFAULT_LATE_RESULTS_MAX_BYTES} of their outputs: past either, the
 * oldest are dropped (never the one just recorded) and counted in
 * {@linkcode LateResults.dropped}, which the MCP server tells its client.
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

/** The default of {@linkcode LateResultsOptions.maxCount}: late results a session keeps. */
export const DEFAULT_LATE_RESULTS_MAX_COUNT = 100;
/** The default of {@linkcode LateResultsOptions.maxBytes}: 16 MiB of late results (as JSON) a session keeps. */
export const DEFAULT_LATE_RESULTS_MAX_BYTES = 16 * 1024 * 1024;

/** How many late results a session keeps (oldest dropped first past either bound). */
export interface LateResultsOptions {
  /** At most this many late results. Default {@linkcode DEFAULT_LATE_RESULTS_MAX_COUNT}. */
  maxCount?: number;
  /** At most this many characters of late results as JSON (the newest is kept whole, whatever its size). Default {@linkcode DEFAULT_LATE_RESULTS_MAX_BYTES}. */
  maxBytes?: number;
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
  #items: { late: LateResult; bytes: number }[] = [];
  #held = 0;
  #dropped = 0;
  #listeners = new Set<(late: LateResult) => void>();
  readonly #maxCount: number;
  readonly #maxBytes: number;

  /** An empty list, bounded by `options` (see {@linkcode LateResultsOptions}). */
  constructor(options: LateResultsOptions = {}) {
    this.#maxCount = options.maxCount ?? DEFAULT_LATE_RESULTS_MAX_COUNT;
    this.#maxBytes = options.maxBytes ?? DEFAULT_LATE_RESULTS_MAX_BYTES;
    if (!(this.#maxCount >= 1)) throw new TypeError(`maxCount must be at least 1, not ${this.#maxCount}`);
    if (!(this.#maxBytes > 0)) throw new TypeError(`maxBytes must be positive, not ${this.#maxBytes}`);
  }

  /** The late results kept, oldest first (the oldest past the bounds were dropped: see {@linkcode dropped}). */
  list(): readonly LateResult[] {
    return this.#items.map((item) => item.late);
  }

  /** How many late results were dropped, oldest first, to keep within the bounds. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Subscribes to late results; returns the unsubscribe function. */
  onLateResult(listener: (late: LateResult) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Keeps a late result, dropping the oldest past the bounds, and tells every listener (a failing listener is
   * ignored).
   */
  record(late: LateResult): void {
    const bytes = lateResultSize(late);
    while (
      this.#items.length > 0 && (this.#items.length + 1 > this.#maxCount || this.#held + bytes > this.#maxBytes)
    ) {
      this.#held -= this.#items.shift()!.bytes;
      this.#dropped++;
    }
    this.#items.push({ late, bytes });
    this.#held += bytes;
    for (const listener of this.#listeners) {
      try {
        listener(late);
      } catch {
        // A failing listener must not lose the late result for the others.
      }
    }
  }
}

/** What a late result costs against the byte budget: its JSON's length (an unserializable output counts as none). */
function lateResultSize(late: LateResult): number {
  try {
    return JSON.stringify(late)?.length ?? 0;
  } catch {
    return JSON.stringify({ ...late, output: null }).length;
  }
}
