// JSON-RPC batches over Streamable HTTP, which protocol 2025-03-26 added (and 2025-06-18 took out again): a client
// of 2025-03-26 POSTs an array and gets one answer holding a reply to each of its requests, every message served as
// if it had come alone (the id in flight, the cap on calls, the scopes); a batch of notifications gets 202; any other
// client's array is refused as one message would be.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Harness, raw, type RawAnswer, startServer } from "../_http_harness.ts";
import { MAX_BATCH_MESSAGES } from "../../../adapters/mcp/_http_body.ts";

const TOKEN = "batch-token-0123456789abcdef00";
const READER = "batch-reader-0123456789abcdef0";

interface Reply {
  id?: unknown;
  result?: { content?: { type: string; text?: string }[]; tools?: unknown[] };
  error?: { code: number; message: string };
}

// The replies of an answer, in the order they came: the data of its events, or its JSON (one or an array).
function replies(answer: RawAnswer): Reply[] {
  if (String(answer.headers["content-type"]).includes("text/event-stream")) {
    return answer.text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
  }
  const value = JSON.parse(answer.text);
  return Array.isArray(value) ? value : [value];
}

const byId = (list: Reply[]) => new Map(list.map((reply) => [JSON.stringify(reply.id ?? null), reply]));
const call = (id: unknown, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

async function open(h: Harness, token: string, protocolVersion: string): Promise<Record<string, string>> {
  const auth = { authorization: `Bearer ${token}` };
  const init = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "batch", version: "1" } },
  };
  const opened = await raw(h.server.url, { body: JSON.stringify(init), headers: auth });
  assert.equal(opened.status, 200, opened.text);
  const headers = {
    ...auth,
    "mcp-session-id": String(opened.headers["mcp-session-id"]),
    "mcp-protocol-version": protocolVersion,
  };
  const ready = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  assert.equal((await raw(h.server.url, { body: ready, headers })).status, 202);
  return headers;
}

