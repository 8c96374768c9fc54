// JSON-RPC batches over stdio, which protocol 2025-03-26 added (and 2025-06-18 took out again): a client that
// negotiated 2025-03-26 gets one array answering the requests of its batch, error replies to its broken messages
// among them, and nothing for a batch of notifications; any other client gets the -32600 of a single message.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { callOutput, type RawServer, type Reply, startRawServer } from "../_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../../_runtime.ts";

let workspace: string;
let server: RawServer;
let older: RawServer;

const line = (messages: unknown) => JSON.stringify(messages) + "\n";
const byId = (answers: Reply[]) => [...answers].sort((a, b) => String(a.id).localeCompare(String(b.id)));

describe("JSON-RPC batches over stdio", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-batch-")));
    await fsp.writeFile(path.join(workspace, "hello.txt"), "hello world\n");
    [server, older] = await Promise.all([
      startRawServer(workspace, { protocolVersion: "2025-03-26" }),
      startRawServer(workspace),
    ]);
  });
  after(async () => {
    await Promise.all([server?.close(), older?.close()]);
    await fsp.rm(workspace, { recursive: true, force: true });
  });

  test("a batch of requests is answered by one array, each request once", { timeout: 60_000 }, async () => {
    const from = server.replies.length;
    await server.write(line([
      { jsonrpc: "2.0", id: "b1", method: "ping" },
      {
        jsonrpc: "2.0",
        id: "b2",
        method: "tools/call",
        params: { name: "read_file", arguments: { path: "hello.txt" } },
      },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "x", progress: 1 } },
      { jsonrpc: "2.0", id: "b3", method: "tools/list" },
    ]));
    const [answers] = await server.batchReplies(from, 1);
    assert.deepEqual(byId(answers).map((a) => a.id), ["b1", "b2", "b3"]);
    const [ping, read, list] = byId(answers);
    assert.deepEqual(ping.result, {});
    assert.match(JSON.stringify(callOutput(read)), /hello world/);
    assert.ok(Array.isArray(list.result?.tools));
    // Nothing of it came alone.
    assert.equal(server.replies.slice(from).filter((r) => !Array.isArray(r) && String(r.id).startsWith("b")).length, 0);
  });

  test(
    "a batch cancelling a call and reusing its id stops the old call and answers the new one",
    { timeout: 60_000 },
    async () => {
      // Before: the SDK handled the cancellation after the request behind it had taken the id: it stopped the new
      // request (datetime) and the cancelled sleep ran on, its answer sent in the batch's array as the answer to "k1".
      await server.write(line({
        jsonrpc: "2.0",
        id: "k1",
        method: "tools/call",
        params: { name: "sleep", arguments: { seconds: 3 } },
      }));
      await new Promise((done) => setTimeout(done, 300));
      const from = server.replies.length;
      await server.write(line([
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "k1" } },
        { jsonrpc: "2.0", id: "k1", method: "tools/call", params: { name: "datetime", arguments: {} } },
      ]));
      const [answers] = await server.batchReplies(from, 1, 10_000);
      assert.equal(answers.length, 1, JSON.stringify(answers));
      assert.equal(answers[0].id, "k1");
      assert.match(JSON.stringify(callOutput(answers[0])), /unix_ms/, JSON.stringify(answers[0]));
      await new Promise((done) => setTimeout(done, 3200));
      const late = server.replies.slice(from).filter((r) => !Array.isArray(r) && r.id === "k1");
      assert.deepEqual(late, []);
    },
  );

  test("broken messages in a batch are answered in its array; the rest are served", { timeout: 60_000 }, async () => {
    const from = server.replies.length;
    await server.write(line([
      { jsonrpc: "2.0", id: "c1", method: "ping" },
      { jsonrpc: "2.0" },
      42,
      [{ jsonrpc: "2.0", id: "c2", method: "ping" }],
      { jsonrpc: "2.0", id: "c3", method: "initialize", params: {} },
      { jsonrpc: "2.0", id: "c4", method: "no/such" },
    ]));
    const [answers] = await server.batchReplies(from, 1);
    const codes = answers.map((a) => [a.id ?? null, a.error?.code ?? "ok"]);
    assert.deepEqual(
      codes.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [["c1", "ok"], ["c3", -32600], ["c4", -32601], [null, -32600], [null, -32600], [null, -32600]],
    );
  });

  test("what is no Request object of JSON-RPC 2.0 is answered -32600 with id null, alone and in a batch", {
    timeout: 60_000,
  }, async () => {
    // The specification's own examples: {"foo": "boo"} (in a batch) and {"jsonrpc": "2.0", "method": 1, "params":
    // "bar"} are answered "Invalid Request" with id null. Before, both were dropped as notifications, with nothing
    // written, alone and in a batch; only a well-formed notification goes unanswered.
    const broken = [
      { foo: "boo" },
      {},
      { method: "notifications/initialized" },
      { jsonrpc: "2.0", method: 1, params: "bar" },
      { jsonrpc: "2.0", method: "notifications/x", params: 5 },
    ];
    for (const raw of [server, older]) {
      const from = raw.replies.length;
      for (const message of broken) await raw.write(line(message));
      const alone = await raw.nullReplies(from, broken.length);
      assert.deepEqual(alone.map((r) => r.error?.code), broken.map(() => -32600));
      assert.deepEqual(
        alone.map((r) => r.error?.message),
        [
          'Invalid request: jsonrpc must be "2.0"',
          'Invalid request: jsonrpc must be "2.0"',
          'Invalid request: jsonrpc must be "2.0"',
          "Invalid request: method must be a string, not an integer",
          "Invalid request: params must be an object, not an integer",
        ],
      );
    }
    const from = server.replies.length;
    await server.write(line([
      { jsonrpc: "2.0", method: "notifications/hello", params: [7] },
      { foo: "boo" },
      { jsonrpc: "2.0", id: "n1", method: "ping" },
      { jsonrpc: "2.0", method: 1, params: "bar" },
    ]));
    const [answers] = await server.batchReplies(from, 1);
    assert.deepEqual(
      answers.map((a) => `${a.id}: ${a.error?.code ?? "ok"}`).sort(),
      ["n1: ok", "null: -32600", "null: -32600"],
    );
  });

  test("a batch of notifications gets no answer; an empty one gets a single -32600", { timeout: 60_000 }, async () => {
    const from = server.replies.length;
    await server.write(line([{ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "y" } }]));
    await server.write("[]\n");
    const [empty] = await server.nullReplies(from, 1);
    assert.equal(empty.error?.code, -32600);
    assert.deepEqual((await server.request("ping")).result, {});
    assert.equal(server.replies.slice(from).filter((r) => Array.isArray(r)).length, 0);
  });

  test(
    "an id a batch repeats, or one still in flight, is refused in the batch's array",
    { timeout: 60_000 },
    async () => {
      const from = server.replies.length;
      await server.write(line([
        { jsonrpc: "2.0", id: "d1", method: "ping" },
        { jsonrpc: "2.0", id: "d1", method: "ping" },
      ]));
      const [answers] = await server.batchReplies(from, 1);
      assert.deepEqual(answers.map((a) => a.error?.code ?? "ok").sort(), [-32600, "ok"]);
    },
  );

  test(
    "a client of a later protocol gets the -32600 of a single message for a batch",
    { timeout: 60_000 },
    async () => {
      const from = older.replies.length;
      await older.write(line([{ jsonrpc: "2.0", id: "e1", method: "ping" }]));
      const [refused] = await older.nullReplies(from, 1);
      assert.equal(refused.error?.code, -32600);
      assert.match(refused.error!.message, /2025-03-26/);
    },
  );
});
