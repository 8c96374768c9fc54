/**
 * The MCP server module for `toolfence serve`, loaded only when serving: the
 * MCP SDK and jose are optional peers of `@toolfence/adapters`, so an npm
 * install without them serves nothing and says what to install.
 *
 * @module
 */

import { isMissingPeer } from "@toolfence/core";
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
    // The entry point imports its peers statically: a missing one is the runtime's ERR_MODULE_NOT_FOUND naming it.
    const missing = MCP_PEERS.find((name) => isMissingPeer(error, name));
    if (missing === undefined) throw error;
    throw new CliUsageError(
      `toolfence serve needs the MCP server stack, which is not installed (${missing} missing): ` +
        `npm install ${MCP_PEERS.join(" ")}`,
      "serve",
    );
  }
}
