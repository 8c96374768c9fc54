/**
 * The lossless result of one tool call, its invariants, and the text a model
 * reads from it.
 *
 * @module
 */

import type { ErrorKind } from "./errors.ts";
import type { Effect, EffectState, FileChange } from "./effects.ts";

/** How a call ended. */
export type ToolStatus = "success" | "error" | "skipped" | "timed_out" | "cancelled";

/** The version of the {@linkcode ToolResult} shape. */
export const RESULT_SCHEMA_VERSION = 2;

/** The version of the {@linkcode ArtifactRef} shape. */
export const ARTIFACT_REF_SCHEMA_VERSION = 1;

/**
 * A reference to stored content, e.g. the whole of an output that was cut:
 * a portable content-addressed pointer, never the content or a host path.
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
  /** Which resolver can fetch the content: the store that holds it (`memory`, `file`, or a store's own key). */
  resolverKey: string;
  /** Hex SHA-256 of what produced the content (e.g. the producing call's provenance), when known. */
  provenanceDigest: string | null;
  /** Shape version, {@linkcode ARTIFACT_REF_SCHEMA_VERSION}. */
  schemaVersion: number;
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
  /** Every file the call created, modified, moved or deleted, as the tool reported it; `[]` when none. */
  filesystemChanges: FileChange[];
  /** The tool's declared effects; `null` when it declares none (or no tool was found). */
  declaredEffects: readonly Effect[] | null;
  /** What is known of the call's effects (see the README's result table for the rule). */
  effectState: EffectState;
  /**
   * Whether someone must look at the world before going on: when `effectState`
   * is `unknown` (an effectful call timed out or was cancelled mid-run, or
   * failed in a way that cannot say what it did), and when a tool that
   * declares no effects timed out or was cancelled once it had started (it
   * may have done anything). This replaces version 1's `outcomeUnknown`.
   */
  reconciliationRequired: boolean;
  /**
   * qitos's `outcome_unknown` (and version 1's `outcomeUnknown`), kept for
   * compatibility: exactly when `effectState` is `unknown`. Read
   * `reconciliationRequired` to know whether to look before going on.
   */
  outcomeUnknown: boolean;
  /** Whether the call ran to its end (qitos's `complete`): false when it timed out or was cancelled, its output partial. */
  complete: boolean;
  /** Flux's `success`, kept for compatibility: exactly when `status` is `success`. */
  success: boolean;
  /**
   * What the model reads instead of `output`, when the tool returned one
   * (qitos's `model_output`, e.g. a summary of a large structured output);
   * kept only when its text fits the output cap.
   */
  modelOutput?: unknown;
  /** A next action the tool proposes to the runner (qitos's `next_action`); never sent to the model. */
  nextAction?: Record<string, unknown>;
  /** Where the call's effect is recorded outside the result (qitos's `effect_ref`, e.g. a transaction id). */
  effectRef?: string;
  /** Which attempt of which call this is, and the session generation that owned it. */
  attemptId?: AttemptId;
  /** Why the call was, or was not, run again. */
  retryDisposition: RetryDisposition;
  /** The caller's idempotency key, when given. */
  idempotencyKey?: string;
  /** The arguments the tool ran with, after defaults and array-string parsing; absent when they were refused. */
  normalizedRequest?: Record<string, unknown>;
  /** Which definition ran, in which session, and what let it run. */
  provenance?: Provenance;
  /** For a call of a batch, how the batch ended (the same as the batch's `batchClosure`). */
  batchClosure?: BatchClosure;
}

/**
 * How a batch ended: every call ran to its end (`completed`), a failure
 * stopped the rest (`fail_fast`, naming the call), or the caller's signal did
 * (`cancelled`).
 */
export type BatchClosure =
  | { kind: "completed" }
  | { kind: "fail_fast"; causedBy: { index: number; toolName: string; callId?: string; status: ToolStatus } }
  | { kind: "cancelled"; reason: string };

/** Which attempt of which call a result (or a late result) belongs to. */
export interface AttemptId {
  /** The provider's call id, or one the session made (`<session>:<n>`). */
  callId: string;
  /** 1-based attempt number; 0 when the tool never ran. */
  attempt: number;
  /** The session's owner generation when the call started (see `SessionBase.generation`). */
  ownerGeneration: number;
}

/**
 * Why a call was, or was not, run again after its last attempt:
 * - `not_needed`: the last attempt succeeded (or returned its own failure), or the tool never ran;
 * - `no_retry_policy`: the tool has no `retry`;
 * - `not_retryable`: the failure is not an unexpected one (only `tool_error` is retried);
 * - `declined`: the tool's `retryIf` said no;
 * - `exhausted`: every allowed attempt was used;
 * - `unsafe_effects`: the tool declares effects on the world, is not `idempotent`, and the caller gave no `idempotencyKey`;
 * - `stopped`: a timeout or a cancel ended the call (never retried).
 */
