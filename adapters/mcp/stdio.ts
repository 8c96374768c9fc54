/**
 * Serving the MCP server on stdin and stdout, the way MCP clients start local
 * servers. The server stops when stdin ends (the client went away).
 *
 * @module
 */

import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { ToolBox } from "@toolfence/core";
import { createMcpServer, type McpServerOptions, type McpToolServer } from "./server.ts";

/** How long calls still running when stdin ends may take to answer. */
const DRAIN_MS = 10_000;

/**
 * Serves a toolbox over MCP on stdio and resolves once connected; `closed`
 * resolves when the client has gone (stdin ended; calls still running get up
 * to 10 seconds to answer) and the session is closed. Nothing but MCP messages
 * is written to stdout.
 *
 * Requires whatever permissions the tools need.
 *
 * @example
 * ```ts ignore
 * import { ToolBox } from "@toolfence/toolfence";
 * import "@toolfence/tools";
 * import { serveStdio } from "@toolfence/adapters/mcp";
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
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<void>((done) => (timer = setTimeout(done, DRAIN_MS)));
      Promise.race([served.idle(), deadline])
        .finally(() => clearTimeout(timer))
        .then(() => served.close())
        .finally(resolve);
    };
    process.stdin.once("end", end);
    process.stdin.once("close", end);
  });
  await served.server.connect(transport);
  return { ...served, closed };
}
