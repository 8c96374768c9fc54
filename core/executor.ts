/**
 * The call pipeline, read as its steps; each step lives in its own file:
 *
 * 1. look the tool up (`_call_arguments.ts`);
 * 2. parse and validate the arguments (`_call_arguments.ts`);
 * 3. the before-call hooks and the approval (`_call_approval.ts`);
 * 4. the context the tool sees (`_call_context.ts`);
 * 5. attempts, with a deadline, an abort signal and retries (`_call_attempts.ts`);
 * 6. lossless output within the cap (`_call_output.ts`);
 * 7. the result and the after-call hooks (`_call_run.ts`).
 *
 * Batches of calls are `batch.ts`.
 *
 * @module
 */

import { ToolError } from "./errors.ts";
import type { BatchClosure, RetryDisposition, ToolResult, ToolResultInit } from "./result.ts";
import type { AnyTool } from "./tool.ts";
import type { ProgressEvent } from "./context.ts";
import type { SessionBase } from "./session.ts";
import type { ChoiceOutcome } from "./host.ts";
import type { HookSet } from "./hooks.ts";
import type { DeferredImage, DeferredImageMessage } from "./images.ts";
import { loneSurrogateError, parseArguments, unknownToolError, validate, validationError } from "./_call_arguments.ts";
import { toolFenceRefusal } from "./_tool_needs.ts";
import { type ApprovalOutcome, approveCall } from "./_call_approval.ts";
import {
  type AttemptOutcome,
  backoffDelay,
  CancelReason,
  runAttempt,
  type SettledOutcome,
  sleep,
} from "./_call_attempts.ts";
import { finishOutput } from "./_call_output.ts";
import { CallRun, errorFields, isAbortError, thrownToToolError } from "./_call_run.ts";
import { readReturned } from "./failure.ts";
import { NotSerializableError, toJsonOutput } from "./_serialize.ts";
import { callSpan, tracing } from "./telemetry.ts";
import { inCallScope } from "./_call_scope.ts";
import { readSafely } from "./_thrown.ts";

/** The default cap on model-facing output, in characters. */
export const DEFAULT_MAX_OUTPUT_CHARS = 40_000;

/** How long a timed-out or cancelled tool gets to settle before it is reported as still running. */
export const DEFAULT_GRACE_MS = 100;

/** The options of a call given none: one frozen object for all of them, not a new one each call. */
export const NO_CALL_OPTIONS: CallOptions<never> = Object.freeze({});

/** Options of one call. */
export interface CallOptions<T = unknown> {
  /** A value handed to the tool as `ctx.value`. */
  context?: T;
  /** The provider's call id. */
  callId?: string;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Deadline of each attempt; overrides the tool's `timeoutMs`. */
  timeoutMs?: number;
  /** Receives the call's progress events. */
  onProgress?: (event: ProgressEvent) => void;
  /**
   * The caller's key for this request: the same key means the same request,
   * so running it again is harmless. It is handed to the tool as
   * `ctx.idempotencyKey`, kept in the result, and lets a tool that declares
   * effects on the world (and is not `idempotent`) be retried.
   */
  idempotencyKey?: string;
  /**
   * The answer a framework's own approval flow (OpenAI Agents interruptions,
   * LangGraph interrupts, Mastra's approval) already gave for this call. A tool
   * that needs approval is then not asked about again through the session:
   * `choice: true` runs it, `choice: false` ends it `not_approved`. Set it only
   * from a person's (or your rule's) answer, never from the model's input.
   */
  approval?: ChoiceOutcome<boolean>;
}

/** One call of a batch. */
export interface BatchCall {
  /** Tool name. */
  name: string;
  /** Arguments: an object, or its JSON text. */
  args?: unknown;
  /** The provider's call id. */
  callId?: string;
  /** Deadline of each attempt of this call. */
  timeoutMs?: number;
  /** The caller's idempotency key for this call (see {@linkcode CallOptions.idempotencyKey}). */
  idempotencyKey?: string;
}

