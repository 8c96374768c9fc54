// The browser's destination policy: the allowlist matches whole origins, names
// that resolve to private addresses are judged by the address, and questions
// are asked once per origin. (The classes of addresses themselves:
// tests/policy/egress/addresses_test.ts.)

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import dns from "node:dns/promises";
import { Session } from "../../../policy/session.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { classifyAddress } from "../../../policy/egress/addresses.ts";
import { type DestinationRules, Destinations } from "../../../tools/browser/_destinations.ts";

async function judge(rules: DestinationRules, answer: "allow" | "deny" = "deny") {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-dest-"));
  const asked: string[] = [];
  const session = new Session({
    workspace: dir,
    host: callbackHost({
      choose: async (request) => {
        asked.push(request.message);
        await new Promise((r) => setTimeout(r, 20));
        return answer as never;
      },
    }),
  });
  return {
    destinations: new Destinations(session, rules),
    asked,
    session,
    async close() {
      await session.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "allowed";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe("destinations", () => {
  test(
    "allowlist entries match scheme, host and port exactly; wildcards only subdomains",
    { timeout: 60_000 },
    async () => {
      const { destinations, asked, close } = await judge({
        allow: ["https://93.184.215.14", "8.8.8.8:53", "http://127.0.0.1:8080", "*.1.1.1.1"],
      });
      try {
        const j = (s: string, h: string, p: string) => outcome(destinations.judgeHost(s, h, p));
        assert.equal(await j("https:", "93.184.215.14", "443"), "allowed");
        assert.equal(await j("http:", "93.184.215.14", "80"), "url_not_allowed");
        assert.equal(await j("http:", "8.8.8.8", "53"), "allowed");
        assert.equal(await j("http:", "8.8.8.8", "80"), "url_not_allowed");
        assert.equal(await j("http:", "127.0.0.1", "8080"), "allowed");
        assert.equal(await j("http:", "127.0.0.1", "8081"), "url_not_allowed");
        assert.equal(await j("http:", "127.0.0.2", "8080"), "url_not_allowed");
        assert.equal(await j("ws:", "127.0.0.1", "8080"), "allowed");
        assert.ok(asked.length >= 4);
      } finally {
        await close();
      }
    },
  );

  test(
    "a denied destination is refused before the allowlist and before anyone is asked",
    { timeout: 60_000 },
    async () => {
      // Answers "allow" to every question, so that only the deny list can refuse.
      const { destinations, asked, close } = await judge({
        allow: ["127.0.0.1", "*.example.com", "93.184.215.14"],
        // `localhost:9`: a deny of localhost refuses every loopback address, which would cover 127.0.0.1:8081 too.
        deny: ["127.0.0.1:8080", "https://93.184.215.14", "localhost:9"],
        privateNetworks: "allow",
      }, "allow");
      try {
        const j = (s: string, h: string, p: string) => outcome(destinations.judgeHost(s, h, p));
        assert.equal(await j("http:", "127.0.0.1", "8080"), "url_not_allowed");
        assert.equal(await j("ws:", "127.0.0.1", "8080"), "url_not_allowed", "ws is judged as http");
        assert.equal(await j("http:", "127.0.0.1", "8081"), "allowed", "another port is not denied");
        assert.equal(await j("https:", "93.184.215.14", "443"), "url_not_allowed");
        assert.equal(await j("http:", "93.184.215.14", "80"), "allowed", "the deny names https only");
        assert.equal(await j("http:", "localhost", "9"), "url_not_allowed");
        assert.equal(await j("http:", "LOCALHOST.", "9"), "url_not_allowed", "case and a trailing dot");
        assert.deepEqual(asked, [], "a denied destination is never asked about");
      } finally {
        await close();
      }
      // A name that resolves to a denied address is refused by the address.
      const byAddress = await judge(
        { allow: ["localhost"], deny: ["127.0.0.1", "[::1]"], privateNetworks: "allow" },
        "allow",
      );
      try {
        assert.equal(await outcome(byAddress.destinations.judgeHost("http:", "localhost", "8080")), "url_not_allowed");
        assert.deepEqual(byAddress.asked, []);
      } finally {
        await byAddress.close();
      }
    },
  );

  test("a host name on the allowlist that resolves to a private address still asks", { timeout: 60_000 }, async () => {
    const name = os.hostname();
    const addresses = (await dns.lookup(name, { all: true }).catch(() => [])).map((a) => a.address);
    const inside = addresses.some((a) => classifyAddress(a) !== "public");
    if (!inside) return; // this machine's name is public here; nothing to rebind to
    const { destinations, asked, close } = await judge({ allow: [name] });
    try {
      assert.equal(await outcome(destinations.judgeHost("http:", name, "80")), "url_not_allowed");
      assert.equal(asked.length, 1);
      assert.match(asked[0], /loopback|private/);
    } finally {
      await close();
    }
  });

  test("concurrent requests to one origin ask once; the answer is remembered", { timeout: 60_000 }, async () => {
    const { destinations, asked, close } = await judge({}, "allow");
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, () => outcome(destinations.judgeHost("http:", "127.0.0.1", "9"))),
      );
      assert.deepEqual(new Set(results), new Set(["allowed"]));
      assert.equal(await outcome(destinations.judgeHost("http:", "127.0.0.1", "9")), "allowed");
      assert.equal(asked.length, 1);
      // Another port is another origin.
      await destinations.judgeHost("http:", "127.0.0.1", "10");
      assert.equal(asked.length, 2);
    } finally {
      await close();
    }
  });

  test(
    "schemes other than http(s), ws(s) and workspace file: are refused without asking",
    { timeout: 60_000 },
    async () => {
      const { destinations, asked, close } = await judge({ privateNetworks: "allow" });
      try {
        for (
          const url of [
            "javascript:alert(1)",
            "ftp://127.0.0.1/",
            "chrome://settings",
            "view-source:http://a/",
            "blob:x",
          ]
        ) {
          assert.equal(await outcome(destinations.judgeUrl(url)), "url_not_allowed", url);
        }
        assert.equal(await outcome(destinations.judgeUrl("not a url")), "invalid_url");
        assert.equal(await outcome(destinations.judgeUrl("about:blank")), "allowed");
        assert.equal(await outcome(destinations.judgeUrl("file:///etc/passwd")), "outside_workspace");
        assert.equal(await outcome(destinations.judgeUrl("file://evil/share/x")), "url_not_allowed");
        // An encoded slash names no path (Node refuses it): a stable code, not a bare tool error.
        for (const url of ["file:///tmp/..%2fetc/passwd", "file:///tmp/a%2Fb", "file:///tmp/a%2f..%2f..%2fetc"]) {
          assert.equal(await outcome(destinations.judgeUrl(url)), "invalid_url", url);
        }
        assert.equal(asked.length, 0);
      } finally {
        await close();
      }
    },
  );

  test(
    "a host that does not resolve is a dns_failed error, never an unjudged connection",
    { timeout: 60_000 },
    async () => {
      // Answers "allow": a name no rule allows is asked about before it is looked up.
      const { destinations, close } = await judge({ privateNetworks: "allow" }, "allow");
      try {
        assert.equal(await outcome(destinations.judgeHost("https:", "no-such-host.invalid", "443")), "dns_failed");
        // A numeric host the URL parser did not turn into an address is never handed to a resolver.
        assert.equal(await outcome(destinations.judgeHost("https:", "0x7f.1", "443")), "dns_failed");
        assert.equal(await outcome(destinations.judgeHost("https:", "2130706433", "443")), "dns_failed");
      } finally {
        await close();
      }
    },
  );
});
