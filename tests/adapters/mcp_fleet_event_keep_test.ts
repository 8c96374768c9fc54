// A session's resumable events are kept by its own count, never by the traffic of other sessions (other tenants)
// on the same store. Seen live: under `serve --http --store sqlite:...`, bob's call dropped after its first event
// could not be resumed (`400 Invalid event ID format`, its answer lost) once alice had made 300 cheap calls meanwhile:
// the store kept a session's events by the store-wide sequence (`seq > newest - 256`), which every session shares.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { serveHttp, TokenFile } from "../../adapters/mcp/http.ts";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { callUri } from "../../adapters/mcp/server.ts";
import { raw, writeTokens } from "./_http_harness.ts";
import { type PostgresCluster, postgresMissing, startPostgres } from "../_postgres.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";
const VERSION = "2025-11-25";

/** A server of alice and bob on the store at `address`, and what a raw client does with it. */
async function serve(dir: string, address: string, closers: (() => Promise<void> | void)[]) {
  await mkdir(join(dir, "tenants"));
  await mkdir(join(dir, "tmp"));
  await writeTokens(join(dir, "tokens.json"), [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
  const store = await openStore(address);
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
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "datetime", arguments: {} } }),
    });
  const resume = (token: string, session: string, lastEventId: string) =>
    raw(server.url, {
      method: "GET",
      headers: { ...headers(token, session), accept: "text/event-stream", "last-event-id": lastEventId },
    });
  const send = (token: string, session: string, message: unknown) =>
    raw(server.url, { headers: headers(token, session), body: JSON.stringify(message) });
  return { call, open, resume, send, store };
}