/** Options of a batch. */
export interface BatchOptions<T = unknown> {
  /**
   * `serial` runs the calls one by one; `parallel` runs consecutive
   * concurrency-safe calls together. Default `serial`, as qitos's
   * `ActionExecutionPolicy`: parallel is asked for.
   */
  mode?: "serial" | "parallel";
  /** Most calls running at once. Default 4. */
  maxConcurrency?: number;
  /** On an error or timeout, cancel everything not yet finished. */
  failFast?: boolean;
  /** When given, exactly these tools are concurrency-safe. */
  parallelToolNames?: readonly string[];
  /** Cancels the batch. */
  signal?: AbortSignal;
  /** A value handed to every tool as `ctx.value`. */
  context?: T;
  /** Receives progress events. */
  onProgress?: (event: ProgressEvent) => void;
}

export type { BatchClosure } from "./result.ts";

/** The outcome of a batch. */
export interface BatchResult {
  /** One result per call, in the order the calls were declared. */
  results: ToolResult[];
  /** How the batch ended. */
  batchClosure: BatchClosure;
  /** Images the tools deferred during the batch. */
  images: DeferredImage[];
  /** The images as one provider-neutral user message, when there are any. */
  imageMessage?: DeferredImageMessage;
}

/** What the executor needs of a toolbox. */
export interface ExecutionEnvironment {
  /** An enabled tool by name. */
  lookup(name: string): AnyTool | undefined;
  /** Names of the enabled tools, for suggestions. */
  enabledNames(): string[];
  /** Whether a tool of this name is registered but disabled (so not "unknown"). */
  isDisabled?(name: string): boolean;
  /** The toolbox's hooks. */
  hooks: HookSet;
  /** Output cap, in characters. */
  maxOutputChars: number;
  /** Grace period after a timeout or cancel. */
  graceMs: number;
}

/**
 * Runs one call through the whole pipeline and returns its result. It never
 * throws for a tool's failure; it throws only for programming errors of the
 * caller (no session).
 */
export function executeCall<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  name: string,
  rawArgs: unknown,
  options: CallOptions<T>,
): Promise<ToolResult> {
  // In the call's scope when the host shows which call asks (see `_call_scope.ts`): it costs about a microsecond.
  if (session.host.showsCall === true) {
    return inCallScope({ tool: name, callId: options.callId }, () => tracedSteps(env, session, name, rawArgs, options));
  }
  return tracedSteps(env, session, name, rawArgs, options);
}

// The steps in an OpenTelemetry span around the whole call when an SDK records spans (without, no closure is made).
function tracedSteps<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  name: string,
  rawArgs: unknown,
  options: CallOptions<T>,
): Promise<ToolResult> {
  if (!tracing()) return settledSteps(env, session, name, rawArgs, options);
  return callSpan(name, options.callId, () => settledSteps(env, session, name, rawArgs, options));
}

// The steps as a promise, also when they answered at once or threw.
function settledSteps<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  name: string,
  rawArgs: unknown,
  options: CallOptions<T>,
): Promise<ToolResult> {
  try {
    const result = executeCallSteps(env, session, name, rawArgs, options);
    return result instanceof Promise ? result : Promise.resolve(result);
  } catch (error) {
    return Promise.reject(error);
  }
}

