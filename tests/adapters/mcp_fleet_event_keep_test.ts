// A session's resumable events are kept by its own count, never by the traffic of other sessions (other tenants)
// on the same store. Seen live: under `serve --http --store sqlite:...`, bob's call dropped after its first event
// could not be resumed (`400 Invalid event ID format`, its answer lost) once alice had made 300 cheap calls meanwhile:
// the store kept a session's events by the store-wide sequence (`seq > newest - 256`), which every session shares.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { serveHttp, TokenFile } from "../../adapters/mcp/http.ts";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { raw, writeTokens } from "./_http_harness.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";
const VERSION = "2025-11-25";

describe("a fleet store's events of several tenants", () => {
  test("another tenant's calls never drop a session's resumable events", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-event-keep-"));
    const closers: (() => Promise<void> | void)[] = [];
    try {
      await mkdir(join(dir, "tenants"));
      await mkdir(join(dir, "tmp"));
      await writeTokens(join(dir, "tokens.json"), [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
      const store = await openStore(`sqlite:${join(dir, "store.db")}`);
      closers.push(() => store.close());
      const server = await serveHttp(new ToolBox().withDefaults("system"), {
        port: 0,
        tenantRoot: join(dir, "tenants"),
        tempParent: join(dir, "tmp"),
        tokens: await TokenFile.open(join(dir, "tokens.json")),
        sandbox: "off",
        store,
      });
      closers.push(() => server.shutdown());
      const headers = (token: string, session?: string): Record<string, string> => ({
        authorization: `Bearer ${token}`,
        "mcp-protocol-version": VERSION,
        ...(session ? { "mcp-session-id": session } : {}),
      });
      const open = async (token: string): Promise<string> => {
        const init = await raw(server.url, {
          headers: headers(token),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
          }),
        });
        assert.equal(init.status, 200, init.text);
        const session = String(init.headers["mcp-session-id"]);
        const ready = await raw(server.url, {
          headers: headers(token, session),
          body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        });
        assert.equal(ready.status, 202, ready.text);
        return session;
      };
      const call = (token: string, session: string, id: number) =>
        raw(server.url, {
          headers: headers(token, session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "datetime", arguments: {} },
          }),
        });
      const bob = await open(BOB);
      const alice = await open(ALICE);

      // Bob's call: its stream's first event id is what a client resumes from.
      const first = await call(BOB, bob, 7);
      const primed = /^id: (\S+)$/m.exec(first.text)?.[1];
      assert.ok(primed, first.text);
      // Alice's calls: more events than a session keeps (256), on the same store.
      for (let i = 0; i < 160; i++) assert.equal((await call(ALICE, alice, 100 + i)).status, 200);
      // Bob goes on (his session's next event), then resumes his first call's stream.
      assert.equal((await call(BOB, bob, 8)).status, 200);
      const resumed = await raw(server.url, {
        method: "GET",
        headers: { ...headers(BOB, bob), accept: "text/event-stream", "last-event-id": primed },
      });
      assert.equal(resumed.status, 200, `bob's stream cannot be resumed after alice's calls: ${resumed.text}`);
      assert.match(resumed.text, /"id":7/, resumed.text);
    } finally {
      for (const close of closers.reverse()) await close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
