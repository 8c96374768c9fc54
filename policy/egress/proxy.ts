/**
 * The egress proxy: an HTTP proxy (absolute-form requests, and CONNECT
 * tunnels for HTTPS, git over HTTPS, WebSockets) that judges every request
 * and every tunnel before it connects anywhere, and then connects to the very
 * address it judged, so that a name cannot resolve to a public address when
 * judged and a private one when used (DNS rebinding). It listens on loopback
 * (the browser's, with proxy credentials) or on a unix socket (the sandboxed
 * commands', bound into a network namespace whose only way out it is).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { destinationKey } from "./addresses.ts";
import { judgeTunnelOpening, MAX_TUNNEL_OPENING, plainTunnelScanner, SITE_HEADERS } from "./_tunnel.ts";

/** What the proxy needs of a judged destination: the addresses to connect to (the first is used). */
export interface JudgedTarget {
  /** The addresses judged; the proxy connects to the first. */
  addresses: string[];
  /** The rule that allowed it, for the connection record. */
  rule?: string;
  /** Who allowed it (`rule`, `person`, `client`, `auto`), for the connection record. */
  answeredBy?: string;
  /**
   * The judge's class of the addresses (`public`, `loopback`, ...). A `public`, `private` or `link-local`
   * destination whose connection turns out to reach this machine (one of its own interfaces' addresses) is refused,
   * unless its rule names the address.
   */
  addressClass?: string;
  /**
   * The host as judged (canonical); a tunnel's TLS server name or `Host` must name it. Default the host the
   * client named.
   */
  host?: string;
}

/**
 * Judges a destination (`scheme` is `http:` for a request, `https:` for a tunnel, and `http:` again for a tunnel
 * whose first bytes are not TLS); throws to refuse it.
 */
export type JudgeTarget = (scheme: string, hostname: string, port: string) => Promise<JudgedTarget>;

/** One request or tunnel the proxy judged. */
export interface EgressConnection {
  /** The URL of a request, or `host:port` of a tunnel. */
  target: string;
  /** `CONNECT` for a tunnel, else the request's method. */
  method: string;
  /** Whether it went through. */
  allowed: boolean;
  /** The address connected to, when allowed. */
  address?: string;
  /** The rule that allowed it, when one did. */
  rule?: string;
  /** Who allowed it, when the judge said (`rule`, `person`, `client`, `auto`). */
  answeredBy?: string;
  /** Why it was refused. */
  reason?: string;
  /** The refusal's error code (`url_not_allowed`, `dns_failed`), when refused. */
  code?: string;
  /** The refusal's error details (what the judge knew: origin, addresses, the rule that denied). */
  details?: Record<string, unknown>;
}

/** Where the proxy listens. */
export type EgressListen = { port: number; host?: string } | { path: string };

/** Options of {@linkcode startEgressProxy}. */
export interface EgressProxyOptions {
  /** Judges each request and tunnel. */
  judge: JudgeTarget;
  /** Hears of every judged request and tunnel, allowed or refused. */
  onConnection?: (connection: EgressConnection) => void;
  /** Only a client that sends these (Basic proxy authorization) is served; default any client. */
  credentials?: { username: string; password: string };
  /** Default `{ port: 0, host: "127.0.0.1" }`. */
  listen?: EgressListen;
  /**
   * Most client connections open at once (default {@linkcode MAX_PROXY_CONNECTIONS}); one more is answered
   * `503` and closed. Each holds a descriptor of this process (a tunnel two), so without a cap a sandboxed
   * command could take every descriptor of the server.
   */
  maxConnections?: number;
  /**
   * The cap this proxy shares with others (default {@linkcode SERVER_PROXY_CONNECTIONS}, shared by every proxy of
   * this process): its client connections count against it too, and one past it is answered `503` and closed.
   */
  pool?: ConnectionPool;
  /**
   * Further pools this proxy's client connections count against beside `pool`, each with its own cap (a
   * workspace's, shared by the proxies of its commands): one past any of them is answered `503` and closed.
   */
  shares?: readonly ConnectionPool[];
}

