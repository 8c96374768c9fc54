/**
 * The `mcp` dialect: the tool list of an MCP `tools/list` result, with
 * annotations from each tool's metadata. It needs nothing from the MCP SDK, so
 * `schemas("mcp")` works without loading it.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import type { JsonSchema } from "@toolfence/core";
import { isObjectJsonSchema, outputJsonSchema } from "@toolfence/core";
import { SchemaDialectError } from "../dialect_error.ts";
import { placedAt, toDraft2020 } from "../_draft2020.ts";

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

/** The key an output that is not an object is wrapped in, as MCP's `structuredContent` must be an object. */
export const WRAPPED_OUTPUT_KEY = "result";

interface Advertised {
  schema: JsonSchema & { type: "object" };
  wrapped: boolean;
}

// Output schemas are converted once per schema object (tools/list asks often).
const advertised = new WeakMap<object, Advertised>();

function advertise(t: AnyTool): Advertised | undefined {
  const output = t.output;
  if (output === undefined) return undefined;
  let found = advertised.get(output);
  if (found === undefined) {
    let own: JsonSchema;
    try {
      own = outputJsonSchema(output);
    } catch (error) {
      throw new SchemaDialectError("mcp", t.name, "/outputSchema", (error as Error).message);
    }
    const wrapped = !isObjectJsonSchema(own);
    // The tool's schema is advertised inside another (the first member of the anyOf beside the cut envelope, under
    // `result` when wrapped): its references to its own root and definitions (zod writes a recursive or id'd schema
    // as `$ref: "#/definitions/X"`) are made to point there. Left as they were, they pointed at the outer schema,
    // which has no definitions, and the official SDK client's tools/list failed whole ("can't resolve reference
    // #/definitions/__schema0 from id #"), for every tool of the server. Its draft stays draft-07, unlike the input
    // schema's: that client checks structuredContent with a draft-07 validator, which reads 2020-12's tuple
    // (`prefixItems`, `items: false`) as an array that holds nothing.
    own = placedAt(own, wrapped ? `/anyOf/0/properties/${WRAPPED_OUTPUT_KEY}` : "/anyOf/0");
    if (wrapped) {
      own = {
        type: "object",
        properties: { [WRAPPED_OUTPUT_KEY]: own },
        required: [WRAPPED_OUTPUT_KEY],
        additionalProperties: false,
      };
    }
    found = { schema: { type: "object", anyOf: [own, structuredClone(CUT_OUTPUT_SCHEMA)] }, wrapped };
    advertised.set(output, found);
  }
  return found;
}

/**
 * The `outputSchema` MCP advertises for a tool: `undefined` when it declares
 * no `output`, else its output's JSON Schema or {@linkcode CUT_OUTPUT_SCHEMA}.
 * An output whose schema admits more than objects (a string, say) is
 * advertised, and sent, wrapped as `{ result }` ({@linkcode WRAPPED_OUTPUT_KEY}),
 * since `structuredContent` must be an object. Throws `SchemaDialectError`
 * when the output cannot be expressed as JSON Schema.
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
  const found = advertise(t);
  return found && structuredClone(found.schema);
}

/**
 * Whether MCP sends a tool's output wrapped as `{ result }` (its schema admits
 * more than objects); `undefined` for a tool that declares no `output`.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { mcpWrapsOutput } from "@toolfence/adapters/mcp";
 * const shout = tool({
 *   name: "shout", description: "Shout.", input: v.object({ text: v.string() }), output: v.string(),
 *   run: ({ text }) => text.toUpperCase(),
 * });
 * console.log(mcpWrapsOutput(shout)); // true
 * ```
 */
export function mcpWrapsOutput(t: AnyTool): boolean | undefined {
  return advertise(t)?.wrapped;
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
 * `SchemaDialectError` when a tool's input schema is not an object schema
 * (MCP requires one), or its output cannot be expressed as JSON Schema.
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
    // MCP 2025-11-25 reads a schema without `$schema` as JSON Schema 2020-12, and clients hand it on to models whose
    // APIs take 2020-12 only (Anthropic's refused a draft-07 tuple, failing the whole request).
    const inputSchema = toDraft2020(structuredClone(t.inputSchema));
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