export type RetryDisposition =
  | "not_needed"
  | "no_retry_policy"
  | "not_retryable"
  | "declined"
  | "exhausted"
  | "unsafe_effects"
  | "stopped";

/** Which definition ran, in which session, and what let it run. */
export interface Provenance {
  /** Hex SHA-256 of the tool's definition (name, description, input schema, effects, annotations). */
  definitionSha256: string;
  /** The session's id. */
  sessionId: string;
  /**
   * What let the call run: `none_needed` (no approval asked), `user` or `auto`
   * (who approved), `hook` (a before-call hook answered in the tool's place).
   * Policy checks inside the tool (paths, commands) are in `metadata`.
   */
  authorization: "none_needed" | "user" | "auto" | "hook";
}

/**
 * What {@linkcode makeResult} builds a {@linkcode ToolResult} from: any of its
 * fields; the rest take the seed's defaults (`status` success, one attempt).
 */
export type ToolResultInit = Partial<Omit<ToolResult, "schemaVersion" | "outcomeUnknown" | "complete" | "success">>;

const EFFECT_STATES: readonly EffectState[] = ["no_effect_declared", "none", "applied", "not_applied", "unknown"];

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
  if (!EFFECT_STATES.includes(r.effectState)) {
    throw new ToolResultContractError(`unknown effectState "${r.effectState}"`);
  }
  if (r.reconciliationRequired !== reconciliationRequired(r)) {
    throw new ToolResultContractError(
      "reconciliationRequired exactly when effectState is unknown, or no effects are declared and the call was stopped mid-run",
    );
  }
  if (r.outcomeUnknown !== (r.effectState === "unknown")) {
    throw new ToolResultContractError("outcomeUnknown exactly when effectState is unknown");
  }
  if (r.success !== (r.status === "success")) {
    throw new ToolResultContractError("success exactly when status is success");
  }
  if (r.complete !== (r.status !== "timed_out" && r.status !== "cancelled")) {
    throw new ToolResultContractError("complete unless the call timed out or was cancelled");
  }
  if (r.declaredEffects === null && r.effectState !== "no_effect_declared") {
    throw new ToolResultContractError("effectState is no_effect_declared when no effects are declared");
  }
  if (r.effectState === "applied" && r.status === "skipped") {
    throw new ToolResultContractError("a skipped call applied no effect");
  }
}

/**
 * Builds a {@linkcode ToolResult}, filling defaults and checking its invariants:
 * success has no error fields; any other status has `errorKind` and `errorCode`;
 * `skipped` is a policy outcome; `timed_out` and `cancelled` are execution
 * outcomes; `workerStillRunning` only with `timed_out` or `cancelled`. As in
 * qitos's `ToolResult(output=...)`, `status` defaults to `success` and
 * `attempts` to 1; `toolName` to `""` (the pipeline names the tool of a
 * result a tool returns).
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * const result = makeResult({ output: 3 });
 * console.log(result.status, result.attempts); // success 1
 * ```
 */
export function makeResult(init: ToolResultInit): ToolResult {
  const result: ToolResult = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    status: init.status ?? "success",
    output: init.output ?? null,
    toolName: init.toolName ?? "",
    attempts: init.attempts ?? 1,
    latencyMs: init.latencyMs ?? 0,
    truncated: init.truncated ?? false,
    artifacts: init.artifacts ?? [],
    metadata: init.metadata ?? {},
    filesystemChanges: init.filesystemChanges ?? [],
    declaredEffects: init.declaredEffects ?? null,
    effectState: "no_effect_declared",
    reconciliationRequired: false,
    outcomeUnknown: false,
    complete: true,
    success: true,
    retryDisposition: init.retryDisposition ?? "not_needed",
  };
  // Named stores, not a loop over key names: a keyed store per field is megamorphic and was a tenth of a call.
  if (init.error !== undefined) result.error = init.error;
  if (init.errorKind !== undefined) result.errorKind = init.errorKind;
  if (init.errorCode !== undefined) result.errorCode = init.errorCode;
  if (init.recoverable !== undefined) result.recoverable = init.recoverable;
  if (init.recoveryHint !== undefined) result.recoveryHint = init.recoveryHint;
  if (init.details !== undefined) result.details = init.details;
  if (init.callId !== undefined) result.callId = init.callId;
  if (init.omitted !== undefined) result.omitted = init.omitted;
  if (init.workerStillRunning !== undefined) result.workerStillRunning = init.workerStillRunning;
  if (init.attemptId !== undefined) result.attemptId = init.attemptId;
  if (init.idempotencyKey !== undefined) result.idempotencyKey = init.idempotencyKey;
  if (init.normalizedRequest !== undefined) result.normalizedRequest = init.normalizedRequest;
  if (init.provenance !== undefined) result.provenance = init.provenance;
  if (init.batchClosure !== undefined) result.batchClosure = init.batchClosure;
  if (init.modelOutput !== undefined) result.modelOutput = init.modelOutput;
  if (init.nextAction !== undefined) result.nextAction = init.nextAction;
  if (init.effectRef !== undefined) result.effectRef = init.effectRef;
  result.effectState = effectStateOf(init);
  result.reconciliationRequired = reconciliationRequired(result);
  result.outcomeUnknown = result.effectState === "unknown";
  result.complete = result.status !== "timed_out" && result.status !== "cancelled";
  result.success = result.status === "success";
  assertInvariants(result);
  return result;
}

