/**
 * Defining tools: `tool()` for valibot-typed functions, and the `Tool` protocol
 * that any object (a class instance, say) can satisfy.
 *
 * @module
 */

import type { ToolContext } from "./context.ts";
import type { Effect } from "./effects.ts";
import type { ToolResult } from "./result.ts";
import type { SessionBase } from "./session.ts";
import { type AnySchema, isObjectSchema } from "./_valibot_walk.ts";
import { inputJsonSchema, type JsonSchema, outputJsonSchema, type StandardSchema } from "./schema.ts";
import { assertEffectNames, toolDeclaration } from "./_tool_declaration.ts";
import { isStandardSchema, isValibotSchema } from "./_standard_schema.ts";

/** What a tool touches; the fence and `main.ts flags` read it. */
export type ToolPermission = "read" | "write" | "run" | "net" | "env" | "sys";

/**
 * A place a tool reads or writes: the session's workspace folder, the folder
 * the session temp dir is made in (`temp`), an absolute path, or a path
 * relative to the workspace.
 */
export type ToolPlace = "workspace" | "temp" | (string & Record<never, never>);

/**
 * Exactly what a tool needs from the runtime's own permissions (Deno's
 * `--allow-*` flags, Node's permission model). The fence checks it before the
 * tool runs, `ToolBox.list()` leaves out a tool it is not granted, and
 * `toolfence flags` prints it. Every list may hold `"*"` (`ANY_TARGET`): the
 * whole permission, e.g. `net: ["*"]` for `--allow-net`.
 */
export interface ToolNeeds {
  /** Places it reads. */
  read?: readonly ToolPlace[];
  /** Places it writes. */
  write?: readonly ToolPlace[];
  /** Programs it starts, by name as found on PATH (`bash`) or absolute path; `deno` is the running Deno. */
  run?: readonly string[];
  /** System facts it reads, as Deno's `--allow-sys` kinds (`uid`, `hostname`, `osRelease`, `cpus`, ...). */
  sys?: readonly string[];
  /** Environment variables it reads. */
  env?: readonly string[];
  /** Hosts it contacts, `host` or `host:port`. */
  net?: readonly string[];
  /**
   * Stops the process groups it starts. Deno lets a program signal processes
   * only with `--allow-run` for every program; Node with `--allow-child-process`.
   */
  signal?: boolean;
}

/** When and how a tool that threw is run again. */
export interface RetryPolicy {
  /** Total attempts including the first; at least 1. Default `maxRetries + 1`. */
  maxAttempts?: number;
  /**
   * Runs after the first (qitos's `max_retries`): `maxRetries: 2` is
   * `maxAttempts: 3`. When both are given, the total is the smaller.
   */
  maxRetries?: number;
  /** Delay before the second attempt; doubled each time. Default 100. */
  backoffMs?: number;
  /** Upper bound of the delay. Default 5000. */
  maxBackoffMs?: number;
  /** Randomise each delay by up to this fraction (true = 0.5). Default none. */
  jitter?: boolean | number;
  /** Retry only when this returns true for the thrown error. Default: always. */
  retryIf?: (error: unknown, attempt: number) => boolean;
}

/** What a tool's `onFailure` hook sees: the failed result and the arguments it ran with. */
export interface ToolFailureEvent<A = Record<string, unknown>> {
  /** The calling session. */
  session: SessionBase;
  /** The result that ended the call (any status but `success`). */
  result: ToolResult;
  /** The validated arguments; absent when validation refused them. */
  args?: A;
}

/**
 * A tool's own failure hook: runs once when a call of the tool ends with any
 * status but `success`, before the toolbox's and session's after-call hooks.
 * It may return a replacement result; what it throws is kept in
 * `metadata.onFailureError` and the result stands.
 */
export type OnFailureHook<A = Record<string, unknown>> = (
  event: ToolFailureEvent<A>,
) => void | ToolResult | Promise<void | ToolResult>;

