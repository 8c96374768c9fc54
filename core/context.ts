/**
 * What a running tool sees of the call and the session.
 *
 * @module
 */

import type { SessionBase } from "./session.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { CallPolicy, PathResolver } from "./services.ts";
import type { FileChange } from "./effects.ts";

/** A progress event from `ctx.progress`. */
export interface ProgressEvent {
  /** The tool reporting progress. */
  toolName: string;
  /** The call reporting progress. */
  callId?: string;
  /** What is happening. */
  message: string;
  /** Done so far, from 0 to 1, when known. */
  fraction?: number;
}

/**
 * The context of one call, handed to `execute` (`run`) as its second argument.
 * `T` is the type of the `context` value the caller passed (xun's
 * `ToolCallContext[T]`).
 */
export interface ToolContext<T = unknown> {
  /** The calling session. */
  readonly session: SessionBase;
  /** The registered name of the tool. */
  readonly toolName: string;
  /** The provider's call id, when given. */
  readonly callId?: string;
  /** 1-based attempt number (retries count up). */
  readonly attempt: number;
  /** Whatever the caller passed as `context`. */
  readonly value: T;
  /** Aborts on timeout, cancellation and fail-fast; pass it to everything that waits. */
  readonly signal: AbortSignal;
  /** Path resolution inside the workspace. */
  readonly workspace: PathResolver;
  /** Permission checks: the fence, write permission, command analysis. */
  readonly policy: CallPolicy;
  /** Content-addressed storage for this session. */
  readonly artifacts: ArtifactStore;
  /** The result's `metadata`: write to it for runners and middleware; never sent to the model. */
  readonly metadata: Record<string, unknown>;
  /** The caller's idempotency key for this call, when given: use it to make a repeated write harmless. */
  readonly idempotencyKey?: string;
  /** Queues an image (bytes, or a path in the workspace) for after this batch's results. */
  deferImage(image: Uint8Array | string, note?: string): Promise<void>;
  /** Reports progress to whoever listens (MCP progress notifications, CLI). */
  progress(message: string, fraction?: number): void;
  /**
   * Reports one change the call made to a file; the call's result lists them
   * all as `filesystemChanges` (also when it fails, times out or is
   * cancelled). `beforeImage`, the exact content the path held before (for a
   * symlink, its target), lets the session undo the change; see
   * {@linkcode SessionBase.emitFileChange}.
   */
  recordFileChange(change: FileChange, beforeImage?: Uint8Array): void;
}

/** xun's name for {@linkcode ToolContext}. */
export type ToolCallContext<T = unknown> = ToolContext<T>;
