/**
 * The toolbox: the tool table, enabling and disabling, listing per model and
 * fence, schemas per dialect, and the call entry points.
 *
 * @module
 */

import { ToolNameConflictError, UsageError } from "./errors.ts";
import {
  type AnyTool,
  isTool,
  type ObjectInputSchema,
  type Tool,
  tool as defineTool,
  type ToolDefinition,
} from "./tool.ts";
import type * as v from "valibot";
import { Session } from "./session.ts";
import type { ToolResult } from "./result.ts";
import type { AfterBatchHook, AfterCallHook, BeforeCallHook, HookSet } from "./hooks.ts";
import {
  type BatchCall,
  type BatchOptions,
  type BatchResult,
  type CallOptions,
  DEFAULT_GRACE_MS,
  DEFAULT_MAX_OUTPUT_CHARS,
  executeBatch,
  executeCall,
  type ExecutionEnvironment,
} from "./executor.ts";
import { subagentTools, toolGroup, toolGroupNames } from "./groups.ts";
import { dialectRenderer } from "./dialects.ts";
import { fnmatch } from "./_fnmatch.ts";
import { type Fence, runtimeFence } from "../policy/fence.ts";
import { fencePlacesOf, missingToolGrants } from "./_tool_needs.ts";

/** Names of the two sub-agent tools. */
export const SUBAGENT_TOOL_NAMES: readonly string[] = ["agent_run", "agent_run_parallel"];

/** Options of a {@linkcode ToolBox}. */
export interface ToolBoxOptions {
  /** Cap on model-facing output characters. Default 40,000. */
  maxOutputChars?: number;
  /** How long a timed-out or cancelled tool gets to settle. Default 100 ms. */
  graceMs?: number;
}

/** Which tools {@linkcode ToolBox.list} returns. */
export interface ListOptions {
  /** The model's capabilities; tools requiring others are left out. Default: none. */
  capabilities?: readonly string[];
  /** The fence; tools needing what it does not grant are left out. Default: the session's, else the runtime's. */
  fence?: Fence;
  /**
   * The session the tools will be called in: its workspace and temp folder are
   * where the tools' `workspace` and `temp` needs point. Without it those count
   * as missing only when the fence closes reads or writes entirely.
   */
  session?: Session;
}

/**
 * A set of tools and the one entry point for calling them.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session, ToolBox } from "../mod.ts";
 * const box = new ToolBox();
 * box.tool({
 *   name: "add",
 *   description: "Add two numbers.",
 *   input: v.object({ a: v.number(), b: v.number() }),
 *   run: ({ a, b }) => a + b,
 * });
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "add", { a: 1, b: 2 })).output); // 3
 * await session.close();
 * ```
 */
export class ToolBox {
  #tools = new Map<string, AnyTool>();
  #disabled = new Set<string>();
  readonly #hooks: HookSet = { before: [], after: [], afterBatch: [] };
  readonly #options: Required<ToolBoxOptions>;
  readonly #env: ExecutionEnvironment;

  /** Creates an empty toolbox. */
  constructor(options: ToolBoxOptions = {}) {
    this.#options = {
      maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
      graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    };
    this.#env = {
      lookup: (name) => (this.#disabled.has(name) ? undefined : this.#tools.get(name)),
      enabledNames: () => [...this.#tools.keys()].filter((n) => !this.#disabled.has(n)),
      hooks: this.#hooks,
      maxOutputChars: this.#options.maxOutputChars,
      graceMs: this.#options.graceMs,
    };
  }

  /**
   * Adds tools. A second tool with a taken name throws
   * {@linkcode ToolNameConflictError} unless one of the two has `override`.
   */
  register(...tools: AnyTool[]): this {
    for (const t of tools) {
      if (!isTool(t)) {
        throw new TypeError(
          `Not a tool: ${
            JSON.stringify((t as { name?: unknown })?.name ?? t)
          }; a tool has a valid name, a description, an inputSchema and execute()`,
        );
      }
      const existing = this.#tools.get(t.name);
      if (existing && !existing.override && !t.override) throw new ToolNameConflictError(t.name);
      this.#tools.set(t.name, t);
    }
    return this;
  }

  /** Defines a tool with {@linkcode defineTool tool()} and registers it; returns the tool. */
  tool<S extends ObjectInputSchema, T = unknown>(definition: ToolDefinition<S, T>): Tool<v.InferOutput<S>> {
    const t = defineTool(definition);
    this.register(t);
    return t;
  }

