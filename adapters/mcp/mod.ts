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

export { createMcpServer, type McpServerOptions, type McpToolServer, type SharedSessionState } from "./server.ts";
export { serveStdio, type StdioServeOptions, type StdioServer } from "./stdio.ts";
export { elicitationHost, type ElicitationHostOptions } from "./elicitation_host.ts";
export { type HttpServeOptions, type HttpServer, serveHttp } from "./http.ts";
// The umbrella re-exports the names above this line (scripts/surface.ts).
export {
  artifactUri,
  callUri,
  LATE_RESULT_NOTIFICATION,
  LATE_RESULTS_URI,
  MCP_CAPABILITIES,
  TOOLFENCE_VERSION,
} from "./server.ts";
export { CANCEL_GRACE_MS, DRAIN_MS } from "./stdio.ts";
export { DEFAULT_MAX_MESSAGE_BYTES, LineTransport, type LineTransportOptions } from "./line_transport.ts";
export {
  CUT_OUTPUT_SCHEMA,
  mcpAnnotations,
  mcpOutputSchema,
  type McpToolAnnotations,
  mcpTools,
  type McpToolSpec,
  mcpWrapsOutput,
  titleOf,
  WRAPPED_OUTPUT_KEY,
} from "./dialect.ts";
export {
  type Identity,
  type JwtOptions,
  JwtVerifier,
  type Scope,
  SCOPES,
  tenantName,
  TokenFile,
  tokenHash,
} from "./http.ts";
export { type HttpCliValues, HttpUsageError, runHttpServe } from "./http_cli.ts";
export { openStore, type OpenStoreOptions } from "./open_store.ts";
