/**
 * Schema dialects as values: how the tools array is rendered for one
 * provider's API. The core ships {@linkcode jsonSchemaDialect}; the provider
 * dialects are values in `@toolfence/adapters`. Nothing registers itself.
 *
 * @module
 */

import type { AnyTool } from "./tool.ts";
import type { JsonSchema } from "./schema.ts";

/**
 * One provider's wire format for the tools array; `render` throws when a
 * tool's schema cannot be expressed in it.
 *
 * @example
 * ```ts
 * import { type Dialect, ToolBox } from "@toolfence/core";
 * const namesOnly: Dialect = { name: "names-only", render: (tools) => tools.map((t) => t.name) };
 * console.log(new ToolBox().schemas(namesOnly)); // []
 * ```
 */
export interface Dialect {
  /** The dialect's name, e.g. `openai-chat`, for messages and lookups. */
  readonly name: string;
  /** Renders the tools; options are the dialect's own (e.g. `strict`). */
  render(tools: readonly AnyTool[], options?: Record<string, unknown>): unknown[];
}

/** Named dialects, for callers that pick one by a string (the command line, `schemas("anthropic")`). */
export type Dialects = Readonly<Record<string, Dialect>>;

/** The plain form: name, description and JSON Schema input. */
export interface JsonSchemaToolSpec {
  /** Tool name. */
  name: string;
  /** Tool description, verbatim. */
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: JsonSchema;
}

/**
 * The core's own dialect: each tool's name, description and JSON Schema.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { jsonSchemaDialect, tool } from "@toolfence/core";
 * const add = tool({ name: "add", description: "Add.", input: v.object({ a: v.number() }), run: ({ a }) => a });
 * console.log(jsonSchemaDialect.render([add]));
 * ```
 */
export const jsonSchemaDialect: Dialect = Object.freeze({
  name: "json-schema",
  render: (tools: readonly AnyTool[]): JsonSchemaToolSpec[] =>
    tools.map((t): JsonSchemaToolSpec => ({
      name: t.name,
      description: t.description,
      inputSchema: structuredClone(t.inputSchema),
    })),
});

/**
 * The dialect named `name` in `dialects`; throws a `RangeError` naming the known ones.
 *
 * @example
 * ```ts
 * import { dialectByName, jsonSchemaDialect } from "@toolfence/core";
 * console.log(dialectByName({ "json-schema": jsonSchemaDialect }, "json-schema").name); // json-schema
 * ```
 */
export function dialectByName(dialects: Dialects, name: string): Dialect {
  const dialect = Object.hasOwn(dialects, name) ? dialects[name] : undefined;
  if (!dialect) {
    throw new RangeError(`Unknown dialect "${name}"; known: ${Object.keys(dialects).join(", ") || "none"}`);
  }
  return dialect;
}
