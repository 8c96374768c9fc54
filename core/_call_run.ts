/**
 * The bookkeeping of one call (attempts, metadata, artifacts it produced) and
 * step 7, the end of every call: the result, and the after-call hooks.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { ToolError } from "./errors.ts";
import {
  type ArtifactRef,
  type AttemptId,
  makeResult,
  type Provenance,
  type RetryDisposition,
  type ToolResult,
  type ToolResultInit,
} from "./result.ts";
import type { AnyTool } from "./tool.ts";
import type { ToolContext } from "./context.ts";
import type { SessionBase } from "./session.ts";
import type { AfterCallHook } from "./hooks.ts";
import type { LateResult } from "./late_results.ts";
import type { CallOptions, ExecutionEnvironment } from "./executor.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { FileChange } from "./effects.ts";
import { CallContext } from "./_call_context.ts";
import type { Carried } from "./_call_output.ts";
import { reasonText } from "./_call_attempts.ts";
import { describeThrown, readSafely } from "./_thrown.ts";
import { cutMiddle, wellFormed } from "./_text_prefix.ts";
import { toJsonOutput } from "./_serialize.ts";

/** The toolbox's hooks then the session's, without a copy when one side has none. */
export function hooksOf<H>(box: readonly H[], session: readonly H[]): readonly H[] {
  if (session.length === 0) return box;
  if (box.length === 0) return session;
  return [...box, ...session];
}

const DEFINITION_HASHES = new WeakMap<AnyTool, string>();

/** Hex SHA-256 of what defines a tool for the model and the pipeline; computed once per tool. */
export function definitionSha256(tool: AnyTool): string {
  // Most calls in a row are of the same tool: a one-entry cache in front of the WeakMap.
  if (tool === lastHashed) return lastHash;
  let hash = DEFINITION_HASHES.get(tool);
  if (hash === undefined) {
    const { name, description, inputSchema, effects, readOnly, destructive, idempotent, openWorld, needs, requires } =
      tool;
    const definition = {
      name,
      description,
      inputSchema,
      effects,
      readOnly,
      destructive,
      idempotent,
      openWorld,
      needs,
      requires,
    };
    hash = createHash("sha256").update(JSON.stringify(definition)).digest("hex");
    DEFINITION_HASHES.set(tool, hash);
  }
  lastHashed = tool;
  lastHash = hash;
  return hash;
}
let lastHashed: AnyTool | undefined;
let lastHash = "";

/** Whether a thrown value is a cancellation (`AbortError`, as `fetch` and `signal.throwIfAborted()` throw). */
export function isAbortError(error: unknown): boolean {
  return readSafely(
    () => typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError",
    false,
  );
}

/** Anything a tool throws, as a `ToolError` (`tool_error` unless it already is one). */
export function thrownToToolError(error: unknown): ToolError {
  try {
    if (error instanceof ToolError) return error;
    if (error instanceof Error) {
      return new ToolError(error.message || error.name, {
        code: "tool_error",
        details: { errorName: error.name, stack: error.stack },
        cause: error,
      });
    }
    return new ToolError(String(error), { code: "tool_error", details: { thrown: String(error) } });
  } catch {
    // A value whose reading throws (a getter, a revoked Proxy, an object without a prototype): described safely.
    const text = describeThrown(error);
    return new ToolError(text, { code: "tool_error", details: { thrown: text } });
  }
}

/**
 * The fewest characters a message is cut to, whatever the output's cap: a tool that keeps its outputs short (a cap of
 * 200) still has its own and the pipeline's sentences read whole (the arguments' faults with their fix, say).
 */
const MESSAGE_CHARS_FLOOR = 4_000;

/** `text` (a message the model reads) well-formed, and cut to its head and tail within `cap`. */
function modelMessage(text: string, cap: number): string {
  const whole = wellFormed(text);
  if (whole.length <= cap) return whole;
  return cutMiddle(whole, cap, (omitted) => `\n[... ${omitted} characters of this message omitted ...]\n`).text;
}

