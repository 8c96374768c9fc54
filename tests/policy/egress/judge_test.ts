// The one judge of network destinations: every spelling of a host lands on
// one canonical name or address, every address class is refused unless an
// entry names it, a name that resolves inside is judged by its address, and
// a name refused by name is never handed to a resolver.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import os from "node:os";
import { classifyAddress } from "../../../policy/egress/addresses.ts";
import {
  allowsLoopback,
  type DestinationAnswer,
  DestinationJudge,
  type EgressRules,
} from "../../../policy/egress/judge.ts";
import { proxyEnvironment } from "../../../policy/egress/forwarder.ts";

// Another address of a network this machine's interfaces are on, in a range classed public (this test machine's eth0
// is 192.0.2.2/24: 192.0.2.1, its gateway), with the network's prefix; none where no interface has such a network.
const neighbour = Object.values(os.networkInterfaces()).flat()
  .filter((i) => i !== undefined && !i.internal && i.family === "IPv4" && classifyAddress(i.address) === "public")
  .flatMap((i) => {
    const prefix = Number(i!.cidr!.split("/")[1]);
    if (prefix < 8 || prefix > 30) return [];
    const n = i!.address.split(".").reduce((v, b) => v * 256 + Number(b), 0);
    const first = n - (n % 2 ** (32 - prefix)) + 1;
    const other = first === n ? first + 1 : first;
    return [{ address: [24, 16, 8, 0].map((s) => Math.floor(other / 2 ** s) % 256).join("."), prefix }];
  })[0];

// This machine's own link-local addresses, with their interface as the zone (fe80::fc:ff:fe00:1%eth0 here).
const ownLinkLocal = Object.entries(os.networkInterfaces())
  .flatMap(([name, list]) =>
    (list ?? []).filter((i) => !i.internal && /^fe80:/i.test(i.address)).map((i) => `${i.address}%${name}`)
  );

// This machine's own interface addresses, besides loopback and link-local.
const own = Object.values(os.networkInterfaces()).flat()
  .filter((i) => i !== undefined && !i.internal && !/^fe80:/i.test(i.address))
  .map((i) => i!.address);

// A judge whose resolver is a table (and counts its lookups), and whose asker answers `answer`.
function judgeWith(rules: EgressRules, names: Record<string, string[]> = {}, answer?: boolean) {
  const lookups: string[] = [];
  const asked: string[] = [];
  const judge = new DestinationJudge(rules, {
    who: "The command",
    resolve: (host) => {
      lookups.push(host);
      return Promise.resolve(names[host] ?? []);
    },
    ...(answer === undefined ? {} : {
      ask: (q): Promise<DestinationAnswer> => {
        asked.push(`${q.origin} ${q.inside ?? ""}`.trim());
        return Promise.resolve({ allowed: answer, answeredBy: "person" });
      },
    }),
  });
  const outcome = async (scheme: string, host: string, port: string) => {
    try {
      const d = await judge.judge(scheme, host, port);
      return `allowed ${d.addresses[0]}`;
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    }
  };
  return { judge, outcome, lookups, asked };
}

