// The MCP SDK's modules the server uses as values, loaded once here: the SDK is an optional peer on npm, and a static
// import of it would fail before any code runs with a bare ERR_MODULE_NOT_FOUND; through importPeer the entry point
// says what to install. The other modules import the SDK's types statically (types are not loaded).

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type * as ServerModule from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type * as TypesModule from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type * as HttpModule from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { importPeer } from "@toolfence/core";
import { MCP_SDK } from "../_peers.ts";

/** `@modelcontextprotocol/sdk/server/index.js`, `types.js` and `server/webStandardStreamableHttp.js`. */
export const [mcpServerModule, mcpTypes, mcpHttpModule]: [typeof ServerModule, typeof TypesModule, typeof HttpModule] =
  await Promise.all([
    importPeer(MCP_SDK, () => import("@modelcontextprotocol/sdk/server/index.js") as Promise<typeof ServerModule>),
    importPeer(MCP_SDK, () => import("@modelcontextprotocol/sdk/types.js") as Promise<typeof TypesModule>),
    importPeer(
      MCP_SDK,
      () => import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js") as Promise<typeof HttpModule>,
    ),
  ]);
