// Two HTTP server replicas in one process on one SQLite store: what a session made on one is read on the
// other the same way (artifacts as resources, late results as their resource), and the outcome of a call
// whose client left before its stream's first event is read by its request id on either replica. And the
// store's grants, read at each call: applied while held, dropped once revoked or unreadable. And a take-over
// is its tenant's alone: another tenant naming the session at the same moment does not make it fail. And a session
// ended on the replica that took it over ends on the one that held it first, its background jobs with it.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MemoryArtifactStore, MemoryStore, type Store } from "../../core/mod.ts";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { AdoptedArtifacts } from "../../adapters/mcp/_adopted_artifacts.ts";
import { ANSWERS_KEPT, FleetReplica } from "../../adapters/mcp/_http_fleet.ts";
import { tool } from "../../core/tool.ts";
import { readArtifactTool } from "../../tools/framework/read_artifact.ts";
import { callUri, type HttpServer, LATE_RESULTS_URI, openStore, serveHttp } from "../../adapters/mcp/mod.ts";
import { lateToolBox } from "./_late_server.ts";
import { connect, INIT, leaveAtHeaders, raw, startServer, textOf } from "./_http_harness.ts";
import { descendantsWith } from "../tools/browser/_fixtures.ts";

const sqliteModule = "node:sqlite";
const sqliteMissing = await import(sqliteModule).then(() => undefined, () => "this runtime has no node:sqlite");

