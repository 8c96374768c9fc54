// Another tenant's session id is refused exactly as a guessed one: the same 404, and the same work behind it. Seen
// live without a store: a batch POST without Mcp-Protocol-Version was judged by the version of the session it named,
// whoever's it was: bob's batch naming alice's live session (on 2025-11-25) got 400 "batches are taken only under
// protocol 2025-03-26", a made-up id 404 "Session not found". Seen
// live on `serve --http --store postgres://...`: bob's request with alice's live session id (held by that replica)
// was refused at once, in 0.64 ms (median of 300), while a random id went to the store first, 1.86 ms: bob could tell
// a live session id of another tenant from a made-up one. The store's calls are counted here (the real store, seen
// through a proxy), not the time, which a loaded machine blurs.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@toolfence/core";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { serveHttp, TokenFile } from "../../adapters/mcp/http.ts";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { connect, raw, startServer, textOf, writeTokens } from "./_http_harness.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";
const VERSION = "2025-11-25";

describe("a server refusing another tenant's session id", () => {
  test("answers a batch naming it as one naming a made-up id", { timeout: 60_000 }, async () => {
    const harness = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
    try {
      const init = await raw(harness.server.url, {
        headers: { authorization: `Bearer ${ALICE}`, "mcp-protocol-version": VERSION },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        }),
      });
      assert.equal(init.status, 200, init.text);
      const alices = String(init.headers["mcp-session-id"]);
      const batch = JSON.stringify([{ jsonrpc: "2.0", id: 5, method: "tools/list" }]);
      const refusal = async (session: string) => {
        const answer = await raw(harness.server.url, {
          headers: { authorization: `Bearer ${BOB}`, "mcp-session-id": session },
          body: batch,
        });
        return { status: answer.status, text: answer.text };
      };
      const theirs = await refusal(alices);
      assert.deepEqual(theirs, await refusal(crypto.randomUUID()), "alice's live session is told from a made-up id");
      assert.equal(theirs.status, 404);
      // Alice's own batch is still judged by her session's version.
      const own = await raw(harness.server.url, {
        headers: { authorization: `Bearer ${ALICE}`, "mcp-session-id": alices },
        body: batch,
      });
      assert.equal(own.status, 400, own.text);
      assert.match(own.text, /batches are taken only under protocol 2025-03-26/);
    } finally {
      await harness.close();
    }
  });

  test(
    "on a fleet replica, does what it does for a made-up id: same answer, same store look-ups",
    { timeout: 60_000 },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "toolfence-session-oracle-"));
      const closers: (() => Promise<void> | void)[] = [];
      try {
        await mkdir(join(dir, "tenants"));
        await mkdir(join(dir, "tmp"));
        await writeTokens(join(dir, "tokens.json"), [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
        const real = await openStore(`sqlite:${join(dir, "store.db")}`);
        closers.push(() => real.close());
        // Every call bob's requests make to the store, by method and the tenant it names.
        let seen: string[] | undefined;
        const store = new Proxy(real, {
          get(target, key) {
            const value = Reflect.get(target, key, target);
            if (typeof value !== "function") return value;
            return (...args: unknown[]) => {
              seen?.push(
                `${String(key)}(${typeof args[0] === "string" && /^(alice|bob)$/.test(args[0]) ? args[0] : ""})`,
              );
              return value.apply(target, args);
            };
          },
        }) as Store;
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
        const init = await raw(server.url, {
          headers: headers(ALICE),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
          }),
        });
        assert.equal(init.status, 200, init.text);
        const alices = String(init.headers["mcp-session-id"]);
        const refusal = async (session: string, method = "POST") => {
          seen = [];
          const answer = await raw(server.url, {
            method,
            headers: { ...headers(BOB, session), ...(method === "GET" ? { accept: "text/event-stream" } : {}) },
            ...(method === "POST" ? { body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }) } : {}),
          });
          const calls = seen;
          seen = undefined;
          return { status: answer.status, text: answer.text, calls };
        };
        // The replica's own timers reach the store too (its heartbeat, the calls it settles, its sweep's look at
        // alice's session): a pair of refusals one of them crossed is measured again. Bob's refusal itself never makes
        // these calls, so a pair that always shows one is a difference, and fails below.
        const background = (calls: string[]) =>
          calls.some((call) => /^(heartbeat|runningCalls)\(|^session\(alice\)$/.test(call));
        for (const method of ["POST", "GET", "DELETE"]) {
          let theirs = await refusal(alices, method);
          let madeUp = await refusal(crypto.randomUUID(), method);
          for (let again = 0; again < 10 && (background(theirs.calls) || background(madeUp.calls)); again++) {
            theirs = await refusal(alices, method);
            madeUp = await refusal(crypto.randomUUID(), method);
          }
          assert.equal(theirs.status, 404, method);
          assert.deepEqual(theirs, madeUp, `${method}: alice's live session is told from a made-up id`);
          // The store is asked (whose session it is, before any take-over: a session answers its own token alone).
          assert.ok(madeUp.calls.includes("session(bob)"), JSON.stringify(madeUp.calls));
        }
        // Alice's session is untouched: still hers, still open.
        assert.equal((await real.session("alice", alices))?.endedAt, null);
      } finally {
        for (const close of closers.reverse()) await close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

// Seen live: with a token file of five tenants and no sandbox, alice's bash was refused "this server serves several
// tenants (its token file names 5 tenants)": every tenant read how many others the server has, and when they change.
describe("what a tenant's refusals say of the other tenants", () => {
  test("that there are others, never how many", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-tenant-count-"));
    const closers: (() => Promise<void> | void)[] = [];
    try {
      await mkdir(join(dir, "workspace"));
      await mkdir(join(dir, "tmp"));
      const tenants = ["alice", "bob", "carol", "dave", "erin"].map((tenant) => ({
        token: `${tenant}-token-0123456789abcdef0000`,
        tenant,
      }));
      await writeTokens(join(dir, "tokens.json"), tenants);
      const server = await serveHttp(new ToolBox().withDefaults("cmd"), {
        port: 0,
        workspace: join(dir, "workspace"),
        tempParent: join(dir, "tmp"),
        tokens: await TokenFile.open(join(dir, "tokens.json")),
        sandbox: "off",
        autoConfirm: true,
      });
      closers.push(() => server.shutdown());
      const alice = await connect(server.url, tenants[0].token);
      closers.push(() => alice.close());
      const text = textOf(await alice.callTool({ name: "bash", arguments: { command: "ls" } }));
      assert.match(text, /serves several tenants \(its token file names more than one tenant\)/, text);
      assert.doesNotMatch(text, /\b5\b|five/, text);
    } finally {
      for (const close of closers.reverse()) await close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
