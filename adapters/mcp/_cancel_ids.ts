// A JSON-RPC id is a string or an integer, 0 and "" among them. The SDK's Protocol drops a notifications/cancelled
// whose requestId is falsy (it tests `!requestId`, since the params' requestId may be left out), so a request of id 0
// or "" could not be cancelled: its tool ran on and answered, and the stdio transport, which frees a cancelled id,
// let another request take that id while it ran. Those two ids are cancelled here; the SDK handles every other. It
// keeps both in private fields; an upgrade that moves them fails loudly here.

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

interface Cancelled {
  params?: { requestId?: RequestId; reason?: string };
}

/** Makes `server` honour a cancellation of a request whose id is 0 or "". */
export function cancelFalsyIds(server: Server): void {
  const internals = server as unknown as {
    _oncancel?: (this: Server, notification: Cancelled) => unknown;
    _requestHandlerAbortControllers?: Map<RequestId, AbortController>;
  };
  const oncancel = internals._oncancel;
  const controllers = internals._requestHandlerAbortControllers;
  if (typeof oncancel !== "function" || !(controllers instanceof Map)) {
    throw new Error("The MCP SDK no longer cancels through _oncancel; update _cancel_ids.ts");
  }
  internals._oncancel = function (notification) {
    const id = notification.params?.requestId;
    if (id === 0 || id === "") return void controllers.get(id)?.abort(notification.params?.reason);
    return oncancel.call(this, notification);
  };
}