describe("JSON-RPC batches over Streamable HTTP", { timeout: 120_000 }, () => {
  let h: Harness;
  let headers: Record<string, string>;
  const post = (body: unknown, extra: Record<string, string> = {}) =>
    raw(h.server.url, {
      body: typeof body === "string" ? body : JSON.stringify(body),
      headers: { ...headers, ...extra },
    });

  before(async () => {
    h = await startServer([
      { token: TOKEN, tenant: "t" },
      { token: READER, tenant: "r", scopes: ["tools:read"] },
    ], { maxConcurrentCalls: 2 });
    headers = await open(h, TOKEN, "2025-03-26");
    // The tenant's folder is made at its first session.
    await writeFile(join(h.dir, "tenants", "t", "hello.txt"), "hello world\n");
  });
  after(async () => {
    await h?.close();
  });

  test("a batch of requests gets one answer with a reply to each, once", { timeout: 60_000 }, async () => {
    const answer = await post([
      { jsonrpc: "2.0", id: "b1", method: "ping" },
      call("b2", "read_file", { path: "hello.txt" }),
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "x", progress: 1 } },
      { jsonrpc: "2.0", id: "b3", method: "tools/list" },
    ]);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.headers["mcp-session-id"], headers["mcp-session-id"]);
    const got = replies(answer);
    assert.deepEqual(got.map((r) => r.id).sort(), ["b1", "b2", "b3"]);
    const ids = byId(got);
    assert.deepEqual(ids.get('"b1"')!.result, {});
    assert.match(JSON.stringify(ids.get('"b2"')!.result), /hello world/);
    assert.ok(Array.isArray(ids.get('"b3"')!.result?.tools));
  });

  test("broken messages are answered in the batch's answer; the rest are served", { timeout: 60_000 }, async () => {
    const answer = await post([
      { jsonrpc: "2.0", id: "c1", method: "ping" },
      { jsonrpc: "2.0", id: "c2" },
      42,
      [{ jsonrpc: "2.0", id: "c3", method: "ping" }],
      { jsonrpc: "2.0", method: 5 },
    ]);
    assert.equal(answer.status, 200, answer.text);
    const got = replies(answer);
    const ids = byId(got);
    assert.deepEqual(ids.get('"c1"')!.result, {});
    assert.equal(ids.get('"c2"')!.error?.code, -32600);
    const unnamed = got.filter((r) => r.id === null);
    assert.equal(unnamed.length, 3, JSON.stringify(got));
    for (const reply of unnamed) assert.equal(reply.error?.code, -32600);
    assert.ok(unnamed.some((r) => /not an array/.test(r.error!.message)), JSON.stringify(unnamed));
    // The nested array's ping was not served. {"jsonrpc": "2.0", "method": 5} is no notification (its method is no
    // string): JSON-RPC answers it -32600 with id null, as its own example {"jsonrpc": "2.0", "method": 1} (before,
    // it was dropped, and a batch of {"foo": "boo"} alone was answered 202 with nothing).
    assert.ok(unnamed.some((r) => r.error!.message === "Invalid request: method must be a string, not an integer"));
    assert.equal(got.length, 5, JSON.stringify(got));
    const foo = await post([{ foo: "boo" }, { jsonrpc: "2.0", method: "notifications/hello", params: [7] }]);
    assert.equal(foo.status, 200, foo.text);
    assert.deepEqual(replies(foo).map((r) => [r.id, r.error?.code]), [[null, -32600]]);
  });

  test("a batch whose every message is refused is one JSON array", { timeout: 60_000 }, async () => {
    const answer = await post([{ jsonrpc: "2.0", id: "e1" }, { jsonrpc: "2.0", id: "e2", method: 7 }]);
    assert.equal(answer.status, 200, answer.text);
    assert.match(String(answer.headers["content-type"]), /application\/json/);
    const got = replies(answer);
    assert.deepEqual(got.map((r) => [r.id, r.error?.code]), [["e1", -32600], ["e2", -32600]]);
  });

  test("a batch of notifications gets 202 and no body", { timeout: 60_000 }, async () => {
    const answer = await post([
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "y", progress: 1 } },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "nothing" } },
    ]);
    assert.equal(answer.status, 202);
    assert.equal(answer.text, "");
  });

  test("a request whose id one before it in the batch took is refused, even once that one is answered", {
    timeout: 60_000,
  }, async () => {
    const answer = await post([
      { jsonrpc: "2.0", id: "q", method: "ping" },
      { jsonrpc: "2.0", id: "q", method: "ping" },
    ]);
    assert.equal(answer.status, 200, answer.text);
    const got = replies(answer);
    assert.equal(got.length, 2, answer.text);
    assert.equal(got.filter((r) => r.result !== undefined).length, 1, answer.text);
    assert.equal(got.find((r) => r.error)?.error?.code, -32600, answer.text);
  });

  test("each message gets the checks of one alone: ids in flight, the cap on calls", { timeout: 60_000 }, async () => {
    const answer = await post([
      call("s1", "sleep", { seconds: 1 }),
      call("s1", "datetime"),
      call("s2", "sleep", { seconds: 1 }),
      call("s3", "sleep", { seconds: 1 }),
    ]);
    assert.equal(answer.status, 200, answer.text);
    const got = replies(answer);
    const first = got.filter((r) => r.id === "s1");
    assert.equal(first.length, 2, JSON.stringify(got));
    assert.ok(first.some((r) => r.result !== undefined), JSON.stringify(first));
    assert.ok(first.some((r) => r.error?.code === -32600 && /still in flight/.test(r.error.message)));
    assert.ok(byId(got).get('"s2"')!.result, JSON.stringify(got));
    // maxConcurrentCalls is 2: the third sleep came while two ran (a second each: on a loaded machine too).
    const third = byId(got).get('"s3"')!;
    assert.equal(third.error?.code, -32000, JSON.stringify(third));
    assert.match(third.error!.message, /in flight/);
    // All answered: the ids are free again.
    assert.deepEqual(replies(await post(call("s1", "datetime"), { "mcp-protocol-version": "2025-03-26" }))[0].id, "s1");
  });

  test(
    "a request cancelled in a batch ends its part; the batch's answer holds the rest",
    { timeout: 60_000 },
    async () => {
      const started = Date.now();
      const pending = post([call("k1", "sleep", { seconds: 30 }), { jsonrpc: "2.0", id: "k2", method: "ping" }]);
      const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "k1", reason: "test" } };
      // Sent until the batch is answered: one that comes before the sleep is in flight cancels nothing.
      let answered = false;
      void pending.finally(() => (answered = true));
      while (!answered) {
        await new Promise((done) => setTimeout(done, 200));
        if (!answered) assert.equal((await post(cancel)).status, 202);
      }
      const answer = await pending;
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(replies(answer).map((r) => r.id), ["k2"]);
      assert.ok(Date.now() - started < 20_000, "the batch's answer waited for the cancelled sleep");
    },
  );

  test("a scope a token lacks refuses that call only", { timeout: 60_000 }, async () => {
    const reader = await open(h, READER, "2025-03-26");
    const answer = await raw(h.server.url, {
      body: JSON.stringify([call("r1", "datetime"), call("r2", "write_file", { path: "x.txt", content: "x" })]),
      headers: reader,
    });
    assert.equal(answer.status, 200, answer.text);
    const ids = byId(replies(answer));
    assert.ok(ids.get('"r1"')!.result);
    assert.match(ids.get('"r2"')!.error!.message, /needs the scope tools:write/);
  });

  test("refused as a whole: empty, initialize in it, an unknown session", { timeout: 60_000 }, async () => {
    const empty = await post([]);
    assert.equal(empty.status, 400);
    assert.match(empty.json().error!.message, /empty batch/);
    const init = {
      jsonrpc: "2.0",
      id: "i1",
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const withInit = await post([init, { jsonrpc: "2.0", id: "i2", method: "ping" }]);
    assert.equal(withInit.status, 400);
    assert.match(withInit.json().error!.message, /initialize comes alone/);
    const unknown = await post([{ jsonrpc: "2.0", id: "u1", method: "ping" }], { "mcp-session-id": "no-such-session" });
    assert.equal(unknown.status, 404);
  });

  test("a batch of more than MAX_BATCH_MESSAGES is refused whole; one of that many is served", {
    timeout: 60_000,
  }, async () => {
    const pings = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: `${prefix}${i}`, method: "ping" }));
    // 20,000 pings held the server for seconds (every tenant's requests waiting) and grew it by 150 MiB.
    const over = await post(pings(20_000, "o"));
    assert.equal(over.status, 400, over.text.slice(0, 300));
    assert.equal(over.json().error!.code, -32600);
    assert.match(over.json().error!.message, new RegExp(`at most ${MAX_BATCH_MESSAGES}`));
    const most = await post(pings(MAX_BATCH_MESSAGES, "m"));
    assert.equal(most.status, 200, most.text.slice(0, 300));
    assert.equal(replies(most).filter((r) => r.result !== undefined).length, MAX_BATCH_MESSAGES);
  });

  test("a client of a later protocol gets the refusal of one message", { timeout: 60_000 }, async () => {
    const later = await open(h, TOKEN, "2025-06-18");
    const answer = await raw(h.server.url, {
      body: JSON.stringify([{ jsonrpc: "2.0", id: "l1", method: "ping" }]),
      headers: later,
    });
    assert.equal(answer.status, 400);
    const reply = answer.json();
    assert.equal(reply.error?.code, -32600);
    assert.match(reply.error!.message, /batches are taken only under protocol 2025-03-26/);
  });
  test("without the version header, the version the session settled on decides", { timeout: 60_000 }, async () => {
    // A client of 2025-03-26 sends no MCP-Protocol-Version header: that header came in 2025-06-18.
    const post = async (protocolVersion: string) => {
      const { "mcp-protocol-version": _, ...headers } = await open(h, TOKEN, protocolVersion);
      return raw(h.server.url, { body: JSON.stringify([{ jsonrpc: "2.0", id: "v1", method: "ping" }]), headers });
    };
    const older = await post("2025-03-26");
    assert.equal(older.status, 200, older.text);
    assert.deepEqual(replies(older).map((r) => r.id), ["v1"]);
    const later = await post("2025-06-18");
    assert.equal(later.status, 400, later.text);
    assert.match(later.json().error!.message, /batches are taken only under protocol 2025-03-26/);
  });
});

