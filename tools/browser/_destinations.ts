// Judges where the browser may go: the scheme, the origin against the
// allowlist, and the addresses a host name resolves to (so that a name on the
// allowlist that resolves to a private address is still judged as private).
// Answers are remembered per origin for the session; concurrent questions about
// one origin are asked once.

import dns from "node:dns/promises";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { ToolError } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import { type AddressClass, classifyAddress } from "./_addresses.ts";

/** Rules for the browser group (see `BrowserOptions`). */
export interface DestinationRules {
  /**
   * Origins that run without asking: `https://example.com`, `example.com` (http
   * and https), `*.example.com` (subdomains), with `:port` or `:*`; no port
   * means any port. A private or loopback address is covered only by an entry
   * that names it as an IP address or `localhost`.
   */
  allow?: readonly string[];
  /**
   * Origins refused without asking, whatever the allowlist says, in the same
   * forms as `allow`; an entry that names an IP address also refuses every host
   * name that resolves to it.
   */
  deny?: readonly string[];
  /** `allow`: loopback, link-local and private addresses run like public ones. Default `ask`. */
  privateNetworks?: "ask" | "allow";
}

interface Pattern {
  /** The entry as written. */
  entry: string;
  schemes?: string[];
  host: string;
  wildcard: boolean;
  port?: string;
  namesAddress: boolean;
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };
const SECURE: Record<string, string> = { "ws:": "http:", "wss:": "https:" };

function parsePattern(entry: string): Pattern {
  const m = entry.trim().toLowerCase().match(/^(?:(https?):\/\/)?(\*\.)?(\[[0-9a-f:.]+\]|[^:/\s]+)(?::(\d+|\*))?\/?$/);
  if (!m) throw new TypeError(`Invalid browser allowlist entry ${JSON.stringify(entry)}`);
  const host = m[3];
  return {
    entry,
    schemes: m[1] ? [`${m[1]}:`] : undefined,
    host,
    wildcard: m[2] !== undefined,
    port: m[4] === "*" ? undefined : m[4] ?? undefined,
    namesAddress: host === "localhost" || classifyAddress(host) !== undefined,
  };
}

/** One destination: an origin and the addresses it resolves to. */
export interface Destination {
  /** `scheme://host:port`. */
  origin: string;
  /** The addresses judged; the first is the one to connect to. */
  addresses: string[];
}

function refused(message: string, code: string, details: Record<string, unknown>): ToolError {
  return new ToolError(message, {
    code,
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: "Use an allowed address, or ask the user to allow this destination.",
    details,
  });
}

/** The per-session judge of browser destinations. */
export class Destinations {
  readonly #session: Session;
  readonly #patterns: Pattern[];
  readonly #denied: Pattern[];
  readonly #privateAllowed: boolean;
  readonly #answers = new Map<string, Promise<boolean>>();

  constructor(session: Session, rules: DestinationRules) {
    this.#session = session;
    this.#patterns = (rules.allow ?? []).map(parsePattern);
    this.#denied = (rules.deny ?? []).map(parsePattern);
    this.#privateAllowed = rules.privateNetworks === "allow";
  }