// The steps up to the first attempt answer without a promise where nothing waits (no hooks, no approval, a
// tool that returns at once): a call's await is a tenth of a call.
function executeCallSteps<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  name: string,
  rawArgs: unknown,
  options: CallOptions<T>,
): ToolResult | Promise<ToolResult> {
  const run = new CallRun(env, session, name, options);
  const { signal } = options;

  // 0. The session: its cleanups have run (background jobs killed, the browser closed), and nothing started now
  // would ever be cleaned up.
  if (session.closed) {
    return run.fail(
      new ToolError(`The session is closed; ${name} was not run`, {
        code: "session_closed",
        recoverable: false,
        recoveryHint: "Make the calls in an open session.",
      }),
    );
  }

  // 1. The tool.
  const tool = env.lookup(name);
  if (!tool) {
    return run.fail(env.isDisabled?.(name) ? disabledToolError(name) : unknownToolError(name, env.enabledNames()));
  }
  run.tool = tool;
  if (tool.name !== name) {
    // Called by an alias: the result names the tool that ran.
    run.metadata.calledAs = name;
    run.name = tool.name;
  }
  if (signal?.aborted) return run.cancelled("Not run");
  // What the runtime does not grant, or the model cannot use, is refused before anything of the call happens.
  const fenced = toolFenceRefusal(tool, session) ?? capabilityRefusal(tool, session);
  if (fenced) return run.fail(fenced);

  // 2. The arguments.
  const parsed = parseArguments(name, rawArgs);
  if (parsed instanceof ToolError) return run.fail(parsed);
  // Text the caller cannot have meant (a lone surrogate, which JSON's "\ud800" gives) is refused before any tool runs.
  const lone = loneSurrogateError(name, parsed);
  if (lone) return run.fail(lone);
  const outcome = validate(tool, parsed);
  if (!outcome.ok) return run.fail(validationError(tool, outcome));
  run.validArgs = outcome.value;

  // 3. Hooks and approval.
  const cap = tool.maxOutputChars ?? env.maxOutputChars;
  let passed: ReturnType<typeof approveCall>;
  try {
    passed = approveCall(run, tool);
  } catch (error) {
    return approvalThrew(run, error);
  }
  if (passed instanceof Promise) {
    return passed.then(
      (approval) => afterApproval(run, tool, approval, cap),
      (error) => approvalThrew(run, error),
    );
  }
  return afterApproval(run, tool, passed, cap);
}

function approvalThrew<T>(run: CallRun<T>, error: unknown): ToolResult | Promise<ToolResult> {
  if (run.options.signal?.aborted || isAbortError(error)) return run.cancelled("Cancelled before it ran");
  return run.fail(thrownToToolError(error));
}

function afterApproval<T>(
  run: CallRun<T>,
  tool: AnyTool,
  approval: ApprovalOutcome,
  cap: number,
): ToolResult | Promise<ToolResult> {
  if (approval.kind === "refused") return run.fail(approval.error);
  if (approval.kind === "answered") return output(run, approval.output, cap, tool);
  const { signal } = run.options;
  // Stopped while the hooks or the approval were pending (a slow hook, an async needsApproval, a host whose yes came
  // after the stop): nothing runs. The attempt listens for the abort event, which has fired by now and never again.
  if (signal?.aborted) return run.cancelled("Cancelled before it ran");
  const timeoutMs = run.options.timeoutMs ?? tool.timeoutMs;
  if (signal === undefined && timeoutMs === undefined && !tool.retry) {
    // Nothing can stop this attempt early and no retry can follow, so there is nothing to race against;
    // a tool that answers at once is not awaited.
    let value: unknown;
    try {
      value = tool.execute(run.validArgs!, run.context(tool, undefined, ++run.attempts));
    } catch (error) {
      return onlyAttemptThrew(run, tool, error, cap);
    }
    if (!isThenable(value)) return output(run, value, cap, tool);
    return Promise.resolve(value).then(
      (value) => output(run, value, cap, tool),
      (error) => onlyAttemptThrew(run, tool, error, cap),
    );
  }
  return runAttempts(run, tool, cap, timeoutMs);
}

// With one attempt allowed (maxAttempts 1), attemptEnded never answers RETRY.
function onlyAttemptThrew<T>(
  run: CallRun<T>,
  tool: AnyTool,
  error: unknown,
  cap: number,
): ToolResult | Promise<ToolResult> {
  return attemptEnded(run, tool, { kind: "thrown", error }, cap, undefined, 1) as ToolResult | Promise<ToolResult>;
}

