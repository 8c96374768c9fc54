/**
 * Failures a tool returns instead of throwing: {@linkcode fail}, and the other
 * shapes the pipeline understands as a returned outcome (Flux's
 * `{ output, success, metadata }`, a canonical {@linkcode ToolResult}).
 *
 * @module
 */

import { type ErrorKind, ToolError } from "./errors.ts";
import type { ErrorCode } from "./error_codes.ts";
import { isToolResult, type ToolResult } from "./result.ts";

/** The statuses a tool may end its own call with. */
export type ReturnedFailureStatus = "error" | "skipped" | "timed_out" | "cancelled";

/** What a tool may say about the failure it returns. */
export interface FailOptions {
  /** Stable code; default `tool_failed`. */
  code?: ErrorCode | (string & Record<never, never>);
  /**
   * `error` (default), `skipped` (a refusal that did nothing: kind `policy`),
   * `timed_out` (the tool's own deadline) or `cancelled` (both kind `execution`).
   */
  status?: ReturnedFailureStatus;
  /** Layer of the failure; default the code's (`execution` for `timed_out`). */
  kind?: ErrorKind;
  /** Whether the model can fix the call and try again; default the code's. */
  recoverable?: boolean;
  /** One short sentence telling the model what to do instead. */
  recoveryHint?: string;
  /** Developer-facing details; never sent to the model. */
  details?: Record<string, unknown>;
  /** Output the model still reads with the error (e.g. a failed command's stdout and stderr). */
  output?: unknown;
  /** Merged into the result's `metadata`; never sent to the model. */
  metadata?: Record<string, unknown>;
  /** What the tool knows of its effects, e.g. `applied` when the command it ran did run. */
  effectState?: "applied" | "not_applied" | "none";
}

/**
 * A failure a tool returned; build it with {@linkcode fail}. The pipeline turns
 * it into a result with the error's status, kind and code, keeping `output`.
 * Returned failures are never retried (only thrown `tool_error`s are).
 *
 * @example
 * ```ts
 * import { fail, ToolFailure } from "@toolfence/core";
 * const failure = fail("No such key", { code: "no_such_key" });
 * console.log(failure instanceof ToolFailure, failure.error.code, failure.status); // true no_such_key error
 * ```
 */
export class ToolFailure {
  /** The error, with its code, kind and message. */
  readonly error: ToolError;
  /** The result status. */
  readonly status: ReturnedFailureStatus;
  /** Output kept with the error. */
  readonly output: unknown;
  /** Metadata for the result. */
  readonly metadata?: Record<string, unknown>;
  /** What the tool said of its effects. */
  readonly effectState?: "applied" | "not_applied" | "none";

  /** Creates the failure; prefer {@linkcode fail}. */
  constructor(message: string, options: FailOptions = {}) {
    const status = options.status ?? "error";
    const code = options.code ??
      (status === "error"
        ? "tool_failed"
        : status === "skipped"
        ? "permission_denied"
        : status === "timed_out"
        ? "timeout"
        : "cancelled");
    // The kinds the result's invariants tie to a status.
    const kind = status === "skipped" ? "policy" : status === "error" ? options.kind : "execution";
    this.error = new ToolError(message, {
      code,
      kind,
      status: status === "skipped" ? "skipped" : "error",
      recoverable: options.recoverable,
      recoveryHint: options.recoveryHint,
      details: options.details,
    });
    this.status = status;
    this.output = options.output ?? null;
    this.metadata = options.metadata;
    this.effectState = options.effectState;
  }
}

/**
 * Ends a call as a failure from inside a tool, by returning the value this
 * makes: the result gets `status` `error` (or the one given), the code
 * (default `tool_failed`), and keeps `output` for the model to read.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { fail, tool } from "@toolfence/core";
 * const lookup = tool({
 *   name: "lookup",
 *   description: "Look a key up.",
 *   input: v.object({ key: v.string() }),
 *   effects: ["reads"],
 *   run: ({ key }, ctx) => {
 *     ctx.metadata.lookedUp = key;
 *     return key === "a" ? 1 : fail(`No key ${key}`, { code: "no_such_key", recoveryHint: "Use key a." });
 *   },
 * });
 * ```
 */
export function fail(message: string, options: FailOptions = {}): ToolFailure {
  return new ToolFailure(message, options);
}

/** Flux's result shape: `{ output, success, metadata? }`. */
export interface FluxResult {
  /** The output. */
  output: unknown;
  /** Whether the tool succeeded. */
  success: boolean;
  /** Metadata for runners and middleware. */
  metadata?: Record<string, unknown>;
  /** An error message, when failed. */
  error?: string;
}

const FLUX_KEYS = new Set(["output", "success", "metadata", "error"]);

/**
 * Whether a value is Flux's result shape: a plain object with a boolean
 * `success`, an `output`, and no keys but `output`, `success`, `metadata` and `error`.
 *
 * @example
 * ```ts
 * import { isFluxResult } from "@toolfence/core";
 * console.log(isFluxResult({ output: "no such file", success: false })); // true
 * console.log(isFluxResult({ output: 1, success: true, extra: 2 })); // false
 * ```
 */
export function isFluxResult(value: unknown): value is FluxResult {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Partial<FluxResult>;
  if (typeof r.success !== "boolean" || !("output" in r)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (!FLUX_KEYS.has(key)) return false;
  return r.metadata === undefined || (typeof r.metadata === "object" && r.metadata !== null);
}

// A result a tool returns: a ToolResult, or one without `toolName` (the pipeline names the tool); so that a failed
// result without a name ends the call as that failure, not as a success whose output is the whole result.
function isReturnedResult(value: object): value is ToolResult {
  if (isToolResult(value)) return true;
  const r = value as Partial<ToolResult>;
  return typeof r.schemaVersion === "number" && r.toolName === undefined && isToolResult({ ...r, toolName: "" });
}

/** How a tool's returned value ends the call. */
export type Returned =
  | { kind: "output"; output: unknown; metadata?: Record<string, unknown>; result?: ToolResult }
  | { kind: "failure"; failure: ToolFailure; result?: ToolResult };

/**
 * Reads a tool's returned value: a {@linkcode ToolFailure}, Flux's shape or a
 * canonical {@linkcode ToolResult} are outcomes; anything else is the output.
 * A returned `ToolResult`'s pipeline fields (name, attempts, timing) are
 * ignored: the call's own are used.
 *
 * @example
 * ```ts
 * import { readReturned } from "@toolfence/core";
 * console.log(readReturned({ output: "gone", success: false })?.kind); // failure
 * console.log(readReturned({ rows: 3 })); // undefined: plain output
 * ```
 */
export function readReturned(value: unknown): Returned | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (value instanceof ToolFailure) return { kind: "failure", failure: value };
  if (isReturnedResult(value)) {
    if (value.status === "success") {
      return { kind: "output", output: value.output, metadata: value.metadata, result: value };
    }
    const failure = new ToolFailure(value.error ?? `${value.toolName || "The tool"} failed`, {
      code: value.errorCode,
      status: value.status,
      kind: value.errorKind,
      recoverable: value.recoverable,
      recoveryHint: value.recoveryHint,
      details: value.details,
      output: value.output,
      metadata: value.metadata,
    });
    return { kind: "failure", failure, result: value };
  }
  if (isFluxResult(value)) {
    if (value.success) return { kind: "output", output: value.output, metadata: value.metadata };
    const message = value.error ??
      (typeof value.output === "string" && value.output ? value.output : "The tool failed");
    return {
      kind: "failure",
      failure: new ToolFailure(message, { output: value.output, metadata: value.metadata }),
    };
  }
  return undefined;
}
