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
