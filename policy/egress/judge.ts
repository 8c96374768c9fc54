/**
 * The one judge of network destinations, for the browser's proxy and the
 * sandboxed commands' proxy alike: the scheme, the host against the policy's
 * `network.allow` and `network.deny` (hosts, `*.` wildcards, optional scheme
 * and port), and the addresses the host resolves to, resolved here, so that
 * a name on the allowlist that resolves to a private address is still judged
 * as private, and the caller connects to the very address judged (no DNS
 * rebinding between judging and connecting). An allowing answer is
 * remembered for the origin asked about, a refusing one for its whole host
 * (every port and scheme, not asked again); concurrent questions about one
 * origin are asked once, and a caller may bound how many questions it asks
 * (a {@linkcode QuestionBudget}, one per command).
 *
 * @module
 */
import dns from "node:dns/promises";
import net from "node:net";
import os from "node:os";
import { domainToASCII } from "node:url";
import { ToolError } from "@toolfence/core";
import { isRuntimePermissionError, queryRuntimePermission } from "@toolfence/internal";
import { type AddressClass, classifyAddress, connectedKey, destinationKey, inNetwork } from "./addresses.ts";

/** How long the list of this machine's own addresses is reused. */
const OWN_ADDRESSES_MS = 5_000;
let ownAddresses: { at: number; addresses: Set<string>; networks: string[] } | undefined;

// The shortest prefixes taken for a network this machine is on: a wider one (a misconfigured /0) is not a LAN.
const MIN_PREFIX = { 4: 8, 6: 16 } as const;

// The addresses of this machine's own interfaces (each as its destinationKey) and the networks they are on (CIDR,
// loopback's left out), when the runtime lets them be listed without a prompt (Deno: --allow-sys=networkInterfaces;
// Node: always); else none, and the proxy's check of each connection (it closes one judged public or private whose
// source is its destination) is what stops this machine's own.
function ownInterfaces(): { addresses: Set<string>; networks: string[] } {
  const now = Date.now();
  if (ownAddresses && now - ownAddresses.at < OWN_ADDRESSES_MS) return ownAddresses;
  const addresses = new Set<string>();
  const networks: string[] = [];
  if (queryRuntimePermission("sys", "networkInterfaces").allowed) {
    try {
      for (const list of Object.values(os.networkInterfaces())) {
        for (const item of list ?? []) {
          addresses.add(destinationKey(item.address) ?? item.address);
          const prefix = Number(item.cidr?.split("/")[1]);
          const family = net.isIP(item.address) as 4 | 6;
          if (!item.internal && item.cidr && family && prefix >= MIN_PREFIX[family]) networks.push(item.cidr);
        }
      }
    } catch (error) {
      if (!isRuntimePermissionError(error)) throw error;
    }
  }
  ownAddresses = { at: now, addresses, networks };
  return ownAddresses;
}

// The class of an address as a destination: one of this machine's own interfaces reaches this machine itself, as
// loopback does, whatever its range (a server's public address; 192.0.2.2 on a container's eth0); another address of
// a network an interface is on directly is this machine's network, private whatever its range (the gateway
// 192.0.2.1 here; a public /24 shared with other tenants' servers). Before, a browser under a host answering
// automatically read a server of another machine at 198.51.100.7, on a network of this machine's veth, as public.
//
// A link-local one of this machine's own too (fe80::fc:ff:fe00:1%eth0, which Node connects to and a server listening
// on :: answers): before, it kept its class, so a deny of localhost did not cover it and a person's yes let it through.
function destinationClass(address: string): AddressClass {
  const found = classifyAddress(address) ?? "reserved";
  if (found !== "public" && found !== "private" && found !== "link-local") return found;
  const own = ownInterfaces();
  if (own.addresses.has(destinationKey(address) ?? address)) return "loopback";
  return found === "public" && own.networks.some((cidr) => inNetwork(address, cidr)) ? "private" : found;
}

