// The platform seam of the HTTP server: a web-standard handler
// (Request → Response) served by `node:http` on connections that
// _http_connections.ts accepts within its limits (deadlines for a request's
// head and body, caps on connections), under Deno and Node alike, so that
// everything above it is the same code. `Deno.serve` is used only when asked
// for (`platform: "deno"`): it has no deadline for a request's head and no
// cap on connections, so it is for a listener behind a reverse proxy that
// has them.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type ConnectionLimits, guardConnections } from "./_http_connections.ts";
import { within } from "./_within.ts";

export type { ConnectionLimits } from "./_http_connections.ts";

/** The connection a request came on, as its handler may act on it. */
export interface RequestConnection {
  /** Ends the connection now, dropping what of the response it has not sent (none under `Deno.serve`). */
  close(): void;
  /**
   * Counts the connection against `tenant` from now on (see
   * _http_connections.ts); the refusal's message when the tenant holds its
   * most already (never under `Deno.serve`, which has no limits).
   */
  claim(tenant: string): string | undefined;
}

/** A web-standard request handler. */
export type Handler = (request: Request, connection: RequestConnection) => Promise<Response>;

/** A listening server. */
export interface Listener {
  /** The address it listens on. */
  hostname: string;
  /** The port it listens on (the one picked when 0 was asked for). */
  port: number;
  /** Stops accepting, ends open connections, and resolves once it is closed. */
  close(): Promise<void>;
}

interface DenoServe {
  serve(
    options: { hostname: string; port: number; onListen?: (addr: unknown) => void; signal?: AbortSignal },
    handler: (request: Request, info: { completed: Promise<void> }) => Promise<Response>,
  ): { addr: { hostname: string; port: number }; shutdown(): Promise<void>; finished: Promise<void> };
}

/** Where to listen, and how. */
export interface ListenOptions {
  hostname: string;
  port: number;
  /** `deno`: `Deno.serve`, without the connection limits; default `node` (node:http, with them). */
  platform?: "deno" | "node";
  /** The limits on connections (node:http only). */
  connections?: ConnectionLimits;
}

/**
 * Listens on `hostname:port` and serves `handler`.
 *
 * Requires `--allow-net` for the address.
 */
export function listen(handler: Handler, options: ListenOptions): Promise<Listener> {
  const deno = (globalThis as { Deno?: DenoServe }).Deno;
  if (deno && options.platform === "deno") return listenDeno(deno, handler, options);
  return listenNode(handler, options);
}

// How long a stop waits for the responses still being sent, and then for the server to finish.
const STREAM_CLOSE_WAIT_MS = 1000;

/** Responses being sent, each settling once it has been delivered or has failed. */
class ResponsesInFlight {
  readonly #sending = new Set<Promise<void>>();

  add(sent: Promise<unknown>): void {
    const settled = sent.then(() => {}, () => {});
    this.#sending.add(settled);
    void settled.then(() => this.#sending.delete(settled));
  }

  // A stop comes once every session has ended (calls answered or cancelled, jobs killed, temp dirs removed), so a
  // response still open is a last answer on its way out: stopping now would drop what the connection has not yet
  // written. A client's idle event stream may stay open as long as it likes, so the wait is bounded.
  settled(): Promise<void> {
    return within(STREAM_CLOSE_WAIT_MS, Promise.all(this.#sending));
  }
}

function listenDeno(deno: DenoServe, handler: Handler, options: ListenOptions): Promise<Listener> {
  const abort = new AbortController();
  const responses = new ResponsesInFlight();
  return new Promise((resolve, reject) => {
    try {
      const server = deno.serve({
        hostname: options.hostname,
        port: options.port,
        signal: abort.signal,
        onListen: () => {},
      }, (request, info) => {
        responses.add(info.completed);
        return handler(request, { close: () => {}, claim: () => undefined });
      });
      resolve({
        hostname: server.addr.hostname,
        port: server.addr.port,
        close: async () => {
          await responses.settled();
          abort.abort();
          // Deno's graceful stop waits for every open response, which by now is only an idle event stream.
          await within(STREAM_CLOSE_WAIT_MS, server.finished);
        },
      });
    } catch (error) {
      reject(error);
    }
  });
}

// Readable.toWeb would do, but under Node 20 a stream cancelled before its end (a body over the limit) later
// throws ERR_INVALID_STATE from its data listener, outside any handler. Here a cancelled body is read on and dropped,
// so that the refusal can still be sent on the connection.
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once("end", () => {
        if (!done) controller.close();
        done = true;
      });
      req.once("error", (error) => {
        if (!done) controller.error(error);
        done = true;
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      done = true;
      req.resume();
    },
  }, { highWaterMark: 4 });
}

// The request's URL. A Host that forms none (`127.0.0.1:8765.evil`, a port out of range) stays the request's Host
// header, which the handler's Host check refuses; the URL is made of the listener's own address instead. Made of the
// Host itself, the URL threw inside node:http's request listener, outside any handler: one unauthenticated request
// ended the server, every tenant's sessions and jobs with it.
function requestUrl(path: string | undefined, host: string | undefined, fallbackHost: string): URL {
  try {
    return new URL(path ?? "/", `http://${host ?? fallbackHost}`);
  } catch {
    return new URL(path ?? "/", `http://${fallbackHost}`);
  }
}

function toRequest(req: IncomingMessage, fallbackHost: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const url = requestUrl(req.url, req.headers.host, fallbackHost);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(url, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: bodyOf(req), duplex: "half" } : {}),
  } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const had = headers[name];
    headers[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((drained) => res.once("drain", drained).once("close", drained));
    }
  } catch {
    // The client went away, or the body failed; the connection ends either way.
  }
  res.end();
}

function listenNode(handler: Handler, options: ListenOptions): Promise<Listener> {
  const responses = new ResponsesInFlight();
  // For a request that names no Host (HTTP/1.0): the address listened on (an IPv6 one bracketed, as a URL writes it).
  const fallbackHost = `${options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname}:${options.port}`;
  const server = createServer((req, res) => {
    // A request on a connection the limits refused or closed (_http_connections.ts) is not served.
    if (!connections.serves(res)) return;
    responses.add(new Promise((sent) => res.once("close", sent)));
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    // A request that cannot be made into one (a target that is no URL path, a header the Fetch API refuses) is
    // answered 400 here: thrown, it would be thrown out of the listener and end the process.
    let request: Request;
    try {
      request = toRequest(req, fallbackHost, aborted.signal);
    } catch (error) {
      res.writeHead(400, { "content-type": "application/json", connection: "close" });
      res.end(JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: `Bad Request: ${(error as Error)?.message ?? "the request cannot be read"}` },
      }));
      return;
    }
    handler(request, { close: () => void res.destroy(), claim: (tenant) => connections.claim(res, tenant) })
      .then((response) => writeResponse(response, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end();
      });
  });
  const connections = guardConnections(server, options.connections);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : options.port;
      resolve({
        hostname: options.hostname,
        port,
        close: async () => {
          await responses.settled();
          await new Promise<void>((closed) => {
            server.close(() => closed());
            server.closeAllConnections();
            connections.closeAll();
          });
        },
      });
    });
  });
}