/** A client of an open session, speaking to `url` (another replica than the one that opened it). */
async function resume(url: URL, sessionId: string): Promise<Client> {
  const client = new Client({ name: "fleet-state-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { sessionId }));
  return client;
}

async function readJson(client: Client, uri: string): Promise<Record<string, unknown>> {
  const [content] = (await client.readResource({ uri })).contents as { text: string }[];
  return JSON.parse(content.text);
}

describe("the artifacts of a session taken over", () => {
  it("are read from the store only when their bytes hash to their id", { timeout: 60_000 }, async () => {
    const made = new MemoryArtifactStore();
    const ref = await made.put("kept in the store");
    const fetched = new Map([[ref.id, new TextEncoder().encode("kept in the store")]]);
    const adopted = new AdoptedArtifacts(new MemoryArtifactStore(), [ref], (id) => {
      const bytes = fetched.get(id);
      return Promise.resolve(bytes && { bytes });
    });
    assert.equal(adopted.ref(ref.id), ref);
    assert.deepEqual(adopted.list(), [ref]);
    assert.equal(new TextDecoder().decode(await adopted.get(ref.id)), "kept in the store");
    fetched.set(ref.id, new TextEncoder().encode("changed in the store"));
    assert.equal(await adopted.get(ref.id), undefined);
    // Made here, it is this replica's own.
    const here = await adopted.put("made here");
    assert.deepEqual(adopted.list().map((r) => r.id), [here.id, ref.id]);
  });
});

describe("the answers a fleet's store keeps", { skip: sqliteMissing }, () => {
  it("are those of a tenant's newest ANSWERS_KEPT calls ended on a replica; an older call reads as run, answer null", {
    timeout: 60_000,
  }, async () => {
    // Before, every call's answer (60 KB of a read_file) stayed in the store until its session was pruned.
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-fleet-answers-")));
    const store = await openStore(`sqlite:${join(dir, "store.db")}`);
    const replica = new FleetReplica(store, "replica-answers", new ToolBox());
    try {
      const started = (tenant: string, sessionId: string, requestId: string) =>
        store.startCall({
          sessionId,
          requestId,
          tenant,
          owner: "replica-answers",
          tool: "datetime",
          streamId: null,
          startedAt: 1,
          state: "running",
          answer: null,
          endedAt: null,
        });
      const answer = (id: string) => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: id }] } });
      await started("quiet", "q", "only");
      await replica.finishCall("quiet", "q", "only", answer("only"));
      for (let i = 0; i < ANSWERS_KEPT + 10; i++) {
        await started("busy", `s${i % 3}`, `c${i}`);
        await replica.finishCall("busy", `s${i % 3}`, `c${i}`, answer(`c${i}`));
      }
      for (const i of [0, 9]) {
        assert.deepEqual([
          (await store.call("busy", `s${i % 3}`, `c${i}`))?.state,
          (await store.call("busy", `s${i % 3}`, `c${i}`))?.answer,
        ], ["done", null]);
      }
      for (const i of [10, ANSWERS_KEPT + 9]) {
        assert.deepEqual((await store.call("busy", `s${i % 3}`, `c${i}`))?.answer, answer(`c${i}`));
      }
      assert.deepEqual((await store.call("quiet", "q", "only"))?.answer, answer("only"));
    } finally {
      await replica.stop();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a session's state on another replica", { timeout: 60_000, skip: sqliteMissing }, () => {
  let dir: string;
  let stores: Store[] = [];
  let replicas: HttpServer[] = [];

  before(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-fleet-state-")));
    const address = `sqlite:${join(dir, "store.db")}`;
    stores = await Promise.all([openStore(address), openStore(address)]);
    const box = lateToolBox(dir).register(
      readArtifactTool,
      tool({
        name: "report",
        description: "Keeps a report as an artifact and answers its id.",
        input: v.object({ text: v.string() }),
        readOnly: true,
        run: async ({ text }, ctx) => (await ctx.artifacts.put(text, { summary: "a report" })).id,
      }),
    );
    replicas = await Promise.all(stores.map((store, n) =>
      serveHttp(box, {
        port: 0,
        workspace: dir,
        allowNoAuth: true,
        sandbox: "off",
        store,
        replicaId: `replica-${n}`,
      })
    ));
  }, { timeout: 30_000 });

  after(async () => {
    await Promise.all(replicas.map((replica) => replica.shutdown()));
    await Promise.all(stores.map((store) => store.close()));
    await rm(dir, { recursive: true, force: true });
  }, { timeout: 30_000 });

  it("reads the artifacts and late results made on one replica from the other", { timeout: 30_000 }, async () => {
    const [a, b] = replicas;
    const onA = await connect(a.url);
    const id = textOf(await onA.callTool({ name: "report", arguments: { text: "made on A" } }));
    const timedOut = await onA.callTool({ name: "slow_write", arguments: {} });
    assert.equal(timedOut.isError, true);
    const sessionId = (onA.transport as unknown as { sessionId: string }).sessionId;
    const onB = await resume(b.url, sessionId);
    const uri = `artifact://sha256/${id.slice("sha256:".length)}`;
    assert.ok((await onB.listResources()).resources.some((resource) => resource.uri === uri));
    const [artifact] = (await onB.readResource({ uri })).contents as { text: string }[];
    assert.equal(artifact.text, "made on A");
    // And the model on B reads it with read_artifact, as on A.
    assert.match(textOf(await onB.callTool({ name: "read_artifact", arguments: { id } })), /made on A/);
    // slow_write settles 400 ms after it was reported: its late result reaches the store, and B reads it.
    const deadline = Date.now() + 60_000;
    while (!(await onB.listResources()).resources.some((resource) => resource.uri === LATE_RESULTS_URI)) {
      assert.ok(Date.now() < deadline, "the late result is listed on B");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [late] = (await readJson(onB, LATE_RESULTS_URI)).lateResults as Record<string, unknown>[];
    assert.deepEqual([late.tool, late.reportedStatus, late.status, late.output], [
      "slow_write",
      "timed_out",
      "success",
      { wrote: "late.txt" },
    ]);
    await Promise.all([onA.close(), onB.close()]);
  });

  it("answers, by request id on either replica, a call whose client left before the first event", {
    timeout: 30_000,
  }, async () => {
    const [a, b] = replicas;
    const onA = await connect(a.url);
    const sessionId = (onA.transport as unknown as { sessionId: string }).sessionId;
    const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
    const call = (id: number, text: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "echo", arguments: { text, ms: 300 } },
      });
    // Two clients gone at the answer's headers: one that resumes from a primed stream, one of an older protocol.
    assert.equal(await leaveAtHeaders(a.url, headers, call(501, "primed")), 200);
    assert.equal(
      await leaveAtHeaders(a.url, { ...headers, "mcp-protocol-version": "2025-06-18" }, call(502, "old")),
      200,
    );
    const onB = await resume(b.url, sessionId);
    for (const [id, text] of [[501, "primed"], [502, "old"]] as const) {
      let outcome = await readJson(onB, callUri(id));
      const deadline = Date.now() + 60_000;
      while (outcome.state === "running") {
        assert.ok(Date.now() < deadline, "the call ended");
        await new Promise((resolve) => setTimeout(resolve, 50));
        outcome = await readJson(onB, callUri(id));
      }
      assert.equal(outcome.state, "done");
      assert.equal(outcome.tool, "echo");
      assert.equal(textOf((outcome.answer as { result: unknown }).result), text);
      // The same on the replica that ran it.
      assert.deepEqual(await readJson(onA, callUri(id)), outcome);
    }
    // A call the transport refuses (a protocol version it does not know) ran nothing, and is recorded so.
    const refused = await raw(a.url, {
      headers: { ...headers, "mcp-protocol-version": "1999-01-01" },
      body: call(503, "refused"),
    });
    assert.equal(refused.status, 400, refused.text);
    const outcome = await readJson(onB, callUri(503));
    assert.equal(outcome.state, "done");
    assert.match(JSON.stringify(outcome.answer), /refused with HTTP 400/);
    // A request id no call of the session had: its tool never ran.
    await assert.rejects(onB.readResource({ uri: callUri(999) }), /never ran/);
    await assert.rejects(onB.readResource({ uri: "toolfence://calls/%E0%A4%A" }), /Resource not found/);
    await Promise.all([onA.close(), onB.close()]);
  });
});