/** The destination rules (the policy file's `network` section). */
export interface EgressRules {
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

/** A destination the judge let through. */
export interface Destination {
  /** `scheme://host:port` (ws and wss judged as http and https). */
  origin: string;
  /** The host as judged: lower case, no trailing dot, IDN in punycode. */
  host: string;
  /** The port. */
  port: string;
  /** The addresses judged; the first is the one to connect to. */
  addresses: string[];
  /** The class of the first address that is not public, or `public`. */
  addressClass: AddressClass;
  /** The `network.allow` entry that allowed it, when one did. */
  rule?: string;
  /** Who allowed it: a rule, a person, the MCP client, an automatic default (each answer once, then remembered). */
  answeredBy: "rule" | "person" | "client" | "auto";
}

/**
 * What a person is asked about: a destination that no rule decided. A host
 * name no rule allows is asked about before it is looked up (no addresses
 * yet); when it then resolves to an address inside, that is asked too.
 */
export interface DestinationQuestion {
  /** `scheme://host:port`. */
  origin: string;
  /** The addresses it resolves to, the one inside first when `inside` is given; empty when not looked up yet. */
  addresses: string[];
  /** The class of an address that reaches this machine or its network, when one does. */
  inside?: AddressClass;
}

/** An answer to a {@linkcode DestinationQuestion}. */
export interface DestinationAnswer {
  /** Whether the destination may be reached (for the rest of the session, or the asker's; see `holds`). */
  allowed: boolean;
  /** Who answered. */
  answeredBy: "person" | "client" | "auto";
  /**
   * How long a yes holds: for the rest of the session (the default), or for its asker only (the command, or the
   * browser call, whose {@linkcode QuestionBudget} came with the question; without one, for the connection asked
   * about): an MCP client's yes under `answers.elicitation: once`, which allows one action and grants nothing.
   */
  holds?: "session" | "asker";
}

/**
 * How many questions one asker (a command) may still cause: each new question
 * takes one; once none is left, destinations that would need one are refused
 * without asking. Remembered answers and rules need none.
 */
export interface QuestionBudget {
  /** The most questions in all. */
  readonly max: number;
  /** The questions asked so far. */
  asked: number;
  /** The yes answers that hold for this asker only (see {@linkcode DestinationAnswer.holds}), by what they answer. */
  readonly held?: Map<string, Promise<DestinationAnswer>>;
}

/** Asks whoever may be asked about a destination; throws when nobody can answer. */
export type AskDestination = (question: DestinationQuestion, signal?: AbortSignal) => Promise<DestinationAnswer>;

/** Options of a {@linkcode DestinationJudge}. */
export interface DestinationJudgeOptions {
  /** Asks about destinations no rule decides; without it they are refused. */
  ask?: AskDestination;
  /** Resolves a host name to its addresses; default the system resolver (`dns.lookup`, with /etc/hosts). */
  resolve?: (host: string) => Promise<string[]>;
  /** Who connects, in messages: default `The browser`. */
  who?: string;
}

interface Pattern {
  entry: string;
  schemes?: string[];
  host: string;
  wildcard: boolean;
  port?: string;
  namesAddress: boolean;
}

// The addresses `localhost` names (the ones a `localhost` allow entry allows).
const LOCALHOST_ADDRESSES = ["127.0.0.1", "::1"] as const;
const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };
const SECURE: Record<string, string> = { "ws:": "http:", "wss:": "https:" };

/** The default port of a scheme the judge knows (`http:`, `https:`, `ws:`, `wss:`), else `undefined`. */
export function defaultPort(scheme: string): string | undefined {
  return DEFAULT_PORTS[scheme];
}

// Lower case, no trailing dot, IDN in punycode; IPv6 without brackets. Undefined when it is no host name.
function canonicalHost(hostname: string): string | undefined {
  const bare = hostname.trim().replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (bare === "") return undefined;
  if (net.isIP(bare)) return bare;
  if (isNumericSpelling(bare)) return undefined;
  // The trailing dot and the empty labels are judged after IDNA's mapping, which turns the ideographic and
  // full-width full stops (U+3002, U+FF0E, U+FF61) into dots: `x.denied.test..` and `x.denied.test。` were
  // `x.denied.test.` to the judge, which no deny entry matched (a person was asked about a denied host), and to the
  // resolver the denied host itself.
  const ascii = domainToASCII(bare).replace(/\.$/, "");
  if (ascii === "" || ascii.split(".").some((label) => label === "")) return undefined;
  // A name the mapping made an address or a numeric form is a numeric spelling too: full-width digits map to ASCII
  // ones, and Node's domainToASCII parses `2130706433` as the WHATWG parser does (127.0.0.1; Deno's leaves it).
  if (net.isIP(ascii) || isNumericSpelling(ascii)) return undefined;
  return ascii;
}

