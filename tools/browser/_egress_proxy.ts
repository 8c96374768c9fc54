// The browser's only way out: the policy's egress proxy on loopback, which
// judges every request the browser sends (navigations, redirects, subframes,
// subresources, workers, WebSockets) and connects to the very address it
// judged. Playwright's `route` does not see redirects; this does. Only the
// browser, which holds the credentials, may use it: other local processes
// cannot use the browser's grants through it.

import { type EgressProxy, startEgressProxy as startProxy } from "@toolfence/policy";
import type { Destination } from "./_destinations.ts";

export { BLOCKED_HEADER, type EgressProxy } from "@toolfence/policy";

/** A request the proxy refused. */
export interface BlockedRequest {
  /** The URL (or `host:port` of a tunnel) the browser asked for. */
  url: string;
  /** Why it was refused. */
  reason: string;
}

/** Judges a destination; throws to refuse it. */
export type JudgeHost = (scheme: string, hostname: string, port: string) => Promise<Pick<Destination, "addresses">>;

/** Starts the browser's proxy on 127.0.0.1; `onBlocked` hears of every refusal. */
export function startEgressProxy(
  judge: JudgeHost,
  onBlocked: (entry: BlockedRequest) => void,
  credentials: { username: string; password: string },
): Promise<EgressProxy & { readonly port: number }> {
  return startProxy({
    judge,
    credentials,
    onConnection: (c) => void (c.allowed || onBlocked({ url: c.target, reason: c.reason ?? "refused" })),
  }) as Promise<EgressProxy & { readonly port: number }>;
}
