// The SDK's protocol layer dispatches each message it is handed by trying it as a result response, then as an error
// response, then as a request, each a strict zod parse: for a request, the first two fail and build their issue
// lists (7.6 and 6.7 µs measured here), and the third parses it once more (2 µs), about 16 µs of every tools/call
// before any handler runs. The stdio transport has judged every message already (judgeValue: a request passed the
// SDK's strict JSONRPCRequestSchema, and a value with a `method` passes neither strict response schema), so a
// message it judged a request goes straight to the SDK's request handling, where the SDK's dispatch would have sent
// it; every other message takes the SDK's way.

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJudgedRequest } from "./_jsonrpc_frame.ts";

/**
 * After `server.connect(transport)`, where nothing listened to the
 * transport's messages before the SDK: requests the transport judged go to
 * the SDK's `_onrequest` (read at each call: ignoreTaskAugmentation wraps it)
 * without its three type guards. Where the installed SDK has no
 * `_onrequest` (a private method another version may not have), everything
 * keeps the SDK's own way: a shortcut, never a condition of serving.
 */
export function dispatchJudgedRequests(server: Server, transport: Transport): void {
  const internals = server as unknown as { _onrequest?: (request: unknown, extra?: unknown) => void };
  const dispatch = transport.onmessage;
  if (typeof internals._onrequest !== "function" || typeof dispatch !== "function") return;
  transport.onmessage = (message, extra) => {
    if (isJudgedRequest(message)) internals._onrequest!(message, extra);
    else dispatch(message, extra);
  };
}