/**
 * The details well-formed as an output is (toJsonOutput), for the lossless result a client keeps or sends on: under
 * Node a thrown error's stack quotes its message as it was (Deno writes U+FFFD), lone surrogate and all. Details that
 * are not JSON data stay as they were.
 */
function wellFormedDetails(details: Record<string, unknown>): Record<string, unknown> {
  try {
    return toJsonOutput(details, Infinity).output as Record<string, unknown>;
  } catch {
    return details;
  }
}

/** The result fields of an error: its status, message, kind, code, recoverability, hint and details. */
export function errorFields(error: ToolError): Partial<ToolResultInit> & Pick<ToolResultInit, "status"> {
  return {
    status: error.status,
    error: error.message,
    errorKind: error.kind,
    errorCode: error.code,
    recoverable: error.recoverable,
    recoveryHint: error.recoveryHint,
    details: error.details,
  };
}

/** One call in progress. */
export class CallRun<T> {
  readonly started = performance.now();
  attempts = 0;
  readonly metadata: Record<string, unknown> = {};
  /** Artifacts the tool stored during the call; made at the first (most calls store none). */
  #produced: ArtifactRef[] | undefined;
  validArgs: Record<string, unknown> | undefined;
  /** Files the tool reported changing (`ctx.recordFileChange`), in every attempt; made at the first. */
  #filesystemChanges: FileChange[] | undefined;
  /** The tool, once it was found. */
  tool: AnyTool | undefined;
  /** Why the call was or was not run again. */
  retryDisposition: RetryDisposition = "not_needed";
  /** What let the call run, as the approval step (`_call_approval.ts`) recorded it. */
  authorization: Provenance["authorization"] = "none_needed";
  /** What the tool said of its effects when it returned a failure. */
  claimedEffect: ToolResultInit["effectState"];
  /** The qitos fields a returned result carried (see `finishOutput`). */
  carried: Carried | undefined;
  readonly ownerGeneration: number;
  #attemptCallId: string | undefined;

  constructor(
    readonly env: ExecutionEnvironment,
    readonly session: SessionBase,
    public name: string,
    readonly options: CallOptions<T>,
  ) {
    this.ownerGeneration = session.generation;
  }

  get callId(): string | undefined {
    return this.options.callId;
  }

  /** The id of this call's attempts: the provider's call id, else one the session makes. */
  attemptId(attempt = this.attempts): AttemptId {
    this.#attemptCallId ??= this.options.callId ?? this.session.nextCallId();
    return { callId: this.#attemptCallId, attempt, ownerGeneration: this.ownerGeneration };
  }

  #provenance(tool: AnyTool): Provenance {
    // From the approval step's own record, never from metadata (which a tool's output may add to).
    return { definitionSha256: definitionSha256(tool), sessionId: this.session.id, authorization: this.authorization };
  }

  get artifacts(): ArtifactStore {
    return this.session.artifacts;
  }

