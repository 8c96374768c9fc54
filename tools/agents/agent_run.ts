/**
 * The sub-agent tools `agent_run` and `agent_run_parallel`, made for a getter
 * by {@linkcode agentTools} (which `ToolBox.withSubagents` calls).
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type AnyTool, type Tool, tool, type ToolBox } from "@toolfence/core";
import { assertMayDelegate, runSubagent } from "./_run.ts";
import { converse, sessionModel } from "./_model_loop.ts";
import { MAX_PARALLEL_SUBAGENTS, type SubagentGetter } from "./subagent.ts";
import { AGENT_RUN_OUTPUT, AGENT_RUN_PARALLEL_OUTPUT } from "./_outputs.ts";

/** Most tasks one `agent_run_parallel` call takes. */
export const MAX_PARALLEL_TASKS = 16;

/** Arguments of `agent_run`. */
export interface AgentRunArgs {
  /** Everything the sub-agent needs to know: it does not see this conversation. */
  task: string;
  /** A short label for the sub-agent, e.g. `tests`. */
  name?: string;
}

/** Arguments of `agent_run_parallel`. */
export interface AgentRunParallelArgs {
  /** The tasks, each self-contained. */
  tasks: string[];
  /** Labels for the sub-agents, one per task, in the same order. */
  names?: string[];
}

/** One sub-agent's outcome in `agent_run_parallel`, in the order of the tasks. */
export type SubagentOutcome =
  & { task: string; name?: string }
  & ({ status: "success"; output: unknown } | { status: "error"; error: string });

const TASK = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(100_000),
  v.description("Everything the sub-agent needs to know: it does not see this conversation."),
);
const NAME = v.pipe(v.string(), v.minLength(1), v.maxLength(100));

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function failed(name: string | undefined, error: unknown): ToolError {
  if (error instanceof ToolError && error.code !== "tool_error") return error;
  return new ToolError(`Sub-agent${name ? ` ${name}` : ""} failed: ${messageOf(error)}`, {
    code: "subagent_failed",
    recoveryHint: "Read the error; retry with a clearer task or do the work yourself.",
    details: { name, cause: messageOf(error) },
    cause: error,
  });
}

/** What a sub-agent of the session's model is told. */
const SUBAGENT_SYSTEM = "You are a sub-agent. Work on the task you are given with the tools you have, then answer " +
  "with the result as your final message (no tool call): it is all the agent that gave you the task will see.";

/**
 * xun's default sub-agent provider: each sub-agent is the session's model,
 * working in its child session with a copy of `box`.
 */
function sessionModelSubagents(box: ToolBox): SubagentGetter {
  return (parent, _task, context) => {
    const model = sessionModel(parent, "A sub-agent without a getter (withSubagents())");
    return {
      run: (task, signal) =>
        converse({
          model,
          session: context.session,
          toolbox: context.toolbox(box),
          system: SUBAGENT_SYSTEM,
          task,
          signal,
        }),
    };
  };
}

/**
 * The sub-agent tools for `getter`:
 *
 * - `agent_run(task, name?)` runs one sub-agent and returns its output;
 * - `agent_run_parallel(tasks, names?)` runs several, at most
 *   {@linkcode MAX_PARALLEL_SUBAGENTS} at once, and returns their outcomes in
 *   the order of the tasks (one failing does not stop the others).
 *
 * Each sub-agent runs in a child session of the caller's (`session.child()`:
 * the same workspace and host, a copy of the policy state, depth + 1) that is
 * closed when it ends. The getter is called as `getter(parent, task, context)`
 * and returns `{ run(task, signal) }`; `context.session` is the child session,
 * `context.toolbox(base)` gives the sub-agent a copy of a toolbox with the two
 * sub-agent tools disabled once the child is at depth
 * 3 (`MAX_SUBAGENT_DEPTH`), and the tools themselves refuse
 * (`depth_limit`) in a session at that depth, whatever toolbox it uses. A
 * cancel or timeout of the parent call aborts the signal every sub-agent got.
 *
 * Without a getter (xun's default provider), each sub-agent is the session's
 * model (`new Session({ model })`, an `AgentModel`) in a conversation with a
 * copy of `box`; its final text is the output. A session without a model
 * fails `no_model`, saying how to give one.
 *
 * Requires no permissions itself; the sub-agents' tools need their own.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { agentTools } from "@toolfence/tools";
 * const box = new ToolBox();
 * box.register(...agentTools((_parent, task, { session, toolbox }) => ({
 *   // A real sub-agent runs a model loop with toolbox(box) in session.
 *   run: () => ({ answer: `done: ${task}`, depth: session.depth, tools: toolbox(box).list().length }),
 * })));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "agent_run", { task: "count the files" })).output);
 * await session.close();
 * ```
 */
