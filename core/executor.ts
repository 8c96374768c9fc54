/**
 * The call pipeline: lookup, argument parsing and validation, hooks, approval,
 * execution with a deadline, an abort signal and retries, lossless output with
 * a cap; and batches of calls.
 *
 * @module
 */

import { ToolError } from "./errors.ts";
import { type ArtifactRef, makeResult, type ToolResult, type ToolResultInit } from "./result.ts";
import type { AnyTool } from "./tool.ts";
import { isConcurrencySafe } from "./tool.ts";
import type { ProgressEvent, ToolContext } from "./context.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { SessionBase } from "./session.ts";
import type { AfterCallHook, HookSet } from "./hooks.ts";
import { formatIssues, validateWithJsonSchema, validateWithValibot, type ValidationOutcome } from "./validation.ts";
import { closestNames } from "./_closest.ts";
import { NotSerializableError, toJsonOutput } from "./_serialize.ts";
import { type DeferredImage, type DeferredImageMessage, deferredImagesMessage } from "./images.ts";

/** The default cap on model-facing output, in characters. */
export const DEFAULT_MAX_OUTPUT_CHARS = 40_000;

/** How long a timed-out or cancelled tool gets to settle before it is reported as still running. */
export const DEFAULT_GRACE_MS = 100;

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
}

/** Options of a batch. */
export interface BatchOptions<T = unknown> {
  /** `parallel` runs consecutive concurrency-safe calls together; `serial` one by one. Default `parallel`. */
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

/** The outcome of a batch. */
export interface BatchResult {
  /** One result per call, in the order the calls were declared. */
  results: ToolResult[];
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
  /** The toolbox's hooks. */
  hooks: HookSet;
  /** Output cap, in characters. */
  maxOutputChars: number;
  /** Grace period after a timeout or cancel. */
  graceMs: number;
}

/** The context of one attempt; methods live on the prototype so a call allocates one small object. */
class CallContext<T> implements ToolContext<T> {
  constructor(
    readonly session: SessionBase,
    readonly toolName: string,
    readonly callId: string | undefined,
    readonly attempt: number,
    readonly value: T,
    signal: AbortSignal | undefined,
    private readonly onProgress: ((event: ProgressEvent) => void) | undefined,
    private readonly produced: ArtifactRef[],
  ) {
    this.#signal = signal;
  }

  #signal: AbortSignal | undefined;

  /** Made on first use when nothing can abort the attempt (most tools never look). */
  get signal(): AbortSignal {
    return this.#signal ??= new AbortController().signal;
  }

  #artifacts?: ArtifactStore;

  get workspace() {
    return this.session.workspace;
  }

  get policy() {
    return this.session.policy;
  }

  /** The session's store, recording what this call puts so the result can list it. */
  get artifacts(): ArtifactStore {
    return this.#artifacts ??= recordingStore(this.session.artifacts, this.produced);
  }

  deferImage(image: Uint8Array | string, note?: string): Promise<void> {
    return this.session.deferImage(image, { toolName: this.toolName, callId: this.callId, note });
  }

  progress(message: string, fraction?: number): void {
    const event: ProgressEvent = { toolName: this.toolName, callId: this.callId, message, fraction };
    this.onProgress?.(event);
    this.session.emitProgress(event);
  }
}

function recordingStore(store: ArtifactStore, produced: ArtifactRef[]): ArtifactStore {
  return {
    async put(content, info) {
      const ref = await store.put(content, info);
      if (!produced.some((p) => p.id === ref.id)) produced.push(ref);
      return ref;
    },
    get: (id) => store.get(id),
    ref: (id) => store.ref(id),
    list: () => store.list(),
  };
}

/** Why a call was cancelled; carried as the abort reason. */
class CancelReason extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CancelReason";
  }
}

const FAIL_FAST = "an earlier call in this batch failed (fail-fast)";

function reasonText(signal: AbortSignal): string {
  const reason = signal.reason;
  if (reason instanceof CancelReason) return reason.message;
  if (reason instanceof Error && reason.name !== "AbortError") return reason.message;
  return "the caller cancelled it";
}

