/**
 * Serving the MCP server on stdin and stdout, the way MCP clients start local
 * servers, over {@linkcode LineTransport} (messages up to 64 MiB by default;
 * every malformed line answered with its JSON-RPC error).
 *
 * The session ends when stdin ends (the client went away: calls still running
 * get up to 10 seconds to answer, then are cancelled) or when `shutdown()` is
 * called (on SIGTERM or SIGINT, say: calls in flight are cancelled at once and
 * answer as cancelled). Either way the session is closed afterwards, which
 * kills its background jobs.
 *
 * @module
 */

import process from "node:process";
import type { Readable, Writable } from "node:stream";
import type { ToolBox } from "@toolfence/core";
import { createMcpServer, type McpServerOptions, type McpToolServer } from "./server.ts";
import { LineTransport } from "./line_transport.ts";
import { dispatchJudgedRequests } from "./_request_dispatch.ts";
import { within } from "./_within.ts";

/** How long calls still running when stdin ends may take to answer. */
export const DRAIN_MS = 10_000;
/** How long cancelled calls get to settle before the session is closed under them. */
export const CANCEL_GRACE_MS = 3_000;

/** Options of {@linkcode serveStdio}: the server's, plus the transport's. */
export interface StdioServeOptions extends McpServerOptions {
  /** The largest message read, in bytes; default 64 MiB. */
  maxMessageBytes?: number;
  /** Where messages come from; default `process.stdin`. */
  input?: Readable;
  /** Where messages go; default `process.stdout`. */
  output?: Writable;
}

/** A server serving on stdio. */
export interface StdioServer extends McpToolServer {
  /** Resolves once the session is over and closed. */
  closed: Promise<void>;
  /** Cancels the calls in flight, lets them answer (up to 3 seconds), then closes everything. */
  shutdown(reason?: string): Promise<void>;
}

/**
 * Serves a toolbox over MCP on stdio and resolves once connected. Nothing but
 * MCP messages is written to the output.
 *
 * Requires whatever permissions the tools need.
 *
 * @example
 * ```ts ignore
 * import { ToolBox } from "@toolfence/toolfence";
 * import "@toolfence/tools";
 * import { serveStdio } from "@toolfence/adapters/mcp";
 * const running = await serveStdio(new ToolBox().withDefaults("fs", "search"), { workspace: Deno.cwd() });
 * Deno.addSignalListener("SIGTERM", () => void running.shutdown("SIGTERM"));
 * await running.closed;
 * ```
 */
export async function serveStdio(toolbox: ToolBox, options: StdioServeOptions): Promise<StdioServer> {
  const { maxMessageBytes, input, output, ...serverOptions } = options;
  const served = createMcpServer(toolbox, serverOptions);
  const transport = new LineTransport({ maxMessageBytes, input, output });
  // Dropped notifications and the like are for the log, never for stdout.
  transport.onerror = () => {};
  let finished: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const shutdown = (reason?: string) => {
    finished ??= (async () => {
      served.cancelAll(reason);
      // The calls settled is not their answers written: a handler goes on after its tool settles (the output's
      // check, the result's), and closing then dropped the answer. As over HTTP, the answers are waited for too.
      await within(CANCEL_GRACE_MS, served.idle().then(() => transport.answered()));
      try {
        await served.close();
      } catch (error) {
        process.stderr.write(`toolfence: closing the session: ${(error as Error).message}\n`);
      }
    })().finally(resolveClosed);
    return finished;
  };
  void transport.ended.then(async () => {
    if (finished) return;
    // Every request read is answered (one read just before the end may not have reached its handler, so the calls
    // running are not all of them), and every cancelled call has settled.
    await within(DRAIN_MS, transport.answered().then(() => served.idle()));
    await shutdown("the client closed the connection");
  });
  await served.server.connect(transport);
  dispatchJudgedRequests(served.server, transport);
  return { ...served, closed, shutdown };
}