// Numeric forms the WHATWG parser would turn into an address (2130706433, 0x7f.1, 017700000001) are not names a
// resolver should be trusted with; the URL parser already gave every client the address.
function isNumericSpelling(host: string): boolean {
  return /^[\d.]+$/.test(host) || /^0x/i.test(host) || /(^|\.)0x[0-9a-f]*$/i.test(host);
}

function parsePattern(entry: string): Pattern {
  const m = entry.trim().toLowerCase().match(/^(?:(https?):\/\/)?(\*\.)?(\[[0-9a-f:.]+\]|[^:/\s]+)(?::(\d+|\*))?\/?$/);
  const host = m ? canonicalHost(m[3]) ?? m[3] : undefined;
  if (!m || host === undefined) throw new TypeError(`Invalid network allowlist entry ${JSON.stringify(entry)}`);
  return {
    entry,
    schemes: m[1] ? [`${m[1]}:`] : undefined,
    host,
    wildcard: m[2] !== undefined,
    port: m[4] === "*" ? undefined : m[4] ?? undefined,
    namesAddress: host === "localhost" || classifyAddress(host) !== undefined,
  };
}

/**
 * Whether one of these `network.allow` entries names a loopback destination
 * (`localhost`, `127.0.0.1:8080`, `[::1]`, any 127/8 or mapped form): then a
 * sandboxed command's loopback requests must go to the proxy (which connects
 * from the host, where that server is) rather than straight into the
 * sandbox's own loopback. Invalid entries are ignored here (the judge refuses
 * them where they are parsed).
 */
export function allowsLoopback(entries: readonly string[]): boolean {
  return entries.some((entry) => {
    try {
      const { host, wildcard } = parsePattern(entry);
      return !wildcard && (host === "localhost" || classifyAddress(connectedKey(host) ?? host) === "loopback");
    } catch {
      return false;
    }
  });
}

// `denying`: the entry is a deny entry. `localhost` names loopback: a deny entry every loopback address (127/8, ::1,
// mapped, and this machine's own interface addresses where they can be listed), an allow entry the addresses the name resolves to (127.0.0.1, ::1). Before, a deny of `localhost` refused
// the name only, and `curl http://127.0.0.1:port/` read the server it denied once a person said yes.
function matches(p: Pattern, scheme: string, host: string, port: string, denying = false): boolean {
  if (p.schemes && !p.schemes.includes(scheme)) return false;
  if (p.port !== undefined && p.port !== port) return false;
  if (p.wildcard) return host.endsWith(`.${p.host}`);
  // A deny entry refuses every form that leads to its address (NAT64, 6to4, compatible, Teredo: a gateway or a relay
  // delivers them there); an allow entry allows the address itself (IPv4-mapped, which a socket connects to as the
  // IPv4 address, is the same): before, an allow of 127.0.0.1:8080 or localhost:8080 allowed [64:ff9b::7f00:1]:8080,
  // and the proxy sent it off this machine to the network's NAT64 gateway, not to the local server the entry named.
  const key = denying ? destinationKey : connectedKey;
  if (p.host === "localhost" && net.isIP(host.replace(/%.*$/, "")) !== 0) {
    const address = key(host) ?? host;
    return denying
      ? destinationClass(address) === "loopback"
      : (LOCALHOST_ADDRESSES as readonly string[]).includes(address);
  }
  if (net.isIP(host) !== 0 && net.isIP(p.host) !== 0) return key(host) === key(p.host);
  return host === p.host;
}

async function systemResolve(host: string): Promise<string[]> {
  try {
    return (await dns.lookup(host, { all: true, verbatim: true })).map((r) => r.address);
  } catch {
    return [];
  }
}