/** Client connections counted across proxies, against one cap. */
export interface ConnectionPool {
  /** Most client connections open at once across the proxies that share the pool. */
  readonly max: number;
  /** Client connections open now. */
  open: number;
}

/**
 * The process-wide cap on the client connections of every egress proxy together (every command of every
 * session, and the browsers): with 256 a proxy, 80 commands at once could still hold ~20,000 descriptors.
 */
export const SERVER_PROXY_CONNECTIONS: ConnectionPool = { max: 2048, open: 0 };

/**
 * The default cap on a proxy's client connections open at once: far above what a package manager or a
 * browser opens (npm 15 sockets, Chromium 6 a host), far below a process's usual descriptor limit.
 */
export const MAX_PROXY_CONNECTIONS = 256;

/** A running proxy. */
export interface EgressProxy {
  /** Its port on loopback, when it listens on one. */
  readonly port?: number;
  /** Its unix socket, when it listens on one. */
  readonly path?: string;
  /** Stops it and drops every connection. */
  close(): Promise<void>;
}

/** The header of the proxy's own refusals. */
export const BLOCKED_HEADER = "x-toolfence-blocked";

const HOP_HEADERS = ["proxy-connection", "proxy-authorization", "connection", "keep-alive", "upgrade"];

function refusal(error: unknown): Pick<EgressConnection, "reason" | "code" | "details"> {
  const e = error as { message?: string; code?: unknown; details?: unknown };
  return {
    reason: e.message ?? String(error),
    ...(typeof e.code === "string" ? { code: e.code } : {}),
    ...(e.details && typeof e.details === "object" ? { details: e.details as Record<string, unknown> } : {}),
  };
}

// A status line's reason phrase holds no control characters; many clients print it.
function phrase(reason: string): string {
  return [...reason].map((c) => (c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127 ? " " : c)).join("").slice(0, 300);
}