  /** Registers built-in groups by name (`fs`, `search`, ...); no argument registers all. */
  withDefaults(...groups: string[]): this {
    for (const group of groups.length ? groups : toolGroupNames()) this.register(...toolGroup(group));
    return this;
  }

  /** Registers `agent_run` and `agent_run_parallel` with a getter that makes sub-agents. */
  withSubagents(getter: unknown): this {
    return this.register(...subagentTools(getter));
  }

  /** Hides the tools whose names match any of the fnmatch patterns (`browser_*`). */
  disable(...patterns: string[]): this {
    for (const name of this.#tools.keys()) {
      if (patterns.some((p) => fnmatch(p, name))) this.#disabled.add(name);
    }
    return this;
  }

  /** Shows again the tools whose names match any of the patterns. */
  enable(...patterns: string[]): this {
    for (const name of [...this.#disabled]) {
      if (patterns.some((p) => fnmatch(p, name))) this.#disabled.delete(name);
    }
    return this;
  }

  /** Hides only the two sub-agent tools. */
  disableSubagents(): this {
    return this.disable(...SUBAGENT_TOOL_NAMES);
  }

  /** Shows the two sub-agent tools again. */
  enableSubagents(): this {
    return this.enable(...SUBAGENT_TOOL_NAMES);
  }

  /** A registered tool by name, enabled or not. */
  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  /** Whether a tool is registered and enabled. */
  isEnabled(name: string): boolean {
    return this.#tools.has(name) && !this.#disabled.has(name);
  }

  /**
   * The enabled tools whose required capabilities are met and whose
   * declared `needs` the fence grants (a tool that would be
   * refused with `fence_denied` is not offered), in registration order.
   */
  list(options: ListOptions = {}): AnyTool[] {
    const capabilities = new Set(options.capabilities ?? []);
    const fence = options.fence ?? options.session?.policy.fence ?? runtimeFence;
    const places = options.session ? fencePlacesOf(options.session) : undefined;
    return [...this.#tools.values()].filter((t) =>
      !this.#disabled.has(t.name) &&
      (t.requires ?? []).every((c) => capabilities.has(c)) &&
      missingToolGrants(t, fence, places).length === 0
    );
  }

  /**
   * The listed tools in a provider's exact wire format (`json-schema` here;
   * adapters register `openai-chat`, `anthropic`, ...). Throws when a schema
   * cannot be expressed in the dialect.
   */
  schemas(dialect = "json-schema", options: ListOptions & Record<string, unknown> = {}): unknown[] {
    return dialectRenderer(dialect)(this.list(options), options);
  }

  /** Adds a hook that runs before each call (after validation). */
  beforeToolCall(hook: BeforeCallHook): this {
    this.#hooks.before.push(hook);
    return this;
  }

  /** Adds a hook that runs after each call and may replace its result. */
  afterToolCall(hook: AfterCallHook): this {
    this.#hooks.after.push(hook);
    return this;
  }

  /** Adds a one-shot hook that runs after the next batch. */
  afterBatch(hook: AfterBatchHook): this {
    this.#hooks.afterBatch.push(hook);
    return this;
  }

  /**
   * Calls one tool and returns its {@linkcode ToolResult}. Never throws for a
   * tool's failure; throws {@linkcode UsageError} without a session.
   */
  call<T = unknown>(session: Session, name: string, args?: unknown, options: CallOptions<T> = {}): Promise<ToolResult> {
    assertSession(session);
    return executeCall(this.#env, session, name, args, options);
  }

  /** Runs a batch of calls (see {@linkcode BatchOptions}); results in declaration order. */
  callMany<T = unknown>(
    session: Session,
    calls: readonly BatchCall[],
    options: BatchOptions<T> = {},
  ): Promise<BatchResult> {
    assertSession(session);
    if (!Array.isArray(calls)) throw new UsageError("callMany needs an array of calls");
    return executeBatch(this.#env, session, calls, options);
  }

  /** A copy of the tool table and the disabled set; the tools themselves are shared. */
  clone(): ToolBox {
    const copy = new ToolBox(this.#options);
    copy.#tools = new Map(this.#tools);
    copy.#disabled = new Set(this.#disabled);
    copy.#hooks.before.push(...this.#hooks.before);
    copy.#hooks.after.push(...this.#hooks.after);
    return copy;
  }
}

function assertSession(session: unknown): asserts session is Session {
  if (!(session instanceof Session)) {
    throw new UsageError("ToolBox calls need a Session as their first argument: new Session({ workspace })");
  }
}
