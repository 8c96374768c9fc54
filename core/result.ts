/**
 * The lossless result of one tool call, its invariants, and the text a model
 * reads from it.
 *
 * @module
 */

import type { ErrorKind } from "./errors.ts";
import type { FileChange } from "./effects.ts";

/** How a call ended. */
export type ToolStatus = "success" | "error" | "skipped" | "timed_out" | "cancelled";

/** The version of the {@linkcode ToolResult} shape. */
export const RESULT_SCHEMA_VERSION = 1;

/**
 * A reference to stored content, e.g. the whole of an output that was cut.
 * Only `id`, `sha256`, `mediaType`, `byteLength` and `summary` reach the model.
 */
export interface ArtifactRef {
  /** `sha256:<hex>`, content-addressed. */
  id: string;
  /** Hex SHA-256 of the content. */
  sha256: string;
  /** IANA media type, e.g. `text/plain; charset=utf-8`. */
  mediaType: string;
  /** Size of the content in bytes. */
  byteLength: number;
  /** How the content is stored: `utf-8` text or raw `binary`. */
  encoding: "utf-8" | "binary";
  /** Whether the content may hold secrets; `sensitive` artifacts are never listed to clients. */
  sensitivity: "normal" | "sensitive";
  /** One line describing the content. */
  summary: string;
  /** Whether the model needs the content to make sense of the result. */
  required: boolean;
}

/** Plain-JSON record of one tool call. Build it with {@linkcode makeResult}. */
export interface ToolResult {
  /** Shape version, {@linkcode RESULT_SCHEMA_VERSION}. */
  schemaVersion: number;
  /** How the call ended. */
  status: ToolStatus;
  /** The tool's JSON output (a string, or any JSON value); `null` when there is none. */
  output: unknown;
  /** Model-facing error message; absent on success. */
  error?: string;
  /** Layer of the failure; absent on success. */
  errorKind?: ErrorKind;
  /** Stable code of the failure, e.g. `invalid_arguments`; absent on success. */
  errorCode?: string;
  /** Whether the model can correct the call and retry; absent on success. */
  recoverable?: boolean;
  /** What the model should do instead. */
  recoveryHint?: string;
  /** Developer-facing details of the failure; never sent to the model. */
  details?: Record<string, unknown>;
  /** The registered name of the tool that was called. */
  toolName: string;
  /** The provider's call id, when given. */
  callId?: string;
  /** How many times the tool ran (0 when it never started). */
  attempts: number;
  /** Wall time of the whole call, in milliseconds. */
  latencyMs: number;
  /** Whether `output` was cut to fit the cap. */
  truncated: boolean;
  /** How many characters were cut from `output`. */
  omitted?: number;
  /** Artifacts produced by the call (e.g. the whole output when it was cut). */
  artifacts: ArtifactRef[];
  /** Anything for the developer; never sent to the model. */
  metadata: Record<string, unknown>;
  /** A timed-out or cancelled tool that had not settled after the grace period. */
  workerStillRunning?: boolean;
  /** The tool may have had side effects whose outcome is unknown (timeout, cancel mid-run). */
  outcomeUnknown?: boolean;
  /** Every file the call created, modified, moved or deleted, as the tool reported it; `[]` when none. */
  filesystemChanges: FileChange[];
}

/** The fields of a {@linkcode ToolResult} that {@linkcode makeResult} does not default. */
export type ToolResultInit =
  & Pick<ToolResult, "status" | "toolName">
  & Partial<Omit<ToolResult, "status" | "toolName" | "schemaVersion">>;

/**
 * Thrown when a {@linkcode ToolResult} would break one of its invariants; the
 * message names the broken rule. This is a bug in whoever built the result.
 *
 * @example
 * ```ts
 * import { makeResult, ToolResultContractError } from "@toolfence/core";
 * try {
 *   makeResult({ status: "success", toolName: "x", error: "boom" });
 * } catch (e) {
 *   console.log(e instanceof ToolResultContractError);
 * }
 * ```
 */
export class ToolResultContractError extends Error {
  /** The rule that was broken. */
  readonly rule: string;
  /** Creates the error for `rule`. */
  constructor(rule: string) {
    super(`ToolResult contract broken: ${rule}`);
    this.name = "ToolResultContractError";
    this.rule = rule;
  }
}

const STATUSES: readonly ToolStatus[] = ["success", "error", "skipped", "timed_out", "cancelled"];

