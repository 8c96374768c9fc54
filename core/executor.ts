/**
 * The call pipeline, read as its steps; each step lives in its own file:
 *
 * 1. look the tool up (`_call_arguments.ts`);
 * 2. parse and validate the arguments (`_call_arguments.ts`);
 * 3. the before-call hooks and the approval (`_call_gate.ts`);
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
import type { ToolResult } from "./result.ts";
import type { AnyTool } from "./tool.ts";
import type { ProgressEvent } from "./context.ts";
import type { SessionBase } from "./session.ts";
import type { ChoiceOutcome } from "./host.ts";
import type { HookSet } from "./hooks.ts";
import type { DeferredImage, DeferredImageMessage } from "./images.ts";
import { parseArguments, unknownToolError, validate, validationError } from "./_call_arguments.ts";
import { toolFenceRefusal } from "./_tool_needs.ts";
import { passGate } from "./_call_gate.ts";
import { type AttemptOutcome, backoffDelay, runAttempt, sleep } from "./_call_attempts.ts";
import { finishOutput } from "./_call_output.ts";
import { CallRun, thrownToToolError } from "./_call_run.ts";

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
  const { signal } = options;

  // 1. The tool.
  const tool = env.lookup(name);
  if (!tool) return run.fail(unknownToolError(name, env.enabledNames()));
  if (signal?.aborted) return run.cancelled("Not run");
  // What the runtime does not grant is refused before anything of the call happens.
  const fenced = toolFenceRefusal(tool, session);
  if (fenced) return run.fail(fenced);

  // 2. The arguments.
  const parsed = parseArguments(name, rawArgs);
  if (parsed instanceof ToolError) return run.fail(parsed);
  const outcome = validate(tool, parsed);
  if (!outcome.ok) return run.fail(validationError(tool, outcome));
  run.validArgs = outcome.value;

  // 3. Hooks and approval.
  const cap = tool.maxOutputChars ?? env.maxOutputChars;
  try {
    const passed = passGate(run, tool);
    const gate = passed instanceof Promise ? await passed : passed;
    if (gate.kind === "refused") return run.fail(gate.error);
    if (gate.kind === "answered") return finishOutput(run, gate.output, cap, tool.output);
  } catch (error) {
    return run.fail(thrownToToolError(error));
  }

  // 4-5. Attempts, each with its own context, until one ends the call.
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
      attempt = await runAttempt(
        tool,
        args,
        (ctxSignal) => run.context(tool, ctxSignal, attemptNumber),
        timeoutMs,
        signal,
        env.graceMs,
      );
    }

    // 6. A value becomes the output.
    if (attempt.kind === "value") return finishOutput(run, attempt.value, cap, tool.output);

    // 7. Anything else ends the call with its reason, unless a retry is due.
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
    if (!retryable(tool, error, attempt.error, attemptNumber, maxAttempts)) return run.fail(error);
    if (!(await sleep(backoffDelay(tool, attemptNumber), signal))) return run.cancelled("Cancelled");
  }
}

/** Only unexpected failures (`tool_error`) are retried, within the tool's attempts and its `retryIf`. */
function retryable(tool: AnyTool, error: ToolError, thrown: unknown, attempt: number, maxAttempts: number): boolean {
  return error.code === "tool_error" && attempt < maxAttempts && (tool.retry?.retryIf?.(thrown, attempt) ?? true);
}
