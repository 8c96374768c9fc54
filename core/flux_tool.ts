/**
 * Flux's Tool protocol: a class with `name`, `description`, a JSON Schema
 * (`parameters`, or `parametersSchema` as Flux's `parameters_schema`) and
 * `execute(ctx, args)`, context first. {@linkcode fromFluxTool} makes it a
 * tool as it is; `ToolBox.register` does so for any such object.
 *
 * @module
 */

import type { AnyTool } from "./tool.ts";
import { isTool } from "./tool.ts";
import type { ToolContext } from "./context.ts";

/** A tool written to Flux's protocol. */
export interface FluxTool {
  /** Tool name. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the arguments (Flux's `parameters_schema`); `parametersSchema` is read as well. */
  readonly parameters?: Record<string, unknown>;
  /** JSON Schema of the arguments, as Flux names it in TypeScript. */
  readonly parametersSchema?: Record<string, unknown>;
  /** Runs the tool: the context first, then the arguments, as in Flux. */
  execute(ctx: ToolContext, args: Record<string, unknown>): unknown;
}

function schemaOf(value: Partial<FluxTool>): Record<string, unknown> | undefined {
  const schema = value.parameters ?? value.parametersSchema;
  return typeof schema === "object" && schema !== null && !Array.isArray(schema) ? schema : undefined;
}

/**
 * Whether a value follows Flux's protocol and is not already a tool of ours
 * (it has no `inputSchema`).
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { isFluxTool } from "@toolfence/core";
 * console.log(isFluxTool({ name: "t", description: "d", parameters: { type: "object" }, execute: () => "" })); // true
 * ```
 */
export function isFluxTool(value: unknown): value is FluxTool {
  if (typeof value !== "object" || value === null || isTool(value)) return false;
  const t = value as Partial<FluxTool>;
  return typeof t.name === "string" && typeof t.description === "string" && schemaOf(t) !== undefined &&
    typeof t.execute === "function";
}

/**
 * A Flux tool as one of ours: the same name, description and schema, its
 * `execute` called with the context first (and on the original object, so a
 * class keeps one state). Flux's `{ output, success, metadata }` results are
 * read as every returned outcome is.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { fromFluxTool } from "@toolfence/core";
 * const shout = fromFluxTool({
 *   name: "shout", description: "Shout.", parameters: { type: "object", properties: { text: { type: "string" } } },
 *   execute: (_ctx, args) => ({ output: String(args.text).toUpperCase(), success: true }),
 * });
 * console.log(shout.inputSchema.type); // object
 * ```
 */
export function fromFluxTool(flux: FluxTool): AnyTool {
  const original = flux;
  return Object.freeze(Object.create(flux, {
    inputSchema: { value: schemaOf(flux), enumerable: true },
    execute: {
      value: (args: Record<string, unknown>, ctx: ToolContext) => original.execute(ctx, args),
      enumerable: true,
    },
  })) as AnyTool;
}
