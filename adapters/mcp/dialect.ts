/**
 * The `mcp` dialect: the tool list of an MCP `tools/list` result, with
 * annotations from each tool's metadata. It needs nothing from the MCP SDK, so
 * `schemas("mcp")` works without loading it.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import type { JsonSchema } from "@toolfence/core";
import { outputJsonSchema } from "@toolfence/core";
import { SchemaDialectError } from "../dialect_error.ts";

/** MCP's tool annotations (hints for the client, never guarantees). */
export interface McpToolAnnotations {
  /** A human-readable title. */
  title: string;
  /** The tool does not change its environment. */
  readOnlyHint: boolean;
  /** The tool may destroy data (meaningful when not read-only). */
  destructiveHint: boolean;
  /** Repeating a call with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** The tool reaches beyond the workspace (the network, say). */
  openWorldHint: boolean;
}

/** A tool as `tools/list` lists it. */
export interface McpToolSpec {
  /** Tool name. */
  name: string;
  /** A human-readable title. */
  title: string;
  /** Tool description. */
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: JsonSchema & { type: "object" };
  /** Hints from the tool's metadata. */
  annotations: McpToolAnnotations;
  /**
   * JSON Schema of `structuredContent`, for a tool that declares `output`:
   * the tool's output, or {@linkcode CUT_OUTPUT_SCHEMA} when it was cut.
   */
  outputSchema?: JsonSchema & { type: "object" };
}

/**
 * The `structuredContent` of a call whose output was over the cap: what the
 * model read (head and tail, with the marker), how much was cut, and the
 * artifact that holds the whole output (checked against the tool's schema
 * before the cut), readable as an MCP resource or with `read_artifact`.
 * Every advertised `outputSchema` admits it beside the tool's own schema, so
 * that the cap holds for clients that read `structuredContent` as well.
 */
export const CUT_OUTPUT_SCHEMA: JsonSchema & { type: "object" } = Object.freeze({
  type: "object",
  description: "The output was over the size cap: text is its head and tail; the whole output is the artifact.",
  properties: {
    truncated: { const: true },
    text: { type: "string", description: "What the model read: the output's head and tail, with a marker." },
    omitted: { type: "integer", minimum: 1, description: "How many characters were cut." },
    artifact: {
      type: "object",
      properties: {
        id: { type: "string", pattern: "^sha256:[0-9a-f]{64}$", description: "For read_artifact." },
        uri: { type: "string", pattern: "^artifact://sha256/[0-9a-f]{64}$", description: "The MCP resource." },
      },
      required: ["id", "uri"],
      additionalProperties: false,
    },
  },
  required: ["truncated", "text", "omitted", "artifact"],
  additionalProperties: false,
}) as JsonSchema & { type: "object" };

// Output schemas are converted once per schema object (tools/list asks often).
const advertised = new WeakMap<object, JsonSchema & { type: "object" }>();

/**
 * The `outputSchema` MCP advertises for a tool: `undefined` when it declares
 * no `output`, else its output's JSON Schema or {@linkcode CUT_OUTPUT_SCHEMA}.
 * Throws `SchemaDialectError` when the output is not an object schema.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { mcpOutputSchema } from "@toolfence/adapters/mcp";
 * const stat = tool({
 *   name: "stat", description: "Size.", input: v.object({}), output: v.strictObject({ size: v.number() }),
 *   run: () => ({ size: 1 }),
 * });
 * console.log(mcpOutputSchema(stat)?.anyOf?.length); // 2
 * ```
 */
export function mcpOutputSchema(t: AnyTool): (JsonSchema & { type: "object" }) | undefined {
  const output = t.output;
  if (output === undefined) return undefined;
  let schema = advertised.get(output);
  if (schema === undefined) {
    try {
      schema = { type: "object", anyOf: [outputJsonSchema(output), structuredClone(CUT_OUTPUT_SCHEMA)] };
    } catch (error) {
      throw new SchemaDialectError("mcp", t.name, "/outputSchema", (error as Error).message);
    }
    advertised.set(output, schema);
  }
  return structuredClone(schema);
}

/**
 * "read_file" → "Read file": a title for tools that do not give one.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { titleOf } from "@toolfence/adapters/mcp";
 * console.log(titleOf({ name: "read_file" } as never)); // "Read file"
 * ```
 */
export function titleOf(t: AnyTool): string {
  const given = (t as { title?: unknown }).title;
  if (typeof given === "string" && given) return given;
  const words = t.name.replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * The annotations of a tool. Undeclared hints take the cautious side where
 * MCP's defaults do: a tool that is not read-only may destroy data, and one
 * that does not declare its permissions (or declares `net`) may reach the
 * open world.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { mcpAnnotations } from "@toolfence/adapters/mcp";
 * console.log(mcpAnnotations({ name: "read_file", readOnly: true, permissions: ["read"] } as never));
 * // { title: "Read file", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
 * ```
 */
export function mcpAnnotations(t: AnyTool): McpToolAnnotations {
  const readOnly = t.readOnly === true;
  return {
    title: titleOf(t),
    readOnlyHint: readOnly,
    destructiveHint: readOnly ? false : (t.destructive ?? true),
    idempotentHint: t.idempotent ?? readOnly,
    openWorldHint: t.openWorld ?? (t.permissions === undefined || t.permissions.includes("net")),
  };
}

/**
 * The `tools` array of a `tools/list` result, with `outputSchema` for the
 * tools that declare `output` (see {@linkcode mcpOutputSchema}). Throws
 * `SchemaDialectError` when a tool's input or output schema is not an object
 * schema (MCP requires both to be).
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { mcpTools } from "@toolfence/adapters/mcp";
 * const echo = tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), readOnly: true, run: (a) => a.text });
 * console.log(mcpTools([echo])[0].annotations.readOnlyHint); // true
 * ```
 */
export function mcpTools(tools: readonly AnyTool[]): McpToolSpec[] {
  return tools.map((t) => {
    const inputSchema = structuredClone(t.inputSchema);
    if (inputSchema.type !== "object") {
      throw new SchemaDialectError("mcp", t.name, "/type", 'MCP tools take an object schema (type: "object")');
    }
    delete inputSchema.$schema;
    const outputSchema = mcpOutputSchema(t);
    return {
      name: t.name,
      title: titleOf(t),
      description: t.description,
      inputSchema: inputSchema as McpToolSpec["inputSchema"],
      annotations: mcpAnnotations(t),
      ...(outputSchema ? { outputSchema } : {}),
    };
  });
}
