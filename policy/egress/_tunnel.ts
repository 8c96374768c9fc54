/**
 * What a CONNECT tunnel opens with, judged against the host the tunnel was
 * judged for. The proxy connects a tunnel to the address of the host named in
 * `CONNECT host:port`; the server behind that address (a CDN's edge, a shared
 * host) then picks the site by the name the client sends inside the tunnel:
 * the TLS ClientHello's server name (SNI), or a plain request's `Host`. A
 * tunnel judged for an allowed host that names another one inside reached the
 * other site through the allowed one's address (domain fronting): so the first
 * bytes the client sends are read before anything is passed on, and a TLS
 * server name or a `Host` that is not the judged host refuses the tunnel, as
 * does a ClientHello with an encrypted inner one (ECH), whose real server name
 * nobody outside can read; a SOCKS request, which names a destination of its
 * own, refuses it too. Bytes of any other protocol are passed on.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import net from "node:net";
import { domainToASCII } from "node:url";

/** The most bytes read of a tunnel's opening before it is judged (a ClientHello is 0.5-2 KiB, a request head less). */
export const MAX_TUNNEL_OPENING = 64 * 1024;

/** What the opening says: `more` (not complete yet), `pass` (`plainHttp`: not TLS, to be scanned), or a refusal. */
export type TunnelOpening = { more: true } | { pass: true; plainHttp?: true } | { refuse: string };

const ECH_EXTENSION = 0xfe0d;

// Where a server may end a header line: CRLF and LF, and a lone CR, which Python's http.server (its email parser)
// and other lenient parsers take as a line break too; the vertical tab, form feed, the information separators and
// NEL, which str.splitlines (older email parsers) does. Before, only LF (CRLF in the opening) split lines: in a tunnel
// judged for an allowed address, `GET /t HTTP/1.1\r\nX: y\rHost: secret.internal\r\nHost: <judged>` passed, and
// Python's http.server behind that address served the other site (`SECRET-SITE`).
// deno-lint-ignore no-control-regex
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c-\x1e\x85]/;

// A Host header line, also indented (a continuation line some lenient servers read as a header of its own).
const HOST_LINE = /^[ \t]*host[ \t]*:([^]*)$/i;

/**
 * The headers by which a server behind a load balancer takes the site from
 * its client (Express with `trust proxy`, Rails by default): a client's own
 * picks another site behind the judged address as a `Host` would. The proxy
 * drops them from an absolute-form request; in a tunnel they must name the
 * judged host.
 */
export const SITE_HEADERS: readonly string[] = Object.freeze([
  "x-forwarded-host",
  "x-forwarded-server",
  "x-host",
  "x-original-host",
  "forwarded",
]);

// A line of one of SITE_HEADERS: the name, the value.
const SITE_LINE = new RegExp(`^[ \\t]*(${SITE_HEADERS.join("|")})[ \\t]*:([^]*)$`, "i");

