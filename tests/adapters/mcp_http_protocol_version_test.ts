// A session takes JSON-RPC batches when it settled on 2025-03-26, whatever a request's MCP-Protocol-Version says.
// Seen live (main.ts serve --http): on a session initialized with 2025-06-18, which has no batches, a batch sent with
// `MCP-Protocol-Version: 2025-03-26` was taken and served (two answers). A request naming another version the server
// supports is still served (the official conformance suite sends 2025-03-26 on a 2025-11-25 session and expects it);
// one naming a version it does not support is 400.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect, type Harness, raw, startServer, textOf } from "./_http_harness.ts";

const ALICE = "alice-version-token-0123456789";
const BOB = "bob-version-token-0123456789ab";

describe("MCP-Protocol-Version on a session", { timeout: 120_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
  });
  after(async () => await h.close());

  const send = (session: string, version: string | undefined, body: unknown, method = "POST", token = ALICE) =>
    raw(h.server.url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        "mcp-session-id": session,
        ...(version === undefined ? {} : { "mcp-protocol-version": version }),
        ...(method === "GET" ? { accept: "text/event-stream" } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  async function open(version: string): Promise<string> {
    const init = await raw(h.server.url, {
      headers: { authorization: `Bearer ${ALICE}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });
    assert.equal(init.status, 200, init.text);
    const session = String(init.headers["mcp-session-id"]);
    const ready = await send(session, version, { jsonrpc: "2.0", method: "notifications/initialized" });
    assert.equal(ready.status, 202, ready.text);
    return session;
  }

  test("a session of 2025-06-18 refuses a batch, whatever version its header names", { timeout: 60_000 }, async () => {
    const session = await open("2025-06-18");
    const write = (id: number, path: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "write_file", arguments: { path, content: "x" } },
    });
    for (const version of ["2025-03-26", "2025-06-18", "2025-11-25", undefined]) {
      const batch = await send(session, version, [write(2, "b.txt"), { jsonrpc: "2.0", id: 3, method: "ping" }]);
      assert.equal(batch.status, 400, `${version}: ${batch.text}`);
      assert.equal(batch.json().error!.code, -32600);
      assert.match(batch.json().error!.message, /batches are taken only under protocol 2025-03-26/);
    }
    // None of it was served.
    const list = await send(session, "2025-06-18", {
      jsonrpc: "2.0",
      id: 6,
      method: "tools/call",
      params: { name: "list_dir", arguments: { path: "." } },
    });
    assert.equal(list.status, 200, list.text);
    assert.doesNotMatch(list.text, /b\.txt/);
    // A lone request naming another supported version is served; an unsupported one is 400, listing those supported.
    assert.equal((await send(session, "2025-03-26", { jsonrpc: "2.0", id: 7, method: "ping" })).status, 200);
    const unknown = await send(session, "1999-01-01", { jsonrpc: "2.0", id: 8, method: "ping" });
    assert.equal(unknown.status, 400);
    assert.match(unknown.json().error!.message, /Unsupported protocol version/);
    // Another tenant is told nothing of the session: its batch is "not found", as for a made-up id.
    const bob = await send(session, "2025-03-26", [{ jsonrpc: "2.0", id: 9, method: "ping" }], "POST", BOB);
    assert.equal(bob.status, 404, bob.text);
    const made = await send(
      crypto.randomUUID(),
      "2025-03-26",
      [{ jsonrpc: "2.0", id: 9, method: "ping" }],
      "POST",
      BOB,
    );
    assert.equal(made.status, 404);
    assert.equal(made.text, bob.text);
  });

  test("a session of 2025-03-26 takes batches", { timeout: 60_000 }, async () => {
    const session = await open("2025-03-26");
    for (const [version, id] of [["2025-03-26", 2], [undefined, 4]] as const) {
      const batch = await send(session, version, [
        { jsonrpc: "2.0", id, method: "ping" },
        { jsonrpc: "2.0", id: id + 1, method: "ping" },
      ]);
      assert.equal(batch.status, 200, batch.text);
      assert.match(batch.text, new RegExp(`"id":${id + 1}`));
    }
  });

  test("the SDK's client, which sends the version negotiated, is served", { timeout: 60_000 }, async () => {
    const client = await connect(h.server.url, ALICE);
    try {
      assert.ok((await client.listTools()).tools.length > 0);
      const wrote = await client.callTool({ name: "write_file", arguments: { path: "sdk.txt", content: "ok\n" } });
      assert.equal(wrote.isError, undefined, textOf(wrote));
    } finally {
      await client.close();
    }
  });
});
