// The connections an HTTP listener holds, bounded before any request is read.
//
// Nothing above the socket can bound these: a client that opens connections and sends their request heads a byte at
// a time reaches no handler, so no token check, rate or body limit applies to it. Under Deno, `Deno.serve` has no
// deadline for a request's head, and node:http ignores `headersTimeout` and `requestTimeout`: 2,000 connections
// that each sent `POST /mcp HTTP/1.1` and a header's first bytes, and a byte every 5 s after, were all held for as
// long as the client liked (27 MiB and 2,000 descriptors of the server, no token shown; the descriptor limit is
// what every tool's files and every session's jobs use too). So the listener is node:http (under Deno too), whose
// connections are seen as they open, and each is admitted or closed here before its first request is served, with
// deadlines:
//
// - a connection has `headersTimeoutMs` from its opening, or from the end of its previous response, to send a
//   complete request head: a slow head, a silent connection and an idle kept-alive one are answered 408 and closed;
// - a request has `bodyTimeoutMs` from the end of its head to the end of its body, then its connection is closed;
// - a connection may pipeline at most MAX_PIPELINED requests not yet answered, else it is closed;
// - at most `maxConnectionsPerAddress` connections per remote address (an IPv6 one by its /64, which one host is
//   given), and `maxConnections` in all. A connection that carried a tenant's request is that tenant's from then on
//   (`claim`), counted against `maxConnectionsPerTenant` and no longer against its address: one tenant's 256 calls
//   held the 256 connections of 127.0.0.1, and every other tenant on that address (every local client, every client
//   behind one reverse proxy) was refused its first connection. At the overall cap a new connection closes the oldest one still waiting for
//   a request head (idle, or a head not yet complete: nothing any token has been shown on), so that peers with no
//   token cannot keep out a client whose request is being served; with none waiting, the new one is refused (503).
//
// A response being sent (an event stream a session keeps open, a call's answer) has no deadline here: its
// connection carries a request that passed the checks, and the sessions' own limits bound those.

import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Limits on the connections one listener holds (see docs/http.md, "Connections"). */
export interface ConnectionLimits {
  /** Connections held at once (all addresses); default {@linkcode DEFAULT_CONNECTION_LIMITS}. */
  maxConnections?: number;
  /** Connections one remote address (an IPv6 address by its /64) may hold at once, before a tenant claims them. */
  maxConnectionsPerAddress?: number;
  /** Connections one tenant may hold at once (those that carried its requests). */
  maxConnectionsPerTenant?: number;
  /** Milliseconds a connection has to send a complete request head, from its opening or its last response's end. */
  headersTimeoutMs?: number;
  /** Milliseconds a request has to send its body, from the end of its head. */
  bodyTimeoutMs?: number;
}

/** The defaults of {@linkcode ConnectionLimits}. */
export const DEFAULT_CONNECTION_LIMITS: Required<ConnectionLimits> = {
  maxConnections: 1024,
  maxConnectionsPerAddress: 256,
  maxConnectionsPerTenant: 256,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 60_000,
};

/** The requests one connection may pipeline behind one not yet answered; past it the connection is closed. */
export const MAX_PIPELINED = 16;

// How long a refused or timed-out connection is given to take its short answer before it is destroyed.
const LINGER_MS = 1_000;

interface Connection {
  socket: Socket;
  address: string;
  /** Waiting for a request head (none yet, or the previous response has ended). */
  waiting: boolean;
  /** The request being served (the last one read). */
  request?: IncomingMessage;
  /** Requests read and not yet answered (more than one when the client pipelines). */
  unanswered: number;
  /** Closed for pipelining too many: what it sent after is not served. */
  cut?: boolean;
  /** The tenant whose requests it carried (then it counts against the tenant, not the address). */
  tenant?: string;
  /** Closed once the response being sent has ended. */
  closeAfter?: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

/** The key a remote address is counted under: IPv4 (mapped ones too) whole, IPv6 by its first 64 bits. */
export function addressKey(address: string | undefined): string {
  if (!address) return "?";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(":")) return address;
  const bare = address.split("%")[0].toLowerCase();
  const [head, tail = ""] = bare.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = bare.includes("::")
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right]
    : left;
  return groups.slice(0, 4).map((g) => (g.replace(/^0+(?=.)/, "") || "0")).join(":") + "::/64";
}

