// The limit on calls in flight counts calls, not ids: a request whose id
// belongs to one still in flight is refused (`-32600`), whatever its method,
// and `1` and `"1"` count as one id; over Streamable HTTP (raw requests, so
// that the ids are ours) and over stdio (main.ts serve, raw lines). Racing:
// many calls sharing an id, sent at once, never run more than one at a time.
// A cancellation naming the id in the other spelling stops the call, and so does
// one whose reason or _meta the SDK's schema would refuse (it counts by its id).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, type Harness, INIT, raw, type RawAnswer, startServer } from "./_http_harness.ts";
import { type RawServer, startRawServer } from "./_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const TOKEN = "inflight-token-0123456789abcdef";

function sse(answer: RawAnswer): { id?: unknown; result?: unknown; error?: { code: number; message: string } }[] {
  if (!String(answer.headers["content-type"]).includes("text/event-stream")) return [answer.json()];
  return answer.text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
}

const call = (id: unknown, name: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

describe("over Streamable HTTP", { timeout: 60_000 }, () => {
  let h: Harness;
  let headers: Record<string, string>;
  before(async () => {
    h = await startServer([{ token: TOKEN, tenant: "t" }], { maxConcurrentCalls: 2 });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const opened = await raw(h.server.url, { body: INIT, headers: auth });
    assert.equal(opened.status, 200);
    headers = {
      ...auth,
      "mcp-session-id": String(opened.headers["mcp-session-id"]),
      "mcp-protocol-version": "2025-06-18",
    };
    const ready = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
    assert.equal((await raw(h.server.url, { body: ready, headers })).status, 202);
  });
  after(async () => {
    await h?.close();
  });

  const post = (body: string) => raw(h.server.url, { body, headers });

  test(
    "an id in flight cannot be used again, as a number or a string, by any method",
    { timeout: 60_000 },
    async () => {
      const first = post(call(5, "sleep", { seconds: 0.6 }));
      await new Promise((done) => setTimeout(done, 150));
      for (
        const body of [
          call(5, "datetime"),
          call("5", "datetime"),
          JSON.stringify({ jsonrpc: "2.0", id: 5, method: "ping" }),
        ]
      ) {
        const refused = await post(body);
        assert.equal(refused.status, 400, refused.text);
        const [reply] = sse(refused);
        assert.equal(reply.error?.code, -32600);
        assert.match(reply.error!.message, /still in flight/);
      }
      const [answer] = sse(await first);
      assert.equal(answer.id, 5);
      assert.ok(answer.result, JSON.stringify(answer));
      // Once answered, the id is free again.
      const [again] = sse(await post(call(5, "datetime")));
      assert.ok(again.result, JSON.stringify(again));
    },
  );

  test(
    "racing: 20 calls sharing one id, sent at once, run one at a time; the cap counts calls",
    { timeout: 60_000 },
    async () => {
      // Each call sleeps long enough that all 20 reach the server while the first runs, also on a loaded machine
      // (under Node 22 in CI, with 0.3 s, the last ones came after the first had answered and rightly ran).
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post(call("same", "sleep", { seconds: 3 }))),
      );
      const ran = answers.filter((a) => a.status === 200 && sse(a).some((r) => r.result !== undefined));
      assert.equal(ran.length, 1, answers.map((a) => `${a.status} ${a.text.slice(0, 120)}`).join("\n"));
      assert.ok(answers.filter((a) => a.status === 400).length === 19);
      // Two distinct calls fill the cap of 2; a third is refused until they answer.
      const slow = [post(call("a", "sleep", { seconds: 3 })), post(call("b", "sleep", { seconds: 3 }))];
      await new Promise((done) => setTimeout(done, 150));
      assert.equal((await post(call("c", "datetime"))).status, 429);
      for (const answer of await Promise.all(slow)) assert.ok(sse(answer)[0].result);
      assert.ok(sse(await post(call("c", "datetime")))[0].result);
    },
  );

  test(
    'a cancellation of "9" stops the call 9: its slot is freed only as the call stops, and the cap still holds',
    { timeout: 60_000 },
    async () => {
      // Before: the slots were freed by "9" while the SDK, which stops calls by the exact id, let 9 run on to its end,
      // so that four calls ran under a cap of 2.
      const started = performance.now();
      const slow = [post(call(9, "sleep", { seconds: 3 })), post(call(10, "sleep", { seconds: 3 }))];
      await new Promise((done) => setTimeout(done, 200));
      for (const id of ["9", "10"]) {
        const cancel = JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
        assert.equal((await post(cancel)).status, 202);
      }
      // A cancelled request gets no answer: its stream ends without one, at once.
      for (const answer of await Promise.all(slow)) {
        assert.deepEqual(sse(answer).filter((r) => r.result !== undefined), [], answer.text.slice(0, 300));
      }
      assert.ok(performance.now() - started < 2500, `the cancelled calls ran ${performance.now() - started} ms`);
      // Their slots are free because they stopped: two new calls fill the cap, a third is refused.
      const next = [post(call(11, "sleep", { seconds: 1 })), post(call(12, "sleep", { seconds: 1 }))];
      await new Promise((done) => setTimeout(done, 200));
      assert.equal((await post(call(13, "datetime"))).status, 429);
      for (const answer of await Promise.all(next)) assert.ok(sse(answer)[0].result);
    },
  );

  test(
    "a cancellation whose reason is no string, or whose _meta is not MCP's, stops the call all the same",
    { timeout: 60_000 },
    async () => {
      // Before: the server freed the call's slot and ended its stream, while the SDK's schema dropped the
      // cancellation (reason 5, _meta 5), so the call ran on to its end past the limit on calls in flight: 20 such
      // calls of one session ran at once under a cap of 16 (serve --http, `sleep`, no "cancelled" notice).
      const client = await connect(h.server.url, TOKEN);
      try {
        const notices: string[] = [];
        client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
          notices.push(JSON.stringify(notification.params));
        });
        const session = {
          authorization: `Bearer ${TOKEN}`,
          "mcp-session-id": String(client.transport?.sessionId),
          "mcp-protocol-version": "2025-06-18",
        };
        const send = (body: string) => raw(h.server.url, { body, headers: session });
        const cases: [string, Record<string, unknown>][] = [
          ["bad-reason", { reason: 5 }],
          ["null-reason", { reason: null }],
          ["bad-meta", { _meta: 5, reason: "stop" }],
          ["bad-token", { _meta: { progressToken: {} }, reason: ["x"] }],
        ];
        for (const [id, extra] of cases) {
          const started = performance.now();
          const answer = send(call(id, "sleep", { seconds: 3 }));
          await new Promise((done) => setTimeout(done, 200));
          const cancel = JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, ...extra },
          });
          assert.equal((await send(cancel)).status, 202);
          assert.deepEqual(sse(await answer).filter((r) => r.result !== undefined), []);
          // The call stopped (its notice says so), well before the 3 s it would have slept.
          const deadline = Date.now() + 60_000;
          while (!notices.some((n) => n.includes(`"callId":"mcp-${id}"`)) && Date.now() < deadline) {
            await new Promise((done) => setTimeout(done, 50));
          }
          const notice = notices.find((n) => n.includes(`"callId":"mcp-${id}"`));
          assert.ok(notice, `no notice for ${id}: ${notices.join("\n")}`);
          assert.match(notice, /"event":"cancelled"/);
          assert.ok(performance.now() - started < 2500, `${id} ran ${performance.now() - started} ms`);
        }
      } finally {
        await client.close();
      }
    },
  );

  test(
    "a call cancelled while it waits behind another's command ends at once, not run",
    { timeout: 60_000 },
    async () => {
      // Before: the session's call gate ignored the cancellation, so the call (its slot freed, its stream ended) sat in
      // the queue until the command ahead of it ended, and only then answered as cancelled; a client could queue any
      // number of them behind one command, past the limit on calls in flight.
      const client = await connect(h.server.url, TOKEN);
      try {
        const notices: string[] = [];
        client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
          notices.push(JSON.stringify(notification.params));
        });
        const session = {
          authorization: `Bearer ${TOKEN}`,
          "mcp-session-id": String(client.transport?.sessionId),
          "mcp-protocol-version": "2025-06-18",
        };
        const send = (body: string) => raw(h.server.url, { body, headers: session });
        const command = send(call("holder", "bash", { command: "touch holding && sleep 6" }));
        // The command holds the session's gate once it runs.
        const workspace = join(h.dir, "tenants", "t");
        while (await readFile(join(workspace, "holding")).then(() => false, () => true)) {
          await new Promise((done) => setTimeout(done, 20));
        }
        const started = performance.now();
        const queued = send(call("queued", "write_file", { path: "queued.txt", content: "x" }));
        await new Promise((done) => setTimeout(done, 200));
        const cancel = JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "queued" },
        });
        assert.equal((await send(cancel)).status, 202);
        assert.deepEqual(sse(await queued).filter((r) => r.result !== undefined), []);
        const deadline = Date.now() + 60_000;
        while (!notices.some((n) => n.includes(`"callId":"mcp-queued"`)) && Date.now() < deadline) {
          await new Promise((done) => setTimeout(done, 50));
        }
        const notice = notices.find((n) => n.includes(`"callId":"mcp-queued"`));
        assert.ok(notice, `no notice: ${notices.join("\n")}`);
        assert.match(notice, /"event":"cancelled"/);
        assert.ok(performance.now() - started < 4000, `it waited ${performance.now() - started} ms for the command`);
        assert.ok(sse(await command)[0].result, "the command ahead of it ran to its end");
        await assert.rejects(readFile(join(workspace, "queued.txt")), { code: "ENOENT" });
      } finally {
        await client.close();
      }
    },
  );
});