/** Metadata every tool may carry. */
export interface ToolMetadata<A = Record<string, unknown>> {
  /**
   * Has no side effects (MCP readOnlyHint); concurrency-safe unless said
   * otherwise. With `needs`, `tool()` derives it (true when the effects are at
   * most `reads`); stated `true` beside `writes_files` or `network` is refused.
   */
  readOnly?: boolean;
  /** May destroy data (MCP destructiveHint). */
  destructive?: boolean;
  /** Calling twice with the same arguments has no further effect (MCP idempotentHint). */
  idempotent?: boolean;
  /** Reaches beyond the workspace, e.g. the network (MCP openWorldHint). */
  openWorld?: boolean;
  /** May run beside other calls in a parallel batch; defaults to `readOnly`. */
  concurrencySafe?: boolean;
  /** Ask the host before every call, or when this function says so. */
  needsApproval?: boolean | ((args: A) => boolean | Promise<boolean>);
  /** Deadline of one attempt; a call may override it. */
  timeoutMs?: number;
  /** Retries of thrown errors. */
  retry?: RetryPolicy;
  /** Model capabilities the tool needs, e.g. `["vision"]`. */
  requires?: readonly string[];
  /** May replace an already registered tool of the same name (or be replaced). */
  override?: boolean;
  /**
   * What the tool touches: read, write, run, net, env, sys (coarse;
   * {@linkcode ToolMetadata.needs} says exactly). With `needs`, `tool()`
   * derives it, and a stated permission that `needs` does not ask for is
   * refused; an unknown name is refused with the valid ones.
   */
  permissions?: readonly ToolPermission[];
  /**
   * What the tool cannot run without: the one declaration of what it touches.
   * Checked before every call, a tool missing any of it is not listed, and
   * `toolfence flags` prints it; `tool()` derives `permissions`, `effects` and
   * `readOnly` from it.
   */
  needs?: ToolNeeds;
  /** What the tool uses when granted and does without otherwise (bubblewrap for `bash`); printed by `flags`, never required. */
  optionalNeeds?: ToolNeeds;
  /** Cap on model-facing output characters; defaults to the toolbox's. */
  maxOutputChars?: number;
  /**
   * What the tool may do to the world: `[]` (nothing), `reads`, `writes_files`,
   * `runs_processes`, `network`. Every result carries it as `declaredEffects`
   * and derives `effectState` from it; a tool that declares any but `reads` is
   * retried only when it is `idempotent` or the caller gives an `idempotencyKey`.
   * Undeclared is `no_effect_declared`, not "no effect". With `needs`,
   * `tool()` derives it (`read`, `sys`, `env`: `reads`; `write`:
   * `writes_files`; `run`: `runs_processes`; `net`: `network`); a tool may
   * state fewer (one that follows a job others start only reads), never an
   * effect its needs do not allow (a tool that runs programs may state any).
   */
  effects?: readonly Effect[];
  /**
   * The tool reports every file it changes through `ctx.recordFileChange`
   * (every built-in writer does), so that a call that recorded none changed
   * none. Without it an empty `filesystemChanges` says nothing of what the
   * tool did, and a successful call that declares `writes_files` is `applied`.
   */
  recordsFileChanges?: boolean;
  /**
   * Its calls build on what its session keeps between calls (a background
   * job, a browser page, an artifact): a server whose sessions last one
   * request (the MCP server's `--stateless` mode) does not offer it, as each
   * call would find nothing of the last.
   */
  sessionState?: boolean;
  /** Runs when a call of this tool fails (see {@linkcode OnFailureHook}). */
  onFailure?: OnFailureHook<A>;
  /**
   * The output's schema (valibot, zod 4, ArkType: any Standard Schema whose
   * library converts it to JSON Schema, one JSON Schema can express). The JSON
   * output is checked against it on the way out, whole, before any cut: a
   * mismatch ends the call as `invalid_output` and the output is never passed
   * on. MCP advertises it as `outputSchema` and returns the output as
   * `structuredContent` (wrapped as `{ result }` unless the schema admits only
   * objects).
   */
  output?: StandardSchema;
}

