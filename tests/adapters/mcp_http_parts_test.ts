// The pieces of the HTTP server on their own: the token file's parsing, the
// Host/Origin policy, the address syntax, the rate limiter, the event store.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TokenFile, tokenHash } from "../../adapters/mcp/_http_tokens.ts";
import { isLoopbackHost, originPolicy, refusedOrigin } from "../../adapters/mcp/_http_origin.ts";
import { parseHttpAddress } from "../../adapters/mcp/_http_args.ts";
import { RateLimiter } from "../../adapters/mcp/_http_rate.ts";
import { BoundedEventStore } from "../../adapters/mcp/_http_event_store.ts";
import { scopeOf } from "../../adapters/mcp/_http_scopes.ts";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";

describe("token file", () => {
  async function withFile(content: string, check: (path: string) => Promise<void>): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-tokens-"));
    try {
      await writeFile(join(dir, "t.json"), content);
      await check(join(dir, "t.json"));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  test("hashes and plain tokens identify their tenant; anything else does not", { timeout: 60_000 }, async () => {
    const file = JSON.stringify({
      tokens: [
        { sha256: tokenHash("first-token-0123456789"), tenant: "one", scopes: ["tools:read"] },
        { token: "second-token-0123456789", tenant: "two", workspace: "/srv/two" },
      ],
    });
    await withFile(file, async (path) => {
      const tokens = await TokenFile.open(path);
      assert.deepEqual(await tokens.identify("first-token-0123456789"), {
        tenant: "one",
        scopes: ["tools:read"],
        key: `token:${tokenHash("first-token-0123456789").slice(0, 16)}`,
      });
      const two = await tokens.identify("second-token-0123456789");
      assert.equal(two?.tenant, "two");
      assert.equal(two?.workspace, "/srv/two");
      assert.deepEqual(two?.scopes, ["tools:read", "tools:write", "tools:commands"]);
      for (
        const wrong of ["", "first-token-012345678", "first-token-0123456789 ", tokenHash("first-token-0123456789")]
      ) {
        assert.equal(await tokens.identify(wrong), undefined, wrong);
      }
    });
  });

  test("a token replaced by one of the same length, times and all, stops working within the second", {
    timeout: 60_000,
  }, async () => {
    // Size, inode and mtime can all stay (a rewrite within the clock's tick, or `touch -r` after it): the file's text
    // is what is compared.
    const content = (token: string) => JSON.stringify({ tokens: [{ token, tenant: "one" }] });
    await withFile(content("revoked-token-0123456789"), async (path) => {
      const tokens = await TokenFile.open(path);
      assert.equal((await tokens.identify("revoked-token-0123456789"))?.tenant, "one");
      const was = await stat(path);
      await writeFile(path, content("granted-token-0123456789"));
      await utimes(path, was.atime, was.mtime);
      const now = await stat(path);
      // Within the millisecond (`utimes` takes a Date, in floating-point seconds; Node's stat has nanoseconds).
      assert.deepEqual([now.size, now.ino], [was.size, was.ino]);
      assert.ok(Math.abs(now.mtimeMs - was.mtimeMs) < 1, `${now.mtimeMs} against ${was.mtimeMs}`);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      assert.equal(await tokens.identify("revoked-token-0123456789"), undefined);
      assert.equal((await tokens.identify("granted-token-0123456789"))?.tenant, "one");
    });
  });

  const broken: [string, RegExp][] = [
    ["{", /not JSON/],
    ["[]", /needs \{"tokens"/],
    ['{"tokens":[]}', /holds no tokens/],
    ['{"tokens":[{"sha256":"abc"}]}', /needs "sha256"/],
    ['{"tokens":[{"token":"short"}]}', /at least 16/],
    [`{"tokens":[{"token":"aaaaaaaaaaaaaaaa"},{"sha256":"${tokenHash("aaaaaaaaaaaaaaaa")}"}]}`, /repeats a token/],
    ['{"tokens":[{"token":"aaaaaaaaaaaaaaaa","tenant":"../x"}]}', /tenant must be/],
    ['{"tokens":[{"token":"aaaaaaaaaaaaaaaa","tenant":".."}]}', /tenant must be/],
    ['{"tokens":[{"token":"aaaaaaaaaaaaaaaa","scopes":["admin"]}]}', /scopes must be/],
  ];
  for (const [content, reason] of broken) {
    test(`a token file ${content.slice(0, 40)} is refused with its reason`, { timeout: 60_000 }, async () => {
      await withFile(content, async (path) => {
        await assert.rejects(TokenFile.open(path), reason);
      });
    });
  }
});

describe("Host and Origin policy", () => {
  test("loopback names are recognised", { timeout: 60_000 }, () => {
    for (const name of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"]) assert.ok(isLoopbackHost(name), name);
    for (const name of ["0.0.0.0", "::", "10.0.0.1", "localhost.evil", "128.0.0.1"]) {
      assert.ok(!isLoopbackHost(name), name);
    }
  });

  test("an allowlisted name without a port allows any port; with a port only that one", { timeout: 60_000 }, () => {
    const policy = originPolicy("0.0.0.0", 8765, ["tools.example.com", "proxy.example:443"], ["https://app.example"]);
    const check = (host: string, origin?: string) =>
      refusedOrigin(new Headers({ host, ...(origin ? { origin } : {}) }), policy);
    assert.equal(check("tools.example.com"), undefined);
    assert.equal(check("tools.example.com:9999"), undefined);
    assert.equal(check("proxy.example:443"), undefined);
    assert.match(check("proxy.example:444")!, /is not one this server answers to/);
    assert.match(check("localhost:8765")!, /is not one/);
    assert.equal(check("tools.example.com", "https://tools.example.com"), undefined);
    assert.equal(check("tools.example.com", "https://app.example/"), undefined);
    assert.match(check("tools.example.com", "https://app.example.evil")!, /Origin/);
    assert.match(refusedOrigin(new Headers(), policy)!, /no Host header/);
  });

  test("an IPv6 loopback listener answers to its bracketed name", { timeout: 60_000 }, () => {
    const policy = originPolicy("::1", 9000);
    assert.equal(refusedOrigin(new Headers({ host: "[::1]:9000" }), policy), undefined);
    assert.equal(refusedOrigin(new Headers({ host: "localhost:9000" }), policy), undefined);
  });
});

test("--http takes HOST:PORT, PORT and [v6]:PORT", { timeout: 60_000 }, () => {
  assert.deepEqual(parseHttpAddress("8765"), { hostname: "127.0.0.1", port: 8765 });
  assert.deepEqual(parseHttpAddress("0.0.0.0:80"), { hostname: "0.0.0.0", port: 80 });
  assert.deepEqual(parseHttpAddress("[::1]:0"), { hostname: "::1", port: 0 });
  for (const bad of ["", "host", "host:", ":80", "1.2.3.4:65536", "a:b:80", "[::1]"]) {
    assert.throws(() => parseHttpAddress(bad), /HOST:PORT/, bad);
  }
});

test("the rate limiter allows `limit` per window per key, and says how long to wait", { timeout: 60_000 }, () => {
  const limiter = new RateLimiter(3, 60_000);
  for (let i = 0; i < 3; i++) assert.equal(limiter.take("a", 1000 + i), 0);
  assert.equal(limiter.take("a", 2000), 60_000 - 1000);
  assert.equal(limiter.take("b", 2000), 0);
  assert.equal(limiter.take("a", 61_001), 0);
});

test(
  "the event store replays one stream after an id, and keeps a bounded number of events",
  { timeout: 60_000 },
  async () => {
    const store = new BoundedEventStore(5, 1e9);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await store.storeEvent(i % 2 === 0 ? "s1" : "s2", { jsonrpc: "2.0", method: `m${i}` }));
    }
    const replayed: string[] = [];
    const stream = await store.replayEventsAfter(ids[0], {
      send: (_id, message) => Promise.resolve(void replayed.push((message as { method: string }).method)),
    });
    assert.equal(stream, "s1");
    assert.deepEqual(replayed, ["m2"]);
    for (let i = 4; i < 10; i++) await store.storeEvent("s1", { jsonrpc: "2.0", method: `m${i}` });
    assert.equal(await store.getStreamIdForEventId(ids[0]), undefined);
    assert.equal(await store.replayEventsAfter(ids[0], { send: () => Promise.resolve() }), "");
    // Large events push the old ones out by size too.
    const small = new BoundedEventStore(100, 10_000);
    const first = await small.storeEvent("s", { jsonrpc: "2.0", method: "first" });
    await small.storeEvent("s", { jsonrpc: "2.0", method: "big", params: { text: "x".repeat(6_000) } });
    assert.equal(await small.getStreamIdForEventId(first), undefined);
  },
);

test("every tool falls under the scope its permissions need", { timeout: 60_000 }, () => {
  const box = new ToolBox().withDefaults("fs", "search", "cmd", "patch", "system");
  const scopes = Object.fromEntries(box.list().map((tool) => [tool.name, scopeOf(tool)]));
  for (const name of ["read_file", "grep", "glob", "list_dir", "datetime"]) {
    assert.equal(scopes[name], "tools:read", name);
  }
  for (const name of ["write_file", "edit_file", "delete", "move", "apply_patch"]) {
    assert.equal(scopes[name], "tools:write", name);
  }
  for (const name of ["bash", "bash_background", "bash_stop"]) assert.equal(scopes[name], "tools:commands", name);
});
