/**
 * Classifies IP addresses: which ones reach this machine or a private network.
 * Every textual form is reduced to bytes first (WHATWG URL parsing already turns
 * decimal, octal and hex IPv4 hosts into dotted quads; IPv6 forms are expanded
 * here), so that no spelling of an address escapes its class.
 *
 * @module
 */

import net from "node:net";

/** Where an address leads: the public internet, or somewhere a request could forge its way into. */
export type AddressClass = "public" | "loopback" | "link-local" | "private" | "unspecified" | "reserved";

function v4Bytes(ip: string): number[] | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined;
}

function v6Groups(ip: string): number[] | undefined {
  let text = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  // A trailing dotted quad stands for the last two groups.
  const quad = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (quad) {
    const b = v4Bytes(quad[1]);
    if (!b) return undefined;
    text = text.slice(0, -quad[1].length) + `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (
    s: string,
  ) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return undefined;
  const groups = [...head, ...new Array(fill).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : undefined;
}

// The IPv4 address an IPv6 one carries, which decides where a connection to it leads: IPv4-mapped
// (::ffff:a.b.c.d), IPv4-translated (SIIT, ::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d, not :: or ::1), NAT64
// (64:ff9b::a.b.c.d, and the local-use 64:ff9b:1::/48 with the address in its last 32 bits), 6to4
// (2002:AABB:CCDD::) and Teredo (2001:0::/32, the client's address in the last 32 bits, each bit inverted).
function carriedV4(g: number[]): number[] | undefined {
  const quad = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255];
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return quad(g[6], g[7]);
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) return quad(g[6], g[7]);
  if (g.slice(0, 6).every((x) => x === 0) && (g[6] !== 0 || g[7] > 1)) return quad(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b) return quad(g[6], g[7]);
  if (g[0] === 0x2002) return quad(g[1], g[2]);
  if (g[0] === 0x2001 && g[1] === 0) return quad(g[6] ^ 0xffff, g[7] ^ 0xffff);
  return undefined;
}

/**
 * One spelling per destination, to compare an address with a deny or allow
 * entry: an IPv4 address as its dotted quad, also where an IPv6 form carries
 * it (mapped, translated, compatible, NAT64, 6to4, Teredo: {@linkcode classifyAddress} gives
 * those the IPv4 address's class, so an entry naming the IPv4 address must
 * match them too); any other IPv6 address in its compressed lower-case form;
 * a zone (`%eth0`) left out, since it names an interface, not another
 * address. `undefined` when `ip` is not an address.
 */
export function destinationKey(ip: string): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const kind = net.isIP(bare);
  if (kind === 4) return v4Bytes(bare)?.join(".");
  const g = kind === 6 ? v6Groups(bare) : undefined;
  if (g === undefined) return undefined;
  const carried = carriedV4(g);
  if (carried !== undefined) return carried.join(".");
  return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
}

/**
 * Whether `ip` lies in the network `cidr` (`192.0.2.2/24`, `fd00::2/64`, as
 * `os.networkInterfaces()` gives them), both compared as
 * {@linkcode destinationKey} spells them (an IPv4 address carried in IPv6 as
 * the IPv4 one); `false` when either is not an address.
 */
export function inNetwork(ip: string, cidr: string): boolean {
  const slash = cidr.lastIndexOf("/");
  const prefix = Number(cidr.slice(slash + 1));
  const [a, b] = [addressBits(ip), addressBits(cidr.slice(0, slash))];
  if (a === undefined || b === undefined || a.length !== b.length || !Number.isInteger(prefix) || prefix < 0) {
    return false;
  }
  return prefix <= a.length && a.slice(0, prefix) === b.slice(0, prefix);
}

// The address as a string of bits (32 for IPv4 and IPv4 carried in IPv6, 128 for IPv6).
function addressBits(ip: string): string | undefined {
  const key = destinationKey(ip);
  if (key === undefined) return undefined;
  const parts = net.isIP(key) === 4 ? v4Bytes(key)!.map((b) => b.toString(2).padStart(8, "0")) : v6Groups(key)
    ?.map((g) => g.toString(2).padStart(16, "0"));
  return parts?.join("");
}

/**
 * The spelling of the very address a connection to `ip` reaches, to compare
 * it with an allow entry: an IPv4 address, or one IPv4-mapped into IPv6
 * (`::ffff:a.b.c.d`, which a dual-stack socket connects to as the IPv4
 * address), as its dotted quad; any other IPv6 address in its compressed
 * lower-case form, NAT64, 6to4, compatible and Teredo ones included (they
 * lead to a gateway or relay, not to the IPv4 address on this machine's
 * side); a zone left out. `undefined` when `ip` is not an address.
 */
export function connectedKey(ip: string): string | undefined {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const kind = net.isIP(bare);
  if (kind === 4) return v4Bytes(bare)?.join(".");
  const g = kind === 6 ? v6Groups(bare) : undefined;
  if (g === undefined) return undefined;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return carriedV4(g)!.join(".");
  return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
}

function classifyV4(b: number[]): AddressClass {
  const [a, c] = [b[0], b[1]];
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 169 && c === 254) return "link-local";
  if (a === 10 || (a === 172 && c >= 16 && c <= 31) || (a === 192 && c === 168)) return "private";
  if (a === 100 && c >= 64 && c <= 127) return "private"; // carrier-grade NAT
  if (a === 198 && (c === 18 || c === 19)) return "private"; // benchmarking networks
  if (a === 192 && c === 0 && b[2] === 0) return "reserved";
  if (a >= 224) return "reserved"; // multicast, class E, broadcast
  return "public";
}

/**
 * The class of an IP address in any form `node:net` accepts (brackets and a
 * zone allowed); `undefined` when `ip` is not an address. IPv4 addresses
 * carried in IPv6 ones (mapped, translated, compatible, NAT64, 6to4, Teredo)
 * take the class of the IPv4 address; carrier-grade NAT (100.64/10) and unique-local IPv6
 * (fc00::/7, where the cloud metadata service fd00:ec2::254 lives) are
 * private; 169.254/16 (the cloud metadata service 169.254.169.254) and
 * fe80::/10 link-local; multicast and broadcast reserved.
 *
 * Needs no permissions.
 *
 * @example
 * ```ts
 * import { classifyAddress } from "@toolfence/policy";
 * console.log(classifyAddress("::ffff:169.254.169.254")); // "link-local"
 * ```
 */
export function classifyAddress(ip: string): AddressClass | undefined {
  const bare = ip.replace(/^\[|\]$/g, "");
  const kind = net.isIP(bare.replace(/%.*$/, ""));
  if (kind === 4) {
    const b = v4Bytes(bare);
    return b ? classifyV4(b) : undefined;
  }
  if (kind !== 6) return undefined;
  const g = v6Groups(bare);
  if (!g) return undefined;
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  const carried = carriedV4(g);
  if (carried !== undefined) return classifyV4(carried);
  if ((g[0] & 0xfe00) === 0xfc00) return "private";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xffc0) === 0xfec0) return "private"; // deprecated site-local
  if ((g[0] & 0xff00) === 0xff00) return "reserved"; // multicast
  return "public";
}