describe("over stdio", { timeout: 60_000, skip: DENO_PROCESS_ONLY }, () => {
  let workspace: string;
  let server: RawServer;
  before(async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-inflight-")));
    server = await startRawServer(workspace);
  });
  after(async () => {
    await server?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  test('1 and "1" are one id while the call is in flight', { timeout: 60_000 }, async () => {
    await server.write(call(1, "sleep", { seconds: 0.5 }) + "\n");
    await new Promise((done) => setTimeout(done, 150));
    await server.write(call("1", "datetime") + "\n");
    const refused = await server.reply("1");
    assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
    const answered = await server.reply(1);
    assert.ok(answered.result, JSON.stringify(answered));
  });

  test('a cancellation of "3" stops the call 3, which then gives no answer', { timeout: 60_000 }, async () => {
    // Before: "3" freed the id while the SDK, which stops calls by the exact id, let 3 run on: it answered after 3 s,
    // beside the answer to a new request that had taken its id meanwhile.
    await server.write(call(3, "sleep", { seconds: 3 }) + "\n");
    await new Promise((done) => setTimeout(done, 200));
    const cancel = JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "3" } });
    await server.write(cancel + "\n");
    await new Promise((done) => setTimeout(done, 200));
    await server.write(call(3, "datetime") + "\n");
    const answered = await server.reply(3);
    assert.ok(answered.result, JSON.stringify(answered));
    assert.match(JSON.stringify(answered.result), /iso|time/i);
    await new Promise((done) => setTimeout(done, 3500));
    assert.deepEqual(server.replies.filter((r) => r.id === 3).length, 1, JSON.stringify(server.replies.slice(-3)));
  });

  test("malformed cancellations, handled as read, change nothing and break nothing", { timeout: 60_000 }, async () => {
    // Before: the transport spelled `[11]` as "11", took it for the call 11, cancelled it and freed its id.
    await server.write(call(11, "sleep", { seconds: 0.5 }) + "\n");
    const malformed = [undefined, null, { requestId: { id: 11 } }, { requestId: [11] }, { requestId: null }, {
      requestId: 11.5,
    }, { requestId: "__proto__" }];
    await server.write(
      malformed.map((params) =>
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          ...(params === undefined ? {} : { params }),
        })
      ).join("\n") + "\n",
    );
    const answered = await server.reply(11);
    assert.match(JSON.stringify(answered.result), /slept_ms/, JSON.stringify(answered));
    const pong = await server.request("ping", {});
    assert.deepEqual(pong.result, {});
  });

  test(
    "a cancellation and a request taking its id, read in one chunk, stop the old call and answer the new one",
    { timeout: 60_000 },
    async () => {
      // Before: the SDK handled the cancellation a microtask after the request behind it had taken the id, so it
      // cancelled the new request (datetime) while the cancelled sleep ran on and answered as id 4, after 3 s.
      for (const [id, cancelled] of [[4, 4], [6, "6"]] as const) {
        await server.write(call(id, "sleep", { seconds: 3 }) + "\n");
        await new Promise((done) => setTimeout(done, 300));
        const cancel = JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: cancelled },
        });
        await server.write(cancel + "\n" + call(id, "datetime") + "\n");
        const answered = await server.reply(id);
        assert.ok(answered.result, JSON.stringify(answered));
        assert.match(JSON.stringify(answered.result), /unix_ms/, JSON.stringify(answered));
      }
      await new Promise((done) => setTimeout(done, 3500));
      for (const id of [4, 6]) {
        const mine = server.replies.filter((r) => r.id === id);
        assert.equal(mine.length, 1, JSON.stringify(mine));
      }
      const notices = server.replies.filter((r) => r.method === "notifications/message").map((r) => JSON.stringify(r));
      assert.ok(notices.some((n) => /"tool":"sleep","callId":"mcp-4"/.test(n)), notices.join("\n"));
      assert.ok(!notices.some((n) => /"tool":"datetime"/.test(n)), notices.join("\n"));
    },
  );
  test(
    "a cancellation whose reason is no string, or whose _meta is not MCP's, stops the call and frees its id",
    { timeout: 60_000 },
    async () => {
      // Before: the transport freed the id while the SDK's schema dropped the cancellation (reason 5), so the call
      // ran on: a new request took the id, and both answered as id 1 (the new one after 1 s, the old one after 3 s).
      const cases: [number, Record<string, unknown>][] = [
        [31, { reason: 5 }],
        [32, { reason: null }],
        [33, { _meta: 5 }],
        [34, { _meta: { progressToken: {} }, reason: ["x"] }],
      ];
      for (const [id, extra] of cases) {
        await server.write(call(id, "sleep", { seconds: 3 }) + "\n");
        await new Promise((done) => setTimeout(done, 200));
        const cancel = JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, ...extra },
        });
        await server.write(cancel + "\n" + call(id, "datetime") + "\n");
        const answered = await server.reply(id, 10_000);
        assert.match(JSON.stringify(answered.result), /unix_ms/, JSON.stringify(answered));
      }
      await new Promise((done) => setTimeout(done, 3500));
      for (const [id] of cases) {
        const mine = server.replies.filter((r) => r.id === id);
        assert.equal(mine.length, 1, JSON.stringify(mine));
      }
    },
  );
});
