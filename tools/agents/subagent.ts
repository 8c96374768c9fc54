/**
 * What a sub-agent getter receives and returns, and the limits of sub-agents.
 *
 * @module
 */

import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";

/** Depth from which sessions may not start sub-agents (top level is 0). */
export const MAX_SUBAGENT_DEPTH = 3;

/** Most sub-agents of one parent session running at once. */
export const MAX_PARALLEL_SUBAGENTS = 4;

/** A sub-agent, as the getter returns it. */
export interface Subagent {
  /** Works on `task` and returns its answer (anything JSON-serialisable); should stop when `signal` aborts. */
  run(task: string, signal: AbortSignal): unknown;
}

/** What the getter learns about the sub-agent it makes. */
export interface SubagentContext {
  /**
   * The sub-agent's own session, already made with `parent.child()`: the same
   * workspace and host, a copy of the policy state, depth + 1. It is closed
   * (its background jobs killed) when the run ends.
   */
  session: Session;
  /** The name the model gave the sub-agent, if any. */
  name?: string;
  /** The parent call's `ctx.value` (the value the caller handed to its tools), as xun's getter receives it. */
  value?: unknown;
  /** Aborts when the parent's call is cancelled or times out; the same signal `run` gets. */
  signal: AbortSignal;
  /** Whether the sub-agent may start sub-agents itself (its depth is below {@linkcode MAX_SUBAGENT_DEPTH}). */
  canDelegate: boolean;
  /**
   * A copy of `base` for the sub-agent: `base.clone()`, with `agent_run` and
   * `agent_run_parallel` disabled when it may not delegate. Hand this to the
   * sub-agent's model loop.
   */
  toolbox(base: ToolBox): ToolBox;
}

/**
 * Makes the sub-agent for a task. It receives the parent session, the task,
 * and the {@linkcode SubagentContext} with the child session to run in.
 */
export type SubagentGetter = (
  parent: Session,
  task: string,
  context: SubagentContext,
) => Subagent | Promise<Subagent>;