describe("destination judge", { timeout: 30_000 }, () => {
  test("every address class is refused unless an entry names the address", { timeout: 30_000 }, async () => {
    const inside = [
      "127.0.0.1",
      "127.255.0.9",
      "10.0.0.1",
      "172.16.5.5",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "fe80::1",
      "fd00:ec2::254",
      "fc00::1",
      "::ffff:127.0.0.1",
      "::ffff:169.254.169.254",
      "::ffff:a00:1",
      "ff02::1",
    ];
    for (const ip of inside) {
      assert.notEqual(classifyAddress(ip), "public", ip);
      const open = judgeWith({ allow: ["*.example.com"] });
      assert.equal(await open.outcome("https:", ip, "443"), "url_not_allowed", ip);
      const bracketed = ip.includes(":") ? `[${ip}]` : ip;
      const named = judgeWith({ allow: [`${bracketed}:443`] });
      assert.equal(await named.outcome("https:", bracketed, "443"), `allowed ${ip}`, `${ip} named`);
      assert.equal(await named.outcome("https:", ip, "444"), "url_not_allowed", `${ip} other port`);
    }
    // A person is asked about an address inside, and the question says so.
    const asking = judgeWith({}, {}, false);
    assert.equal(await asking.outcome("http:", "169.254.169.254", "80"), "url_not_allowed");
    assert.deepEqual(asking.asked, ["http://169.254.169.254:80 link-local"]);
  });

  test(
    "an allowed name that resolves inside is judged by the address (no rebinding to loopback)",
    { timeout: 30_000 },
    async () => {
      const names = { "rebind.example.com": ["127.0.0.1"], "meta.example.com": ["8.8.8.8", "169.254.169.254"] };
      const { outcome } = judgeWith({ allow: ["*.example.com"] }, names);
      assert.equal(await outcome("https:", "rebind.example.com", "443"), "url_not_allowed");
      assert.equal(await outcome("https:", "meta.example.com", "443"), "url_not_allowed", "any address inside");
      const ok = judgeWith({ allow: ["*.example.com"] }, { "pub.example.com": ["93.184.215.14"] });
      assert.equal(await ok.outcome("https:", "pub.example.com", "443"), "allowed 93.184.215.14");
      // localhost named on the list covers what it resolves to.
      const local = judgeWith({ allow: ["localhost:8080"] }, { localhost: ["127.0.0.1"] });
      assert.equal(await local.outcome("http:", "localhost", "8080"), "allowed 127.0.0.1");
      assert.equal(await local.outcome("http:", "LocalHost.", "8080"), "allowed 127.0.0.1");
    },
  );

  test(
    "wildcards cover subdomains only; case, trailing dots and IDN spellings are one name",
    { timeout: 30_000 },
    async () => {
      const names = {
        "a.example.com": ["93.184.215.14"],
        "example.com": ["93.184.215.14"],
        "xn--bcher-kva.example": ["93.184.215.15"],
        "evilexample.com": ["93.184.215.16"],
      };
      const { outcome } = judgeWith({ allow: ["*.example.com", "bücher.example"] }, names);
      assert.equal(await outcome("https:", "a.example.com", "443"), "allowed 93.184.215.14");
      assert.equal(await outcome("https:", "A.EXAMPLE.COM.", "443"), "allowed 93.184.215.14");
      assert.equal(await outcome("https:", "example.com", "443"), "url_not_allowed", "the wildcard is subdomains");
      assert.equal(await outcome("https:", "evilexample.com", "443"), "url_not_allowed");
      assert.equal(await outcome("https:", "BÜCHER.example", "443"), "allowed 93.184.215.15");
      assert.equal(await outcome("https:", "xn--bcher-kva.example.", "443"), "allowed 93.184.215.15");
      assert.equal(await outcome("https:", "a.example.com", "0"), "url_not_allowed", "port 0");
      assert.equal(await outcome("https:", "a.example.com", "70000"), "url_not_allowed");
      assert.equal(await outcome("ftp:", "a.example.com", "21"), "url_not_allowed");
    },
  );

  test("numeric spellings of an address are never looked up, and refused unless they are the address", {
    timeout: 30_000,
  }, async () => {
    const { outcome, lookups } = judgeWith({ allow: ["*.example.com"] }, {}, true);
    for (const spelled of ["2130706433", "0x7f.1", "017700000001", "0x7f000001", "127.1", "0177.0.0.1", "1.0x1"]) {
      assert.notEqual((await outcome("https:", spelled, "443")).slice(0, 7), "allowed", spelled);
    }
    assert.deepEqual(lookups, []);
    // The same spellings in a URL are the canonical address, which is judged as such.
    for (const spelled of ["2130706433", "0x7f.1", "017700000001"]) {
      const host = new URL(`http://${spelled}/`).hostname;
      assert.equal(host, "127.0.0.1");
      assert.equal(await judgeWith({}).outcome("http:", host, "80"), "url_not_allowed");
    }
  });

  test("IPv6 literals in brackets, any spelling, match their entry", { timeout: 30_000 }, async () => {
    const { outcome } = judgeWith({ allow: ["[::1]:8080", "[2606:4700::1111]"] });
    assert.equal(await outcome("http:", "[::1]", "8080"), "allowed ::1");
    assert.equal(await outcome("http:", "0:0:0:0:0:0:0:1", "8080"), "allowed 0:0:0:0:0:0:0:1");
    assert.equal(await outcome("http:", "[::ffff:127.0.0.1]", "8080"), "url_not_allowed", "mapped is another entry");
    assert.equal(await outcome("https:", "[2606:4700:0::1111]", "443"), "allowed 2606:4700:0::1111");
  });

  // Before, with 127.0.0.1:8080 on the list, `localhost:8080` was a name not on it: asked about and refused (or,
  // with a yes, connected to whatever the resolver said), while the same server by its address was allowed.
  test("localhost is judged as the loopback address an entry names, in every spelling, and connected to there", {
    timeout: 30_000,
  }, async () => {
    const { outcome, lookups, asked } = judgeWith(
      { allow: ["127.0.0.1:8080", "[::1]:9090"], deny: ["localhost:7070"] },
      { localhost: ["::1"], "localhost.": ["::1"] },
      false,
    );
    for (const host of ["localhost", "LOCALHOST", "localhost.", "LocalHost."]) {
      assert.equal(await outcome("http:", host, "8080"), "allowed 127.0.0.1", host);
      assert.equal(await outcome("https:", host, "9090"), "allowed ::1", host);
    }
    assert.deepEqual(lookups, [], "the address judged is the one connected to, never looked up");
    assert.deepEqual(asked, []);
    // Another port, and a denied one, stay refused, whatever the spelling.
    for (const host of ["localhost", "127.0.0.1", "[::1]", "LOCALHOST."]) {
      assert.equal(await outcome("http:", host, "8081"), "url_not_allowed", host);
      assert.equal(await outcome("http:", host, "7070"), "url_not_allowed", host);
    }
    // The entry names the IPv4 address: the IPv6 one is another socket, not allowed by it.
    assert.equal(await outcome("http:", "[::1]", "8080"), "url_not_allowed");
    assert.equal(await outcome("http:", "127.0.0.1", "9090"), "url_not_allowed");
  });

  test("a sandbox's loopback goes to the proxy exactly when an allow entry names a loopback destination", {
    timeout: 30_000,
  }, () => {
    const named = ["localhost", "LOCALHOST.:3000", "http://127.0.0.1:8080", "127.9.9.9", "[::1]:9", "[::ffff:7f00:1]"];
    for (const entry of named) assert.equal(allowsLoopback(["example.com", entry]), true, entry);
    for (const entry of ["example.com", "*.localhost", "10.0.0.1", "[::2]", "bad entry:x", "*.127.0.0.1"]) {
      assert.equal(allowsLoopback([entry]), false, entry);
    }
    assert.equal(proxyEnvironment(3128, true).no_proxy, "");
    assert.equal(proxyEnvironment(3128, true).NO_PROXY, "");
    assert.equal(proxyEnvironment(3128).no_proxy, "localhost,127.0.0.1,::1");
  });

  // Before, an allow entry naming an IPv4 address (or localhost) matched every IPv6 form carrying it, and the proxy
  // connected to that IPv6 address: [64:ff9b::7f00:1]:8080 was allowed by 127.0.0.1:8080 and sent off this machine to
  // the network's NAT64 gateway, not to the local server the entry named. IPv4-mapped is the address itself.
  test("an allow entry naming an address allows it and its IPv4-mapped form, not the forms that lead elsewhere", {
    timeout: 30_000,
  }, async () => {
    const { outcome, asked } = judgeWith({ allow: ["127.0.0.1:8080", "localhost:9090", "10.0.0.5:80"] }, {}, false);
    for (const [host, port] of [["127.0.0.1", "8080"], ["::ffff:127.0.0.1", "8080"], ["::ffff:7f00:1", "9090"]]) {
      assert.equal(await outcome("https:", host, port), `allowed ${host}`, host);
    }
    assert.equal(await outcome("http:", "[::ffff:10.0.0.5]", "80"), "allowed ::ffff:10.0.0.5");
    assert.deepEqual(asked, []);
    const elsewhere = [
      ["64:ff9b::7f00:1", "8080"],
      ["64:ff9b:1::7f00:1", "8080"],
      ["2002:7f00:1::", "8080"],
      ["::127.0.0.1", "8080"],
      ["::ffff:0:7f00:1", "8080"],
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "8080"],
      ["64:ff9b::7f00:1", "9090"],
      ["64:ff9b::a00:5", "80"],
    ];
    for (const [host, port] of elsewhere) assert.equal(await outcome("https:", host, port), "url_not_allowed", host);
    // Each was asked about as inside, not allowed by the entry (64:ff9b::7f00:1 once: a "no" covers its other ports).
    assert.equal(asked.length, elsewhere.length - 1, JSON.stringify(asked));
    assert.ok(asked.every((q) => / (loopback|private)$/.test(q)), JSON.stringify(asked));
  });

  test(
    "a name refused by name, or on no list with nobody to ask, is never looked up",
    { timeout: 30_000 },
    async () => {
      const { outcome, lookups } = judgeWith({ allow: ["ok.example.com"], deny: ["*.evil.test", "bad.example.com"] }, {
        "ok.example.com": ["93.184.215.14"],
      });
      assert.equal(await outcome("https:", "secret-data.evil.test", "443"), "url_not_allowed");
      assert.equal(await outcome("https:", "bad.example.com", "443"), "url_not_allowed");
      assert.equal(await outcome("https:", "c2VjcmV0.unknown.test", "443"), "url_not_allowed");
      assert.deepEqual(lookups, []);
      assert.equal(await outcome("https:", "ok.example.com", "443"), "allowed 93.184.215.14");
      assert.deepEqual(lookups, ["ok.example.com"]);
      // With someone to ask, the question comes before the lookup, and a "no" looks nothing up.
      const asking = judgeWith({}, { "x.test": ["93.184.215.14"] }, false);
      assert.equal(await asking.outcome("https:", "x.test", "443"), "url_not_allowed");
      assert.deepEqual(asking.lookups, []);
      assert.deepEqual(asking.asked, ["https://x.test:443"]);
      // A "yes" about a name that then resolves inside is asked again about the address.
      const yes = judgeWith({}, { "inside.test": ["10.0.0.1"] }, true);
      assert.equal(await yes.outcome("https:", "inside.test", "443"), "allowed 10.0.0.1");
      assert.deepEqual(yes.asked, ["https://inside.test:443", "https://inside.test:443 private"]);
    },
  );

  // Before, a yes was kept for the name and the class of its address: a person who allowed intranet.test at the
  // private 10.0.0.5 had the name, resolved again to 192.168.1.1 (a router) or 198.18.0.1, reach those on no question,
  // and a question about a name resolving to a public and a link-local address named the public one.
  test("a yes about an address inside holds for that address: the name resolved to another one is asked again", {
    timeout: 30_000,
  }, async () => {
    const names: Record<string, string[]> = { "intranet.test": ["10.0.0.5"] };
    const asked: string[] = [];
    const judge = new DestinationJudge({ allow: ["*.example.com"] }, {
      resolve: (host) => Promise.resolve(names[host] ?? []),
      ask: (q): Promise<DestinationAnswer> => {
        asked.push(`${q.origin} ${q.inside ?? ""} ${q.addresses[0] ?? ""}`.trim());
        return Promise.resolve({ allowed: true, answeredBy: "person" });
      },
    });
    const connected = async (host: string) => (await judge.judge("http:", host, "80")).addresses[0];
    assert.equal(await connected("intranet.test"), "10.0.0.5");
    assert.equal(await connected("intranet.test"), "10.0.0.5");
    assert.deepEqual(asked, ["http://intranet.test:80", "http://intranet.test:80 private 10.0.0.5"]);
    for (const rebound of ["192.168.1.1", "198.18.0.1", "::ffff:10.0.0.9"]) {
      names["intranet.test"] = [rebound];
      assert.equal(await connected("intranet.test"), rebound);
      assert.equal(asked.at(-1), `http://intranet.test:80 private ${rebound}`, "asked about the new address");
    }
    assert.equal(asked.length, 5);
    // The address a question names is the one inside, whatever the resolver's order.
    names["mixed.example.com"] = ["93.184.215.14", "169.254.169.254"];
    await connected("mixed.example.com");
    assert.equal(asked.at(-1), "http://mixed.example.com:80 link-local 169.254.169.254");
  });

  test("every spelling of a denied name is refused by the rule, never asked about nor looked up", {
    timeout: 30_000,
  }, async () => {
    // Before: `x.denied.test..` and `x.denied.test。` (IDNA maps U+3002 to a dot) were `x.denied.test.` to the
    // judge, which no deny entry matched: a person was asked, and on a yes the resolver got the denied host.
    const dots = [".", "\u3002", "\uff0e", "\uff61"];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("x.denied.test", "secret.test"),
        fc.array(fc.constantFrom(...dots), { minLength: 2, maxLength: 2 }),
        fc.constantFrom("", ".", "..", "\u3002", ".\u3002", "\uff0e"),
        fc.boolean(),
        async (name, separators, tail, upper) => {
          const labels = name.split(".");
          let host = labels[0];
          for (let i = 1; i < labels.length; i++) host += separators[i - 1] + labels[i];
          host = (upper ? host.toUpperCase() : host) + tail;
          const { outcome, asked, lookups } = judgeWith(
            { deny: ["*.denied.test", "secret.test"] },
            new Proxy({}, { get: () => ["93.184.215.14"] }),
            true,
          );
          const got = await outcome("https:", host, "443");
          assert.notEqual(got.startsWith("allowed"), true, `${JSON.stringify(host)}: ${got}`);
          assert.deepEqual(asked, [], JSON.stringify(host));
          assert.deepEqual(lookups, [], JSON.stringify(host));
        },
      ),
      { numRuns: 200 },
    );
  });

  test("a deny entry naming an address refuses every name that resolves to it", { timeout: 30_000 }, async () => {
    const { outcome } = judgeWith({ allow: ["*.example.com"], deny: ["93.184.215.14"] }, {
      "a.example.com": ["93.184.215.14"],
    });
    assert.equal(await outcome("https:", "a.example.com", "443"), "url_not_allowed");
  });

  test("a deny entry naming an IPv4 address refuses it mapped into IPv6, spelled or resolved", {
    timeout: 30_000,
  }, async () => {
    // A connection to ::ffff:a.b.c.d reaches a.b.c.d: before, the deny compared spellings and a person was asked
    // about the literal (who said yes), and a name allowed by a wildcard whose AAAA record was the mapped address
    // went through without a question.
    const { outcome, asked } = judgeWith({ allow: ["*.example.com"], deny: ["93.184.215.14", "127.0.0.1"] }, {
      "a.example.com": ["::ffff:93.184.215.14"],
      "b.example.com": ["0:0:0:0:0:ffff:5db8:d70e"],
    }, true);
    assert.equal(await outcome("https:", "a.example.com", "443"), "url_not_allowed");
    assert.equal(await outcome("https:", "b.example.com", "443"), "url_not_allowed");
    for (const host of ["::ffff:127.0.0.1", "[::ffff:7f00:1]", "::FFFF:7F00:0001", "::ffff:93.184.215.14"]) {
      assert.equal(await outcome("https:", host, "443"), "url_not_allowed", host);
    }
    assert.deepEqual(asked, []);
    // An allow entry naming the address allows its mapped form too: the same destination.
    const named = judgeWith({ allow: ["127.0.0.1:8080"] });
    assert.equal(await named.outcome("http:", "::ffff:127.0.0.1", "8080"), "allowed ::ffff:127.0.0.1");
  });

  test("a deny entry naming an IPv4 address refuses every IPv6 form that carries it (NAT64, 6to4, Teredo, ...)", {
    timeout: 30_000,
  }, async () => {
    // classifyAddress gives these forms the class of the IPv4 address they carry (a NAT64 gateway or a 6to4 relay
    // delivers them there); before, a deny entry compared them as other addresses: `[64:ff9b::a00:1]` matched no
    // deny of `10.0.0.1`, a person was asked about a "private address", and a yes reached the denied host.
    const carriers = (b: number[]) => {
      const [hi, lo] = [((b[0] << 8) | b[1]).toString(16), ((b[2] << 8) | b[3]).toString(16)];
      return [
        `64:ff9b::${b.join(".")}`,
        `64:ff9b::${hi}:${lo}`,
        `64:FF9B:0:0:0:0:${hi}:${lo}`,
        `64:ff9b:1::${hi}:${lo}`,
        `2002:${hi}:${lo}::`,
        `2002:${hi}:${lo}:1::5`,
        `::${b.join(".")}`,
        `0::ffff:${hi}:${lo}`,
        // SIIT's IPv4-translated form, and Teredo's client address (every bit inverted).
        `::ffff:0:${hi}:${lo}`,
        `::ffff:0:${b.join(".")}`,
        `2001:0:4136:e378:8000:63bf:${(~((b[0] << 8) | b[1]) & 0xffff).toString(16)}:${
          (~((b[2] << 8) | b[3]) & 0xffff).toString(16)
        }`,
      ];
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 }).filter((b) => b[0] !== 0),
        fc.boolean(),
        async (bytes, brackets) => {
          const { outcome, asked } = judgeWith({ allow: [], deny: [bytes.join(".")] }, {}, true);
          for (const address of carriers(bytes)) {
            const host = brackets ? `[${address}]` : address;
            assert.equal(await outcome("https:", host, "443"), "url_not_allowed", host);
          }
          assert.deepEqual(asked, [], "the policy refuses them: nobody is asked");
        },
      ),
      { seed: 20261205, numRuns: 100 },
    );
    // The deny entry may name the address in any of these forms too.
    const { outcome } = judgeWith({ allow: [], deny: ["[64:ff9b::a00:1]"] }, {}, true);
    assert.equal(await outcome("https:", "10.0.0.1", "443"), "url_not_allowed");
    // And `::`, `::1` are no IPv4 address: `::1` is loopback, not 0.0.0.1.
    const loop = judgeWith({ allow: [], deny: ["0.0.0.1"] }, {}, true);
    assert.notEqual(await loop.outcome("https:", "::1", "443"), "url_not_allowed");
  });

  test("a deny entry naming an address refuses it with an IPv6 zone, spelled or resolved", {
    timeout: 30_000,
  }, async () => {
    // `net.connect(port, "::ffff:127.0.0.3%1")` reaches 127.0.0.3; before, the zone made the literal no spelling
    // the deny compared, and a person was asked about it (who said yes, and a sandboxed command read the denied
    // server through `CONNECT [::ffff:127.0.0.3%1]:port`).
    const { outcome, asked, lookups } = judgeWith(
      {
        allow: ["*.example.com"],
        deny: ["127.0.0.3", "[fe80::1]", "[fd00:ec2::254]"],
      },
      { "a.example.com": ["fe80::1%2"] },
      true,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("::ffff:127.0.0.3", "::FFFF:7F00:3", "0:0:0:0:0:ffff:7f00:0003", "fe80::1", "fd00:ec2::254"),
        fc.constantFrom("%1", "%lo", "%eth0", "%25", "%25lo", "%a.b-c:d"),
        fc.boolean(),
        async (address, zone, brackets) => {
          const host = brackets ? `[${address}${zone}]` : `${address}${zone}`;
          assert.equal(await outcome("https:", host, "443"), "url_not_allowed", host);
        },
      ),
      { seed: 20261205, numRuns: 200 },
    );
    assert.equal(await outcome("https:", "a.example.com", "443"), "url_not_allowed");
    assert.deepEqual(asked, [], "the policy refuses them: nobody is asked");
    assert.deepEqual(lookups, ["a.example.com"]);
  });

  test("a deny entry naming localhost refuses every loopback address, spelled or resolved", {
    timeout: 30_000,
  }, async () => {
    // Before: with `deny: ["localhost"]`, `curl http://127.0.0.1:port/` was asked about as "a loopback address", a
    // person said yes, and a sandboxed command read the server the policy denied.
    const { outcome, asked } = judgeWith({ allow: ["*.example.com"], deny: ["localhost"] }, {
      "a.example.com": ["127.0.0.1"],
      "b.example.com": ["::1"],
    }, true);
    for (const host of ["127.0.0.1", "127.0.0.5", "::1", "[::1]", "::ffff:127.0.0.1", "::ffff:7f00:2%1", "localhost"]) {
      assert.equal(await outcome("http:", host, "8080"), "url_not_allowed", host);
    }
    assert.equal(await outcome("https:", "a.example.com", "443"), "url_not_allowed");
    assert.equal(await outcome("https:", "b.example.com", "443"), "url_not_allowed");
    assert.deepEqual(asked, [], "the policy refuses them: nobody is asked");
    // An allow entry naming localhost allows what the name resolves to, on its port, and nothing else.
    const named = judgeWith({ allow: ["localhost:3000"] });
    assert.equal(await named.outcome("http:", "127.0.0.1", "3000"), "allowed 127.0.0.1");
    assert.equal(await named.outcome("http:", "[::1]", "3000"), "allowed ::1");
    assert.equal(await named.outcome("http:", "127.0.0.2", "3000"), "url_not_allowed");
    assert.equal(await named.outcome("http:", "127.0.0.1", "3001"), "url_not_allowed");
  });

  test("the unspecified address is refused without a question, unless an entry names it", {
    timeout: 30_000,
  }, async () => {
    // A connection to 0.0.0.0 (or ::) reaches this machine's loopback: before, with 127.0.0.1 and localhost
    // denied, a person asked about "an unspecified address" said yes, and `curl http://0.0.0.0:port/` in a
    // sandboxed command read the denied server on 127.0.0.1.
    for (const privateNetworks of ["ask", "allow"] as const) {
      const { outcome, asked } = judgeWith(
        {
          allow: ["*.example.com", "[::ffff:127.0.0.2]:8080"],
          deny: ["127.0.0.1", "localhost"],
          privateNetworks,
        },
        { "zero.example.com": ["0.0.0.0"], "six.example.com": ["2001:db8::1", "::"] },
        true,
      );
      for (const host of ["0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0", "::ffff:0.0.0.0", "zero.example.com"]) {
        assert.equal(await outcome("http:", host, "8080"), "url_not_allowed", `${host} (${privateNetworks})`);
      }
      assert.equal(await outcome("https:", "six.example.com", "443"), "url_not_allowed", privateNetworks);
      assert.deepEqual(asked, [], "nobody is asked about it");
    }
    const named = judgeWith({ allow: ["0.0.0.0:3000"] });
    assert.equal(await named.outcome("http:", "0.0.0.0", "3000"), "allowed 0.0.0.0");
  });

  test(
    "generated hosts: whatever the spelling, nothing inside is allowed by a wildcard entry",
    { timeout: 30_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 0xffffffff }),
          fc.constantFrom("dotted", "mapped", "compatible"),
          async (n, form) => {
            const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
            const host = { dotted, mapped: `::ffff:${dotted}`, compatible: `::${dotted}` }[form];
            const { outcome } = judgeWith({ allow: ["*.example.com", "*"] }, { "x.example.com": [host] });
            const result = await outcome("https:", "x.example.com", "443");
            const publicAddress = classifyAddress(dotted) === "public";
            assert.equal(result.startsWith("allowed"), publicAddress, `${host}: ${result}`);
          },
        ),
        { numRuns: 500 },
      );
    },
  );

  // This test machine's eth0 is 192.0.2.2, a range classified public: a server there listening on every address was
  // reached as "public" (allowed by a host answering automatically, or by a person told nothing of this machine).
  // A connection to one reaches this machine itself (Node connects to fe80::fc:ff:fe00:1%eth0 and a server listening
  // on :: answers; Deno's connect refuses a zone with EINVAL): before, it was judged link-local by its range, so a deny
  // of localhost did not cover it and a person's yes let it through.
  test("this machine's own link-local addresses are judged as loopback, and a deny of localhost covers them", {
    timeout: 30_000,
    skip: ownLinkLocal.length === 0 && "no interface of this machine has a link-local address",
  }, async () => {
    for (const address of ownLinkLocal) {
      const asking = judgeWith({}, {}, true);
      assert.equal(await asking.outcome("http:", `[${address}]`, "8080"), `allowed ${address}`);
      assert.deepEqual(asking.asked, [`http://[${address}]:8080 loopback`]);
      const denied = judgeWith({ deny: ["localhost"] }, {}, true);
      assert.equal(await denied.outcome("http:", `[${address}]`, "8080"), "url_not_allowed", address);
      assert.deepEqual(denied.asked, []);
    }
  });

  test("this machine's own interface addresses are judged as loopback, whatever their range", {
    timeout: 30_000,
    skip: own.length === 0 && "no interface of this machine has an address besides loopback and link-local",
  }, async () => {
    for (const address of own) {
      const bracketed = address.includes(":") ? `[${address}]` : address;
      const asking = judgeWith({}, { "own.test": [address] }, true);
      assert.equal(await asking.outcome("http:", bracketed, "8080"), `allowed ${address}`);
      assert.equal(await asking.outcome("http:", "own.test", "8080"), `allowed ${address}`);
      assert.deepEqual(asking.asked, [
        `http://${bracketed}:8080 loopback`,
        "http://own.test:8080",
        "http://own.test:8080 loopback",
      ]);
      const automatic = judgeWith({}, {}, undefined);
      assert.equal(await automatic.outcome("http:", bracketed, "8080"), "url_not_allowed", address);
      // A deny of localhost covers them, before anyone is asked; an entry naming the address still allows it.
      const denied = judgeWith({ deny: ["localhost"] }, {}, true);
      assert.equal(await denied.outcome("http:", bracketed, "8080"), "url_not_allowed", address);
      assert.deepEqual(denied.asked, []);
      const named = judgeWith({ allow: [`${bracketed}:8080`] });
      assert.equal(await named.outcome("http:", bracketed, "8080"), `allowed ${address}`);
    }
  });

  // Before, such an address was public: a browser under a host answering automatically read a server of another
  // machine at 198.51.100.7, on the network of one of this machine's interfaces (a veth's 198.51.100.1/24).
  test("another address of a network this machine is on is judged private, whatever its range", {
    timeout: 30_000,
    skip: neighbour === undefined && "no interface of this machine is on a network of a public range",
  }, async () => {
    const { address } = neighbour!;
    assert.equal(classifyAddress(address), "public", "its range alone is public");
    const asking = judgeWith({}, { "lan.test": [address] }, false);
    assert.equal(await asking.outcome("http:", address, "8080"), "url_not_allowed");
    assert.equal(await asking.outcome("http:", "lan.test", "8080"), "url_not_allowed");
    // The address is asked about as private; the name, refused when first asked, is not looked up.
    assert.deepEqual(asking.asked, [`http://${address}:8080 private`, "http://lan.test:8080"]);
    // An allowed name resolving there is judged by the address, as any name resolving to a private one; an entry
    // naming the address allows it; nobody to ask refuses it.
    const allowed = judgeWith({ allow: ["lan.test"] }, { "lan.test": [address] });
    assert.equal(await allowed.outcome("http:", "lan.test", "8080"), "url_not_allowed");
    const named = judgeWith({ allow: [`${address}:8080`] });
    assert.equal(await named.outcome("http:", address, "8080"), `allowed ${address}`);
    // An address off every network of this machine stays public.
    const far = judgeWith({}, {}, true);
    assert.equal(await far.outcome("http:", "93.184.215.14", "80"), "allowed 93.184.215.14");
    assert.deepEqual(far.asked, ["http://93.184.215.14:80"]);
  });
});