/**
 * The tool protocol: anything with these members is a tool. Class tools give
 * `inputSchema` as JSON Schema and are validated against it; tools made with
 * {@linkcode tool} also carry their schema (valibot, zod 4, ArkType) in `input`.
 */
export interface Tool<A = Record<string, unknown>> extends ToolMetadata<A> {
  /** Unique name, `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: string;
  /** What the tool does, verbatim to the model. */
  readonly description: string;
  /** JSON Schema of the arguments object. */
  readonly inputSchema: JsonSchema;
  /** The Standard Schema (valibot, zod 4, ArkType), for tools defined with {@linkcode tool}. */
  readonly input?: StandardSchema;
  /** Runs the tool with validated arguments. */
  execute(args: A, ctx: ToolContext): unknown;
}

/** A tool of any argument type, as stored in a toolbox. */
// deno-lint-ignore no-explicit-any
export type AnyTool = Tool<any>;

/**
 * The pattern every tool name must match (accepted by every provider), but for
 * `__proto__`: the adapters key tool sets by name (the AI SDK's, Mastra's), and
 * on Node `set["__proto__"] = tool` sets the object's prototype, so the tool
 * would be listed and never offered.
 */
export const TOOL_NAME_PATTERN: RegExp = /^(?!__proto__$)[a-zA-Z0-9_-]{1,64}$/;

/**
 * An object schema accepted as a tool's input: valibot (the default), zod 4,
 * ArkType, or any Standard Schema whose library converts it to JSON Schema.
 */
export type ObjectInputSchema = StandardSchema<Record<string, unknown>, Record<string, unknown>>;

/** The definition given to {@linkcode tool}. */
export interface ToolDefinition<S extends ObjectInputSchema, T = unknown>
  extends ToolMetadata<NonNullable<S["~standard"]["types"]>["output"]> {
  /** Unique name, `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  /** What the tool does, verbatim. Describe parameters with `v.description()`. */
  description: string;
  /** An object schema: valibot, zod 4 or ArkType. */
  input: S;
  /** The implementation; its arguments are typed from `input`. */
  run(args: NonNullable<S["~standard"]["types"]>["output"], ctx: ToolContext<T>): unknown;
}

/** Options of `tool(fn, options)`: the definition without `run`; `name` defaults to the function's. */
export type ToolFunctionOptions<S extends ObjectInputSchema, T = unknown> =
  & Omit<ToolDefinition<S, T>, "run" | "name">
  & { name?: string };

