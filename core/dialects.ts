/**
 * The registry of schema dialects: how the tools array is rendered for one
 * provider's API. The core ships `json-schema`; adapters register the others.
 *
 * @module
 */

import type { AnyTool } from "./tool.ts";
import type { JsonSchema } from "./schema.ts";

/** Renders tools for one API; throws when a tool's schema cannot be expressed. */
export type DialectRenderer = (tools: readonly AnyTool[], options?: Record<string, unknown>) => unknown[];

/** The plain form: name, description and JSON Schema input. */
export interface JsonSchemaToolSpec {
  /** Tool name. */
  name: string;
  /** Tool description, verbatim. */
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: JsonSchema;
}

const dialects = new Map<string, DialectRenderer>([
  ["json-schema", (tools) =>
    tools.map((t): JsonSchemaToolSpec => ({
      name: t.name,
      description: t.description,
      inputSchema: structuredClone(t.inputSchema),
    }))],
]);

/**
 * Registers (or replaces) a dialect.
 *
 * @example
 * ```ts
 * import { registerDialect } from "./dialects.ts";
 * registerDialect("names-only", (tools) => tools.map((t) => t.name));
 * ```
 */
export function registerDialect(name: string, renderer: DialectRenderer): void {
  dialects.set(name, renderer);
}

/**
 * The renderer of a dialect; throws for an unknown dialect, naming the known ones.
 *
 * @example
 * ```ts
 * import { dialectRenderer } from "./dialects.ts";
 * console.log(typeof dialectRenderer("json-schema"));
 * ```
 */
export function dialectRenderer(name: string): DialectRenderer {
  const renderer = dialects.get(name);
  if (!renderer) {
    throw new RangeError(`Unknown dialect "${name}"; known: ${[...dialects.keys()].join(", ")}`);
  }
  return renderer;
}
