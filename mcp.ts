/**
 * The MCP server, as `@toolfence/toolfence/mcp`: the same module as
 * `@toolfence/adapters/mcp`, the only entry point that loads the MCP SDK.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/toolfence";
 * import { serveStdio } from "@toolfence/toolfence/mcp";
 * await serveStdio(new ToolBox().withDefaults("fs", "search"), { workspace: Deno.cwd() });
 * ```
 *
 * @module
 */

export {
  artifactUri,
  createMcpServer,
  CUT_OUTPUT_SCHEMA,
  elicitationHost,
  type ElicitationHostOptions,
  mcpAnnotations,
  mcpOutputSchema,
  type McpServerOptions,
  type McpToolAnnotations,
  mcpTools,
  type McpToolServer,
  type McpToolSpec,
  mcpWrapsOutput,
  serveStdio,
  titleOf,
  TOOLFENCE_VERSION,
  WRAPPED_OUTPUT_KEY,
} from "@toolfence/adapters/mcp";