/** Throws unless `name` is a valid tool name. */
export function assertToolName(name: unknown): asserts name is string {
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Invalid tool name ${
        JSON.stringify(name)
      }: names must match ${TOOL_NAME_PATTERN} (letters, digits, _ and -, 1 to 64 characters, not __proto__)`,
    );
  }
}

/**
 * Defines a tool from an object schema and a function. The schema is
 * valibot's (the default), zod 4's, ArkType's, or any Standard Schema whose
 * library converts it to JSON Schema; the arguments of `run` are inferred
 * from it. The name must match
 * `^[a-zA-Z0-9_-]{1,64}$`; the description is used verbatim.
 *
 * @example Object form
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * const add = tool({
 *   name: "add",
 *   description: "Add two numbers.",
 *   input: v.object({ a: v.number(), b: v.number() }),
 *   readOnly: true,
 *   run: ({ a, b }) => a + b,
 * });
 * ```
 *
 * @example Function form: the name is the function's
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * const shout = tool(function shout({ text }: { text: string }) {
 *   return text.toUpperCase();
 * }, { description: "Upper-case a text.", input: v.object({ text: v.string() }) });
 * ```
 */
export function tool<S extends ObjectInputSchema, T = unknown>(
  definition: ToolDefinition<S, T>,
): Tool<NonNullable<S["~standard"]["types"]>["output"]>;
/** The function form: the tool is named after `fn`; `options` gives its description and input schema. */
export function tool<S extends ObjectInputSchema, T = unknown>(
  fn: (args: NonNullable<S["~standard"]["types"]>["output"], ctx: ToolContext<T>) => unknown,
  options: ToolFunctionOptions<S, T>,
): Tool<NonNullable<S["~standard"]["types"]>["output"]>;
export function tool<S extends ObjectInputSchema, T = unknown>(
  first:
    | ToolDefinition<S, T>
    | ((args: NonNullable<S["~standard"]["types"]>["output"], ctx: ToolContext<T>) => unknown),
  options?: ToolFunctionOptions<S, T>,
): Tool<NonNullable<S["~standard"]["types"]>["output"]> {
  const definition: ToolDefinition<S, T> = typeof first === "function"
    ? { ...(options as ToolFunctionOptions<S, T>), name: options?.name ?? first.name, run: first }
    : first;
  const { name, description, input, run, ...metadata } = definition;
  assertToolName(name);
  if (typeof description !== "string") throw new TypeError(`Tool ${name}: description must be a string`);
  if (typeof run !== "function") throw new TypeError(`Tool ${name}: run must be a function`);
  if (
    !isStandardSchema(input) || (isValibotSchema(input) && !isObjectSchema(input as unknown as AnySchema))
  ) {
    throw new TypeError(
      `Tool ${name}: input must be an object schema: valibot (v.object, v.strictObject or v.looseObject), zod 4 or ArkType`,
    );
  }
  const declaration = toolDeclaration(name, metadata as ToolMetadata<never>);
  let inputSchema: JsonSchema;
  try {
    inputSchema = inputJsonSchema(input);
  } catch (error) {
    throw new TypeError(`Tool ${name}: its input cannot be expressed as JSON Schema: ${(error as Error).message}`);
  }
  if (inputSchema.type !== "object") {
    throw new TypeError(`Tool ${name}: input must be an object schema (its JSON Schema is not of type "object")`);
  }
  if (metadata.output !== undefined) assertOutputSchema(name, metadata.output);
  return Object.freeze({
    ...metadata,
    ...declaration,
    name,
    description,
    input,
    inputSchema,
    execute: run as (args: NonNullable<S["~standard"]["types"]>["output"], ctx: ToolContext) => unknown,
  });
}

// A definition's `output` must be a Standard Schema that JSON Schema can express.
function assertOutputSchema(name: string, output: unknown): void {
  if (!isStandardSchema(output)) throw new TypeError(`Tool ${name}: output must be a valibot, zod 4 or ArkType schema`);
  try {
    outputJsonSchema(output);
  } catch (error) {
    throw new TypeError(`Tool ${name}: its output cannot be advertised as JSON Schema: ${(error as Error).message}`);
  }
}

/**
 * Throws a `TypeError` unless `effects` is an array of known {@linkcode Effect}s.
 *
 * @example
 * ```ts
 * import { assertEffects } from "@toolfence/core";
 * assertEffects("write_file", ["reads", "writes_files"]); // fine
 * try {
 *   assertEffects("write_file", ["write"]);
 * } catch (e) {
 *   console.log((e as Error).message);
 * }
 * ```
 */
export function assertEffects(name: string, effects: unknown): asserts effects is readonly Effect[] {
  assertEffectNames(name, effects);
}

/**
 * Whether a value satisfies the tool protocol: a valid `name`, a string
 * `description`, an object `inputSchema` and an `execute` function.
 *
 * @example
 * ```ts
 * import { isTool } from "@toolfence/core";
 * class Echo {
 *   name = "echo";
 *   description = "Echo the text.";
 *   inputSchema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
 *   execute(args: { text: string }) { return args.text; }
 * }
 * console.log(isTool(new Echo())); // true
 * ```
 */
export function isTool(value: unknown): value is AnyTool {
  if (typeof value !== "object" || value === null) return false;
  const t = value as Partial<AnyTool>;
  return typeof t.name === "string" && TOOL_NAME_PATTERN.test(t.name) && typeof t.description === "string" &&
    typeof t.inputSchema === "object" && t.inputSchema !== null && typeof t.execute === "function";
}

/** Whether a tool may run beside others when no explicit list is given. */
export function isConcurrencySafe(t: AnyTool): boolean {
  if (t.needsApproval) return false;
  return t.concurrencySafe ?? t.readOnly ?? false;
}