describe("a call's end in the store", { timeout: 30_000, skip: sqliteMissing }, () => {
  it("is written before its client can read the answer, however slow the store", { timeout: 60_000 }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-fleet-end-")));
    const store = await openStore(`sqlite:${join(dir, "store.db")}`);
    // A store slow to end a call: an answer sent before its end was written would reach the client first, and a
    // replica killed then would leave the call running, for another to end as interrupted against what was seen.
    const slow = new Proxy(store, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key !== "finishCall" || typeof value !== "function") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return async (...args: unknown[]) => {
          await new Promise((resolve) => setTimeout(resolve, 300));
          return await value.apply(target, args);
        };
      },
    });
    const replica = await serveHttp(lateToolBox(dir), {
      port: 0,
      workspace: dir,
      allowNoAuth: true,
      sandbox: "off",
      store: slow,
      replicaId: "slow-replica",
    });
    try {
      const client = await connect(replica.url);
      const sessionId = (client.transport as unknown as { sessionId: string }).sessionId;
      for (const text of ["one", "two"]) {
        assert.equal(textOf(await client.callTool({ name: "echo", arguments: { text } })), text);
        assert.deepEqual(await store.runningCalls({ sessionId }), [], `after "${text}"`);
      }
      const ended = await Promise.all(["1", "2"].map((id) => store.call("local", sessionId, id)));
      assert.deepEqual(ended.map((call) => call?.state), ["done", "done"]);
      await client.close();
    } finally {
      await replica.shutdown();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the store's grants at each call", () => {
  it("apply while the store holds them, and none once it cannot be read (never wider)", {
    timeout: 30_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-fleet-grants-")));
    let unreadable = false;
    const store = new (class extends MemoryStore {
      override grants(tenant: string) {
        return unreadable ? Promise.reject(new Error("the database is gone")) : super.grants(tenant);
      }
    })();
    const server = await serveHttp(new ToolBox().withDefaults("cmd"), {
      port: 0,
      workspace: dir,
      allowNoAuth: true,
      sandbox: "off",
      store,
    });
    const client = await connect(server.url);
    const sleep = async () => (await client.callTool({ name: "bash", arguments: { command: "sleep 0" } })).isError;
    try {
      // Nobody can be asked here: a command off the allowlist is refused unless a grant allows it.
      assert.equal(await sleep(), true);
      await store.saveGrant({ tenant: "local", kind: "command", subject: "sleep", data: {}, savedAt: Date.now() });
      assert.equal(await sleep(), undefined);
      unreadable = true;
      assert.equal(await sleep(), true, "an unreadable store grants nothing");
      unreadable = false;
      assert.equal(await sleep(), undefined);
      await store.revokeGrant("local", "command", "sleep");
      assert.equal(await sleep(), true, "revoked");
    } finally {
      await client.close();
      await server.shutdown();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("a session taken over while another tenant names it", () => {
  it("is taken over for its own tenant: the other's request is 404 and the owner's goes on", {
    timeout: 60_000,
  }, async () => {
    // Each take-over takes a while, as on a busy database: long enough for both requests to wait on it.
    const store = new (class extends MemoryStore {
      override async takeOverSession(tenant: string, id: string, owner: string) {
        await new Promise((done) => setTimeout(done, 300));
        return await super.takeOverSession(tenant, id, owner);
      }
    })();
    const tenants = [{ token: "alice-token-0123456789abcdef", tenant: "alice" }, {
      token: "bob-token-0123456789abcdef00",
      tenant: "bob",
    }];
    const [alice, bob] = tenants.map((t) => t.token);
    const one = await startServer(tenants, { store });
    const two = await startServer(tenants, { store });
    try {
      const opened = await raw(one.server.url, { body: INIT, headers: { authorization: `Bearer ${bob}` } });
      assert.equal(opened.status, 200);
      const session = String(opened.headers["mcp-session-id"]);
      const headers = (token: string) => ({
        authorization: `Bearer ${token}`,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18",
      });
      const ping = (token: string) =>
        raw(two.server.url, {
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
          headers: headers(token),
        });
      // Alice names bob's session on the replica that does not hold it; bob's own request comes meanwhile.
      const foreign = ping(alice);
      await new Promise((done) => setTimeout(done, 50));
      const own = await ping(bob);
      assert.equal((await foreign).status, 404);
      assert.equal(own.status, 200, own.text);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe("a session taken over and ended there", () => {
  // Before, the replica that held it first went on answering it (200 for tools/call) with its background job
  // running, after the client's DELETE on the replica that took it over had ended it in the store: DELETE ends a
  // session and everything it owns, on every replica.
  it("ends on the replica that held it first, its jobs killed, and is then 404 there", {
    timeout: 60_000,
  }, async () => {
    const store = new MemoryStore();
    const token = "alice-token-0123456789abcdef";
    const tenants = [{ token, tenant: "alice" }];
    const one = await startServer(tenants, { store });
    const two = await startServer(tenants, { store });
    const marker = `${(Date.now() % 1000) + 1000}.25`;
    try {
      const client = await connect(one.server.url, token);
      const id = (client.transport as unknown as { sessionId: string }).sessionId;
      const job = await client.callTool({ name: "bash_background", arguments: { command: `sleep ${marker}` } });
      assert.equal(job.isError, undefined, textOf(job));
      assert.equal(descendantsWith(marker).length > 0, true);
      const headers = { authorization: `Bearer ${token}`, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" };
      const call = (url: URL, n: number) =>
        raw(url, {
          headers,
          body: JSON.stringify({ jsonrpc: "2.0", id: n, method: "tools/call", params: { name: "bash_list" } }),
        });
      assert.equal((await call(two.server.url, 10)).status, 200);
      assert.equal((await raw(two.server.url, { method: "DELETE", headers })).status, 200);
      // The first replica's sweep ends its copy without a request coming to it.
      const until = Date.now() + 15_000;
      while (descendantsWith(marker).length > 0 && Date.now() < until) {
        await new Promise((done) => setTimeout(done, 200));
      }
      assert.deepEqual(descendantsWith(marker), []);
      const after = await call(one.server.url, 11);
      assert.equal(after.status, 404, after.text);
      assert.equal(one.server.sessionCount(), 0);
      await client.close().catch(() => {});
    } finally {
      await one.close();
      await two.close();
    }
  });
});