/**
 * Whether `rules` allow `hostname:port` for `scheme` by name alone: an
 * `allow` entry matches and no `deny` entry does. For the command analysis
 * (a `curl` to a host on the list runs without asking); the proxy still
 * judges the connection, addresses and all.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { allowedByName } from "@toolfence/policy";
 * console.log(allowedByName({ allow: ["*.example.com"] }, "https:", "docs.example.com", "443")); // true
 * ```
 */
export function allowedByName(rules: EgressRules, scheme: string, hostname: string, port: string): boolean {
  const web = SECURE[scheme] ?? scheme;
  const host = canonicalHost(hostname);
  if (host === undefined || !(web in DEFAULT_PORTS)) return false;
  const denied = (rules.deny ?? []).some((entry) => matches(parsePattern(entry), web, host, port, true));
  return !denied && (rules.allow ?? []).some((entry) => matches(parsePattern(entry), web, host, port));
}

function refused(message: string, details: Record<string, unknown>): ToolError {
  return new ToolError(message, {
    code: "url_not_allowed",
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: "Use an allowed destination, or ask the user to add it to network.allow.",
    details,
  });
}

/**
 * Judges destinations by {@linkcode EgressRules}: denied entries first (by
 * name, and by address for entries that name one), then the address classes
 * (loopback, private, link-local, unspecified, reserved are allowed only by
 * an entry that names the address or `localhost`, or by a person), then the
 * allowlist, then a question. Throws `url_not_allowed` (details: `origin`,
 * `addresses`, `deniedBy` or `class`, `answeredBy`) or `dns_failed`.
 *
 * Requires `--allow-net` for name resolution (`--allow-sys` on Deno for the
 * system resolver).
 *
 * @example
 * ```ts
 * import { DestinationJudge } from "@toolfence/policy";
 * const judge = new DestinationJudge({ allow: ["127.0.0.1:8080"] });
 * const target = await judge.judge("http:", "127.0.0.1", "8080");
 * console.log(target.addresses[0], target.rule); // 127.0.0.1 127.0.0.1:8080
 * ```
 */
export class DestinationJudge {
  readonly #allowed: Pattern[];
  readonly #denied: Pattern[];
  readonly #privateAllowed: boolean;
  readonly #options: DestinationJudgeOptions;
  readonly #answers = new Map<string, Promise<DestinationAnswer>>();
  // Hosts a question was refused for, with that answer: refused on every port and scheme without asking again.
  readonly #refusedHosts = new Map<string, DestinationAnswer>();
  // The question being asked about a host, if one is.
  readonly #asking = new Map<string, Promise<DestinationAnswer>>();
  // Whose question each asked one is (its budget): a yes that holds for its asker only answers no other.
  readonly #askers = new WeakMap<Promise<DestinationAnswer>, QuestionBudget | undefined>();

  /** A judge of `rules`; throws `TypeError` on an entry it cannot read. */
  constructor(rules: EgressRules, options: DestinationJudgeOptions = {}) {
    this.#allowed = (rules.allow ?? []).map(parsePattern);
    this.#denied = (rules.deny ?? []).map(parsePattern);
    this.#privateAllowed = rules.privateNetworks === "allow";
    this.#options = options;
  }