  /**
   * Judges a URL before the browser loads it: `file:` must lie in the
   * workspace, `http(s)`/`ws(s)` go through {@linkcode judgeHost}; anything else
   * (`about:blank`, `data:`) needs no network and no file. Throws a policy
   * `ToolError` when the URL may not be loaded.
   */
  async judgeUrl(raw: string, signal?: AbortSignal): Promise<void> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ToolError(`${JSON.stringify(raw)} is not a URL`, {
        code: "invalid_url",
        kind: "semantic",
        recoveryHint: "Give an absolute URL such as https://example.com/.",
      });
    }
    if (url.protocol === "file:") return void await this.judgeFile(url);
    if (url.protocol in DEFAULT_PORTS) {
      await this.judgeHost(url.protocol, url.hostname, url.port || DEFAULT_PORTS[url.protocol], signal);
      return;
    }
    if (url.href === "about:blank" || url.protocol === "data:") return;
    throw refused(
      `The browser may only open http, https and workspace file: URLs, not ${url.protocol}`,
      "url_not_allowed",
      {
        url: raw,
      },
    );
  }

  /** The real path of a `file:` URL, which must lie in the workspace. */
  async judgeFile(url: URL): Promise<string> {
    if (url.hostname !== "" && url.hostname !== "localhost") {
      throw refused(`file: URLs with a host (${url.hostname}) are not allowed`, "url_not_allowed", { url: url.href });
    }
    return await this.#session.policy.resolveForRead(fileURLToPath(url));
  }

  /**
   * Judges a host and port for `scheme` (`http:`, `https:`, `ws:`, `wss:`):
   * resolves it, classifies every address, and allows it by the allowlist, a
   * remembered answer, or the host's answer. Returns the origin and the
   * addresses to connect to; throws `url_not_allowed` or `permission_denied`.
   */
  async judgeHost(scheme: string, hostname: string, port: string, signal?: AbortSignal): Promise<Destination> {
    const web = SECURE[scheme] ?? scheme;
    if (!(web in DEFAULT_PORTS)) {
      throw refused(`The browser may not use ${scheme}`, "url_not_allowed", { scheme, hostname });
    }
    const host = hostname.toLowerCase().replace(/\.$/, "");
    const origin = `${web}//${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
    const addresses = await resolve(host);
    if (addresses.length === 0) {
      throw new ToolError(`${host} does not resolve to an address`, {
        code: "dns_failed",
        details: { host },
        recoveryHint: "Check the host name.",
      });
    }
    const denied = this.#denied.find((p) =>
      matches(p, web, host, port) || (p.namesAddress && addresses.some((a) => matches(p, web, a, port)))
    );
    if (denied) {
      throw refused(`The browser may not connect to ${origin}: the policy denies it`, "url_not_allowed", {
        origin,
        addresses,
        deniedBy: denied.entry,
      });
    }
    const classes = addresses.map((a) => classifyAddress(a) ?? "reserved");
    const found = classes.find((c) => c !== "public") as AddressClass | undefined;
    const inside = this.#privateAllowed && found !== "reserved" ? undefined : found;
    const pattern = this.#patterns.find((p) => matches(p, web, host, port));
    if (pattern && (!inside || pattern.namesAddress)) return { origin, addresses };
    const key = inside ? `${origin} (${inside})` : origin;
    let answer = this.#answers.get(key);
    if (!answer) {
      answer = this.#ask(origin, addresses, inside, signal);
      this.#answers.set(key, answer);
      // A question that failed (no one to ask, cancelled) is asked again next time.
      answer.catch(() => this.#answers.delete(key));
    }
    if (!await answer) {
      throw refused(
        `The browser may not connect to ${origin}${inside ? ` (a ${inside} address, ${addresses[0]})` : ""}: ` +
          "it is not on the allowlist and was denied",
        "url_not_allowed",
        { origin, addresses, class: inside ?? "public" },
      );
    }
    return { origin, addresses };
  }

  async #ask(origin: string, addresses: string[], inside: AddressClass | undefined, signal?: AbortSignal) {
    const outcome = await this.#session.choose<"allow" | "deny">({
      title: "Browser destination",
      message: inside
        ? `The browser wants to connect to ${origin}, which resolves to the ${inside} address ${addresses[0]}` +
          " (this machine or its network). Allow for this session?"
        : `The browser wants to connect to ${origin} (${addresses[0]}). Allow for this session?`,
      options: [{ value: "allow", label: "Allow this origin for this session" }, { value: "deny", label: "Deny" }],
      defaultChoice: inside ? "deny" : "allow",
    }, signal);
    return outcome.choice === "allow";
  }
}

function matches(p: Pattern, scheme: string, host: string, port: string): boolean {
  if (p.schemes && !p.schemes.includes(scheme)) return false;
  if (p.port !== undefined && p.port !== port) return false;
  const bare = host.replace(/^\[|\]$/g, "");
  const want = p.host.replace(/^\[|\]$/g, "");
  if (p.wildcard) return bare.endsWith(`.${want}`);
  if (net.isIP(bare) === 6 && net.isIP(want) === 6) return sameV6(bare, want);
  return bare === want;
}

function sameV6(a: string, b: string): boolean {
  try {
    return new URL(`http://[${a}]/`).hostname === new URL(`http://[${b}]/`).hostname;
  } catch {
    return false;
  }
}

async function resolve(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (net.isIP(bare)) return [bare];
  // The WHATWG parser already turned numeric hosts into dotted quads; anything left
  // that is all digits and dots is not a name a resolver should be trusted with.
  if (/^[\d.]+$/.test(bare) || /^0x/i.test(bare)) return [];
  try {
    return (await dns.lookup(bare, { all: true, verbatim: true })).map((r) => r.address);
  } catch {
    return [];
  }
}