  /** Completes `init` (a fresh object each caller builds) into the call's result. */
  finish(init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">): ToolResult | Promise<ToolResult> {
    const result = makeResult(this.#complete(init, this.attempts, this.metadata));
    const { tool } = this;
    const hooks = hooksOf(this.env.hooks.after, this.session.hooks.after);
    if (tool?.onFailure && result.status !== "success") return this.#runOnFailure(tool, result, hooks);
    return hooks.length === 0 ? result : this.#runAfterHooks(hooks, result);
  }

  /** The pipeline's fields of a result: who, which attempt, how long, what was declared and what let it run. */
  #complete(
    init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">,
    attempt: number,
    metadata: Record<string, unknown>,
  ): ToolResultInit {
    init.toolName = this.name;
    init.callId = this.options.callId;
    // The message and hint reach the model as the output does, and may quote what the tool read or was sent (a page's
    // text, an argument): held to the output's cap and made well-formed as it is (see finishOutput). A tool's error
    // of 5 MB reached the model whole, past the 40,000 characters of its output.
    const cap = Math.max(this.tool?.maxOutputChars ?? this.env.maxOutputChars, MESSAGE_CHARS_FLOOR);
    if (typeof init.error === "string") init.error = modelMessage(init.error, cap);
    if (typeof init.recoveryHint === "string") init.recoveryHint = modelMessage(init.recoveryHint, cap);
    if (init.details !== undefined) init.details = wellFormedDetails(init.details);
    init.attempts = attempt;
    init.metadata = metadata;
    if (this.#produced) init.artifacts = [...this.#produced, ...(init.artifacts ?? [])];
    init.latencyMs = performance.now() - this.started;
    const { tool } = this;
    init.retryDisposition = this.retryDisposition;
    init.attemptId = this.attemptId(attempt);
    if (this.options.idempotencyKey !== undefined) init.idempotencyKey = this.options.idempotencyKey;
    if (tool) {
      // An empty list counts as "changed nothing" only from a tool that reports every change.
      if (this.#filesystemChanges || tool.recordsFileChanges) {
        init.filesystemChanges = [...this.#filesystemChanges ?? []];
      }
      init.declaredEffects = tool.effects ?? null;
      init.provenance = this.#provenance(tool);
      if (this.validArgs) init.normalizedRequest = this.validArgs;
      if (this.claimedEffect !== undefined && init.effectState === undefined) init.effectState = this.claimedEffect;
      if (this.carried) Object.assign(init, this.carried);
    }
    return init as ToolResultInit;
  }

  /**
   * The result attempt `attempt` settled with after the call had been
   * reported `reportedStatus` (no hooks run: the call has ended). `init` holds
   * how it settled; `latencyMs` is the time to the settling.
   */
  late(
    init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">,
    attempt: number,
    reportedStatus: "timed_out" | "cancelled",
  ): LateResult {
    const result = makeResult(this.#complete(init, attempt, { ...this.metadata }));
    return {
      ...result,
      attemptId: result.attemptId!,
      lateResult: true,
      reportedStatus,
      staleOwner: this.session.generation !== this.ownerGeneration,
    };
  }

  async #runOnFailure(tool: AnyTool, failed: ToolResult, hooks: readonly AfterCallHook[]): Promise<ToolResult> {
    let result = failed;
    try {
      result = (await tool.onFailure!({ session: this.session, result, args: this.validArgs })) ?? result;
    } catch (error) {
      this.metadata.onFailureError = (error as Error)?.message ?? String(error);
    }
    return hooks.length === 0 ? result : this.#runAfterHooks(hooks, result);
  }

  async #runAfterHooks(hooks: readonly AfterCallHook[], first: ToolResult): Promise<ToolResult> {
    let result = first;
    for (const hook of hooks) {
      try {
        result = (await hook({ session: this.session, result, args: this.validArgs })) ?? result;
      } catch (error) {
        this.metadata.afterHookError = (error as Error).message;
      }
    }
    return result;
  }

  fail(error: ToolError, extra: Partial<ToolResultInit> = {}): ToolResult | Promise<ToolResult> {
    return this.finish({ ...errorFields(error), ...extra } as ToolResultInit);
  }

  cancelled(prefix: string, extra: Partial<ToolResultInit> = {}): ToolResult | Promise<ToolResult> {
    const reason = this.options.signal ? reasonText(this.options.signal) : "the caller cancelled it";
    return this.fail(new ToolError(`${prefix}: ${reason}`, { code: "cancelled" }), { status: "cancelled", ...extra });
  }

  context(tool: AnyTool, signal: AbortSignal | undefined, attempt: number): ToolContext<T> {
    return new CallContext(this, tool.name, attempt, signal);
  }

  recordArtifact(ref: ArtifactRef): void {
    const produced = this.#produced ??= [];
    if (!produced.some((p) => p.id === ref.id)) produced.push(ref);
  }

  recordFileChange(change: FileChange): void {
    (this.#filesystemChanges ??= []).push(change);
  }
}
