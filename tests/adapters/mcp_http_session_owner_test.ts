// A session answers the token that opened it. Before, another token of the same tenant could use it: a `tools:read`
// token ended a full token's session with DELETE, and read the output of its commands with bash_read (the tool
// itself only reads, so its scope allowed it). Another tenant's session was already as unknown as a guessed id.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
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
});