function assertInvariants(r: ToolResult): void {
  if (!STATUSES.includes(r.status)) throw new ToolResultContractError(`unknown status "${r.status}"`);
  if (r.status === "success") {
    if (r.error !== undefined || r.errorKind !== undefined || r.errorCode !== undefined) {
      throw new ToolResultContractError("success has no error, errorKind or errorCode");
    }
  } else {
    if (r.errorKind === undefined || r.errorCode === undefined) {
      throw new ToolResultContractError(`${r.status} needs errorKind and errorCode`);
    }
    if (r.error === undefined) throw new ToolResultContractError(`${r.status} needs an error message`);
  }
  if (r.status === "skipped" && r.errorKind !== "policy") {
    throw new ToolResultContractError("skipped is a policy outcome (errorKind policy)");
  }
  if ((r.status === "timed_out" || r.status === "cancelled") && r.errorKind !== "execution") {
    throw new ToolResultContractError(`${r.status} is an execution outcome (errorKind execution)`);
  }
  if (r.workerStillRunning && r.status !== "timed_out" && r.status !== "cancelled") {
    throw new ToolResultContractError("workerStillRunning only with timed_out or cancelled");
  }
  if (!Number.isInteger(r.attempts) || r.attempts < 0) {
    throw new ToolResultContractError("attempts is a non-negative integer");
  }
  if (!(r.latencyMs >= 0)) throw new ToolResultContractError("latencyMs is a non-negative number");
  if (r.truncated !== (r.omitted !== undefined && r.omitted > 0)) {
    throw new ToolResultContractError("truncated exactly when omitted > 0");
  }
}

/**
 * Builds a {@linkcode ToolResult}, filling defaults and checking its invariants:
 * success has no error fields; any other status has `errorKind` and `errorCode`;
 * `skipped` is a policy outcome; `timed_out` and `cancelled` are execution
 * outcomes; `workerStillRunning` only with `timed_out` or `cancelled`.
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * const result = makeResult({ status: "success", toolName: "add", output: 3 });
 * console.log(result.attempts); // 0 unless given
 * ```
 */
export function makeResult(init: ToolResultInit): ToolResult {
  const result: ToolResult = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    status: init.status,
    output: init.output ?? null,
    toolName: init.toolName,
    attempts: init.attempts ?? 0,
    latencyMs: init.latencyMs ?? 0,
    truncated: init.truncated ?? false,
    artifacts: init.artifacts ?? [],
    metadata: init.metadata ?? {},
    filesystemChanges: init.filesystemChanges ?? [],
  };
  for (const key of OPTIONAL_FIELDS) {
    const value = init[key];
    if (value !== undefined) (result as unknown as Record<string, unknown>)[key] = value;
  }
  assertInvariants(result);
  return result;
}

const OPTIONAL_FIELDS = [
  "error",
  "errorKind",
  "errorCode",
  "recoverable",
  "recoveryHint",
  "details",
  "callId",
  "omitted",
  "workerStillRunning",
  "outcomeUnknown",
] as const satisfies readonly (keyof ToolResultInit)[];

/**
 * The text a model reads for a result: the output as is when it is a string,
 * else its JSON; for failures, the status, code and message with the recovery
 * hint. `metadata` and `details` never appear.
 *
 * @example
 * ```ts
 * import { makeResult, toModelText } from "@toolfence/core";
 * console.log(toModelText(makeResult({ status: "success", toolName: "t", output: { a: 1 } })));
 * // {"a":1}
 * ```
 */
export function toModelText(result: ToolResult): string {
  if (result.status === "success") {
    if (typeof result.output === "string") return result.output;
    if (result.output === null || result.output === undefined) return "";
    return JSON.stringify(result.output);
  }
  const head = result.status === "error" ? "Error" : capitalise(result.status.replace("_", " "));
  let text = `${head} [${result.errorCode}]: ${result.error}`;
  if (result.recoveryHint) text += `\nHint: ${result.recoveryHint}`;
  if (result.output !== null && result.output !== undefined && result.output !== "") {
    text += `\nPartial output: ${typeof result.output === "string" ? result.output : JSON.stringify(result.output)}`;
  }
  return text;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Whether a value is a {@linkcode ToolResult} (checked by shape).
 *
 * @example
 * ```ts
 * import { isToolResult, makeResult } from "@toolfence/core";
 * console.log(isToolResult(makeResult({ status: "success", toolName: "t" }))); // true
 * ```
 */
export function isToolResult(value: unknown): value is ToolResult {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Partial<ToolResult>;
  return typeof r.schemaVersion === "number" && typeof r.toolName === "string" &&
    typeof r.status === "string" && STATUSES.includes(r.status as ToolStatus);
}
