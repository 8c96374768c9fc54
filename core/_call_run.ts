/**
 * The bookkeeping of one call (attempts, metadata, artifacts it produced) and
 * step 7, the end of every call: the result, and the after-call hooks.
 *
 * @module
 */

import { ToolError } from "./errors.ts";
import { type ArtifactRef, makeResult, type ToolResult, type ToolResultInit } from "./result.ts";
import type { AnyTool } from "./tool.ts";
import type { ToolContext } from "./context.ts";
import type { SessionBase } from "./session.ts";
import type { AfterCallHook } from "./hooks.ts";
import type { CallOptions, ExecutionEnvironment } from "./executor.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { FileChange } from "./effects.ts";
import { CallContext } from "./_call_context.ts";
import { reasonText } from "./_call_attempts.ts";

/** The toolbox's hooks then the session's, without a copy when one side has none. */
export function hooksOf<H>(box: readonly H[], session: readonly H[]): readonly H[] {
  if (session.length === 0) return box;
  if (box.length === 0) return session;
  return [...box, ...session];
}

/** Anything a tool throws, as a `ToolError` (`tool_error` unless it already is one). */
export function thrownToToolError(error: unknown): ToolError {
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

/** One call in progress. */
export class CallRun<T> {
  readonly started = performance.now();
  attempts = 0;
  readonly metadata: Record<string, unknown> = {};
  /** Artifacts the tool stored during the call. */
  readonly produced: ArtifactRef[] = [];
  validArgs: Record<string, unknown> | undefined;
  /** Files the tool reported changing (`ctx.recordFileChange`), in every attempt. */
  readonly filesystemChanges: FileChange[] = [];

  constructor(
    readonly env: ExecutionEnvironment,
    readonly session: SessionBase,
    readonly name: string,
    readonly options: CallOptions<T>,
  ) {}

  get callId(): string | undefined {
    return this.options.callId;
  }

  get artifacts(): ArtifactStore {
    return this.session.artifacts;
  }

  /** Completes `init` (a fresh object each caller builds) into the call's result. */
  finish(init: Partial<ToolResultInit> & Pick<ToolResultInit, "status">): ToolResult | Promise<ToolResult> {
    init.toolName = this.name;
    init.callId = this.options.callId;
    init.attempts = this.attempts;
    init.metadata = this.metadata;
    init.filesystemChanges = [...this.filesystemChanges];
    if (this.produced.length) init.artifacts = [...this.produced, ...(init.artifacts ?? [])];
    init.latencyMs = performance.now() - this.started;
    const result = makeResult(init as ToolResultInit);
    const hooks = hooksOf(this.env.hooks.after, this.session.hooks.after);
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
      this.filesystemChanges,
    );
  }
}
