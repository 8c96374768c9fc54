/**
 * The `mcp` dialect: the tool list of an MCP `tools/list` result, with
 * annotations from each tool's metadata. It needs nothing from the MCP SDK, so
 * `schemas("mcp")` works without loading it.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import type { JsonSchema } from "@toolfence/core";
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
 * The `tools` array of a `tools/list` result. Throws `SchemaDialectError`
 * when a tool's input schema is not an object schema (MCP requires one).
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
    return {
      name: t.name,
      title: titleOf(t),
      description: t.description,
      inputSchema: inputSchema as McpToolSpec["inputSchema"],
      annotations: mcpAnnotations(t),
    };
  });
}
