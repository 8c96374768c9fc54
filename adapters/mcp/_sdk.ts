// The MCP SDK's modules the server uses as values, in one place. The SDK is an optional peer on npm, imported
// statically: a top-level await here would make the MCP entry points impossible to require()
// (ERR_REQUIRE_ASYNC_MODULE). `toolfence serve` loads those entry points through importPeer, which names the package
// when it is missing; a program importing them without it gets the runtime's ERR_MODULE_NOT_FOUND naming it.

// @ts-types="@modelcontextprotocol/sdk/server/index"
import * as ServerModule from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import * as TypesModule from "@modelcontextprotocol/sdk/types.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import * as HttpModule from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

/** `@modelcontextprotocol/sdk/server/index.js`, `types.js` and `server/webStandardStreamableHttp.js`. */
export const [mcpServerModule, mcpTypes, mcpHttpModule]: [typeof ServerModule, typeof TypesModule, typeof HttpModule] =
  [ServerModule, TypesModule, HttpModule];