function parseArguments(toolName: string, raw: unknown): Record<string, unknown> | ToolError {
  let value = raw;
  if (value === undefined || value === null) return {};
  if (typeof value === "string") {
    if (value.trim() === "") return {};
    try {
      value = JSON.parse(value);
    } catch (error) {
      return new ToolError(`Invalid arguments for ${toolName}: not valid JSON (${(error as Error).message})`, {
        code: "invalid_arguments",
        kind: "semantic",
        recoveryHint: "Send the arguments as one JSON object.",
      });
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new ToolError(
      `Invalid arguments for ${toolName}: expected a JSON object, received ${
        Array.isArray(value) ? "an array" : typeof value
      }`,
      { code: "invalid_arguments", kind: "semantic", recoveryHint: "Send the arguments as one JSON object." },
    );
  }
  return value as Record<string, unknown>;
}

function validate(tool: AnyTool, args: Record<string, unknown>): ValidationOutcome {
  return tool.input ? validateWithValibot(tool.input, args) : validateWithJsonSchema(tool.inputSchema, args);
}

function validationError(tool: AnyTool, outcome: ValidationOutcome & { ok: false }): ToolError {
  return new ToolError(formatIssues(tool.name, outcome.issues), {
    code: "invalid_arguments",
    kind: "semantic",
    recoveryHint: "Fix the arguments named above and call again.",
    details: { issues: outcome.issues },
  });
}

function errorFields(error: ToolError): Partial<ToolResultInit> {
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

function thrownToToolError(error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (error instanceof Error) {
    return new ToolError(error.message || error.name, {
      code: "tool_error",
      details: { errorName: error.name, stack: error.stack },
      cause: error,
    });
  }
  return new ToolError(String(error), { code: "tool_error", details: { thrown: String(error) } });
}

/** Waits `ms`; resolves false early when the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
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

function hooksOf<H>(box: readonly H[], session: readonly H[]): readonly H[] {
  if (session.length === 0) return box;
  if (box.length === 0) return session;
  return [...box, ...session];
}

function backoffDelay(tool: AnyTool, attempt: number): number {
  const retry = tool.retry!;
  const base = retry.backoffMs ?? 100;
  const delay = Math.min(retry.maxBackoffMs ?? 5_000, base * 2 ** (attempt - 1));
  const jitter = retry.jitter === true ? 0.5 : typeof retry.jitter === "number" ? retry.jitter : 0;
  return Math.max(0, delay * (1 + (Math.random() * 2 - 1) * jitter));
}

type AttemptOutcome =
  | { kind: "value"; value: unknown }
  | { kind: "thrown"; error: unknown }
  | { kind: "timeout"; stillRunning: boolean }
  | { kind: "cancelled"; stillRunning: boolean };

async function runAttempt(
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
    (value): AttemptOutcome => ({ kind: "value", value }),
    (error): AttemptOutcome => ({ kind: "thrown", error }),
  );
  try {
    const first = await Promise.race([work, stop]);
    if (typeof first !== "string") return first;
    if (first === "timeout") controller.abort(new CancelReason(`timed out after ${timeoutMs} ms`));
    const settled = await Promise.race([work.then(() => true), sleep(graceMs).then(() => false)]);
    return { kind: first, stillRunning: !settled };
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", forwardAbort);
  }
}

/** The bookkeeping of one call, with the steps that end it. */
class CallRun<T> {
  readonly started = performance.now();
  attempts = 0;
  readonly metadata: Record<string, unknown> = {};
  /** Artifacts the tool stored during the call. */
  readonly produced: ArtifactRef[] = [];
  validArgs: Record<string, unknown> | undefined;

  constructor(
    readonly env: ExecutionEnvironment,
    readonly session: SessionBase,
    readonly name: string,
    readonly options: CallOptions<T>,
  ) {}

  /** Completes `init` (a fresh object each caller builds) into the call's result. */
  finish(init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">): ToolResult | Promise<ToolResult> {
    init.toolName = this.name;
    init.callId = this.options.callId;
    init.attempts = this.attempts;
    init.metadata = this.metadata;
    if (this.produced.length) init.artifacts = [...this.produced, ...(init.artifacts ?? [])];
    init.latencyMs = performance.now() - this.started;
    const result = makeResult(init as ToolResultInit);
    const hooks = hooksOf(this.env.hooks.after, this.session.hooks.after);
    return hooks.length === 0 ? result : this.runAfterHooks(hooks, result);
  }

  async runAfterHooks(hooks: readonly AfterCallHook[], first: ToolResult): Promise<ToolResult> {
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
    const { options } = this;
    return new CallContext(
      this.session,
      tool.name,
      options.callId,
      attempt,
      options.context as T,
      signal,
      options.onProgress,
      this.produced,
    );
  }

  finishOutput(tool: AnyTool, value: unknown): ToolResult | Promise<ToolResult> {
    const cap = tool.maxOutputChars ?? this.env.maxOutputChars;
    let json: ReturnType<typeof toJsonOutput>;
    try {
      json = toJsonOutput(value, cap);
    } catch (error) {
      if (!(error instanceof NotSerializableError)) throw error;
      return this.fail(
        new ToolError(`${this.name} returned ${error.message}`, {
          code: "not_serializable",
          recoverable: false,
          details: { path: error.path },
        }),
      );
    }
    if (json.fits) return this.finish({ status: "success", output: json.output });
    return this.capOutput(json.text(), typeof json.output === "string", cap);
  }

  async capOutput(whole: string, isText: boolean, cap: number): Promise<ToolResult> {
    const { callId } = this.options;
    const artifact = await this.session.artifacts.put(whole, {
      mediaType: isText ? "text/plain; charset=utf-8" : "application/json",
      summary: `whole output of ${this.name}${callId ? ` (call ${callId})` : ""}, ${whole.length} characters`,
    });
    const { text, omitted } = capText(whole, cap, artifact);
    return this.finish({ status: "success", output: text, truncated: true, omitted, artifacts: [artifact] });
  }
}

/**
 * Runs one call through the whole pipeline and returns its result. It never
 * throws for a tool's failure; it throws only for programming errors of the
 * caller (no session).
 */
export async function executeCall<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  name: string,
  rawArgs: unknown,
  options: CallOptions<T> = {},
): Promise<ToolResult> {
  const run = new CallRun(env, session, name, options);
  const { callId, signal } = options;

  const tool = env.lookup(name);
  if (!tool) {
    const suggestions = closestNames(name, env.enabledNames());
    return run.fail(
      new ToolError(
        `Unknown tool "${name}"${
          suggestions.length ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(", ")}?` : ""
        }`,
        {
          code: "unknown_tool",
          kind: "semantic",
          recoveryHint: "Call one of the tools you were given.",
          details: { suggestions },
        },
      ),
    );
  }
  if (signal?.aborted) return run.cancelled("Not run");

  const parsed = parseArguments(name, rawArgs);
  if (parsed instanceof ToolError) return run.fail(parsed);
  let outcome = validate(tool, parsed);
  if (!outcome.ok) return run.fail(validationError(tool, outcome));
  run.validArgs = outcome.value;

  try {
    for (const hook of hooksOf(env.hooks.before, session.hooks.before)) {
      const decision = await hook({ session, toolName: name, callId, args: run.validArgs });
      if (!decision) continue;
      if ("output" in decision) {
        run.metadata.shortCircuited = true;
        return run.finishOutput(tool, decision.output);
      }
      outcome = validate(tool, decision.args);
      if (!outcome.ok) return run.fail(validationError(tool, outcome));
      run.validArgs = outcome.value;
    }

    const needsApproval = typeof tool.needsApproval === "function"
      ? await tool.needsApproval(run.validArgs)
      : tool.needsApproval === true;
    if (needsApproval) {
      const answer = await session.confirm({
        title: "Approve tool call",
        message: `Allow ${name} with ${JSON.stringify(run.validArgs)}?`,
        defaultChoice: true,
      }, signal);
      run.metadata.approval = answer.source;
      if (!answer.choice) {
        return run.fail(
          new ToolError(`The call to ${name} was not approved`, {
            code: "not_approved",
            kind: "policy",
            status: "skipped",
            recoveryHint: "Do not retry the same call; ask the user or take another approach.",
          }),
        );
      }
    }
  } catch (error) {
    return run.fail(thrownToToolError(error));
  }

  const args = run.validArgs;
  const timeoutMs = options.timeoutMs ?? tool.timeoutMs;
  const maxAttempts = Math.max(1, tool.retry?.maxAttempts ?? 1);

  for (;;) {
    const attemptNumber = ++run.attempts;
    let attempt: AttemptOutcome;
    if (signal === undefined && timeoutMs === undefined) {
      // Nothing can stop this attempt early, so there is nothing to race against.
      try {
        attempt = { kind: "value", value: await tool.execute(args, run.context(tool, undefined, attemptNumber)) };
      } catch (error) {
        attempt = { kind: "thrown", error };
      }
    } else {
      const makeContext = (ctxSignal: AbortSignal) => run.context(tool, ctxSignal, attemptNumber);
      attempt = await runAttempt(tool, args, makeContext, timeoutMs, signal, env.graceMs);
    }
    if (attempt.kind === "value") return run.finishOutput(tool, attempt.value);
    if (attempt.kind === "timeout") {
      return run.fail(
        new ToolError(`${name} timed out after ${timeoutMs} ms`, {
          code: "timeout",
          recoveryHint: "Try a smaller task or a longer timeout.",
        }),
        { status: "timed_out", workerStillRunning: attempt.stillRunning, outcomeUnknown: true },
      );
    }
    if (attempt.kind === "cancelled") {
      return run.cancelled("Cancelled", { workerStillRunning: attempt.stillRunning, outcomeUnknown: true });
    }
    const error = thrownToToolError(attempt.error);
    const retryable = error.code === "tool_error" && attemptNumber < maxAttempts &&
      (tool.retry?.retryIf?.(attempt.error, attemptNumber) ?? true);
    if (!retryable) return run.fail(error);
    if (!(await sleep(backoffDelay(tool, attemptNumber), signal))) return run.cancelled("Cancelled");
  }
}

/**
 * Keeps the head and tail of `text` within `cap` characters, with a marker in
 * between naming how much was cut and the artifact that holds all of it.
 *
 * @example
 * ```ts
 * import { capText } from "@toolfence/core";
 * const ref = { id: "sha256:" + "0".repeat(64) } as const;
 * console.log(capText("x".repeat(100), 60, ref).omitted > 0);
 * ```
 */
export function capText(
  text: string,
  cap: number,
  artifact: Pick<ArtifactRef, "id">,
): { text: string; omitted: number } {
  const markerFor = (omitted: number) =>
    `\n[... ${omitted} characters omitted; the whole output is artifact ${artifact.id} (page through it with read_artifact) ...]\n`;
  const room = Math.max(0, cap - markerFor(text.length).length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  const omitted = text.length - head - tail;
  return { text: text.slice(0, head) + markerFor(omitted) + (tail > 0 ? text.slice(-tail) : ""), omitted };
}

/** Splits calls into segments: runs of concurrency-safe calls, and unsafe calls alone. */
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

/**
 * Runs a batch: in parallel mode consecutive concurrency-safe calls share a
 * segment (at most `maxConcurrency` at once) and any other call runs alone as a
 * barrier. Results come back in declaration order. With `failFast` an error or
 * timeout cancels everything not yet finished (`cancelled`, `attempts: 0` for
 * calls that never started). Deferred images are collected after the batch.
 */
export async function executeBatch<T>(
  env: ExecutionEnvironment,
  session: SessionBase,
  calls: readonly BatchCall[],
  options: BatchOptions<T> = {},
): Promise<BatchResult> {
  const mode = options.mode ?? "parallel";
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
  const runOne = async (index: number) => {
    const call = calls[index];
    const result = await executeCall(env, session, call.name, call.args, {
      context: options.context,
      callId: call.callId,
      signal: batch.signal,
      timeoutMs: call.timeoutMs,
      onProgress: options.onProgress,
    });
    results[index] = result;
    if (options.failFast && (result.status === "error" || result.status === "timed_out") && !batch.signal.aborted) {
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
  const hooks = [...env.hooks.afterBatch.splice(0), ...session.hooks.afterBatch.splice(0)];
  for (const hook of hooks) await hook({ session, results });
  const images = session.takeDeferredImages();
  return { results, images, imageMessage: deferredImagesMessage(images) };
}