function plainAnswer(status: number, reason: string, message: string, extra = ""): string {
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } });
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\nconnection: close\r\n${extra}` +
    `content-length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
}

/** Whether a request head announces a body. */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** What {@linkcode guardConnections} gives its listener. */
export interface GuardedConnections {
  /** Whether a request is to be served (not one read on a connection refused or closed here). */
  serves(response: ServerResponse): boolean;
  /**
   * Counts the connection of `response` against `tenant` from now on; the
   * refusal's message when the tenant holds its most connections already
   * (the connection is then closed once the response has been sent).
   */
  claim(response: ServerResponse, tenant: string): string | undefined;
  /** Ends every connection held. */
  closeAll(): void;
}

/**
 * Holds the connections of `http` within `limits` (before it listens); returns a function that ends every one.
 */
export function guardConnections(http: HttpServer, limits: ConnectionLimits = {}): GuardedConnections {
  const max = limits.maxConnections ?? DEFAULT_CONNECTION_LIMITS.maxConnections;
  const perAddress = limits.maxConnectionsPerAddress ?? DEFAULT_CONNECTION_LIMITS.maxConnectionsPerAddress;
  const headMs = limits.headersTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.headersTimeoutMs;
  const bodyMs = limits.bodyTimeoutMs ?? DEFAULT_CONNECTION_LIMITS.bodyTimeoutMs;
  const perTenant = limits.maxConnectionsPerTenant ?? DEFAULT_CONNECTION_LIMITS.maxConnectionsPerTenant;
  // Every connection, oldest first; the count per address (of those no tenant claimed) and per tenant.
  const open = new Map<Socket, Connection>();
  const ofAddress = new Map<string, number>();
  const ofTenant = new Map<string, number>();
  const less = (counts: Map<string, number>, key: string) => {
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };

  const close = (socket: Socket, answer?: string) => {
    if (answer && !socket.destroyed && socket.writable) {
      socket.end(answer);
      setTimeout(() => socket.destroy(), LINGER_MS).unref?.();
    } else socket.destroy();
  };

  const arm = (conn: Connection, ms: number, expire: () => void) => {
    clearTimeout(conn.timer);
    conn.timer = setTimeout(expire, ms);
  };

  const awaitHead = (conn: Connection) => {
    conn.waiting = true;
    conn.request = undefined;
    arm(conn, headMs, () =>
      close(
        conn.socket,
        plainAnswer(
          408,
          "Request Timeout",
          `Request Timeout: a request's line and headers must arrive within ${headMs} ms of the connection's ` +
            "opening or of the previous response",
        ),
      ));
  };

  // Connections refused: a request read on one before it closes is not served.
  const refused = new WeakSet<Socket>();
  const unserved = new WeakSet<ServerResponse>();
  const refuse = (socket: Socket, answer: string) => {
    refused.add(socket);
    close(socket, answer);
  };

  // Registered before node:http's own listener, so that a refused connection is closed before it is read.
  http.prependListener("connection", (socket: Socket) => {
    socket.on("error", () => {});
    const address = addressKey(socket.remoteAddress);
    const held = ofAddress.get(address) ?? 0;
    if (held >= perAddress) {
      refuse(
        socket,
        plainAnswer(
          503,
          "Service Unavailable",
          `Service Unavailable: this address holds ${held} connections, the most one may (${perAddress}); ` +
            "reuse them (keep-alive) or close some",
          "retry-after: 1\r\n",
        ),
      );
      return;
    }
    if (open.size >= max) {
      // The oldest connection waiting for a request head makes room; one being served is never closed for another.
      let oldest: Connection | undefined;
      for (const conn of open.values()) {
        if (conn.waiting) {
          oldest = conn;
          break;
        }
      }
      if (!oldest) {
        refuse(
          socket,
          plainAnswer(
            503,
            "Service Unavailable",
            `Service Unavailable: the server holds ${open.size} connections, the most it may (${max}), each ` +
              "serving a request",
            "retry-after: 1\r\n",
          ),
        );
        return;
      }
      forget(oldest);
      close(oldest.socket);
    }
    const conn: Connection = { socket, address, waiting: true, unanswered: 0 };
    open.set(socket, conn);
    ofAddress.set(address, held + 1);
    socket.once("close", () => forget(conn));
    awaitHead(conn);
  });

  function forget(conn: Connection): void {
    clearTimeout(conn.timer);
    if (!open.delete(conn.socket)) return;
    if (conn.tenant === undefined) less(ofAddress, conn.address);
    else less(ofTenant, conn.tenant);
  }

  // Registered before the handler's own listener, so that each request is tracked before it is served.
  http.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    const conn = open.get(request.socket as Socket);
    if (!conn) {
      // The 503 was sent; what the client sent meanwhile is read and dropped until the connection ends, so that the
      // client reads the 503 (a connection closed with bytes unread is reset, and the client loses what it was sent).
      if (refused.has(request.socket as Socket)) unserved.add(response);
      return;
    }
    // Requests pipelined behind one not yet answered are each served at once (node:http under Deno reads on): 4
    // connections pipelining `GET /healthz` and reading no answer took the server from 101 to 855 MiB in 15 s.
    if (conn.cut || ++conn.unanswered > MAX_PIPELINED) {
      conn.cut = true;
      response.destroy();
      conn.socket.destroy();
      return;
    }
    conn.waiting = false;
    conn.request = request;
    clearTimeout(conn.timer);
    conn.timer = undefined;
    if (hasBody(request) && !request.complete) {
      arm(conn, bodyMs, () => {
        // The body is still coming: the request's handler is told it failed, and the connection ends, with a 408 that
        // says why unless an answer has begun (before, the client read nothing and saw its connection reset).
        if (conn.request !== request || request.complete) return;
        const why = `Request Timeout: a request's body must arrive within ${bodyMs} ms of the end of its head`;
        close(conn.socket, response.headersSent ? undefined : plainAnswer(408, "Request Timeout", why));
      });
      request.once("end", () => {
        if (conn.request === request) {
          clearTimeout(conn.timer);
          conn.timer = undefined;
        }
      });
    }
    let answered = false;
    const done = () => {
      if (answered) return;
      answered = true;
      conn.unanswered--;
      if (conn.closeAfter && conn.unanswered === 0) {
        forget(conn);
        close(conn.socket);
      } else if (conn.request === request && !conn.socket.destroyed) awaitHead(conn);
    };
    response.once("finish", done);
    response.once("close", done);
  });

  return {
    serves: (response) => !response.destroyed && !unserved.has(response),
    claim(response, tenant) {
      const conn = open.get(response.req.socket as Socket);
      if (!conn || conn.tenant === tenant) return undefined;
      const held = ofTenant.get(tenant) ?? 0;
      if (held >= perTenant) {
        conn.closeAfter = true;
        return `Service Unavailable: this tenant holds ${held} connections, the most one may (${perTenant}); ` +
          "reuse them (keep-alive) or close some";
      }
      if (conn.tenant === undefined) less(ofAddress, conn.address);
      else less(ofTenant, conn.tenant);
      conn.tenant = tenant;
      ofTenant.set(tenant, held + 1);
      return undefined;
    },
    closeAll: () => {
      for (const conn of [...open.values()]) {
        forget(conn);
        conn.socket.destroy();
      }
    },
  };
}