describe("a fleet store's events of several tenants", () => {
  // Seen live on every store: bob's event ids were 5, 6, then 17, 18 after alice's five calls: one counter for the
  // whole store, from which a tenant counts the others' traffic. Ids are opaque now, and still resume.
  let cluster: PostgresCluster | undefined;
  const pgMissing = postgresMissing();
  after(async () => await cluster?.stop(), { timeout: 30_000 });
  for (const kind of ["memory", "sqlite", "postgres"] as const) {
    test(`on a ${kind} store, a session's event ids tell nothing of another tenant's calls`, {
      timeout: 120_000,
    }, async (t) => {
      if (kind === "postgres" && pgMissing) return t.skip(pgMissing);
      const dir = await mkdtemp(join(tmpdir(), "toolfence-event-ids-"));
      const closers: (() => Promise<void> | void)[] = [];
      try {
        if (kind === "postgres") cluster ??= await startPostgres();
        const address = kind === "memory" ? "memory" : kind === "sqlite" ? `sqlite:${join(dir, "s.db")}` : cluster!.url;
        const { call, open, resume } = await serve(dir, address, closers);
        const bob = await open(BOB);
        const alice = await open(ALICE);
        const ids = (text: string) => [...text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
        const first = ids((await call(BOB, bob, 1)).text);
        for (let i = 0; i < 5; i++) assert.equal((await call(ALICE, alice, 10 + i)).status, 200);
        const second = ids((await call(BOB, bob, 2)).text);
        assert.equal(first.length, 2);
        assert.equal(second.length, 2);
        for (const id of [...first, ...second]) {
          assert.match(
            id,
            /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
            `a countable id: ${id}`,
          );
        }
        // Resumption still works from the opaque id: the first call's answer comes again; alice cannot use it.
        const resumed = await resume(BOB, bob, first[0]);
        assert.equal(resumed.status, 200, resumed.text);
        assert.match(resumed.text, /"id":1}/, resumed.text);
        assert.notEqual((await resume(ALICE, alice, first[0])).status, 200);
      } finally {
        for (const close of closers.reverse()) await close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  test("another tenant's calls never drop a session's resumable events", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-event-keep-"));
    const closers: (() => Promise<void> | void)[] = [];
    try {
      const { call, open, resume } = await serve(dir, `sqlite:${join(dir, "store.db")}`, closers);
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
      const resumed = await resume(BOB, bob, primed);
      assert.equal(resumed.status, 200, `bob's stream cannot be resumed after alice's calls: ${resumed.text}`);
      assert.match(resumed.text, /"id":7/, resumed.text);
    } finally {
      for (const close of closers.reverse()) await close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a fleet store's keys of what a client names", () => {
  // Seen live on PostgreSQL: a call whose id or tool name held a NUL was answered 500 (or -32700 on a primed stream)
  // with the database's error, "invalid byte sequence for encoding UTF8: 0x00", and its id dropped; on every database
  // the lone surrogates "\ud800" and "\udbff" were kept as one U+FFFD, one call's outcome read for the other's (and
  // callUri threw on them).
  let cluster: PostgresCluster | undefined;
  const pgMissing = postgresMissing();
  after(async () => await cluster?.stop(), { timeout: 30_000 });
  for (const kind of ["memory", "sqlite", "postgres"] as const) {
    test(
      `on a ${kind} store, any request id and tool name is kept as sent, within bounds`,
      { timeout: 120_000 },
      async (t) => {
        if (kind === "postgres" && pgMissing) return t.skip(pgMissing);
        const dir = await mkdtemp(join(tmpdir(), "toolfence-request-keys-"));
        const closers: (() => Promise<void> | void)[] = [];
        try {
          if (kind === "postgres") cluster ??= await startPostgres();
          const address = kind === "memory"
            ? "memory"
            : kind === "sqlite"
            ? `sqlite:${join(dir, "s.db")}`
            : cluster!.url;
          const { open, send, store } = await serve(dir, address, closers);
          const alice = await open(ALICE);
          const answer = async (id: unknown, method: string, params: unknown) => {
            const sent = await send(ALICE, alice, { jsonrpc: "2.0", id, method, params });
            assert.equal(sent.status, 200, sent.text);
            const found = [...sent.text.matchAll(/^data: (\{.+\})$/gm)].map((m) => JSON.parse(m[1]))
              .find((message) => "id" in message);
            assert.deepEqual(found?.id, id, sent.text);
            return found;
          };
          const callTool = (id: unknown, name: string) => answer(id, "tools/call", { name, arguments: {} });
          assert.equal((await callTool("a\u0000b", "datetime")).result.isError, undefined);
          assert.equal((await callTool(2, "datetime\u0000")).error.code, -32602);
          assert.equal((await callTool("\ud800", "datetime")).result.isError, undefined);
          assert.equal((await callTool("\udbff", "no_such_tool")).error.code, -32602);
          // What a client names is kept within bounds: an id of 257 characters is refused (one of a megabyte wrote 7 MB to
          // the store), and a tool the toolbox does not know is kept as unknown (a name of a megabyte was kept whole).
          const long = await send(ALICE, alice, {
            jsonrpc: "2.0",
            id: "i".repeat(257),
            method: "tools/call",
            params: { name: "datetime", arguments: {} },
          });
          assert.equal(long.status, 400, long.text);
          assert.deepEqual([long.json().id, long.json().error?.code], ["i".repeat(257), -32600]);
          assert.equal((await callTool("i".repeat(256), "datetime")).result.isError, undefined);
          assert.equal((await callTool(7, "n".repeat(100_000))).error.code, -32602);
          assert.equal((await store.call("alice", alice, "7"))?.tool, "(unknown)");
          assert.equal((await store.call("alice", alice, "2"))?.tool, "(unknown)");
          for (const [id, failed] of [["a\u0000b", false], ["\ud800", false], ["\udbff", true]] as const) {
            const read = await answer(`read ${id}`, "resources/read", { uri: callUri(id) });
            const kept = JSON.parse(read.result.contents[0].text);
            assert.deepEqual([kept.requestId, kept.state, "error" in kept.answer], [id, "done", failed]);
          }
        } finally {
          for (const close of closers.reverse()) await close();
          await rm(dir, { recursive: true, force: true });
        }
      },
    );
  }
});
