/**
 * Hooks around calls and batches, on a toolbox or a session.
 *
 * @module
 */

import type { SessionBase as Session } from "./session.ts";
import type { ToolResult } from "./result.ts";

/** What a `beforeToolCall` hook sees. */
export interface BeforeCallEvent {
  /** The session making the call. */
  session: Session;
  /** The tool's name. */
  toolName: string;
  /** The provider's call id. */
  callId?: string;
  /** The validated arguments. */
  args: Record<string, unknown>;
}

/**
 * What a `beforeToolCall` hook may return: nothing (go on), new arguments
 * (validated again before the tool runs), or an output that short-circuits
 * the call (the tool does not run; the output is the result's).
 */
export type BeforeCallDecision = void | undefined | { args: Record<string, unknown> } | { output: unknown };

/** A hook that runs before a tool, after validation. */
export type BeforeCallHook = (event: BeforeCallEvent) => BeforeCallDecision | Promise<BeforeCallDecision>;

/** A hook that runs after a call; it may return a replacement result. */
export type AfterCallHook = (
  event: { session: Session; result: ToolResult; args?: Record<string, unknown> },
) => void | ToolResult | Promise<void | ToolResult>;

/** A one-shot hook that runs once after the next batch. */
export type AfterBatchHook = (event: { session: Session; results: readonly ToolResult[] }) => void | Promise<void>;

/** The hooks held by a toolbox or a session. */
export interface HookSet {
  /** Before each call. */
  before: BeforeCallHook[];
  /** After each call. */
  after: AfterCallHook[];
  /** Once after the next batch, then dropped. */
  afterBatch: AfterBatchHook[];
}