describe("a yes that holds for its asker only", { timeout: 30_000 }, () => {
  // The MCP client's yes under answers.elicitation once allows one action: before, the judge kept it for the session,
  // and every later command reached the destination without a question.
  function asking(holds: "asker" | "session", delayMs = 0) {
    const asked: string[] = [];
    const judge = new DestinationJudge({}, {
      who: "The command",
      resolve: () => Promise.resolve(["93.184.215.14"]),
      ask: async (q): Promise<DestinationAnswer> => {
        asked.push(q.origin);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return { allowed: true, answeredBy: "client", holds };
      },
    });
    const budget = () => ({ max: 10, asked: 0, held: new Map<string, Promise<DestinationAnswer>>() });
    return { judge, asked, budget };
  }

  test("it answers its asker's later connections, and no other asker's", { timeout: 30_000 }, async () => {
    const { judge, asked, budget } = asking("asker");
    const first = budget();
    const second = budget();
    await judge.judge("https:", "example.com", "443", undefined, first);
    await judge.judge("https:", "example.com", "443", undefined, first);
    assert.deepEqual(asked, ["https://example.com:443"], "the asker's second connection asked again");
    await judge.judge("https:", "example.com", "443", undefined, second);
    assert.equal(asked.length, 2, "another asker was let through on the first one's yes");
    // Without a budget it holds for the one connection.
    await judge.judge("https:", "example.com", "443");
    await judge.judge("https:", "example.com", "443");
    assert.equal(asked.length, 4);
  });

  test("an asker waiting on another's question is asked itself once that yes comes", { timeout: 30_000 }, async () => {
    const { judge, asked, budget } = asking("asker", 50);
    const [first, second] = [budget(), budget()];
    await Promise.all([
      judge.judge("https:", "example.com", "443", undefined, first),
      judge.judge("https:", "example.com", "443", undefined, second),
      judge.judge("https:", "example.com", "443", undefined, first),
    ]);
    assert.equal(asked.length, 2, `asked ${asked.length} times`);
    assert.equal(first.asked + second.asked, 2);
  });

  test("a yes for the session is kept for every asker", { timeout: 30_000 }, async () => {
    const { judge, asked, budget } = asking("session");
    await judge.judge("https:", "example.com", "443", undefined, budget());
    await judge.judge("https:", "example.com", "443", undefined, budget());
    await judge.judge("https:", "example.com", "443");
    assert.equal(asked.length, 1);
  });
});
