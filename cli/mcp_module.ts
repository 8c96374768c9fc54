/**
 * The MCP server module for `toolfence serve`, loaded only when serving: the
 * MCP SDK and jose are optional peers of `@toolfence/adapters`, so an npm
 * install without them serves nothing and says what to install.
 *
 * @module
 */

import { ToolError } from "@toolfence/core";
import { CliUsageError } from "./usage.ts";

/** The packages the MCP server loads that an npm install may lack. */
const MCP_PEERS = ["@modelcontextprotocol/sdk", "jose"] as const;

/**
 * Imports `@toolfence/adapters/mcp`; when one of its optional peers is not
 * installed, a {@linkcode CliUsageError} naming the packages to install.
 *
 * Requires --allow-read (and --allow-env, as the MCP SDK does).
 *
 * @example
 * ```ts
 * import { loadMcpModule } from "./mcp_module.ts";
 * const { serveStdio } = await loadMcpModule();
 * console.log(typeof serveStdio); // function
 * ```
 */
export async function loadMcpModule(): Promise<typeof import("@toolfence/adapters/mcp")> {
  try {
    return await import("@toolfence/adapters/mcp");
  } catch (error) {
    // The entry point loads each peer through importPeer: a missing one is `peer_missing`, naming it.
    if (!(error instanceof ToolError) || error.code !== "peer_missing") throw error;
    throw new CliUsageError(
      `toolfence serve needs the MCP server stack, which is not installed (${error.details?.package} missing): ` +
        `npm install ${MCP_PEERS.join(" ")}`,
      "serve",
    );
  }
}
