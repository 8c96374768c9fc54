/**
 * The toolbox: the tool table, enabling and disabling, listing per model and
 * fence, schemas per dialect, and the call entry points.
 *
 * @module
 */

import process from "node:process";
import { ToolNameConflictError, UsageError } from "./errors.ts";
import {
  type AnyTool,
  assertToolName,
  isTool,
  type ObjectInputSchema,
  type Tool,
  tool as defineTool,
  type ToolDefinition,
  type ToolMetadata,
} from "./tool.ts";
import { SessionBase } from "./session.ts";
import type { ToolResult } from "./result.ts";
import type { AfterBatchHook, AfterCallHook, BeforeCallHook, HookSet } from "./hooks.ts";
import {
  type BatchCall,
  type BatchOptions,
  type BatchResult,
  type CallOptions,
  DEFAULT_GRACE_MS,
  DEFAULT_MAX_OUTPUT_CHARS,
  executeCall,
  type ExecutionEnvironment,
  NO_CALL_OPTIONS,
} from "./executor.ts";
import { executeBatch } from "./batch.ts";
import { type SubagentToolsFactory, toolGroup, type ToolGroups } from "./groups.ts";
import { type Dialect, dialectByName, type Dialects, jsonSchemaDialect } from "./dialects.ts";
import { fnmatch } from "./_fnmatch.ts";
import { toolDeclaration } from "./_tool_declaration.ts";
import { fromFluxTool, isFluxTool } from "./flux_tool.ts";
import { type Fence, OPEN_FENCE } from "./fence.ts";
import { fencePlacesOf, missingToolGrants } from "./_tool_needs.ts";

/** Names of the two sub-agent tools. */
export const SUBAGENT_TOOL_NAMES: readonly string[] = ["agent_run", "agent_run_parallel"];

/** Flux's built-in tools and the tools of ours they answer as, after `withDefaults()`: alias to tool name. */
export const FLUX_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  shell: "bash",
  file_read: "read_file",
  file_write: "write_file",
});

/** Options of a {@linkcode ToolBox}. */
export interface ToolBoxOptions {
  /** Cap on model-facing output characters. Default 40,000. */
  maxOutputChars?: number;
  /** How long a timed-out or cancelled tool gets to settle. Default 100 ms. */
  graceMs?: number;
  /** The groups {@linkcode ToolBox.withDefaults} knows by name. Default none. */
  groups?: ToolGroups;
  /** Makes the sub-agent tools for {@linkcode ToolBox.withSubagents}. Default none. */
  subagents?: SubagentToolsFactory;
  /** The dialects {@linkcode ToolBox.schemas} knows by name, besides `json-schema`. Default none. */
  dialects?: Dialects;
  /** The fence {@linkcode ToolBox.list} consults when given none. Default: a fence that closes nothing. */
  fence?: Fence;
  /**
   * Give each namespaced tool (`server__read_file`) its short name
   * (`read_file`) as an alias while no tool or other alias has it (qitos's
   * `auto_short_aliases`). Default false, unlike qitos: in a security library
   * a model's `delete` should not quietly reach some server's `x__delete`.
   */
  autoShortAliases?: boolean;
}

/** Which tools {@linkcode ToolBox.list} returns. */
export interface ListOptions {
  /** The model's capabilities; tools requiring others are left out. Default: the session's, else none. */
  capabilities?: readonly string[];
  /** The fence; tools needing what it does not grant are left out. Default: the session's, else the toolbox's. */
  fence?: Fence;
  /**
   * The session the tools will be called in: its workspace and temp folder are
   * where the tools' `workspace` and `temp` needs point. Without it those count
   * as missing only when the fence closes reads or writes entirely.
   */
  session?: SessionBase;
}