export function agentTools(getter?: SubagentGetter, box?: ToolBox): AnyTool[] {
  if (getter === undefined && box !== undefined) getter = sessionModelSubagents(box);
  if (typeof getter !== "function") {
    throw new TypeError(
      "withSubagents takes a getter function, (parent, task, context) => ({ run(task, signal) }), or none " +
        "(sub-agents then run with the session's model); agentTools without a getter needs the toolbox",
    );
  }
  const make: SubagentGetter = getter;
  const agentRun: Tool<AgentRunArgs> = tool({
    name: "agent_run",
    description: "Hand a self-contained task to a sub-agent with its own context and tools, and get its answer.\n" +
      "Use it for work that would flood your context (broad searches, reading many files) or that can be " +
      "judged on its own. The sub-agent does not see this conversation: put everything it needs in the task.",
    input: v.object({
      task: TASK,
      name: v.optional(v.pipe(NAME, v.description("A short label for the sub-agent, e.g. 'tests'."))),
    }),
    output: AGENT_RUN_OUTPUT,
    openWorld: true,
    effects: ["reads", "writes_files", "runs_processes", "network"],
    permissions: [],
    async run({ task, name }, ctx) {
      assertMayDelegate(ctx.session);
      try {
        const output = await runSubagent(ctx, make, task, name);
        return { ...(name !== undefined ? { name } : {}), output: output ?? null };
      } catch (error) {
        ctx.signal.throwIfAborted();
        throw failed(name, error);
      }
    },
  });

  const agentRunParallel: Tool<AgentRunParallelArgs> = tool({
    name: "agent_run_parallel",
    description: "Run several independent tasks with sub-agents at the same time (at most " +
      `${MAX_PARALLEL_SUBAGENTS} at once) and get their answers in the order of the tasks.\n` +
      "Each sub-agent sees only its own task. A failing sub-agent is reported in its place; the others go on.",
    input: v.object({
      tasks: v.pipe(
        v.array(TASK),
        v.minLength(1),
        v.maxLength(MAX_PARALLEL_TASKS),
        v.description(`The tasks, 1 to ${MAX_PARALLEL_TASKS}, each self-contained.`),
      ),
      names: v.optional(
        v.pipe(v.array(NAME), v.description("Labels for the sub-agents, one per task, in the same order.")),
      ),
    }),
    output: AGENT_RUN_PARALLEL_OUTPUT,
    openWorld: true,
    effects: ["reads", "writes_files", "runs_processes", "network"],
    permissions: [],
    async run({ tasks, names }, ctx): Promise<{ results: SubagentOutcome[] }> {
      if (names !== undefined && names.length !== tasks.length) {
        throw new ToolError(
          `tasks has ${tasks.length} entries but names has ${names.length}; give one name per task or leave names out`,
          {
            code: "invalid_arguments",
            kind: "semantic",
            recoveryHint: "Make names as long as tasks, or leave it out.",
            details: { tasks: tasks.length, names: names.length },
          },
        );
      }
      assertMayDelegate(ctx.session);
      const results = await Promise.all(tasks.map(async (task, i): Promise<SubagentOutcome> => {
        const name = names?.[i];
        const label = name !== undefined ? { task, name } : { task };
        try {
          return { ...label, status: "success", output: (await runSubagent(ctx, make, task, name)) ?? null };
        } catch (error) {
          return { ...label, status: "error", error: failed(name, error).message };
        }
      }));
      ctx.signal.throwIfAborted();
      return { results };
    },
  });

  return [agentRun, agentRunParallel];
}
