// The HTTP server as remote agents use it: the official SDK client over real
// HTTP on 127.0.0.1 (random ports), tokens from a real file, and raw requests
// for what no well-behaved client sends.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect as tcpConnect, type Socket } from "node:net";
import { ToolBox } from "../../../toolbox.ts";
import { serveHttp } from "../../../adapters/mcp/http.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { MemoryArtifactStore } from "../../../core/artifacts.ts";
import { MemoryStore } from "../../../core/memory_store.ts";
import { PolicyState } from "../../../policy/state.ts";
import type { Host } from "../../../core/host.ts";
import { connect, type Harness, INIT, raw, startServer, textOf, writeTokens } from "../_http_harness.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";
const READER = "reader-token-0123456789abcdef";

describe("serve over HTTP with a token file", () => {
  let h: Harness;
  before(async () => {
    h = await startServer([
      { token: ALICE, tenant: "alice" },
      { token: BOB, tenant: "bob" },
      { token: READER, tenant: "reader", scopes: ["tools:read"] },
    ]);
  });
  after(() => h.close());

  test("no token and a wrong token get 401 with WWW-Authenticate", { timeout: 60_000 }, async () => {
    const none = await raw(h.server.url, { body: INIT });
    assert.equal(none.status, 401);
    // No OAuth here, so no protected resource metadata to point at (its URL answers 404).
    assert.equal(none.headers["www-authenticate"], `Bearer realm="toolfence"`);
    assert.equal(
      (await raw(new URL("/.well-known/oauth-protected-resource/mcp", h.server.url), {
        method: "GET",
      })).status,
      404,
    );
    assert.match(none.json().error!.message, /bearer token/);
    const wrong = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${ALICE}x` } });
    assert.equal(wrong.status, 401);
    assert.match(String(wrong.headers["www-authenticate"]), /error="invalid_token"/);
    await assert.rejects(connect(h.server.url, "not-a-token-at-all-0000"), /401|Unauthorized|invalid/i);
  });

  test("the right token gets every tool and working calls", { timeout: 60_000 }, async () => {
    const client = await connect(h.server.url, ALICE);
    try {
      const { tools } = await client.listTools();
      for (const name of ["read_file", "write_file", "bash", "grep"]) assert.ok(tools.some((t) => t.name === name));
      const wrote = await client.callTool({ name: "write_file", arguments: { path: "a.txt", content: "hello\n" } });
      assert.equal(wrote.isError, undefined, textOf(wrote));
      const read = await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
      assert.match(textOf(read), /hello/);
      assert.equal(await readFile(join(h.dir, "tenants", "alice", "a.txt"), "utf8"), "hello\n");
    } finally {
      await client.close();
    }
  });

  test("a foreign Host or Origin is refused before authentication", { timeout: 60_000 }, async () => {
    const port = h.server.port;
    const host = await raw(h.server.url, { body: INIT, headers: { host: `evil.example:${port}` } });
    assert.equal(host.status, 403);
    assert.match(host.json().error!.message, /Host "evil\.example:\d+" is not one this server answers to/);
    const origin = await raw(h.server.url, {
      body: INIT,
      headers: { origin: "http://evil.example", authorization: `Bearer ${ALICE}` },
    });
    assert.equal(origin.status, 403);
    assert.match(origin.json().error!.message, /Origin "http:\/\/evil\.example" is not allowed/);
    const nullOrigin = await raw(h.server.url, { body: INIT, headers: { origin: "null" } });
    assert.equal(nullOrigin.status, 403);
    const same = await raw(h.server.url, {
      body: INIT,
      headers: { origin: `http://localhost:${port}`, host: `localhost:${port}`, authorization: `Bearer ${ALICE}` },
    });
    assert.equal(same.status, 200);
  });

  test(
    "a read-only token sees only reading tools and is refused the others with 403",
    { timeout: 60_000 },
    async () => {
      const client = await connect(h.server.url, READER);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes("read_file"));
        for (const hidden of ["write_file", "bash", "bash_background", "delete"]) assert.ok(!names.includes(hidden));
        await assert.rejects(
          client.callTool({ name: "write_file", arguments: { path: "x.txt", content: "x" } }),
          /403|scope tools:write/,
        );
        await assert.rejects(client.callTool({ name: "bash", arguments: { command: "true" } }), /403|tools:commands/);
      } finally {
        await client.close();
      }
      const entries = await readdir(join(h.dir, "tenants", "reader")).catch(() => []);
      assert.deepEqual(entries, []);
    },
  );

  test(
    "one tenant cannot read, list, signal or page through another's, guessing ids too",
    { timeout: 60_000 },
    async () => {
      const alice = await connect(h.server.url, ALICE);
      const bob = await connect(h.server.url, BOB);
      try {
        await alice.callTool({ name: "write_file", arguments: { path: "secret.txt", content: "alice's secret\n" } });
        const job = await alice.callTool({ name: "bash_background", arguments: { command: "sleep 30" } });
        assert.equal(job.isError, undefined, textOf(job));
        const jobId = /job-\d+/.exec(textOf(job))![0];
        // A large output leaves an artifact in alice's session.
        // A large output (of an allowlisted command: nobody is asked here) leaves an artifact in alice's session.
        const lines = Array.from({ length: 200_000 }, (_, i) => i + 1).join("\n");
        await alice.callTool({ name: "write_file", arguments: { path: "big.txt", content: lines } });
        const big = await alice.callTool({ name: "bash", arguments: { command: "cat big.txt" } });
        const links = (big.content as { type: string; uri?: string }[]).filter((c) => c.type === "resource_link");
        const aliceResources = await alice.listResources();
        assert.ok(links.length > 0 && aliceResources.resources.length > 0, "alice's session holds an artifact");

        // Bob's workspace is his own folder: alice's file is not there, by name or by climbing out.
        const read = await bob.callTool({ name: "read_file", arguments: { path: "secret.txt" } });
        assert.equal(read.isError, true);
        const climb = await bob.callTool({ name: "read_file", arguments: { path: "../alice/secret.txt" } });
        assert.equal(climb.isError, true);
        assert.doesNotMatch(textOf(climb), /alice's secret/);
        const listed = await bob.callTool({ name: "list_dir", arguments: { path: "." } });
        assert.doesNotMatch(textOf(listed), /secret/);
        // Bob's jobs are his own: alice's id (and every id near it) is unknown to him.
        const jobs = await bob.callTool({ name: "bash_list", arguments: {} });
        assert.doesNotMatch(textOf(jobs), /sleep 30/);
        for (const guess of [jobId, "job-1", "job-2", "job-0"]) {
          for (const name of ["bash_read", "bash_stop"]) {
            const tried = await bob.callTool({ name, arguments: { id: guess } });
            assert.equal(tried.isError, true, `${name} ${guess}: ${textOf(tried)}`);
          }
        }
        // Alice's artifacts are not listed to bob, nor readable by uri.
        assert.deepEqual((await bob.listResources()).resources, []);
        for (const link of [...links.map((l) => l.uri!), ...aliceResources.resources.map((r) => r.uri)]) {
          await assert.rejects(bob.readResource({ uri: link }), /not found/i);
        }
        for (const link of links) {
          const id = `sha256:${link.uri!.slice("artifact://sha256/".length)}`;
          for (const offset of [0, 1000, 100_000]) {
            const paged = await bob.callTool({ name: "read_artifact", arguments: { id, offset } });
            assert.equal(paged.isError, true);
            assert.doesNotMatch(textOf(paged), /199999/);
          }
          const own = await alice.callTool({ name: "read_artifact", arguments: { id, offset: 0 } });
          assert.equal(own.isError, undefined, textOf(own));
        }
        // Alice's job is still running: nothing bob did reached it.
        const still = await alice.callTool({ name: "bash_list", arguments: {} });
        assert.match(textOf(still), /sleep 30/);
        assert.match(textOf(still), /running/);
      } finally {
        await alice.close();
        await bob.close();
      }
    },
  );

  test("another tenant's session id is as unknown as a guessed one", { timeout: 60_000 }, async () => {
    const opened = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${ALICE}` } });
    assert.equal(opened.status, 200);
    const sessionId = String(opened.headers["mcp-session-id"]);
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });
    const headers = (token: string, id: string) => ({
      authorization: `Bearer ${token}`,
      "mcp-session-id": id,
      "mcp-protocol-version": "2025-06-18",
    });
    const own = await raw(h.server.url, { body: ping, headers: headers(ALICE, sessionId) });
    assert.equal(own.status, 200);
    for (const method of ["POST", "GET", "DELETE"]) {
      const foreign = await raw(h.server.url, {
        method,
        body: method === "POST" ? ping : undefined,
        headers: headers(BOB, sessionId),
      });
      assert.equal(foreign.status, 404, method);
      const guessed = await raw(h.server.url, {
        method,
        body: method === "POST" ? ping : undefined,
        headers: headers(BOB, crypto.randomUUID()),
      });
      assert.equal(guessed.status, 404, method);
      assert.equal(foreign.text, guessed.text);
    }
    // Bob's DELETE did not end it.
    assert.equal((await raw(h.server.url, { body: ping, headers: headers(ALICE, sessionId) })).status, 200);
    const ended = await raw(h.server.url, { method: "DELETE", headers: headers(ALICE, sessionId) });
    assert.equal(ended.status, 200);
    assert.equal((await raw(h.server.url, { body: ping, headers: headers(ALICE, sessionId) })).status, 404);
  });

  test("malformed requests get the JSON-RPC error the specification names", { timeout: 60_000 }, async () => {
    const auth = { authorization: `Bearer ${ALICE}` };
    const cases: [string | Uint8Array, number, number, unknown][] = [
      ["{not json", 400, -32700, null],
      [new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 400, -32700, null],
      ["[]", 400, -32600, null],
      ['"a string"', 400, -32600, null],
      ['{"jsonrpc":"2.0","id":7,"method":"tools/list","params":5}', 400, -32600, 7],
      ['{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 400, -32600, null],
      ['{"jsonrpc":"1.0","id":8,"method":"ping"}', 400, -32600, 8],
      ['{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}', 400, -32602, 9],
      ['{"jsonrpc":"2.0","method":5}', 400, -32600, null],
      // A progress token of the wrong type is a fault of the params, not of the request object.
      ['{"jsonrpc":"2.0","id":12,"method":"ping","params":{"_meta":{"progressToken":{"a":1}}}}', 400, -32602, 12],
      ['{"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":{"progressToken":null}}}', 400, -32602, 13],
      // An initialize with malformed params (here no protocolVersion) is invalid params, as over stdio.
      ['{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"capabilities":{}}}', 400, -32602, 10],
      [
        '{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":5,"capabilities":{}}}',
        400,
        -32602,
        11,
      ],
    ];
    for (const [body, status, code, id] of cases) {
      const answer = await raw(h.server.url, { body, headers: auth });
      assert.equal(answer.status, status, String(body));
      const reply = answer.json();
      assert.equal(reply.error?.code, code, String(body));
      assert.equal(reply.id, id, String(body));
      assert.ok(
        reply.error!.message.length < 300 && !/ZodError|"code":/.test(reply.error!.message),
        reply.error!.message,
      );
    }
    // A batch is no message of a client whose header says 2025-06-18 or later (without a header, the server takes
    // the client for one of 2025-03-26, which may batch: see mcp/http_batch_test).
    const batch = await raw(h.server.url, {
      body: '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      headers: { ...auth, "mcp-protocol-version": "2025-06-18" },
    });
    assert.equal(batch.status, 400);
    assert.deepEqual([batch.json().error?.code, batch.json().id], [-32600, null]);
    const initialize = await raw(h.server.url, {
      body: '{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"x"}}}',
      headers: auth,
    });
    assert.match(initialize.json().error!.message, /^Invalid params: params\.protocolVersion: /);
    // A coded body is refused as such, 415 with the coding the server takes, whatever its bytes: a gzip body was
    // answered "not valid UTF-8", and a body labelled br but sent plain was served.
    for (const coding of ["gzip", "br", "GZIP, identity"]) {
      const coded = await raw(h.server.url, { body: INIT, headers: { ...auth, "content-encoding": coding } });
      assert.equal(coded.status, 415, coding);
      assert.equal(coded.headers["accept-encoding"], "identity");
      assert.match(coded.json().error!.message, /Unsupported Content-Encoding: .*send the body uncompressed/);
    }
    const plain = await raw(h.server.url, { body: INIT, headers: { ...auth, "content-encoding": "identity" } });
    assert.equal(plain.status, 200, plain.text);
    // "initialize" as a notification asks for nothing: it opens no session (one would count against the tenant).
    const sessions = h.server.sessionCount();
    const notification = await raw(h.server.url, {
      body: JSON.stringify({ ...JSON.parse(INIT), id: undefined }),
      headers: auth,
    });
    assert.equal(notification.status, 400);
    assert.equal(h.server.sessionCount(), sessions);
  });

  test("a request refused for its session is answered with its own id, as JSON-RPC asks when it could be read", {
    timeout: 60_000,
  }, async () => {
    const auth = { authorization: `Bearer ${ALICE}`, "mcp-protocol-version": "2025-06-18" };
    const ping = (id: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });
    const session = (await raw(h.server.url, { body: INIT, headers: auth })).headers["mcp-session-id"] as string;
    const cases: [Record<string, string>, string, number, unknown][] = [
      [{}, ping(21), 400, 21],
      [{ "mcp-session-id": "no-such-session" }, ping("p-22"), 404, "p-22"],
      [{ "mcp-session-id": "no-such-session" }, INIT.replace('"id":1', '"id":23'), 400, 23],
      // Refused by the SDK's transport, past the session's check: an unsupported version, an Accept without SSE.
      [{ "mcp-session-id": session, "mcp-protocol-version": "1999-01-01" }, ping(24), 400, 24],
      [{ "mcp-session-id": session, accept: "application/json" }, ping(25), 406, 25],
      // An initialize the transport refuses (no session opens): an Accept without SSE, a body that is not JSON's type.
      [{ accept: "application/json" }, INIT.replace('"id":1', '"id":26'), 406, 26],
      [{ "content-type": "text/plain" }, INIT.replace('"id":1', '"id":"i-27"'), 415, "i-27"],
      // A notification has no id to give back.
      [{ "mcp-session-id": "no-such-session" }, '{"jsonrpc":"2.0","method":"notifications/initialized"}', 404, null],
    ];
    const sessions = h.server.sessionCount();
    for (const [headers, body, status, id] of cases) {
      const answer = await raw(h.server.url, { body, headers: { ...auth, ...headers } });
      assert.equal(answer.status, status, body);
      assert.equal(answer.json().id, id, body);
    }
    assert.equal(h.server.sessionCount(), sessions, "no refused request opened a session");
  });

  test("wrong methods and paths are refused with a reason; /healthz answers", { timeout: 60_000 }, async () => {
    const put = await raw(h.server.url, { method: "PUT", headers: { authorization: `Bearer ${ALICE}` } });
    assert.equal(put.status, 405);
    assert.match(put.json().error!.message, /Method Not Allowed/);
    const other = await raw(new URL("/elsewhere", h.server.url), { body: INIT });
    assert.equal(other.status, 404);
    const health = await raw(new URL("/healthz", h.server.url), { method: "GET" });
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.text), { status: "ok" });
  });

  test("the token file is read again when it changes", { timeout: 60_000 }, async () => {
    const NEW = "carol-token-0123456789abcdef";
    await assert.rejects(connect(h.server.url, NEW), /401|Unauthorized/i);
    await writeTokens(h.tokenFile, [
      { token: ALICE, tenant: "alice" },
      { token: BOB, tenant: "bob" },
      { token: READER, tenant: "reader", scopes: ["tools:read"] },
      { token: NEW, tenant: "carol" },
    ]);
    await new Promise((done) => setTimeout(done, 1100));
    const carol = await connect(h.server.url, NEW);
    await carol.close();
    // A broken file keeps the tokens that were loaded.
    await writeFile(h.tokenFile, "{broken");
    await new Promise((done) => setTimeout(done, 1100));
    const still = await connect(h.server.url, NEW);
    await still.close();
  });

  test("logging/setLevel holds for the session: after 'error', a cancelled call's notice is not sent", {
    timeout: 60_000,
  }, async () => {
    for (const [level, expected] of [["error", []], ["notice", ["cancelled"]]] as const) {
      const client = await connect(h.server.url, ALICE);
      try {
        const heard: string[] = [];
        client.setNotificationHandler(
          LoggingMessageNotificationSchema,
          (n) => void heard.push((n.params.data as { event: string }).event),
        );
        await client.setLoggingLevel(level);
        const controller = new AbortController();
        const call = client.callTool({ name: "sleep", arguments: { seconds: 30 } }, undefined, {
          signal: controller.signal,
        });
        setTimeout(() => controller.abort("stop"), 200);
        await assert.rejects(call, /stop/);
        // The cancel's notice goes out on the session's GET stream once the call has ended.
        await new Promise((r) => setTimeout(r, 500));
        assert.deepEqual(heard, expected, `level ${level}`);
      } finally {
        await client.close();
      }
    }
  });
});

describe("an artifact store and a policy state in the server's options", () => {
  // The options are the server's, for every session: each session sees the artifacts it put in the store and a copy
  // of the state, never another tenant's artifacts or grants.
  const artifacts = new MemoryArtifactStore();
  const state = new PolicyState();
  // A server of two tenants saves a person's "from now on" only as the tenant's grant in a store.
  const store = new MemoryStore();
  let h: Harness;
  before(async () => {
    h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      artifacts,
      state,
      autoConfirm: false,
      // The client's answers count as a person's, and a command may be allowed from now on (saved nowhere here but
      // in the store).
      elicitationAnswers: "grant",
      saveRule: { where: "nowhere", save: () => assert.fail("the policy file is every tenant's") },
      store,
    });
  });
  after(() => h.close());

  test("another tenant's artifacts in the store are neither listed nor read", { timeout: 60_000 }, async () => {
    const alice = await connect(h.server.url, ALICE);
    const bob = await connect(h.server.url, BOB);
    try {
      // A large output (of an allowlisted command: nobody is asked here) leaves an artifact in alice's session.
      const lines = Array.from({ length: 200_000 }, (_, i) => i + 1).join("\n");
      await alice.callTool({ name: "write_file", arguments: { path: "big.txt", content: lines } });
      const big = await alice.callTool({ name: "bash", arguments: { command: "cat big.txt" } });
      const links = (big.content as { type: string; uri?: string }[]).filter((c) => c.type === "resource_link");
      assert.ok(links.length > 0, textOf(big));
      assert.ok(artifacts.list().length > 0, "the artifact is kept in the store the options gave");
      assert.deepEqual((await bob.listResources()).resources, []);
      for (const link of links) {
        await assert.rejects(bob.readResource({ uri: link.uri! }), /not found/i);
        const id = `sha256:${link.uri!.slice("artifact://sha256/".length)}`;
        const paged = await bob.callTool({ name: "read_artifact", arguments: { id, offset: 0 } });
        assert.equal(paged.isError, true);
        assert.doesNotMatch(textOf(paged), /199999/);
        const own = await alice.readResource({ uri: link.uri! });
        assert.match(JSON.stringify(own), /199999/);
      }
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("the same bytes put by two tenants are described to each by its own call", { timeout: 60_000 }, async () => {
    // The store gave the reference of whoever put the bytes first: bob's result and resources/list described his
    // artifact as `whole stdout of bash "cat alice-plans.txt"`, alice's command line.
    const alice = await connect(h.server.url, ALICE);
    const bob = await connect(h.server.url, BOB);
    try {
      const lines = Array.from({ length: 150_000 }, (_, i) => `row ${i + 1}`).join("\n");
      await alice.callTool({ name: "write_file", arguments: { path: "alice-plans.txt", content: lines } });
      const first = await alice.callTool({ name: "bash", arguments: { command: "cat alice-plans.txt" } });
      assert.match(JSON.stringify(first.content), /alice-plans\.txt/);
      await bob.callTool({ name: "write_file", arguments: { path: "same.txt", content: lines } });
      const second = await bob.callTool({ name: "bash", arguments: { command: "cat same.txt" } });
      const links = (second.content as { type: string; description?: string }[]).filter((c) =>
        c.type === "resource_link"
      );
      assert.ok(links.length > 0, textOf(second));
      const listed = await bob.listResources();
      for (const seen of [JSON.stringify(second), JSON.stringify(listed)]) {
        assert.doesNotMatch(seen, /alice-plans/);
        assert.match(seen, /cat same\.txt/);
      }
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("a command one tenant's person allowed from now on is still asked of another", { timeout: 60_000 }, async () => {
    const alice = await connect(h.server.url, ALICE, { elicit: true });
    const bob = await connect(h.server.url, BOB, { elicit: true });
    try {
      alice.setRequestHandler(ElicitRequestSchema, (request) => {
        const choice = JSON.stringify(request.params).match(/"(save)"/)?.[1];
        assert.ok(choice, JSON.stringify(request.params));
        return { action: "accept", content: { answer: choice! } };
      });
      const bobAsked: string[] = [];
      bob.setRequestHandler(ElicitRequestSchema, (request) => {
        bobAsked.push(request.params.message);
        return { action: "decline" };
      });
      // The same command line, each in its own workspace: alice's person allowed it from now on, for alice alone.
      const allowed = await alice.callTool({ name: "bash", arguments: { command: "touch made.txt" } });
      assert.equal(allowed.isError, undefined, textOf(allowed));
      const tried = await bob.callTool({ name: "bash", arguments: { command: "touch made.txt" } });
      assert.equal(tried.isError, true, textOf(tried));
      assert.equal(bobAsked.length, 1);
      await assert.rejects(readFile(join(h.dir, "tenants", "bob", "made.txt")), /ENOENT/);
      assert.ok(
        !state.commandAllowlist().some((entry) => entry.startsWith("touch")),
        "the options' state is unchanged",
      );
      assert.deepEqual((await store.grants("alice")).map((grant) => grant.subject), ["touch made.txt"]);
      assert.deepEqual(await store.grants("bob"), []);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe("oversized bodies", () => {
  let h: Harness;
  before(async () => (h = await startServer([{ token: ALICE, tenant: "alice" }], { maxBodyBytes: 64 * 1024 })));
  after(() => h.close());

  test("a body over the limit is answered 413 naming its id, and the server goes on", { timeout: 60_000 }, async () => {
    const client = await connect(h.server.url, ALICE);
    try {
      const big = JSON.stringify({
        jsonrpc: "2.0",
        id: 42,
        method: "tools/call",
        params: { name: "write_file", arguments: { path: "big.txt", content: "x".repeat(200 * 1024) } },
      });
      const answer = await raw(h.server.url, { body: big, headers: { authorization: `Bearer ${ALICE}` } });
      assert.equal(answer.status, 413);
      assert.equal(answer.json().id, 42);
      assert.match(answer.json().error!.message, /over the server's limit of 65536 bytes/);
      await assert.rejects(
        client.callTool({ name: "write_file", arguments: { path: "b.txt", content: "y".repeat(100 * 1024) } }),
        /413|limit/,
      );
      const fine = await client.callTool({ name: "write_file", arguments: { path: "c.txt", content: "ok" } });
      assert.equal(fine.isError, undefined, textOf(fine));
    } finally {
      await client.close();
    }
  });
});

// A POST whose body declares `declared` bytes and sends `sent` of them, then waits: the socket, and what it was answered
// (the status, once the server answers it at all).
function stalledPost(
  url: URL,
  token: string,
  declared: number,
  sent: number,
): { socket: Socket; status: Promise<number> } {
  const socket = tcpConnect(Number(url.port), url.hostname);
  const head = `POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${token}\r\n` +
    `content-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${declared}\r\n\r\n`;
  const start = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"';
  socket.write(head + start + "x".repeat(sent - start.length));
  const status = new Promise<number>((resolve) => {
    let text = "";
    socket.on("data", (data) => {
      text += data.toString();
      const match = /^HTTP\/1\.1 (\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    socket.on("error", () => resolve(-1));
    socket.on("close", () => resolve(-1));
  });
  return { socket, status };
}

describe("bodies being read, per tenant", () => {
  let h: Harness;
  before(async () => (h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
    maxBodyBytes: 64 * 1024,
  })));
  after(() => h.close());

  test("a tenant's bodies held unread take at most two bodies' worth of the server", { timeout: 60_000 }, async () => {
    const sockets: Socket[] = [];
    const answered = (status: Promise<number>) =>
      Promise.race([status, new Promise<number>((resolve) => setTimeout(() => resolve(0), 10_000))]);
    try {
      // Two bodies of 60 KiB of alice's, sent and left unfinished, are held (the budget is two bodies) ...
      for (let i = 0; i < 2; i++) {
        const held = stalledPost(h.server.url, ALICE, 64 * 1024 - 16, 60 * 1024);
        sockets.push(held.socket);
        const early = await Promise.race([held.status, new Promise((r) => setTimeout(() => r("waiting"), 500))]);
        assert.equal(early, "waiting", "a body within the budget is read to its end");
      }
      // ... a third is refused as it comes, with a status that says to come back, not held as the others.
      const third = stalledPost(h.server.url, ALICE, 64 * 1024 - 16, 60 * 1024);
      sockets.push(third.socket);
      assert.equal(await answered(third.status), 429, "a body over the tenant's budget is refused while it is sent");
      // Another tenant's budget is its own.
      const bob = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${BOB}` } });
      assert.equal(bob.status, 200, bob.text);
      // Once alice's held bodies are dropped, her budget is back.
      for (const socket of sockets) socket.destroy();
      sockets.length = 0;
      await new Promise((resolve) => setTimeout(resolve, 300));
      const again = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${ALICE}` } });
      assert.equal(again.status, 200, again.text);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});

describe("requests being served, per tenant", () => {
  // A person who never answers: every question waits until its call is cancelled.
  const waiting: Host = {
    choose: (_request, signal) =>
      new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason))),
    confirm: (_request, signal) =>
      new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason))),
  };
  let h: Harness;
  before(async () => (h = await startServer([{ token: ALICE, tenant: "alice" }], {
    maxBodyBytes: 64 * 1024,
    autoConfirm: false,
    host: waiting,
  })));
  after(() => h.close());

  test("a tenant's calls waiting on a question hold at most two bodies' worth of the server", {
    timeout: 60_000,
  }, async () => {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${ALICE}`,
      "mcp-protocol-version": "2025-06-18",
    };
    const opened = await fetch(h.server.url, { method: "POST", headers, body: INIT });
    const session = opened.headers.get("mcp-session-id")!;
    await opened.text();
    const inSession = { ...headers, "mcp-session-id": session };
    const post = (body: unknown) =>
      fetch(h.server.url, { method: "POST", headers: inSession, body: JSON.stringify(body) });
    const write = (id: number, content: string) =>
      post({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "write_file", arguments: { path: "f.txt", content } },
      });
    const streams: Response[] = [];
    try {
      await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
      // A file to overwrite: overwriting asks, and the question waits.
      const made = await (await write(1, "small")).text();
      assert.match(made, /"created\\?":true/, made);
      // Two calls of 50 KiB wait on their questions, each holding its message ...
      for (const id of [2, 3]) {
        const pending = await write(id, "x".repeat(50 * 1024));
        assert.equal(pending.status, 200);
        streams.push(pending);
      }
      // ... and a third is refused while they wait, as a body would be while they were read.
      const third = await write(4, "y".repeat(50 * 1024));
      if (third.status !== 429) streams.push(third);
      assert.equal(third.status, 429, "a third call is refused while two wait");
      const refusal = await third.text();
      assert.match(refusal, /Too many request bytes/);
      assert.equal(third.headers.get("retry-after"), "1");
      // A small request is never held back: the tenant can still cancel.
      const cancel = await post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } });
      assert.equal(cancel.status, 202, await cancel.text());
      // The cancelled call's budget is back.
      const again = await write(5, "z".repeat(50 * 1024));
      assert.equal(again.status, 200, again.status === 200 ? "" : await again.text());
      streams.push(again);
    } finally {
      for (const stream of streams) await stream.body?.cancel().catch(() => {});
      await fetch(h.server.url, { method: "DELETE", headers: inSession }).then((r) => r.body?.cancel());
    }
  });
});

describe("starting", () => {
  test("a non-loopback address without authentication refuses to start", { timeout: 60_000 }, async () => {
    for (const hostname of ["0.0.0.0", "192.0.2.1", "::"]) {
      await assert.rejects(
        serveHttp(new ToolBox(), { hostname, port: 0, workspace: "/tmp", allowNoAuth: true }),
        /without authentication/,
      );
    }
    await assert.rejects(serveHttp(new ToolBox(), { port: 0, workspace: "/tmp" }), /needs authentication/);
  });
});
