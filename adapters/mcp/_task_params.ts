// Tasks (2025-11-25, experimental): "Receivers that do not declare the task capability for a request type MUST
// process requests of that type normally, ignoring any task-augmentation metadata if present." The SDK instead
// refuses a tools/call that carries `params.task` from a server without the capability (-32603 "Server does not
// support task creation"), and were it let through, would check the handler's answer as a created task's. This server
// declares no tasks, so `params.task` is dropped from every request before the SDK reads it. The SDK reads requests
// in a private method; an upgrade that moves it fails loudly here (the MCP server's tests call with a task).

// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

type OnRequest = (this: Server, request: { params?: unknown }, extra?: unknown) => void;

/** Makes `server` handle task-augmented requests as plain ones (for a server that declares no tasks capability). */
export function ignoreTaskAugmentation(server: Server): void {
  const internals = server as unknown as { _onrequest?: OnRequest };
  const onrequest = internals._onrequest;
  if (typeof onrequest !== "function") {
    throw new Error("The MCP SDK no longer reads requests in _onrequest; update _task_params.ts");
  }
  internals._onrequest = function (request, extra) {
    const params = request.params;
    if (params !== null && typeof params === "object" && "task" in params) {
      const { task: _ignored, ...rest } = params as Record<string, unknown>;
      request = { ...request, params: rest };
    }
    return onrequest.call(this, request, extra);
  };
}