// The sites a SITE_HEADERS value names: a comma list of hosts, or Forwarded's `host=` parameters (quoted or not).
function namedSites(name: string, value: string): string[] {
  if (name.toLowerCase() !== "forwarded") return value.split(",").map((v) => v.trim()).filter((v) => v !== "");
  return [...value.matchAll(/(?:^|[;,\s])host[ \t]*=[ \t]*("[^"]*"|[^;,\s]*)/gi)].map((m) =>
    m[1].replace(/^"|"$/g, "")
  );
}

// Lower case, no trailing dot, IDN in punycode, IPv6 without brackets.
function canonical(name: string): string {
  const bare = name.trim().replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (net.isIP(bare)) return bare;
  return domainToASCII(bare) || bare;
}

// The handshake bytes of the TLS records at the start of `data`, and whether the ClientHello is complete in them.
function clientHello(data: Buffer): { hello?: Buffer; more?: true; error?: string } {
  const parts: Buffer[] = [];
  let at = 0;
  let have = 0;
  for (;;) {
    if (have >= 4) {
      const joined = Buffer.concat(parts);
      if (joined[0] !== 1) return { error: "the tunnel's TLS opening is not a ClientHello" };
      const length = joined.readUIntBE(1, 3);
      if (have >= 4 + length) return { hello: joined.subarray(4, 4 + length) };
    }
    if (data.length < at + 5) return { more: true };
    if (data[at] !== 0x16) return { error: "the tunnel's TLS opening is not a handshake" };
    const length = data.readUInt16BE(at + 3);
    if (data.length < at + 5 + length) return { more: true };
    parts.push(data.subarray(at + 5, at + 5 + length));
    have += length;
    at += 5 + length;
  }
}

// The server name and whether ECH is offered, from a ClientHello's body; undefined when it does not parse.
function helloNames(hello: Buffer): { name?: string; ech: boolean } | undefined {
  try {
    let at = 2 + 32; // version, random
    at += 1 + hello[at]; // session id
    at += 2 + hello.readUInt16BE(at); // cipher suites
    at += 1 + hello[at]; // compression methods
    if (at === hello.length) return { ech: false }; // no extensions at all
    const end = at + 2 + hello.readUInt16BE(at);
    if (end > hello.length) return undefined;
    at += 2;
    let name: string | undefined;
    let ech = false;
    while (at + 4 <= end) {
      const type = hello.readUInt16BE(at);
      const length = hello.readUInt16BE(at + 2);
      const body = hello.subarray(at + 4, at + 4 + length);
      if (body.length !== length) return undefined;
      if (type === ECH_EXTENSION) ech = true;
      if (type === 0) {
        // server_name_list: (type, length, name)*; one host_name is all TLS allows.
        let p = 2;
        while (p + 3 <= body.length) {
          const kind = body[p];
          const size = body.readUInt16BE(p + 1);
          const value = body.subarray(p + 3, p + 3 + size);
          if (value.length !== size) return undefined;
          if (kind === 0) {
            if (name !== undefined) return undefined;
            name = value.toString("latin1");
          }
          p += 3 + size;
        }
      }
      at += 4 + length;
    }
    return at === end ? { name, ech } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Judges the opening bytes of a tunnel judged for `host:port`: a TLS
 * ClientHello must name `host` as its server name (or none, for a tunnel to
 * an address) and offer no ECH; an HTTP/1 request must send `Host: host`
 * (with `:port` or none). Anything else passes.
 *
 * Needs no permissions.
 */
export function judgeTunnelOpening(data: Buffer, host: string, port: string): TunnelOpening {
  const judged = canonical(host);
  const literal = net.isIP(judged) !== 0;
  const tooLong = data.length >= MAX_TUNNEL_OPENING;
  if (data.length === 0) return { more: true };
  if (data[0] === 0x16) {
    const found = clientHello(data);
    if (found.error) return { refuse: found.error };
    if (found.more) {
      return tooLong
        ? { refuse: `the tunnel's TLS ClientHello is longer than ${MAX_TUNNEL_OPENING} bytes` }
        : { more: true };
    }
    const names = helloNames(found.hello!);
    if (names === undefined) return { refuse: "the tunnel's TLS ClientHello does not parse" };
    if (names.ech) {
      return {
        refuse: `the TLS ClientHello in the tunnel to ${host} offers encrypted client hello (ECH), whose server ` +
          "name the proxy cannot judge",
      };
    }
    if (names.name === undefined) {
      return literal ? { pass: true } : {
        refuse: `the TLS ClientHello in the tunnel to ${host} names no server: it must name ${host}`,
      };
    }
    if (canonical(names.name) !== judged) {
      return {
        refuse: `the TLS ClientHello in the tunnel to ${host} names the server ${
          JSON.stringify(names.name.slice(0, 253))
        }: a tunnel may only reach the host it was judged for`,
      };
    }
    return { pass: true };
  }
  // A SOCKS request names a destination of its own, which a SOCKS proxy behind the judged address connects to: before,
  // a tunnel judged for an allowed SOCKS5 proxy at 127.0.0.2:A that sent a greeting and CONNECT 127.0.0.3:B read the
  // denied server through it. SOCKS5 opens with version 5 and a count of methods, SOCKS4 and 4a with version 4 and
  // CONNECT (1) or BIND (2); a connection's first bytes are where a SOCKS server (or a mixed HTTP/SOCKS port) reads
  // them.
  if (data[0] === 0x05 || data[0] === 0x04) {
    if (data.length < 2) return { more: true };
    if ((data[0] === 0x05 && data[1] >= 1) || (data[0] === 0x04 && (data[1] === 1 || data[1] === 2))) {
      return {
        refuse: `the tunnel to ${host} opens a SOCKS${data[0]} request, which names a destination of its own: a ` +
          "tunnel may only reach the host it was judged for",
      };
    }
  }
  // Anything else is plain text to the proxy: every line of it is read for a Host (plainTunnelScanner), whatever it
  // starts with (servers skip empty lines before a request line). HTTP/2 without TLS names its site in HPACK-coded
  // headers the proxy does not decode: refused.
  const text = data.subarray(0, 64).toString("latin1").replace(/^[\r\n]+/, "");
  if (text.startsWith("PRI * HTTP/2")) {
    return { refuse: `the tunnel to ${host} opens HTTP/2 without TLS, whose site the proxy cannot read` };
  }
  if (text === "" && !tooLong) return { more: true };
  // An HTTP/1 request: a method, a space; its head must be whole before it is judged. A first line that is no
  // request line (SMTP's EHLO, IMAP, FTP, which wait for the server's answer) passes at once, scanned.
  if (!/^[A-Z]{1,20}( |$)/.test(text.slice(0, 24))) return { pass: true, plainHttp: true };
  const head = data.toString("latin1").replace(/^[\r\n]+/, "");
  const newline = head.indexOf("\n");
  if (newline < 0) {
    if (!tooLong) return { more: true };
    return { refuse: `the tunnel to ${host} opens with a line longer than ${MAX_TUNNEL_OPENING} bytes` };
  }
  if (!/^[A-Z]{1,20} \S+ HTTP\/1\.[01]\r?$/.test(head.slice(0, newline))) return { pass: true, plainHttp: true };
  const end = head.indexOf("\r\n\r\n");
  if (end < 0) {
    if (!tooLong) return { more: true };
    return { refuse: `the request in the tunnel to ${host} has a head longer than ${MAX_TUNNEL_OPENING} bytes` };
  }
  const lines = head.slice(0, end).split(LINE_BREAK);
  if (!/^[A-Z]{1,20} \S+ HTTP\/1\.[01]$/.test(lines[0])) return { pass: true, plainHttp: true };
  const hosts = lines.slice(1).flatMap((l) => l.match(HOST_LINE)?.[1].trim() ?? []);
  if (hosts.length !== 1) {
    return { refuse: `the request in the tunnel to ${host} sends ${hosts.length} Host headers: it must send one` };
  }
  const wrong = wrongHost(hosts[0], judged, port, host) ?? wrongTarget(lines[0], judged, port, host);
  return wrong === undefined ? { pass: true, plainHttp: true } : { refuse: wrong };
}

// Why a request line's target names another site than the judged host, or undefined when it names none or that one.
// A server takes the site from an absolute-form target before the Host header (RFC 9112 3.2.2), and so does the
// usual `new URL(req.url, base)`: before, `GET http://secret.internal/ HTTP/1.1` with `Host: <judged host>` in a
// tunnel reached the other site behind the judged address. The target is read as that idiom reads it (a
// network-path `//other/`, backslashes, `https:other`), against the judged host as base.
//
// An authority-form target (`CONNECT other:443`, `[::1]:8080`, RFC 9112 3.2.3) names a site too: a forward proxy
// behind the judged address (squid, tinyproxy, a dev proxy allowed by its address) connects to it. Before, a tunnel
// judged for an allowed proxy at 127.0.0.1:A that sent `CONNECT 127.0.0.1:B HTTP/1.1` with `Host: 127.0.0.1:A`
// reached the unlisted server on port B (it logged `GET /secret`): the URL parser reads `127.0.0.1:B` as a relative
// path and `secret.internal:443` as a URL of the scheme `secret.internal:` with no host, so neither named a site.
//
// The line is read as the most lenient server reads it: Python's http.server strips it and splits it at any
// whitespace (`str.split()`: also VT, FF, \x1c-\x1f, NEL, NBSP), and takes `GET target` without a version (HTTP/0.9).
// Before, `GET\x0bhttp://denied/\x0bHTTP/1.1`, ` GET http://denied/ HTTP/1.1` and `GET http://denied/` passed, and a
// forward proxy written on it behind the judged address fetched the denied host. A target naming the judged host
// is compared by the port it leads to: `http://judged/` is port 80, not the tunnel's (before, it passed for a tunnel
// judged for `judged:A`, and such a proxy fetched port 80 of the judged host, which nobody judged).
function wrongTarget(line: string, judged: string, port: string, host: string): string | undefined {
  const words = line.split(REQUEST_SPACE).filter((word) => word !== "");
  // In any case: a lenient server or proxy takes `connect` and `http/1.1` as well.
  const requestLine = (words.length === 3 && /^[A-Z]{1,20}$/i.test(words[0]) && /^HTTP\//i.test(words[2])) ||
    (words.length === 2 && words[0] === "GET");
  const target = requestLine ? words[1] : undefined;
  if (target === undefined || target === "*") return undefined;
  const wrong = () =>
    `the request in the tunnel to ${host} asks for ${
      JSON.stringify(target.slice(0, 253))
    }: a tunnel may only reach the host it was judged for`;
  const authority = target.match(/^(\[[^\]]*\]|[^/\\?#@\[\]:]+):(\d+)$/);
  if (authority) {
    return canonical(authority[1]) === judged && String(Number(authority[2])) === port ? undefined : wrong();
  }
  const base = `http://${judged.includes(":") ? `[${judged}]` : judged}:${port}/`;
  let url: URL;
  try {
    url = new URL(target, base);
  } catch {
    return undefined;
  }
  if (url.host === "") return undefined;
  // A path (origin form) stays on the judged host and port; a target with a scheme or `//` names its own.
  if (url.href.startsWith(base) && !/^[a-z][a-z0-9+.-]*:|^[\\/]{2}/i.test(target)) return undefined;
  const leadsTo = url.port || TARGET_PORTS[url.protocol];
  return canonical(url.hostname) === judged && leadsTo === port ? undefined : wrong();
}

// Whitespace between the words of a request line, as Python's `str.split()` reads it (latin1 text).
// deno-lint-ignore no-control-regex
const REQUEST_SPACE = /[\t\n\v\f\r \x1c-\x1f\x85\xa0]+/;

// The port a target without one leads to, by its scheme.
const TARGET_PORTS: Record<string, string> = {
  "http:": "80",
  "https:": "443",
  "ws:": "80",
  "wss:": "443",
  "ftp:": "21",
};

// Why a Host value is not the judged host, or undefined when it is.
function wrongHost(value: string, judged: string, port: string, host: string): string | undefined {
  const m = value.match(/^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/);
  if (m && canonical(m[1]) === judged && (m[2] === undefined || String(Number(m[2])) === port)) return undefined;
  return `the request in the tunnel to ${host} sends Host ${
    JSON.stringify(value.slice(0, 253))
  }: a tunnel may only reach the host it was judged for`;
}

/**
 * For a tunnel whose opening passed and is not TLS: a scanner of everything
 * the client sends (the opening first), line by line across chunks, that
 * returns a refusal's reason at the first `Host` line or request target
 * naming another host (or an `Upgrade: h2c`). Requests
 * pipelined or kept alive after the first are plain text too, and each could
 * name another site behind the judged address; a body line that reads like
 * such a header closes the tunnel too (it errs on the side of closing).
 */
export function plainTunnelScanner(host: string, port: string): (chunk: Buffer) => string | undefined {
  const judged = canonical(host);
  let carry = "";
  // The text after the last LF: a request line is read up to its LF, whitespace inside it and all (see wrongTarget).
  let lineCarry = "";
  return (chunk) => {
    const added = chunk.toString("latin1");
    const requestLines = (lineCarry + added).split("\n");
    lineCarry = requestLines.pop()!;
    // A line longer than a server reads (Python: 64 KiB) is refused by it: only a bounded start is kept.
    if (lineCarry.length > MAX_TUNNEL_OPENING) lineCarry = lineCarry.slice(0, MAX_TUNNEL_OPENING);
    for (const line of requestLines) {
      const target = wrongTarget(line, judged, port, host);
      if (target !== undefined) return target;
    }
    const text = carry + added;
    const lines = text.split(LINE_BREAK);
    carry = lines.pop()!;
    if (carry.length > MAX_TUNNEL_OPENING && HOST_LINE.test(carry)) {
      return `the request in the tunnel to ${host} sends a Host line longer than ${MAX_TUNNEL_OPENING} bytes`;
    }
    // A line longer than that is no header anyone reads: only its start is kept, to know whether it was one.
    if (carry.length > MAX_TUNNEL_OPENING) carry = carry.slice(0, 16);
    for (const line of lines) {
      if (/^upgrade[ \t]*:.*\bh2c\b/i.test(line)) {
        return `the request in the tunnel to ${host} asks to switch to HTTP/2 without TLS, whose site the proxy cannot read`;
      }
      const target = wrongTarget(line, judged, port, host);
      if (target !== undefined) return target;
      // X-Forwarded-Host and its kin pick the site as Host does, where a server trusts them: before, a tunnel's
      // request with the judged Host and `X-Forwarded-Host: secret.internal` (or `Forwarded: host=...`) read
      // SECRET-SITE from such a server behind the judged address.
      const site = line.match(SITE_LINE);
      for (const named of site ? namedSites(site[1], site[2]) : []) {
        const wrong = wrongHost(named, judged, port, host);
        if (wrong !== undefined) return wrong.replace(" sends Host ", ` sends ${site![1]} `);
      }
      const m = line.match(HOST_LINE);
      if (!m) continue;
      const wrong = wrongHost(m[1].trim(), judged, port, host);
      if (wrong !== undefined) return wrong;
    }
    return undefined;
  };
}