/**
 * A set of tools and the one entry point for calling them.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { ToolBox } from "@toolfence/core";
 * import { Session } from "@toolfence/policy";
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
  /** Alias -> registered name; an alias is never also a registered name. */
  #aliases = new Map<string, string>();
  readonly #hooks: HookSet = { before: [], after: [], afterBatch: [] };
  readonly #options: ToolBoxOptions & Required<Pick<ToolBoxOptions, "maxOutputChars" | "graceMs">>;
  readonly #env: ExecutionEnvironment;

  /** Creates an empty toolbox. */
  constructor(options: ToolBoxOptions = {}) {
    this.#options = {
      ...options,
      maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
      graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    };
    this.#env = {
      lookup: (name) => {
        const found = this.#tools.get(name);
        if (found !== undefined) return this.#disabled.has(name) ? undefined : found;
        const target = this.#aliases.get(name);
        return target === undefined || this.#disabled.has(target) ? undefined : this.#tools.get(target);
      },
      enabledNames: () => [...this.#tools.keys()].filter((n) => !this.#disabled.has(n)),
      isDisabled: (name) => this.#disabled.has(this.#aliases.get(name) ?? name) && this.has(name),
      hooks: this.#hooks,
      maxOutputChars: this.#options.maxOutputChars,
      graceMs: this.#options.graceMs,
    };
  }

  /**
   * Adds tools, given one by one or in arrays. A second tool with a taken
   * name throws {@linkcode ToolNameConflictError} unless one of the two has
   * `override`; the one with `override` is kept, whichever came first (a
   * later `withDefaults()` does not replace an override; of two overrides,
   * the later). `register(tool, name, meta?)` (qitos's form) registers the
   * tool under another name, with metadata overridden by `meta`; the tool
   * itself is unchanged.
   */
  register(tool: AnyTool, name: string, meta?: Partial<ToolMetadata>): this;
  /** Adds tools, one by one or in arrays. */
  register(...tools: (AnyTool | readonly AnyTool[])[]): this;
  register(...items: unknown[]): this {
    if (typeof items[1] === "string") {
      this.#add(renamed(items[0], items[1], items[2]));
      return this;
    }
    for (const item of items) {
      if (Array.isArray(item)) { for (const t of item) this.#add(t); }
      else this.#add(item);
    }
    return this;
  }

  /** Adds every tool of an iterable (Flux's `register_many`). */
  registerMany(tools: Iterable<AnyTool>): this {
    for (const t of tools) this.#add(t);
    return this;
  }

  #add(given: unknown): void {
    // A Flux class (name, description, parameters, execute(ctx, args)) registers as it is.
    const t = isFluxTool(given) ? fromFluxTool(given) : given;
    if (!isTool(t)) {
      throw new TypeError(
        `Not a tool: ${
          JSON.stringify((t as { name?: unknown })?.name ?? t)
        }; a tool has a valid name, a description, an inputSchema and execute()`,
      );
    }
    // A class tool states its own fields; they are held to its needs as a tool() definition's are.
    toolDeclaration(t.name, t as ToolMetadata<never>);
    const existing = this.#tools.get(t.name);
    if (existing && !existing.override && !t.override) throw new ToolNameConflictError(t.name);
    // An override wins whichever came first: a built-in group registered after it does not replace it.
    if (existing?.override && !t.override) {
      tellOverride(`kept the override of "${t.name}" over a later tool of that name`);
      return;
    }
    if (existing) tellOverride(`"${t.name}" was replaced by ${t.override ? "an override" : "a later tool"}`);
    // A registered name wins over an alias of the same name.
    this.#aliases.delete(t.name);
    this.#tools.set(t.name, t);
    if (this.#options.autoShortAliases) this.#refreshShortAliases();
  }

  /**
   * Makes `alias` call the tool registered as `target`. The alias is never
   * listed: every dialect shows the tool once, under its own name, and a call
   * by either name runs the same tool (the result's `toolName` is the tool's
   * name, `metadata.calledAs` the alias).
   */
  alias(alias: string, target: string): this {
    assertToolName(alias);
    if (!this.#tools.has(target)) throw new UsageError(`Cannot alias "${alias}" to "${target}": no such tool`);
    if (this.#tools.has(alias)) throw new ToolNameConflictError(alias);
    const taken = this.#aliases.get(alias);
    if (taken !== undefined && taken !== target) throw new ToolNameConflictError(alias);
    this.#aliases.set(alias, target);
    return this;
  }

  /** The aliases, alias to tool name. */
  aliases(): Record<string, string> {
    return Object.fromEntries(this.#aliases);
  }

  #autoAliases = new Set<string>();

  #refreshShortAliases(): void {
    for (const alias of this.#autoAliases) this.#aliases.delete(alias);
    this.#autoAliases.clear();
    const byShort = new Map<string, string[]>();
    for (const name of this.#tools.keys()) {
      const at = name.lastIndexOf("__");
      if (at <= 0 || at + 2 >= name.length) continue;
      const short = name.slice(at + 2);
      byShort.set(short, [...(byShort.get(short) ?? []), name]);
    }
    for (const [short, names] of byShort) {
      if (names.length !== 1 || this.#tools.has(short) || this.#aliases.has(short)) continue;
      this.#aliases.set(short, names[0]);
      this.#autoAliases.add(short);
    }
  }

  /** Whether a tool (or alias) of this name is registered, enabled or not. */
  has(name: string): boolean {
    return this.#tools.has(name) || this.#aliases.has(name);
  }

  /** Removes a tool (by its name or an alias) and its aliases; whether there was one. */
  remove(name: string): boolean {
    const target = this.#tools.has(name) ? name : this.#aliases.get(name);
    if (target === undefined) return false;
    this.#tools.delete(target);
    this.#disabled.delete(target);
    for (const [alias, to] of this.#aliases) if (to === target) this.#aliases.delete(alias);
    if (this.#options.autoShortAliases) this.#refreshShortAliases();
    return true;
  }

  /** Removes every tool and alias (hooks stay). */
  clear(): this {
    this.#tools.clear();
    this.#disabled.clear();
    this.#aliases.clear();
    this.#autoAliases.clear();
    return this;
  }

  /** Defines a tool with {@linkcode defineTool tool()} and registers it; returns the tool. */
  tool<S extends ObjectInputSchema, T = unknown>(
    definition: ToolDefinition<S, T>,
  ): Tool<NonNullable<S["~standard"]["types"]>["output"]> {
    const t = defineTool(definition);
    this.register(t);
    return t;
  }

  /**
   * Registers groups by name (`fs`, `search`, ...) from the toolbox's `groups`
   * option; no argument registers all of them. Flux's `shell`, `file_read`
   * and `file_write` then answer as aliases of `bash`, `read_file` and
   * `write_file` ({@linkcode FLUX_ALIASES}), where those are registered and
   * the names are free.
   */
  withDefaults(...groups: string[]): this {
    const known = this.#options.groups ?? {};
    for (const group of groups.length ? groups : Object.keys(known)) this.register(...toolGroup(known, group));
    // Flux's built-in tools answer as aliases of ours, where ours are here and the names are free.
    for (const [alias, target] of Object.entries(FLUX_ALIASES)) {
      if (this.#tools.has(target) && !this.#tools.has(alias) && !this.#aliases.has(alias)) this.alias(alias, target);
    }
    return this;
  }

  /**
   * Registers `agent_run` and `agent_run_parallel` (the `subagents` option)
   * with a getter that makes sub-agents; without one (xun's default), each
   * sub-agent is the session's model (`new Session({ model })`) working with a
   * copy of this toolbox, and a session without a model fails `no_model`.
   */
  withSubagents(getter?: unknown): this {
    const factory = this.#options.subagents;
    if (!factory) {
      throw new UsageError(
        "This ToolBox has no sub-agent tools; pass { subagents } to it, or use the ToolBox of @toolfence/toolfence",
      );
    }
    return this.register(...factory(getter, this));
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

  /** A registered tool by name or alias, enabled or not. */
  get(name: string): AnyTool | undefined {
    return this.#tools.get(name) ?? this.#tools.get(this.#aliases.get(name) ?? "");
  }

  /** Whether a tool is registered and enabled (by name or alias). */
  isEnabled(name: string): boolean {
    const target = this.#tools.has(name) ? name : this.#aliases.get(name);
    return target !== undefined && this.#tools.has(target) && !this.#disabled.has(target);
  }

  /**
   * The enabled tools whose required capabilities are met and whose
   * declared `needs` the fence grants (a tool that would be refused with
   * `fence_denied` is not offered), in registration order. Given a session
   * (`list(session)`, the same as `list({ session })`), the tools that session
   * can call: its capabilities, its fence and its workspace.
   */
  list(options: ListOptions | SessionBase = {}): AnyTool[] {
    const listable = this.#listable(options);
    return [...this.#tools.values()].filter(listable);
  }

  /**
   * The tool `name` (or alias) when {@linkcode ToolBox.list} with the same
   * options would offer it, else undefined: what a server that may only run
   * the tools it lists asks of each call, without listing them all.
   */
  listed(name: string, options: ListOptions | SessionBase = {}): AnyTool | undefined {
    const tool = this.get(name);
    return tool !== undefined && this.#listable(options)(tool) ? tool : undefined;
  }

  // The test of list(): enabled, its required capabilities held, its needs granted by the fence.
  #listable(options: ListOptions | SessionBase): (tool: AnyTool) => boolean {
    if (options instanceof SessionBase) options = { session: options };
    const capabilities = new Set(options.capabilities ?? options.session?.capabilities ?? []);
    const fence = options.fence ?? options.session?.policy.fence ?? this.#options.fence ?? OPEN_FENCE;
    const places = options.session ? fencePlacesOf(options.session) : undefined;
    return (t) =>
      !this.#disabled.has(t.name) &&
      (t.requires ?? []).every((c) => capabilities.has(c)) &&
      missingToolGrants(t, fence, places).length === 0;
  }

  /**
   * The listed tools in a provider's exact wire format: a dialect value
   * (`openAIChat` from `@toolfence/adapters`), or the name of one in the
   * toolbox's `dialects` option. Default `json-schema`. Throws when a schema
   * cannot be expressed in the dialect.
   */
  schemas(
    dialect: Dialect | string = jsonSchemaDialect,
    options: ListOptions & Record<string, unknown> = {},
  ): unknown[] {
    const chosen = typeof dialect !== "string"
      ? dialect
      : dialect === jsonSchemaDialect.name
      ? jsonSchemaDialect
      : dialectByName(this.#options.dialects ?? {}, dialect);
    return chosen.render(this.list(options), options);
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
  call<T = unknown>(
    session: SessionBase,
    name: string,
    args?: unknown,
    options?: CallOptions<T>,
  ): Promise<ToolResult> {
    assertSession(session);
    return executeCall(this.#env, session, name, args, options ?? NO_CALL_OPTIONS);
  }

  /** Runs a batch of calls (see {@linkcode BatchOptions}); results in declaration order. */
  callMany<T = unknown>(
    session: SessionBase,
    calls: readonly BatchCall[],
    options: BatchOptions<T> = {},
  ): Promise<BatchResult> {
    assertSession(session);
    if (!Array.isArray(calls)) throw new UsageError("callMany needs an array of calls");
    return executeBatch(this.#env, session, calls, options);
  }

  /** A copy of the tool table and the disabled set; the tools themselves are shared. */
  clone(): ToolBox {
    // The same class, so a subclass's wiring survives the copy.
    const copy = new (this.constructor as new (options: ToolBoxOptions) => ToolBox)(this.#options);
    copy.#tools = new Map(this.#tools);
    copy.#disabled = new Set(this.#disabled);
    copy.#aliases = new Map(this.#aliases);
    copy.#autoAliases = new Set(this.#autoAliases);
    copy.#hooks.before.push(...this.#hooks.before);
    copy.#hooks.after.push(...this.#hooks.after);
    return copy;
  }
}

/** The environment switch that prints which tools were overridden (xun's). */
export const TOOL_OVERRIDE_INFO_ENV = "_XUN_INFO_TOOL_OVERRIDE";

// With the switch set (not empty, not 0), one line on stderr per override decided; a process that may not read the
// variable does not print.
function tellOverride(line: string): void {
  let flag: string | undefined;
  try {
    flag = process.env[TOOL_OVERRIDE_INFO_ENV];
  } catch {
    return;
  }
  if (flag && flag !== "0") process.stderr.write(`toolfence: tool override: ${line}\n`);
}

function assertSession(session: unknown): asserts session is SessionBase {
  if (!(session instanceof SessionBase)) {
    throw new UsageError("ToolBox calls need a Session as their first argument: new Session({ workspace })");
  }
}

/** The tool `tool` under `name`, with `meta` over its metadata; the original is untouched. */
function renamed(given: unknown, name: string, meta: unknown): AnyTool {
  const tool = isFluxTool(given) ? fromFluxTool(given) : given;
  if (!isTool(tool)) throw new TypeError(`Not a tool: ${JSON.stringify((tool as { name?: unknown })?.name ?? tool)}`);
  assertToolName(name);
  if (meta !== undefined && (typeof meta !== "object" || meta === null || Array.isArray(meta))) {
    throw new TypeError(
      `register(${JSON.stringify(tool.name)}, ${JSON.stringify(name)}, meta): meta must be an object`,
    );
  }
  const overrides = { ...(meta as Record<string, unknown> | undefined) };
  for (const key of ["name", "description", "inputSchema", "input", "execute"]) {
    if (key in overrides) throw new TypeError(`register(..., meta): meta cannot set ${key}`);
  }
  // The copy inherits everything else; `execute` runs on the original, so a class tool keeps one state.
  const original = tool;
  const descriptors: PropertyDescriptorMap = {
    name: { value: name, enumerable: true },
    execute: { value: (args: unknown, ctx: unknown) => original.execute(args, ctx as never), enumerable: true },
  };
  for (const [key, value] of Object.entries(overrides)) descriptors[key] = { value, enumerable: true };
  return Object.freeze(Object.create(tool, descriptors));
}