// 4-5. Attempts, each with its own context, until one ends the call.
async function runAttempts<T>(
  run: CallRun<T>,
  tool: AnyTool,
  cap: number,
  timeoutMs: number | undefined,
): Promise<ToolResult> {
  const { signal } = run.options;
  const maxAttempts = attemptsAllowed(tool.retry);
  for (;;) {
    const attemptNumber = ++run.attempts;
    let attempt: AttemptOutcome | undefined;
    if (signal === undefined && timeoutMs === undefined) {
      let value: unknown;
      try {
        value = tool.execute(run.validArgs!, run.context(tool, undefined, attemptNumber));
        if (isThenable(value)) value = await value;
      } catch (error) {
        attempt = { kind: "thrown", error };
      }
      attempt ??= { kind: "value", value };
    } else {
      attempt = await runAttempt(
        tool,
        run.validArgs!,
        (ctxSignal) => run.context(tool, ctxSignal, attemptNumber),
        timeoutMs,
        signal,
        run.env.graceMs,
      );
    }
    const ended = attemptEnded(run, tool, attempt, cap, timeoutMs, maxAttempts);
    if (ended !== RETRY) return ended;
    if (!(await sleep(backoffDelay(tool, attemptNumber), signal))) {
      run.retryDisposition = "stopped";
      return run.cancelled("Cancelled");
    }
  }
}

const RETRY = Symbol("retry");

// Step 6: a value as the call's result (a promise of a promise settles as one promise).
function output<T>(run: CallRun<T>, value: unknown, cap: number, tool: AnyTool): ToolResult | Promise<ToolResult> {
  return finishOutput(run, value, cap, tool.output) as ToolResult | Promise<ToolResult>;
}

// 6-7. How an attempt ends the call: its value becomes the output (or the failure the tool returned); anything
// else ends it with its reason, unless a retry is due (RETRY).
function attemptEnded<T>(
  run: CallRun<T>,
  tool: AnyTool,
  attempt: AttemptOutcome,
  cap: number,
  timeoutMs: number | undefined,
  maxAttempts: number,
): ToolResult | Promise<ToolResult> | typeof RETRY {
  if (attempt.kind === "value") return output(run, attempt.value, cap, tool);
  if (attempt.kind === "timeout") {
    run.retryDisposition = "stopped";
    watchLate(run, attempt.work, "timed_out");
    return run.fail(
      new ToolError(`${run.name} timed out after ${timeoutMs} ms`, {
        code: "timeout",
        recoveryHint: "Try a smaller task or a longer timeout.",
      }),
      { status: "timed_out", workerStillRunning: attempt.stillRunning },
    );
  }
  if (attempt.kind === "cancelled") {
    run.retryDisposition = "stopped";
    watchLate(run, attempt.work, "cancelled");
    return run.cancelled("Cancelled", { workerStillRunning: attempt.stillRunning });
  }
  // A tool that threw because its call was cancelled reports the cancel, and is never retried.
  if (run.options.signal?.aborted || isAbortError(attempt.error)) {
    run.retryDisposition = "stopped";
    return run.cancelled("Cancelled");
  }
  const error = thrownToToolError(attempt.error);
  run.retryDisposition = retryDisposition(tool, error, attempt.error, run.attempts, maxAttempts, run.options);
  if (run.retryDisposition !== "not_needed") return run.fail(error);
  return RETRY;
}

/**
 * Whether a failed attempt is run again: `not_needed` means yes (the next
 * attempt decides); anything else is why not. Only unexpected failures
 * (`tool_error`) are retried, within the tool's attempts and its `retryIf`,
 * and a tool with effects on the world only when it is `idempotent` or the
 * caller gave an idempotency key.
 */
