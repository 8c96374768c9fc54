// The classes of addresses the egress judges go by: every spelling of an IPv4
// address that a URL accepts lands in the address's class, and the IPv6 forms
// (mapped, NAT64, 6to4, zones) land in the class of what they reach.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { classifyAddress, inNetwork } from "../../../policy/egress/addresses.ts";

function v4Class(n: number): string {
  const a = n >>> 24, b = (n >>> 16) & 255, c = (n >>> 8) & 255;
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private";
  if (a === 198 && (b === 18 || b === 19)) return "private";
  if (a === 192 && b === 0 && c === 0) return "reserved";
  if (a >= 224) return "reserved";
  return "public";
}

const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

// Addresses near the edges of every range, plus uniform ones.
const interesting = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.constantFrom(0x7f000000, 0x0a000000, 0xac100000, 0xc0a80000, 0xa9fe0000, 0x64400000, 0xc6120000, 0)
    .chain((base) => fc.integer({ min: 0, max: 0xffffff }).map((low) => (base + low) >>> 0)),
);

describe("address classes", () => {
  test("every URL spelling of an IPv4 address (decimal, hex, octal, short) has the address's class", {
    timeout: 60_000,
  }, () => {
    fc.assert(
      fc.property(
        interesting,
        fc.constantFrom("dotted", "decimal", "hex", "octal", "short", "mapped", "mappedHex"),
        (n, form) => {
          const spelled = {
            dotted: dotted(n),
            decimal: String(n),
            hex: `0x${n.toString(16)}`,
            octal: [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].map((b) => `0${b.toString(8)}`).join("."),
            short: `${n >>> 24}.${n & 0xffffff}`,
            mapped: `[::ffff:${dotted(n)}]`,
            mappedHex: `[::ffff:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}]`,
          }[form];
          const host = new URL(`http://${spelled}/`).hostname;
          assert.equal(classifyAddress(host), v4Class(n), `${spelled} -> ${host}`);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("IPv6 forms", { timeout: 60_000 }, () => {
    const cases: [string, string][] = [
      ["::1", "loopback"],
      ["0:0:0:0:0:0:0:1", "loopback"],
      ["[::1]", "loopback"],
      ["::", "unspecified"],
      ["fe80::1%eth0", "link-local"],
      ["fd00::5", "private"],
      ["fc12:3456::1", "private"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:a9fe:a9fe", "link-local"],
      ["::127.0.0.1", "loopback"],
      ["64:ff9b::7f00:1", "loopback"],
      ["2002:7f00:1::", "loopback"],
      ["2002:0808:0808::", "public"],
      ["::ffff:0:7f00:1", "loopback"],
      ["::ffff:0:10.0.0.1", "private"],
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"],
      ["2001:0:4136:e378:8000:63bf:5601:5601", "link-local"],
      ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", "public"],
      ["ff02::1", "reserved"],
      ["2606:4700::1111", "public"],
    ];
    for (const [ip, want] of cases) assert.equal(classifyAddress(ip), want, ip);
    assert.equal(classifyAddress("example.com"), undefined);
    assert.equal(classifyAddress("1.2.3"), undefined);
  });

  test(
    "an address in a network, as the interfaces give it (CIDR), by bits, in any spelling",
    { timeout: 60_000 },
    () => {
      const cases: [string, string, boolean][] = [
        ["192.0.2.1", "192.0.2.2/24", true],
        ["192.0.3.1", "192.0.2.2/24", false],
        ["[::ffff:192.0.2.9]", "192.0.2.2/24", true],
        ["198.51.100.7", "198.51.100.1/23", true],
        ["198.51.102.7", "198.51.100.1/23", false],
        ["fd00::9", "fd00::2/64", true],
        ["fd00:0:0:1::9", "fd00::2/64", false],
        ["fd00::9%eth0", "fd00::2/64", true],
        ["10.0.0.1", "fd00::2/64", false],
        ["10.0.0.1", "nonsense", false],
      ];
      for (const [ip, cidr, want] of cases) assert.equal(inNetwork(ip, cidr), want, `${ip} in ${cidr}`);
    },
  );
});
