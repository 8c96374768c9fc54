// Host and Origin checks against DNS rebinding. A page on a hostile site can
// make the browser send requests to a server on loopback, either by resolving
// its own name to 127.0.0.1 (the Host header then names the hostile site) or
// by a cross-site fetch (the Origin header names the hostile site). Requests
// whose Host is not one this server answers to, or that carry an Origin that
// is not allowed, are refused before anything else reads them. Clients that
// are not browsers send no Origin, and are not affected by that check.

/** Which Host and Origin values a server accepts. */
export interface OriginPolicy {
  /** Host header values (`name` or `name:port`), lowercase. A name without a port matches any port. */
  hosts: readonly string[];
  /** Origins (`scheme://name[:port]`), lowercase, without a trailing slash. */
  origins: readonly string[];
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** Whether `hostname` (as `Deno.serve` or `node:http` take it) is a loopback address. */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return name === "localhost" || name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * The default policy of a server listening on `hostname:port`, widened by
 * `extraHosts` and `extraOrigins` (e.g. the public name of a reverse proxy).
 */
export function originPolicy(
  hostname: string,
  port: number,
  extraHosts: readonly string[] = [],
  extraOrigins: readonly string[] = [],
): OriginPolicy {
  const bracketed = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
  const names = new Set([bracketed.toLowerCase()]);
  if (isLoopbackHost(hostname)) { for (const name of LOOPBACK_NAMES) names.add(name); }
  const hosts = [...names].map((name) => `${name}:${port}`);
  for (const extra of extraHosts) hosts.push(extra.toLowerCase());
  const origins = new Set<string>();
  for (const host of hosts) {
    if (!/:\d+$/.test(host)) continue;
    origins.add(`http://${host}`);
    origins.add(`https://${host}`);
  }
  for (const extra of extraHosts) {
    if (!/:\d+$/.test(extra)) {
      origins.add(`http://${extra.toLowerCase()}`);
      origins.add(`https://${extra.toLowerCase()}`);
    }
  }
  for (const extra of extraOrigins) origins.add(extra.toLowerCase().replace(/\/+$/, ""));
  return { hosts, origins: [...origins] };
}

function hostMatches(allowed: string, host: string): boolean {
  if (allowed === host) return true;
  // An entry without a port allows that name on any port.
  if (/:\d+$/.test(allowed)) return false;
  const name = host.replace(/:\d+$/, "");
  return name === allowed;
}

/**
 * Why a request is refused by `policy`, or undefined when its Host and Origin
 * are allowed. A missing Host header is refused (HTTP/1.1 requires one).
 */
export function refusedOrigin(headers: Headers, policy: OriginPolicy): string | undefined {
  const host = headers.get("host")?.toLowerCase();
  if (!host) return "the request has no Host header";
  if (!policy.hosts.some((allowed) => hostMatches(allowed, host))) {
    return `the Host ${JSON.stringify(host)} is not one this server answers to (allow it with --allowed-host)`;
  }
  const origin = headers.get("origin");
  if (origin === null) return undefined;
  const normal = origin.toLowerCase().replace(/\/+$/, "");
  if (!policy.origins.includes(normal)) {
    return `the Origin ${JSON.stringify(origin)} is not allowed (allow it with --allowed-origin)`;
  }
  return undefined;
}

// CORS, for a browser client on an origin the policy allows (the server's own, or one given with --allowed-origin):
// without it the browser sends no cross-origin POST (its preflight, which carries no token, was refused 401), and
// reads neither an answer nor the Mcp-Session-Id header of one. Origins the policy refuses are answered 403 above
// all this, with no CORS headers.

/** The request headers a browser client of MCP sends beyond the safelisted ones. */
const CORS_REQUEST_HEADERS = "authorization, content-type, accept, last-event-id, mcp-session-id, mcp-protocol-version";
/** The answer's headers a browser client must read. */
const CORS_EXPOSED_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after";

/** The request's Origin when `policy` allows it (CORS answers it by name), else undefined. */
export function corsOrigin(headers: Headers, policy: OriginPolicy): string | undefined {
  const origin = headers.get("origin");
  if (origin === null) return undefined;
  return policy.origins.includes(origin.toLowerCase().replace(/\/+$/, "")) ? origin : undefined;
}

/** Whether `request` is a CORS preflight (OPTIONS naming the method to come). */
export function isPreflight(request: Request): boolean {
  return request.method === "OPTIONS" && request.headers.has("access-control-request-method");
}

/** The answer to the preflight of an allowed origin: the methods and headers MCP over HTTP uses. */
export function preflightAnswer(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST, DELETE",
      "access-control-allow-headers": CORS_REQUEST_HEADERS,
      "access-control-max-age": "600",
      vary: "Origin",
    },
  });
}

/** `response` with the CORS headers of an allowed origin (a copy when its headers cannot be changed). */
export function withCors(response: Response, origin: string): Response {
  const add = (headers: Headers) => {
    headers.set("access-control-allow-origin", origin);
    headers.set("access-control-expose-headers", CORS_EXPOSED_HEADERS);
    if (!/\borigin\b/i.test(headers.get("vary") ?? "")) headers.append("vary", "Origin");
  };
  try {
    add(response.headers);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    add(headers);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}