/**
 * Starts the proxy. Absolute-form `http:` requests are judged as `http:`,
 * `CONNECT host:port` tunnels as `https:` (and as `http:` too once they carry no TLS); a refusal answers 403 with
 * `Blocked by toolfence: <reason>` (the reason in the status line too, and
 * the {@linkcode BLOCKED_HEADER}) without connecting anywhere.
 *
 * Requires `--allow-net` (and `--allow-read`/`--allow-write` for a unix socket).
 *
 * @example
 * ```ts
 * import { DestinationJudge, startEgressProxy } from "@toolfence/policy";
 * const judge = new DestinationJudge({ allow: ["registry.npmjs.org"] }, { who: "The command" });
 * const proxy = await startEgressProxy({ judge: (s, h, p) => judge.judge(s, h, p) });
 * console.log(`HTTPS_PROXY=http://127.0.0.1:${proxy.port}`);
 * await proxy.close();
 * ```
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const { judge, onConnection, credentials } = options;
  const expected = credentials
    ? Buffer.from("Basic " + Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64"))
    : undefined;
  const authorized = (req: http.IncomingMessage) => {
    if (expected === undefined) return true;
    const given = Buffer.from(String(req.headers["proxy-authorization"] ?? ""));
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const report = (connection: EgressConnection) => {
    try {
      onConnection?.(connection);
    } catch {
      // A listener that fails must not change what the proxy does.
    }
  };
  const sockets = new Set<Duplex>();
  let closed = false;
  // A socket of the proxy, closed with it; one made after it closed (a judge or a connection that finished late) is
  // closed at once.
  const track = (socket: Duplex) => {
    if (closed) return void socket.destroy();
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  // A connection to a server lives no longer than the client's connection it serves, and is closed at once when
  // the client went while the judge or the connection took their time. Before, a client that sent its request and
  // went (`printf 'GET http://allowed/ ...' | socat - TCP:127.0.0.1:3128`) left the connection to the server open,
  // outside the cap on client connections, until the server closed it: 20 such requests held 20 connections (and
  // the server's descriptors) after the command and its session had ended.
  const boundTo = (client: Duplex, upstream: Duplex): boolean => {
    if (client.destroyed || closed) {
      upstream.destroy();
      return false;
    }
    const drop = () => upstream.destroy();
    client.once("close", drop);
    upstream.once("close", () => client.off("close", drop));
    return true;
  };
  const maxConnections = options.maxConnections ?? MAX_PROXY_CONNECTIONS;
  const pool = options.pool ?? SERVER_PROXY_CONNECTIONS;
  const clients = new Set<Duplex>();
  // Connections answered 503 at their start: whatever they send is not served.
  const turnedAway = new WeakSet<object>();
  // Before: a command that opened 21,000 connections to its proxy socket (three processes under the default
  // openFiles) took every descriptor of the server (limit 20,000), and the whole server failed with EMFILE.
  let full = false;
  const shares = options.shares ?? [];
  const admit = (socket: Duplex) => {
    const poolFull = pool.open >= pool.max;
    const shareFull = shares.find((share) => share.open >= share.max);
    if (clients.size >= maxConnections || poolFull || shareFull) {
      const reason = poolFull
        ? `toolfence proxy: the server's proxies hold ${pool.max} connections at once; close some first`
        : shareFull
        ? `toolfence proxy: the proxies of this workspace's commands hold ${shareFull.max} connections at once; close some first`
        : `toolfence proxy: more than ${maxConnections} connections open at once; close some first`;
      // Reported once while the proxy stays full, so that a flood does not flood the record too.
      if (!full) report({ target: "the proxy", method: "connect", allowed: false, reason });
      full = true;
      socket.on("error", () => socket.destroy());
      // The answer, then our side closed; what the client sends meanwhile is still read (and ignored, see
      // turnedAway): a Unix socket closed with unread data resets the connection, and Node's client then lost the
      // answer. Destroyed after 200 ms whatever the client does, so that one that never closes holds nothing.
      turnedAway.add(socket);
      socket.write(
        `HTTP/1.1 503 ${phrase(reason)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
        () => socket.end(),
      );
      setTimeout(() => socket.destroy(), 200);
      return;
    }
    full = false;
    clients.add(socket);
    pool.open++;
    for (const share of shares) share.open++;
    socket.once("close", () => {
      clients.delete(socket);
      pool.open--;
      for (const share of shares) share.open--;
    });
    track(socket);
  };
  // Requests pipelined on one connection are judged one after another, and none after a refusal, which closes
  // it: before, each of a thousand requests sent at once was judged and recorded, over and over while the command
  // ran (25,000 records in 20 s from one connection), all on the server's time.
  const judging = new WeakMap<object, Promise<void>>();
  const refusedOn = new WeakSet<object>();
  const server = http.createServer(async (req, res) => {
    if (turnedAway.has(req.socket)) return;
    const connection: object = req.socket ?? req;
    const before = judging.get(connection);
    let judged!: () => void;
    judging.set(connection, new Promise<void>((resolve) => judged = resolve));
    try {
      await before;
      if (refusedOn.has(connection)) return void res.destroy();
      await serve(req, res, connection);
    } finally {
      judged();
    }
  });
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse, connection: object) => {
    // The connection closes with a refusal: requests pipelined on one connection were each judged and recorded, a
    // thousand a second for as long as the command ran, all on the server's time.
    const refuseRequest = (error: unknown, target: string) => {
      const refused = refusal(error);
      refusedOn.add(connection);
      report({ target, method: req.method ?? "GET", allowed: false, ...refused });
      const body = `Blocked by toolfence: ${refused.reason}\n`;
      res.writeHead(403, phrase(`Blocked by toolfence: ${refused.reason}`), {
        connection: "close",
        "content-type": "text/plain; charset=utf-8",
        "content-length": Buffer.byteLength(body),
        [BLOCKED_HEADER]: "1",
      }).end(body, () => req.socket.destroy());
    };
    if (!authorized(req)) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="toolfence"' }).end();
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("toolfence: the proxy takes absolute URLs only (and CONNECT for https)\n");
      return;
    }
    const method = req.method ?? "GET";
    let target: JudgedTarget;
    try {
      // https: in absolute form would have the proxy speak plain HTTP to a TLS port: only CONNECT tunnels it.
      if (url.protocol !== "http:") throw new Error(`${url.protocol} requests go through CONNECT, not absolute form`);
      // The path is sent as the request's target: one starting with // (or /\, which the URL parser made //) is a
      // network-path reference to a server that reads its target as a URL (`new URL(req.url, base)`), another host
      // behind the judged address. Before, `GET http://allowed:A//secret.internal/x` read SECRET-SITE there.
      if (url.pathname.startsWith("//")) {
        throw new Error(
          `the path of ${url.href} starts with //, which a server reading its target as a URL takes for another ` +
            "host: spell it with one leading slash",
        );
      }
      target = await judge(url.protocol, url.hostname, url.port || "80");
    } catch (error) {
      return refuseRequest(error, url.href);
    }
    report({
      target: url.href,
      method,
      allowed: true,
      address: target.addresses[0],
      ...(target.rule ? { rule: target.rule } : {}),
      ...(target.answeredBy ? { answeredBy: target.answeredBy } : {}),
    });
    let socket: net.Socket;
    try {
      socket = await connectJudged(target, Number(url.port || 80), req.socket, track);
    } catch (error) {
      if (!(error instanceof ThisMachine)) return void res.writeHead(502).end(`toolfence proxy: ${error}\n`);
      return refuseRequest(error, url.href);
    }
    if (!boundTo(req.socket, socket)) return;
    // One connection per request (no pool): closed with the answer, or when the client goes away before it ends.
    res.once("close", () => socket.destroy());
    const headers = { ...req.headers };
    for (const name of HOP_HEADERS) delete headers[name];
    // The site asked for is the one judged: a Host header naming another site behind the same address (a
    // shared host, a CDN) would reach that one, and so would an X-Forwarded-Host or a Forwarded host= where the
    // server trusts them (before, such a server answered SECRET-SITE): those are dropped.
    for (const name of SITE_HEADERS) delete headers[name];
    headers.host = url.host;
    const upstream = http.request({
      host: target.addresses[0],
      port: Number(url.port || 80),
      // The connection made and checked above (connectJudged), never a new one.
      createConnection: () => socket,
      agent: false,
      method,
      path: url.pathname + url.search,
      headers,
      setHost: false,
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502).end(`toolfence proxy: ${error.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  };
  server.on("connection", admit);
  server.on("connect", async (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    if (turnedAway.has(client)) return;
    track(client);
    client.on("error", () => client.destroy());
    // Read from the start, so that a client that goes while its tunnel is judged and made is seen going (a socket
    // nobody reads reports no end and no close: before, the connection being made for it, and the client's own
    // socket, stayed open for the two minutes of a connect that was never answered). What it sends meanwhile is kept
    // for the judgement of its opening; past MAX_TUNNEL_OPENING it is read no further (the opening is refused).
    const early: Buffer[] = [];
    let earlyBytes = 0;
    const collect = (chunk: Buffer) => {
      early.push(chunk);
      earlyBytes += chunk.length;
      if (earlyBytes > MAX_TUNNEL_OPENING) client.pause();
    };
    client.on("data", collect);
    // The client's end before its tunnel is made: it has nothing more to send through it, and its socket (half
    // open, as the server's are) would otherwise stay open with the connection made for it.
    const endedEarly = () => client.destroy();
    client.once("end", endedEarly);
    client.resume();
    if (!authorized(req)) {
      return void client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="toolfence"\r\n\r\n',
      );
    }
    const asked = req.url ?? "";
    const refuseTunnel = (error: unknown) => {
      const refused = refusal(error);
      report({ target: asked, method: "CONNECT", allowed: false, ...refused });
      const body = `Blocked by toolfence: ${refused.reason}\n`;
      client.end(
        `HTTP/1.1 403 ${phrase(`Blocked by toolfence: ${refused.reason}`)}\r\n` +
          `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `${BLOCKED_HEADER}: 1\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    const match = asked.match(/^(\[[^\]]+\]|[^:]+):(\d+)$/);
    let target: JudgedTarget;
    try {
      if (!match) throw new Error(`CONNECT takes host:port, not ${JSON.stringify(asked.slice(0, 200))}`);
      // The port as the judge compares it and as the connection uses it: `08022` would pass a deny of `:8022`.
      if (String(Number(match[2])) !== match[2] || Number(match[2]) > 65535) {
        throw new Error(`CONNECT takes a port from 0 to 65535 without leading zeros, not ${match[2]}`);
      }
      target = await judge("https:", match[1].replace(/^\[|\]$/g, ""), match[2]);
    } catch (error) {
      return refuseTunnel(error);
    }
    let upstream: net.Socket;
    try {
      upstream = await connectJudged(target, Number(match[2]), client, track);
    } catch (error) {
      if (!(error instanceof ThisMachine)) {
        return void client.end(`HTTP/1.1 502 ${phrase(`toolfence proxy: ${error}`)}\r\nConnection: close\r\n\r\n`);
      }
      return refuseTunnel(error);
    }
    if (!boundTo(client, upstream)) return;
    report({
      target: asked,
      method: "CONNECT",
      allowed: true,
      address: target.addresses[0],
      ...(target.rule ? { rule: target.rule } : {}),
      ...(target.answeredBy ? { answeredBy: target.answeredBy } : {}),
    });
    const judgedHost = target.host ?? match[1].replace(/^\[|\]$/g, "");
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    upstream.pipe(client);
    // Nothing the client sends is passed on before its opening is judged: a TLS server name or a Host inside the
    // tunnel picks the site behind the judged address (a CDN's edge, a shared host), so it must be the judged host.
    // Before, `curl --connect-to denied:443:allowed:443 https://denied/` reached the denied site.
    client.off("data", collect);
    client.off("end", endedEarly);
    let opening = early.length ? Buffer.concat([head, ...early]) : head;
    const take = (chunk: Buffer) => {
      opening = opening.length ? Buffer.concat([opening, chunk]) : chunk;
      const verdict = judgeTunnelOpening(opening, judgedHost, match[2]);
      if ("more" in verdict) return;
      client.off("data", take);
      client.off("end", ended);
      if ("refuse" in verdict) return close(verdict.refuse);
      if (!verdict.plainHttp) {
        upstream.write(opening);
        client.pipe(upstream);
        return;
      }
      // Not TLS: no https: at all, so judged again as http: (what it sends is read as the plain HTTP it may be), and
      // an entry naming a scheme binds it as it binds absolute-form requests. Before, a tunnel was judged as https:
      // whatever it carried: with network.deny http://host:P, a page's ws://host:P (Chromium tunnels ws: through
      // CONNECT) or `curl -p http://host:P/` sent its plain request to the denied origin, and an allow of
      // https://host let plain text through. Nothing is read from the client meanwhile.
      client.pause();
      judge("http:", match[1].replace(/^\[|\]$/g, ""), match[2]).then(
        () => passPlain(),
        (error) => close(`it carries no TLS, and as plain text: ${refusal(error).reason}`),
      );
    };
    const passPlain = () => {
      // Plain HTTP: every later request on the tunnel is read for its Host too (see plainTunnelScanner).
      const scan = plainTunnelScanner(judgedHost, match[2]);
      const pass = (chunk: Buffer) => {
        const wrong = scan(chunk);
        if (wrong !== undefined) return void close(wrong);
        if (!upstream.write(chunk)) client.pause();
      };
      upstream.on("drain", () => client.resume());
      client.on("data", pass);
      client.once("end", ended);
      // Resumed first (data flows from the next tick on), so that a full upstream's pause in pass holds.
      client.resume();
      pass(opening);
    };
    const close = (why: string) => {
      report({
        target: asked,
        method: "CONNECT",
        allowed: false,
        reason: `The tunnel was closed: ${why}`,
        code: "url_not_allowed",
        details: { origin: `https://${asked}`, opening: why },
      });
      upstream.destroy();
      client.destroy();
    };
    const ended = () => upstream.end();
    client.on("data", take);
    client.once("end", ended);
    if (opening.length) take(Buffer.alloc(0));
    upstream.on("error", () => client.destroy());
  });
  const listen = options.listen ?? { port: 0, host: "127.0.0.1" };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if ("path" in listen) server.listen(listen.path, () => resolve());
    else server.listen(listen.port, listen.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  return {
    ...(typeof address === "object" && address !== null ? { port: address.port } : {}),
    ...("path" in listen ? { path: listen.path } : {}),
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A connection to a destination judged public, private or link-local that reaches this machine itself. */
class ThisMachine extends Error {
  readonly code = "url_not_allowed";
  readonly details: Record<string, unknown>;
  constructor(address: string, port: number) {
    super(
      `${address} is an address of this machine's own network interfaces: a connection to it reaches this machine ` +
        `itself (as 127.0.0.1 does), whatever its range; only a network.allow entry naming ${address} ` +
        "allows it",
    );
    this.details = { address, port, class: "this-machine" };
  }
}

