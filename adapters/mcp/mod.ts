/**
 * The MCP server (`@toolfence/toolfence/mcp`): a toolbox served to any MCP
 * client, on the official SDK's low-level `Server`. This entry point is the
 * only one that loads the MCP SDK.
 *
 * @example
 * ```ts ignore
 * import { ToolBox } from "@toolfence/toolfence";
 * import { serveStdio } from "@toolfence/toolfence/mcp";
 * await serveStdio(new ToolBox().withDefaults("fs", "search"), { workspace: Deno.cwd() });
 * ```
 *
 * @module
 */

export * from "./server.ts";
export * from "./stdio.ts";
export * from "./line_transport.ts";
export * from "./elicitation_host.ts";
export * from "./dialect.ts";
export * from "./http.ts";