function reconciliationRequired(r: Pick<ToolResult, "effectState" | "status" | "attempts">): boolean {
  if (r.effectState === "unknown") return true;
  return r.effectState === "no_effect_declared" && r.attempts > 0 &&
    (r.status === "timed_out" || r.status === "cancelled");
}

/**
 * The effect state of a call, from its status, its declared effects, the file
 * changes it recorded (`filesystemChanges`, when the call records them) and
 * what the tool itself said (`effectState` in `init`, e.g. `bash` saying its
 * command ran). The first rule that applies wins:
 *
 * 1. no effects declared: `no_effect_declared`;
 * 2. only `reads` (or `[]`) declared: `none`;
 * 3. the tool never ran (`attempts` 0: refused, invalid, not approved, cancelled before it started): `not_applied`;
 * 4. timed out or cancelled once it had started: `unknown` (so `reconciliationRequired`);
 * 5. a file change was recorded: `applied`;
 * 6. the tool said what happened: that (`applied`, `not_applied` or `none`);
 * 7. success: `applied` when it declares `runs_processes` or `network` (they ran) or records no file
 *    changes at all; else `none` (it wrote nothing);
 * 8. a failure: `not_applied` for a refusal (`policy` or `semantic`) or when only `writes_files` is
 *    declared and the recorded changes are empty; else `unknown`.
 *
 * @example
 * ```ts
 * import { effectStateOf } from "@toolfence/core";
 * console.log(effectStateOf({ status: "timed_out", declaredEffects: ["writes_files"], attempts: 1 })); // unknown
 * ```
 */
export function effectStateOf(
  init: Pick<ToolResultInit, "status" | "declaredEffects" | "attempts" | "errorKind" | "effectState"> & {
    filesystemChanges?: readonly unknown[];
  },
): EffectState {
  const declared = init.declaredEffects;
  if (!declared) return "no_effect_declared";
  let writes = false;
  let unobservable = false;
  for (const effect of declared) {
    if (effect === "writes_files") writes = true;
    else if (effect === "runs_processes" || effect === "network") unobservable = true;
  }
  if (!writes && !unobservable) return "none";
  if (!init.attempts) return "not_applied";
  const { status } = init;
  if (status === "timed_out" || status === "cancelled") return "unknown";
  const changes = init.filesystemChanges;
  if (changes !== undefined && changes.length > 0) return "applied";
  const claimed = init.effectState;
  if (claimed === "applied" || claimed === "not_applied" || claimed === "none") return claimed;
  if (status === "success") return unobservable || changes === undefined ? "applied" : "none";
  if (init.errorKind === "policy" || init.errorKind === "semantic") return "not_applied";
  return !unobservable && changes !== undefined ? "not_applied" : "unknown";
}

/**
 * The text a model reads for a result: the output as is when it is a string,
 * else its JSON; for failures, the status, code and message with the recovery
 * hint; a success that carries `modelOutput` reads that instead of its
 * output. `metadata` and `details` never appear.
 *
 * @example
 * ```ts
 * import { makeResult, toModelText } from "@toolfence/core";
 * console.log(toModelText(makeResult({ status: "success", toolName: "t", output: { a: 1 } })));
 * // {"a":1}
 * ```
 */
export function toModelText(result: ToolResult): string {
  if (result.status === "success" && result.modelOutput !== undefined) {
    return typeof result.modelOutput === "string" ? result.modelOutput : JSON.stringify(result.modelOutput);
  }
  if (result.status === "success") {
    if (typeof result.output === "string") return result.output;
    if (result.output === null || result.output === undefined) return "";
    return JSON.stringify(result.output);
  }
  const head = result.status === "error" ? "Error" : capitalise(result.status.replace("_", " "));
  let text = `${head} [${result.errorCode}]: ${result.error}`;
  if (result.recoveryHint) text += `\nHint: ${result.recoveryHint}`;
  if (result.output !== null && result.output !== undefined && result.output !== "") {
    // A failure the tool returned keeps its whole output (a failed command's); a stopped call, what it had.
    const label = result.status === "error" ? "Output" : "Partial output";
    text += `\n${label}: ${typeof result.output === "string" ? result.output : JSON.stringify(result.output)}`;
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