describe("JSON-RPC batches to a stateless server", { timeout: 60_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startServer([{ token: TOKEN, tenant: "t" }], { stateless: true });
  });
  after(async () => {
    await h?.close();
  });

  test("each message is served as one alone would be, the answers joined", { timeout: 60_000 }, async () => {
    const answer = await raw(h.server.url, {
      body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }, call(2, "datetime"), { id: 3 }]),
      headers: { authorization: `Bearer ${TOKEN}`, "mcp-protocol-version": "2025-03-26" },
    });
    assert.equal(answer.status, 200, answer.text);
    const ids = byId(replies(answer));
    assert.ok(Array.isArray(ids.get("1")!.result?.tools));
    assert.ok(ids.get("2")!.result, answer.text);
    assert.equal(ids.get("3")!.error?.code, -32600);
  });

  // Each request of a stateless server is a session of its own, so no id was ever in flight: a batch's two requests
  // of one id both ran and the batch's answer held two replies of that id. The stdio transport refuses the second.
  test(
    "a request whose id one before it in the batch took is refused, as over stdio",
    { timeout: 60_000 },
    async () => {
      const answer = await raw(h.server.url, {
        body: JSON.stringify([
          call(7, "sleep", { seconds: 1 }),
          call(7, "datetime"),
          { jsonrpc: "2.0", id: "p", method: "ping" },
          { jsonrpc: "2.0", id: "p", method: "ping" },
          // 8 and "8" are one id here, as for the ids in flight.
          { jsonrpc: "2.0", id: 8, method: "ping" },
          { jsonrpc: "2.0", id: "8", method: "ping" },
        ]),
        headers: { authorization: `Bearer ${TOKEN}`, "mcp-protocol-version": "2025-03-26" },
      });
      assert.equal(answer.status, 200, answer.text);
      const got = replies(answer);
      assert.equal(got.length, 6, answer.text);
      for (const [first, second] of [[7, 7], ["p", "p"], [8, "8"]]) {
        const firsts = got.filter((r) => r.id === first && r.result !== undefined);
        assert.equal(firsts.length, 1, answer.text);
        const refused = got.filter((r) => r.id === second && r.error !== undefined);
        assert.equal(refused.length, 1, answer.text);
        assert.equal(refused[0].error!.code, -32600);
        assert.match(refused[0].error!.message, /still in flight; use a new id/);
      }
      // The sleep ran once: its one reply is its result, the datetime never ran.
      assert.match(got.find((r) => r.id === 7 && r.result)!.result!.content![0].text!, /slept_ms/);
    },
  );
});