function retryDisposition(
  tool: AnyTool,
  error: ToolError,
  thrown: unknown,
  attempt: number,
  maxAttempts: number,
  options: CallOptions<unknown>,
): RetryDisposition {
  if (!tool.retry) return "no_retry_policy";
  if (error.code !== "tool_error") return "not_retryable";
  if (attempt >= maxAttempts) return "exhausted";
  if (tool.effects?.some((e) => e !== "reads") && !tool.idempotent && options.idempotencyKey === undefined) {
    return "unsafe_effects";
  }
  if (tool.retry.retryIf && !tool.retry.retryIf(thrown, attempt)) return "declined";
  return "not_needed";
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  // A value whose `then` throws when read (a revoked Proxy) is no promise; the output's check refuses it.
  return typeof value === "object" && value !== null &&
    readSafely(() => typeof (value as PromiseLike<unknown>).then === "function", false);
}

/** The refusal for a registered tool that is disabled. */
function disabledToolError(name: string): ToolError {
  return new ToolError(`Tool "${name}" is disabled in this toolbox`, {
    code: "tool_disabled",
    recoveryHint: "Use another of the tools you were given.",
  });
}

/** The refusal for a tool that needs a model capability the session does not have (it is not listed either). */
function capabilityRefusal(tool: AnyTool, session: SessionBase): ToolError | undefined {
  const requires = tool.requires;
  if (requires === undefined || requires.length === 0) return undefined;
  const missing = requires.filter((c) => !session.capabilities.includes(c));
  if (missing.length === 0) return undefined;
  return new ToolError(
    `Tool "${tool.name}" needs the model capability ${
      missing.map((c) => `"${c}"`).join(", ")
    }, which this session does not have`,
    { code: "capability_missing", recoveryHint: "Use another of the tools you were given.", details: { missing } },
  );
}

/** Keeps what a stopped tool settles with, whenever it does, in the session's late results. */
function watchLate<T>(run: CallRun<T>, work: Promise<SettledOutcome>, reportedStatus: "timed_out" | "cancelled"): void {
  const attempt = run.attempts;
  void work.then((settled) => {
    // A tool that stopped because it was told to (it threw the abort, or the reason its signal carries, which the
    // caller chose: an MCP cancel's is a plain string) has nothing more to say.
    if (
      settled.kind === "thrown" &&
      (isAbortError(settled.error) || settled.error instanceof CancelReason ||
        (run.options.signal?.aborted === true && settled.error === run.options.signal.reason))
    ) return;
    let init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">;
    if (settled.kind === "thrown") {
      init = errorFields(thrownToToolError(settled.error));
    } else {
      const returned = readReturned(settled.value);
      const failure = returned?.kind === "failure" ? returned.failure : undefined;
      const value = returned === undefined
        ? settled.value
        : returned.kind === "output"
        ? returned.output
        : failure!.output;
      init = failure ? { ...errorFields(failure.error), status: failure.status } : { status: "success" };
      try {
        // Lossless and uncut: this is for the developer, not the model.
        init.output = toJsonOutput(value, Number.MAX_SAFE_INTEGER).output;
      } catch (error) {
        if (!(error instanceof NotSerializableError)) throw error;
        init = errorFields(new ToolError(`${run.name} returned ${error.message}`, { code: "not_serializable" }));
      }
      if (failure?.effectState !== undefined) init.effectState = failure.effectState;
    }
    run.session.lateResults.record(run.late(init, attempt, reportedStatus));
  });
}

// The total attempts a retry policy allows: `maxAttempts`, or `maxRetries` after the first; the smaller when both.
function attemptsAllowed(retry: AnyTool["retry"]): number {
  const byRetries = retry?.maxRetries === undefined ? Infinity : retry.maxRetries + 1;
  const total = Math.min(retry?.maxAttempts ?? Infinity, byRetries);
  return Math.max(1, Number.isFinite(total) ? Math.floor(total) : 1);
}
