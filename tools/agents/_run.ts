/**
 * Running one sub-agent: a child session, the getter, the run, cancellation
 * from the parent, at most four at once per parent session, and the child
 * session closed afterwards.
 *
 * @module
 */

import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import {
  MAX_PARALLEL_SUBAGENTS,
  MAX_SUBAGENT_DEPTH,
  type Subagent,
  type SubagentContext,
  type SubagentGetter,
} from "./subagent.ts";
import { untilAborted, whenAborted } from "../_shared/abort.ts";

class Limiter {
  #running = 0;
  #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await work();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  #acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#running < this.limit) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener("abort", onAbort);
        this.#running++;
        resolve();
      };
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(grant), 1);
        reject(signal.reason);
      };
      this.#waiting.push(grant);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

const limiters = new WeakMap<Session, Limiter>();

function limiterFor(session: Session): Limiter {
  let limiter = limiters.get(session);
  if (!limiter) {
    limiter = new Limiter(MAX_PARALLEL_SUBAGENTS);
    limiters.set(session, limiter);
  }
  return limiter;
}

/** Throws `depth_limit` when `session` may not start sub-agents. */
export function assertMayDelegate(session: Session): void {
  if (session.depth < MAX_SUBAGENT_DEPTH) return;
  throw new ToolError(
    `Sub-agents cannot start further sub-agents at depth ${session.depth} (the limit is ${MAX_SUBAGENT_DEPTH})`,
    {
      code: "depth_limit",
      kind: "policy",
      status: "skipped",
      recoverable: false,
      recoveryHint: "Do the task yourself with your other tools.",
      details: { depth: session.depth, maxDepth: MAX_SUBAGENT_DEPTH },
    },
  );
}

/**
 * Runs one sub-agent for `task` under the parent call `ctx`: waits for a slot
 * (four per parent session), makes the child session, asks the getter for the
 * sub-agent, runs it with a signal that the parent's cancel aborts, and closes
 * the child session. A sub-agent that ignores the signal is no longer waited for.
 */
export async function runSubagent(
  ctx: ToolContext,
  getter: SubagentGetter,
  task: string,
  name: string | undefined,
): Promise<unknown> {
  return await limiterFor(ctx.session).run(async () => {
    const controller = new AbortController();
    // Also when the stop came while it waited for its slot: the sub-agent then never starts.
    const release = whenAborted(ctx.signal, () => controller.abort(ctx.signal.reason));
    const child = ctx.session.child();
    const canDelegate = child.depth < MAX_SUBAGENT_DEPTH;
    try {
      const context: SubagentContext = {
        session: child,
        ...(name !== undefined ? { name } : {}),
        ...(ctx.value !== undefined ? { value: ctx.value } : {}),
        signal: controller.signal,
        canDelegate,
        toolbox: (base) => canDelegate ? base.clone() : base.clone().disableSubagents(),
      };
      const agent = await untilAborted(Promise.resolve(getter(ctx.session, task, context)), controller.signal);
      if (typeof (agent as Partial<Subagent> | undefined)?.run !== "function") {
        throw new ToolError("The sub-agent getter did not return an object with run(task, signal)", {
          code: "invalid_subagent",
          recoverable: false,
          details: { returned: typeof agent },
        });
      }
      return await untilAborted(Promise.resolve(agent.run(task, controller.signal)), controller.signal);
    } finally {
      release();
      controller.abort(new Error("the sub-agent's run ended"));
      await child.close();
    }
  }, ctx.signal);
}
