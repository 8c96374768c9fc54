// A session answers the token that opened it. Before, another token of the same tenant could use it: a `tools:read`
// token ended a full token's session with DELETE, and read the output of its commands with bash_read (the tool
// itself only reads, so its scope allowed it). Another tenant's session was already as unknown as a guessed id.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { connect, INIT, raw, startServer, textOf } from "./_http_harness.ts";

const FULL = "full-token-0123456789abcdef01";
const READER = "reader-token-0123456789abcdef";

describe("a session and the token that opened it", { timeout: 60_000 }, () => {
  test("another token of the same tenant finds it as unknown as a guessed id", { timeout: 50_000 }, async () => {
    const h = await startServer([
      { token: FULL, tenant: "alice" },
      { token: READER, tenant: "alice", scopes: ["tools:read"] },
    ]);
    try {
      const full = await connect(h.server.url, FULL);
      const job = await full.callTool({ name: "bash_background", arguments: { command: "echo private-output" } });
      assert.equal(job.isError, undefined, textOf(job));
      const opened = await raw(h.server.url, { headers: { authorization: `Bearer ${FULL}` }, body: INIT });
      const id = String(opened.headers["mcp-session-id"]);
      assert.equal(opened.status, 200, opened.text);
      assert.ok(id.length > 0);

      const as = (token: string, session: string) => ({ authorization: `Bearer ${token}`, "mcp-session-id": session });
      const guessed = "0123456789abcdef0123456789abcdef";
      for (const session of [id, guessed]) {
        const call = await raw(h.server.url, {
          headers: as(READER, session),
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        });
        assert.equal(call.status, 404, `POST ${session}: ${call.text}`);
        assert.equal((await raw(h.server.url, { method: "DELETE", headers: as(READER, session) })).status, 404);
      }
      // The reader's own session is its own; the full token's sessions go on.
      const reader = await connect(h.server.url, READER);
      assert.ok((await reader.listTools()).tools.length > 0);
      const read = await full.callTool({ name: "bash_wait", arguments: { id: "job-1", timeout_s: 20 } });
      assert.match(textOf(read), /private-output/);
      const still = await raw(h.server.url, {
        headers: as(FULL, id),
        body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" }),
      });
      assert.notEqual(still.status, 404, still.text);
      await reader.close();
      await full.close();
    } finally {
      await h.close();
    }
  });

  // With a store, a session this replica does not hold for the asking token was looked for there, which checks the
  // tenant alone: the reader took the full token's session over, on the replica holding it as on another, and read
  // the whole output of its command (resources/read of its artifact).
  test("on a fleet's store, another token of the same tenant is not given it by any replica", {
    timeout: 50_000,
  }, async () => {
    const scratch = await mkdtemp(join(tmpdir(), "toolfence-owner-"));
    const stores = await Promise.all([0, 1].map(() => openStore(`sqlite:${join(scratch, "store.db")}`)));
    const tenants = [{ token: FULL, tenant: "alice" }, { token: READER, tenant: "alice", scopes: ["tools:read"] }];
    const [a, b] = [await startServer(tenants, { store: stores[0] }), await startServer(tenants, { store: stores[1] })];
    try {
      const full = await connect(a.server.url, FULL);
      const ran = await full.callTool({
        name: "bash",
        arguments: { command: "head -c 300000 /dev/zero | tr '\\0' S; echo; echo private-output" },
      });
      assert.match(textOf(ran), /artifact/, textOf(ran));
      const id = (full.transport as unknown as { sessionId: string }).sessionId;
      const ask = (url: URL, token: string, n: number) =>
        raw(url, {
          headers: { authorization: `Bearer ${token}`, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({ jsonrpc: "2.0", id: n, method: "resources/list" }),
        });
      for (const [n, server] of [a, b].entries()) {
        const answer = await ask(server.server.url, READER, n + 10);
        assert.equal(answer.status, 404, `replica ${n}: ${answer.text}`);
        assert.doesNotMatch(answer.text, /artifact:/);
      }
      // The full token's session goes on where it is, and another replica still takes it over for that token.
      assert.equal((await full.listTools()).tools.length > 0, true);
      const moved = await ask(b.server.url, FULL, 20);
      assert.equal(moved.status, 200, moved.text);
      assert.match(moved.text, /artifact:\/\/sha256\//);
      await full.close().catch(() => {});
    } finally {
      await a.close();
      await b.close();
      for (const store of stores) await store.close();
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
