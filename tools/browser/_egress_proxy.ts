// The browser's only way out: an HTTP proxy on loopback that judges every
// request the browser sends (navigations, redirects, subframes, subresources,
// workers, WebSockets) and connects to the very address it judged, so that a
// name cannot resolve to a public address when judged and a private one when
// used (DNS rebinding). Playwright's `route` does not see redirects; this does.

import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import type { Destination } from "./_destinations.ts";

/** A request the proxy refused. */
export interface BlockedRequest {
  /** The URL (or `host:port` of a tunnel) the browser asked for. */
  url: string;
  /** Why it was refused. */
  reason: string;
}

/** A running proxy. */
export interface EgressProxy {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** Stops it and drops every connection. */
  close(): Promise<void>;
}

/** Judges a destination; throws to refuse it. */
export type JudgeHost = (scheme: string, hostname: string, port: string) => Promise<Destination>;

/** The header of the proxy's own refusals. */
export const BLOCKED_HEADER = "x-toolfence-blocked";

const HOP_HEADERS = ["proxy-connection", "proxy-authorization", "connection", "keep-alive", "upgrade"];

/**
 * Starts the proxy; `onBlocked` hears of every refusal. Only a client that
 * sends `credentials` (Basic proxy authorization) is served, so that other
 * local processes cannot use the browser's grants through it.
 */
export async function startEgressProxy(
  judge: JudgeHost,
  onBlocked: (entry: BlockedRequest) => void,
  credentials: { username: string; password: string },
): Promise<EgressProxy> {
  const expected = Buffer.from(
    "Basic " + Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64"),
  );
  const authorized = (req: http.IncomingMessage) => {
    const given = Buffer.from(String(req.headers["proxy-authorization"] ?? ""));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const sockets = new Set<Duplex>();
  const track = (socket: Duplex) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const server = http.createServer(async (req, res) => {
    if (!authorized(req)) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="toolfence"' }).end();
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("toolfence: the browser proxy takes absolute URLs only");
      return;
    }
    let target: Destination;
    try {
      target = await judge(url.protocol, url.hostname, url.port || (url.protocol === "https:" ? "443" : "80"));
    } catch (error) {
      const reason = (error as Error).message;
      onBlocked({ url: url.href, reason });
      res.writeHead(403, { "content-type": "text/plain; charset=utf-8", [BLOCKED_HEADER]: "1" }).end(
        `Blocked by toolfence: ${reason}\n`,
      );
      return;
    }
    const headers = { ...req.headers };
    for (const name of HOP_HEADERS) delete headers[name];
    const upstream = http.request({
      host: target.addresses[0],
      port: Number(url.port || 80),
      method: req.method,
      path: url.pathname + url.search,
      headers,
      setHost: false,
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502).end(`toolfence proxy: ${error.message}`);
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.on("connection", track);
  server.on("connect", async (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on("error", () => client.destroy());
    if (!authorized(req)) {
      return void client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="toolfence"\r\n\r\n',
      );
    }
    const match = (req.url ?? "").match(/^(\[[^\]]+\]|[^:]+):(\d+)$/);
    if (!match) return void client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
    let target: Destination;
    try {
      target = await judge("https:", match[1].replace(/^\[|\]$/g, ""), match[2]);
    } catch (error) {
      onBlocked({ url: req.url ?? "", reason: (error as Error).message });
      return void client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    }
    const upstream = net.connect(Number(match[2]), target.addresses[0], () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
