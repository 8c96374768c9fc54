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

// The SDK runs every notification handler a microtask later, but a request is dispatched at once: a cancellation
// and a request reusing the cancelled id, read in one chunk (or one batch), reached the SDK in that order and were
// handled in the other. The new request's abort controller had taken the id, so the cancellation stopped the new
// request and the cancelled call ran on to the end, its answer sent as the answer to the new one. A cancellation is
// handled here as it is read, before any later message; the SDK's own handler (its schema check, then `_oncancel`)
// is the one that runs.

/** Makes `server` handle notifications/cancelled in the order read, before the next message is dispatched. */
export function cancelInOrder(server: Server): void {
  const internals = server as unknown as {
    _onnotification?: (this: Server, notification: { method: string }) => unknown;
    _notificationHandlers?: Map<string, (notification: unknown) => unknown>;
    _onerror?: (this: Server, error: Error) => void;
  };
  const onnotification = internals._onnotification;
  const handlers = internals._notificationHandlers;
  if (typeof onnotification !== "function" || !(handlers instanceof Map) || typeof internals._onerror !== "function") {
    throw new Error("The MCP SDK no longer dispatches notifications through _onnotification; update _cancel_ids.ts");
  }
  internals._onnotification = function (notification) {
    const handler = notification.method === "notifications/cancelled" ? handlers.get(notification.method) : undefined;
    if (handler === undefined) return onnotification.call(this, notification);
    try {
      // Synchronous up to the abort: the schema check, then `_oncancel`, which awaits nothing before it.
      void Promise.resolve(handler(notification)).catch((error) =>
        internals._onerror!.call(this, new Error(`Uncaught error in notification handler: ${error}`))
      );
    } catch (error) {
      internals._onerror!.call(this, new Error(`Uncaught error in notification handler: ${error}`));
    }
  };
}