  /**
   * Judges `hostname:port` for `scheme` (`http:`, `https:`, `ws:`, `wss:`;
   * a CONNECT tunnel is `https:`): resolves it, classifies every address,
   * and allows it by the allowlist, a remembered answer, or the asker's,
   * within `budget` when one is given.
   */
  async judge(
    scheme: string,
    hostname: string,
    port: string,
    signal?: AbortSignal,
    budget?: QuestionBudget,
  ): Promise<Destination> {
    const who = this.#options.who ?? "The browser";
    const web = SECURE[scheme] ?? scheme;
    if (!(web in DEFAULT_PORTS)) throw refused(`${who} may not use ${scheme}`, { scheme, hostname });
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
      throw refused(`${who} may not connect to port ${JSON.stringify(port)}`, { hostname, port });
    }
    const host = canonicalHost(hostname);
    const shownHost = host ?? hostname.toLowerCase();
    const origin = `${web}//${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${port}`;
    if (host === undefined) throw unresolved(shownHost, origin);
    // Judged by name before any lookup: a name refused anyway is never sent to a resolver,
    // where a command could spell data into it (DNS exfiltration).
    const deniedByName = this.#denied.find((p) => matches(p, web, host, port, true));
    if (deniedByName) throw deniedBy(who, origin, [], deniedByName);
    let pattern = this.#allowed.find((p) => matches(p, web, host, port));
    // `localhost` is judged as the loopback address an entry names (127.0.0.1:8080, [::1]:8080), and connected to
    // at that very address: before, with 127.0.0.1:8080 on the list, `curl http://localhost:8080/` was a name not
    // on the list (asked about, refused), while the same server by its address was allowed.
    let pinned: string[] | undefined;
    for (const address of pattern || host !== "localhost" ? [] : LOCALHOST_ADDRESSES) {
      pattern = this.#allowed.find((p) => p.namesAddress && matches(p, web, address, port));
      if (pattern) {
        pinned = [address];
        break;
      }
    }
    const literal = net.isIP(host) !== 0 || pinned !== undefined;
    const ask = this.#options.ask;
    if (!pattern && !literal && ask === undefined) {
      throw refused(`${who} may not connect to ${origin}: it is not on the policy's network.allow`, {
        origin,
        addresses: [],
        answeredBy: "rule",
      });
    }
    // A name no rule allows is asked about before it is looked up, for the same reason.
    const first = !pattern && !literal
      ? await this.#answer(who, origin, origin, host, { origin, addresses: [] }, signal, budget)
      : undefined;
    const addresses = pinned ?? (literal ? [host] : await (this.#options.resolve ?? systemResolve)(host));
    if (addresses.length === 0 || addresses.some((a) => !net.isIP(a))) throw unresolved(shownHost, origin);
    const denied = this.#denied.find((p) => p.namesAddress && addresses.some((a) => matches(p, web, a, port, true)));
    if (denied) throw deniedBy(who, origin, addresses, denied);
    const classes = addresses.map(destinationClass);
    const found = classes.find((c) => c !== "public");
    // The unspecified address is no destination: a connection to it reaches this machine's loopback (0.0.0.0 is
    // 127.0.0.1 to the kernel), which no deny entry naming 127.0.0.1 or localhost would catch. Allowed only by an
    // entry naming it, never by a question nor by `privateNetworks`: before, a deny of 127.0.0.1 and localhost let
    // `curl http://0.0.0.0:port/` read the denied server once a person said yes to "an unspecified address".
    if (classes.includes("unspecified") && !pattern?.namesAddress) {
      const address = addresses[classes.indexOf("unspecified")];
      throw refused(
        `${who} may not connect to ${origin} (${address}, the unspecified address, which reaches this machine ` +
          "itself): only a network.allow entry naming it allows it; name the address meant (127.0.0.1) instead",
        { origin, addresses, class: "unspecified", answeredBy: "rule" },
      );
    }
    const inside = this.#privateAllowed && found !== "reserved" ? undefined : found;
    const addressClass = found ?? "public";
    if (pattern && (!inside || pattern.namesAddress)) {
      return { origin, host, port, addresses, addressClass, rule: pattern.entry, answeredBy: "rule" };
    }
    if (first && !inside) return { origin, host, port, addresses, addressClass, answeredBy: first.answeredBy };
    // The address inside that a question names, and a yes answers: that address, not its class. Before, a yes was
    // kept for the origin and the class, and a name a person allowed at the private 10.0.0.5 reached 192.168.1.1 once
    // its resolver said so; and a question named the first address resolved, a public one beside the link-local.
    const insideAddress = inside ? addresses[classes.indexOf(inside)] : undefined;
    const what = `${origin}${inside ? ` (a ${inside} address, ${insideAddress})` : ""}`;
    if (ask === undefined) {
      throw refused(`${who} may not connect to ${what}: it is not on the policy's network.allow`, {
        origin,
        addresses,
        class: addressClass,
        answeredBy: "rule",
      });
    }
    const question = insideAddress === undefined
      ? { origin, addresses }
      : { origin, addresses: [insideAddress, ...addresses.filter((a) => a !== insideAddress)], inside };
    const key = insideAddress === undefined ? origin : `${origin} (${connectedKey(insideAddress) ?? insideAddress})`;
    const outcome = await this.#answer(who, what, key, host, question, signal, budget);
    return { origin, host, port, addresses, addressClass, answeredBy: outcome.answeredBy };
  }

  // The answer about `key`, asked once (concurrent and later questions share it), never for a host refused before
  // nor past the budget; throws a refusal unless allowed.
  async #answer(
    who: string,
    what: string,
    key: string,
    host: string,
    question: DestinationQuestion,
    signal?: AbortSignal,
    budget?: QuestionBudget,
  ): Promise<DestinationAnswer> {
    const details = { origin: question.origin, addresses: question.addresses, class: question.inside ?? "public" };
    let answer: Promise<DestinationAnswer> | undefined;
    for (;;) {
      const refusedHost = this.#refusedHosts.get(host);
      if (refusedHost) {
        throw refused(`${who} may not connect to ${what}: ${host} is not on the allowlist and was denied`, {
          ...details,
          answeredBy: refusedHost.answeredBy,
        });
      }
      answer = budget?.held?.get(key) ?? this.#answers.get(key);
      if (answer) break;
      // One question about a host at a time: a "no" to it answers the other ports' waiting behind it.
      const pending = this.#asking.get(host);
      if (pending === undefined) break;
      await pending.catch(() => {});
    }
    if (!answer) {
      if (budget !== undefined && budget.asked >= budget.max) {
        throw refused(
          `${who} may not connect to ${what}: it is not on the allowlist, and the command already asked ` +
            `${budget.max} questions about destinations, so no more are asked`,
          { ...details, answeredBy: "auto", questions: budget.max },
        );
      }
      if (budget !== undefined) budget.asked++;
      const asked = this.#options.ask!(question, signal);
      answer = asked;
      this.#answers.set(key, asked);
      this.#askers.set(asked, budget);
      this.#asking.set(host, asked);
      void asked.finally(() => this.#asking.get(host) === asked && this.#asking.delete(host)).catch(() => {});
      asked.then(
        (outcome) => {
          if (!outcome.allowed) return void this.#refusedHosts.set(host, outcome);
          if (outcome.holds !== "asker") return;
          // Not the session's to keep: its asker's alone.
          if (this.#answers.get(key) === asked) this.#answers.delete(key);
          budget?.held?.set(key, asked);
        },
        // A question that failed (no one to ask, cancelled) is asked again next time.
        () => this.#answers.delete(key),
      );
    }
    let outcome: DestinationAnswer;
    try {
      outcome = await answer;
      // Another asker's yes, which holds for that asker alone (it was being asked when this one came): asked again.
      if (outcome.allowed && outcome.holds === "asker" && this.#askers.get(answer) !== budget) {
        return await this.#answer(who, what, key, host, question, signal, budget);
      }
    } catch (error) {
      // A host that refuses by a rule of its own says why; other failures are nobody there to ask.
      const because = error instanceof ToolError && error.kind === "policy"
        ? error.message
        : "it is not on the allowlist and nobody could be asked";
      throw refused(`${who} may not connect to ${what}: ${because}`, {
        ...details,
        answeredBy: "auto",
        why: (error as Error).message,
      });
    }
    if (!outcome.allowed) {
      throw refused(`${who} may not connect to ${what}: it is not on the allowlist and was denied`, {
        ...details,
        answeredBy: outcome.answeredBy,
      });
    }
    return outcome;
  }
}

function unresolved(host: string, origin: string): ToolError {
  return new ToolError(`${host} does not resolve to an address`, {
    code: "dns_failed",
    details: { host, origin },
    recoveryHint: "Check the host name.",
  });
}

function deniedBy(who: string, origin: string, addresses: string[], pattern: Pattern): ToolError {
  return refused(`${who} may not connect to ${origin}: the policy denies it (network.deny ${pattern.entry})`, {
    origin,
    addresses,
    deniedBy: pattern.entry,
    answeredBy: "rule",
  });
}