// An address as the judge compares it (an IPv4-mapped address as its IPv4 one); "" for none.
const unmapped = (address: string | undefined) => address ? destinationKey(address) ?? address : "";

// Connects to the judged address. The judge classifies an address by its range, and this machine's own interfaces
// may carry any (a public address on a server, a documentation range in a container): a connection to one reaches
// the services of this machine listening on every address, and the kernel then gives it that same address as its
// source. Such a connection to a destination judged public is closed before anything is sent over it, unless the
// rule that allowed it names the address. Before, a page the browser's auto-answering host let reach "public"
// http://192.0.2.2:PORT/ (the machine's eth0 address) read a server listening on :: meant for this machine alone.
// Private too: a person's yes to "a private address" is no entry naming it, and where the judge may not list this
// machine's addresses (deno task serve) it cannot class them as loopback: with deny ["localhost"], a yes to
// http://[fd00::2]:PORT/ (this machine's own eth0 IPv6) read a server of this machine listening on ::. Link-local
// likewise (fe80::...%eth0, where the runtime connects to a zone: Node does).
//
// `client` is the connection it is made for: if that goes first, the connection is abandoned at once (a server that
// never answers the SYN, its backlog full or its packets dropped, kept it, and a descriptor of this process, for the
// two minutes of the connect's retries). `track` counts the socket in the proxy's own from its start.
function connectJudged(
  target: JudgedTarget,
  port: number,
  client: Duplex,
  track: (socket: Duplex) => void,
): Promise<net.Socket> {
  const address = target.addresses[0];
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, address, () => {
      client.off("close", abandon);
      socket.off("error", reject);
      const local = unmapped(socket.localAddress);
      const named = target.rule !== undefined &&
        new RegExp(`(^|[\\[/@])${unmapped(address).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[\\]:/])`, "i")
          .test(target.rule);
      const byRange = ["public", "private", "link-local"].includes(target.addressClass ?? "");
      if (byRange && local !== "" && local === unmapped(socket.remoteAddress) && !named) {
        socket.destroy();
        return reject(new ThisMachine(unmapped(address), port));
      }
      resolve(socket);
    });
    socket.once("error", reject);
    const abandon = () => {
      socket.destroy();
      reject(new Error("the client went before the connection was made"));
    };
    // Closed before it was made (abandoned, or the proxy closed): the wait ends with it.
    socket.once("close", () => reject(new Error("the connection closed before it was made")));
    track(socket);
    if (client.destroyed) abandon();
    else client.once("close", abandon);
  });
}
