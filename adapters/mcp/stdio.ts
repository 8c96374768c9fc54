/**
 * Serving the MCP server on stdin and stdout, the way MCP clients start local
 * servers. The server stops when stdin ends (the client went away).
 *
 * @module
 */

import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { ToolBox } from "../../core/toolbox.ts";
import { createMcpServer, type McpServerOptions, type McpToolServer } from "./server.ts";

/**
 * Serves a toolbox over MCP on stdio and resolves once connected; `closed`
 * resolves when the client has gone (stdin ended) and the session is closed.
 * Nothing but MCP messages is written to stdout.
 *
 * Requires whatever permissions the tools need.
 *
 * @example
 * ```ts ignore
 * import { ToolBox } from "../../core/mod.ts";
 * import "../../tools/mod.ts";
 * import { serveStdio } from "./stdio.ts";
 * const running = await serveStdio(new ToolBox().withDefaults("fs", "search"), { workspace: Deno.cwd() });
 * await running.closed;
 * ```
 */
export async function serveStdio(
  toolbox: ToolBox,
  options: McpServerOptions,
): Promise<McpToolServer & { closed: Promise<void> }> {
  const served = createMcpServer(toolbox, options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    const end = () => {
      process.stdin.off("end", end);
      process.stdin.off("close", end);
      served.close().finally(resolve);
    };
    process.stdin.once("end", end);
    process.stdin.once("close", end);
  });
  await served.server.connect(transport);
  return { ...served, closed };
}
