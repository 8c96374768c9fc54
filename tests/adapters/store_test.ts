// The store contract, run alike on the memory store, SQLite on disk and a private PostgreSQL cluster:
// tenants apart, races decided once, events resumed per stream, blobs shared by hash within a tenant, migrations
// versioned.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ANSWERED_QUESTIONS_KEPT,
  DEFAULT_LATE_RESULTS_MAX_BYTES,
  DEFAULT_LATE_RESULTS_MAX_COUNT,
  type LateResult,
  makeResult,
  sha256Hex,
  type Store,
  type StoredSession,
} from "@toolfence/core";
import { openStore } from "@toolfence/adapters/mcp";
import { openSqlite } from "../../adapters/mcp/_sqlite_driver.ts";
import { openPostgres } from "../../adapters/mcp/_postgres_driver.ts";
import { dialectSql, MIGRATIONS, SCHEMA_VERSION } from "../../adapters/mcp/_store_migrations.ts";
import type { SqlDriver } from "../../adapters/mcp/_sql_store.ts";
import { type PostgresCluster, postgresMissing, startPostgres } from "../_postgres.ts";

const session = (id: string, tenant: string): StoredSession => ({
  id,
  tenant,
  generation: 0,
  owner: "replica-1",
  createdAt: 1_000,
  lastActive: 1_000,
  endedAt: null,
  data: { protocolVersion: "2025-06-18" },
});

function contract(name: string, open: () => Promise<Store>, skip?: () => string | undefined) {
  describe(`${name} store`, { timeout: 120_000 }, () => {
    let store: Store;
    before(async () => {
      if (!skip?.()) store = await open();
    });
    after(async () => await store?.close());
    const test = (title: string, body: () => Promise<void>) =>
      it(title, { timeout: 30_000 }, async (t) => {
        const reason = skip?.();
        if (reason) return t.skip(reason);
        await body();
      });

    test("keeps sessions apart by tenant, and a take-over moves the generation once per winner", async () => {
      await store.createSession(session("s1", "acme"));
      assert.equal((await store.session("acme", "s1"))?.data.protocolVersion, "2025-06-18");
      assert.equal(await store.session("evil", "s1"), undefined);
      assert.equal(await store.takeOverSession("evil", "s1", "replica-x"), undefined);
      const taken = await Promise.all([
        store.takeOverSession("acme", "s1", "replica-2"),
        store.takeOverSession("acme", "s1", "replica-3"),
      ]);
      assert.deepEqual(taken.map((s) => s?.generation).sort(), [1, 2]);
      assert.equal(await store.openSessionCount("acme"), 1);
      await store.touchSession("s1", 5_000);
      assert.equal((await store.session("acme", "s1"))?.lastActive, 5_000);
      assert.equal(await store.endSession("s1", 6_000), true);
      assert.equal(await store.endSession("s1", 7_000), false);
      assert.equal(await store.takeOverSession("acme", "s1", "replica-2"), undefined);
      assert.equal(await store.openSessionCount("acme"), 0);
      await assert.rejects(store.createSession(session("s1", "evil")));
    });

    test("replays the events after an id on its own stream, in order, keeping the last ones", async () => {
      await store.createSession(session("s2", "acme"));
      const first = await store.appendEvent("s2", "stream-a", { n: 1 }, 3);
      await store.appendEvent("s2", "stream-b", { n: 2 }, 3);
      const third = await store.appendEvent("s2", "stream-a", { n: 3 }, 3);
      await store.appendEvent("s2", "stream-a", { n: 4 }, 3);
      assert.equal(await store.eventStream("s2", third), "stream-a");
      assert.equal(await store.eventStream("other", third), undefined);
      assert.equal(await store.eventStream("s2", "not-an-id"), undefined);
      const replay = await store.eventsAfter("s2", third);
      assert.deepEqual(replay?.events.map((e) => e.message), [{ n: 4 }]);
      // Only the last 3 of the session are kept: the first fell out.
      assert.equal(await store.eventsAfter("s2", first), undefined);
      await store.endSession("s2", 2_000);
      assert.equal(await store.eventsAfter("s2", third), undefined);
    });

    test("keeps a session's last events by its own count, whatever other sessions append", async () => {
      await store.createSession(session("s-kept", "acme"));
      await store.createSession(session("s-busy", "evil"));
      const kept = await store.appendEvent("s-kept", "stream-a", { n: 1 }, 3);
      for (let i = 0; i < 10; i++) await store.appendEvent("s-busy", "stream-x", { i }, 3);
      await store.appendEvent("s-kept", "stream-a", { n: 2 }, 3);
      assert.deepEqual((await store.eventsAfter("s-kept", kept))?.events.map((e) => e.message), [{ n: 2 }]);
      await store.endSession("s-kept", 2_000);
      await store.endSession("s-busy", 2_000);
    });

    test("hands out event ids that count nothing: another session's events cannot be read from them", async () => {
      // Seen live: bob's ids were 5, 6 then 17, 18 after alice's five calls (ten events) on the same store.
      await store.createSession(session("s-quiet", "acme"));
      await store.createSession(session("s-loud", "evil"));
      const before = await store.appendEvent("s-quiet", "stream-a", { n: 1 }, 10);
      const loud = [];
      for (let i = 0; i < 5; i++) loud.push(await store.appendEvent("s-loud", "stream-x", { i }, 10));
      const after = await store.appendEvent("s-quiet", "stream-a", { n: 2 }, 10);
      for (const id of [before, after, ...loud]) {
        assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, `not opaque: ${id}`);
      }
      assert.equal(new Set([before, after, ...loud]).size, 7);
      // Still resumable, in order, and only in its own session.
      assert.deepEqual((await store.eventsAfter("s-quiet", before))?.events.map((e) => [e.id, e.message]), [
        [after, { n: 2 }],
      ]);
      assert.equal(await store.eventsAfter("s-loud", before), undefined);
      assert.equal(await store.eventStream("s-quiet", loud[0]), undefined);
      await store.endSession("s-quiet", 2_000);
      await store.endSession("s-loud", 2_000);
    });

    test("saves grants once per tenant and subject, and revokes exactly one", async () => {
      const grant = { tenant: "acme", kind: "command" as const, subject: "npm test", data: {}, savedAt: 1 };
      await store.saveGrant(grant);
      await store.saveGrant({ ...grant, savedAt: 2 });
      await store.saveGrant({ ...grant, kind: "write", subject: "/w/src", data: { by: "person" } });
      assert.deepEqual((await store.grants("acme")).map((g) => [g.kind, g.subject]), [
        ["command", "npm test"],
        ["write", "/w/src"],
      ]);
      assert.deepEqual(await store.grants("evil"), []);
      assert.equal(await store.revokeGrant("evil", "command", "npm test"), false);
      assert.equal(await store.revokeGrant("acme", "command", "npm test"), true);
      assert.deepEqual((await store.grants("acme")).map((g) => g.subject), ["/w/src"]);
    });

    test("lets the first answer of a question win, and only for its tenant", async () => {
      await store.askQuestion({
        id: "q1",
        tenant: "acme",
        sessionId: "s3",
        question: { kind: "write", subject: "/w/a" },
        askedAt: 10,
        answer: null,
        answeredBy: null,
        answeredAt: null,
      });
      assert.deepEqual((await store.pendingQuestions("acme")).map((q) => q.id), ["q1"]);
      assert.equal(await store.answerQuestion("evil", "q1", "allow", "person", 11), false);
      const answers = await Promise.all([
        store.answerQuestion("acme", "q1", "allow", "person", 12),
        store.answerQuestion("acme", "q1", "deny", "client", 12),
      ]);
      assert.deepEqual(answers.filter(Boolean).length, 1);
      const answered = await store.question("acme", "q1");
      assert.equal(answered?.answer, answered?.answeredBy === "person" ? "allow" : "deny");
      assert.deepEqual(await store.pendingQuestions("acme"), []);
      assert.equal(await store.question("evil", "q1"), undefined);
    });

    test("drops an ended session's data, which only a take-over reads", async () => {
      // Before, the client's initialize (up to 256 KiB) stayed until a prune: 50 sessions opened and deleted in 1.8 s
      // left 13 MB in a SQLite store.
      const initialize = {
        method: "initialize",
        params: { capabilities: { experimental: { pad: "p".repeat(200_000) } } },
      };
      await store.createSession({ ...session("ended-data", "acme"), data: { initialize, key: "k" } });
      assert.deepEqual((await store.session("acme", "ended-data"))?.data.initialize, initialize);
      assert.equal(await store.endSession("ended-data", 2_000), true);
      const ended = await store.session("acme", "ended-data");
      assert.deepEqual([ended?.endedAt, ended?.data], [2_000, {}]);
    });

    test("keeps a tenant's newest answered questions, every pending one, and another tenant's", async () => {
      // Before, every question stayed until its session was pruned, each with what it showed (up to 512 KiB).
      const ask = (id: string, tenant: string, askedAt: number) =>
        store.askQuestion({
          id,
          tenant,
          sessionId: "s-q",
          question: { title: "Write permission", about: { after: "x".repeat(100) } },
          askedAt,
          answer: null,
          answeredBy: null,
          answeredAt: null,
        });
      await ask("kept-pending", "qt", 1);
      await ask("other-answered", "qt-other", 2);
      await store.answerQuestion("qt-other", "other-answered", "deny", "person", 3);
      const over = ANSWERED_QUESTIONS_KEPT + 20;
      for (let i = 0; i < over; i++) {
        await ask(`a${i}`, "qt", 10 + i);
        await store.answerQuestion("qt", `a${i}`, null, "withdrawn", 10 + i);
      }
      await ask("last", "qt", 10_000);
      assert.equal(await store.question("qt", "a0"), undefined);
      assert.equal(await store.question("qt", "a19"), undefined);
      assert.equal((await store.question("qt", "a20"))?.answeredBy, "withdrawn");
      assert.equal((await store.question("qt", `a${over - 1}`))?.answeredBy, "withdrawn");
      assert.deepEqual((await store.pendingQuestions("qt")).map((q) => q.id), ["kept-pending", "last"]);
      assert.equal((await store.question("qt-other", "other-answered"))?.answer, "deny");
    });

    test("ends a call once: its answer, or the interruption when its replica is gone", async () => {
      const call = {
        sessionId: "s4",
        requestId: "7",
        tenant: "acme",
        owner: "replica-1",
        tool: "write_file",
        streamId: "stream-1",
        startedAt: 1,
        state: "running" as const,
        answer: null,
        endedAt: null,
      };
      await store.startCall(call);
      await store.startCall({ ...call, requestId: "8" });
      assert.deepEqual((await store.runningCalls({ owner: "replica-1" })).map((c) => c.requestId).sort(), ["7", "8"]);
      assert.deepEqual(await store.runningCalls({ sessionId: "elsewhere" }), []);
      assert.equal((await store.runningCalls()).length, 2);
      assert.equal(await store.finishCall("s4", "7", { content: [] }, 2), true);
      assert.equal(await store.interruptCall("s4", "7", { lost: true }, 3), false);
      assert.equal(await store.interruptCall("s4", "8", { lost: true }, 3), true);
      assert.equal(await store.finishCall("s4", "8", { content: [] }, 4), false);
      assert.deepEqual((await store.call("acme", "s4", "8"))?.answer, { lost: true });
      assert.equal((await store.call("acme", "s4", "8"))?.state, "interrupted");
      assert.equal((await store.call("acme", "s4", "8"))?.streamId, "stream-1");
      assert.equal(await store.call("evil", "s4", "7"), undefined);
      assert.deepEqual(await store.runningCalls({ owner: "replica-1" }), []);
    });

    test("knows a replica alive until it leaves", async () => {
      assert.equal(await store.replicaSeenAt("replica-9"), undefined);
      await store.heartbeat("replica-9", 100);
      await store.heartbeat("replica-9", 50);
      assert.equal(await store.replicaSeenAt("replica-9"), 100);
      await store.forgetReplica("replica-9");
      assert.equal(await store.replicaSeenAt("replica-9"), undefined);
    });

    test("keeps late results per session and tenant", async () => {
      const late: LateResult = {
        ...makeResult({ toolName: "sleep", status: "success", output: "done", attemptId: undefined }),
        attemptId: { callId: "c1", attempt: 1, ownerGeneration: 0 },
        lateResult: true,
        reportedStatus: "timed_out",
        staleOwner: false,
      };
      await store.recordLateResult("acme", "s5", late);
      assert.deepEqual(await store.lateResults("acme", "s5"), [late]);
      assert.deepEqual(await store.lateResults("evil", "s5"), []);
    });

    test("keeps a session's late results within its LateResults' bounds, the oldest dropped first", async () => {
      // Before, a fleet's store kept every one: 300 late results of 1 MB stayed, and the resource listed them all.
      const late = (callId: string, output: string): LateResult => ({
        ...makeResult({ toolName: "sleep", status: "success", output, attemptId: undefined }),
        attemptId: { callId, attempt: 1, ownerGeneration: 0 },
        lateResult: true,
        reportedStatus: "timed_out",
        staleOwner: false,
      });
      const over = DEFAULT_LATE_RESULTS_MAX_COUNT + 5;
      for (let i = 0; i < over; i++) await store.recordLateResult("acme", "s-bound", late(`c${i}`, "done"));
      // Another tenant's under the same session id counts apart.
      await store.recordLateResult("evil", "s-bound", late("e0", "done"));
      const kept = (await store.lateResults("acme", "s-bound")).map((result) => result.attemptId?.callId);
      assert.equal(kept.length, DEFAULT_LATE_RESULTS_MAX_COUNT);
      assert.deepEqual([kept[0], kept.at(-1)], ["c5", `c${over - 1}`]);
      assert.equal((await store.lateResults("evil", "s-bound")).length, 1);
      // By size: three of 40% of the budget each keep the newest two; one past the budget alone is still kept.
      const big = "x".repeat(Math.floor(DEFAULT_LATE_RESULTS_MAX_BYTES * 0.4));
      for (const id of ["b1", "b2", "b3"]) await store.recordLateResult("acme", "s-bytes", late(id, big));
      const bigKept = (await store.lateResults("acme", "s-bytes")).map((result) => result.attemptId?.callId);
      assert.deepEqual(bigKept, ["b2", "b3"]);
    });

    test("shares a blob among a tenant's sessions, never across tenants", async () => {
      // Seen live on a SQLite store: a put of bytes another tenant had stored wrote nothing, and alice's `cat` of 18 MB
      // answered in about 130 ms when bob's session had made the same output, 250 ms when nobody had.
      const bytes = new TextEncoder().encode("the same bytes, in two tenants");
      const sha256 = sha256Hex(bytes);
      const ref = { id: `sha256:${sha256}`, sha256, mediaType: "text/plain", byteLength: bytes.length };
      await store.createSession({ ...session("b-bob", "bob"), lastActive: 100 });
      await store.endSession("b-bob", 100);
      await store.createSession({ ...session("b-alice", "alice"), lastActive: 1_000_000 });
      await store.createSession({ ...session("b-alice2", "alice"), lastActive: 1_000_000 });
      await store.putArtifact("bob", "b-bob", ref as never, bytes);
      await store.putArtifact("alice", "b-alice", ref as never, bytes);
      await store.putArtifact("alice", "b-alice2", ref as never, bytes);
      // Bob's session goes, and its blob with it: it was bob's alone, whoever else had the same bytes.
      const pruned = await store.prune(500);
      assert.equal(pruned.sessions, 1);
      assert.equal(pruned.artifacts, 1);
      assert.equal(pruned.blobs, 1);
      for (const id of ["b-alice", "b-alice2"]) {
        assert.deepEqual((await store.artifact("alice", id, ref.id))?.bytes, bytes, id);
        assert.equal((await store.artifact("alice", id, ref.id))?.ref.sha256, sha256, id);
      }
      await store.endSession("b-alice", 1_000_001);
      await store.endSession("b-alice2", 1_000_001);
    });

    test("keeps artifacts per session with one blob per hash", async () => {
      const bytes = new Uint8Array([0, 1, 2, 255, 254]);
      const sha256 = sha256Hex(bytes);
      const ref = { id: `sha256:${sha256}`, sha256, mediaType: "application/octet-stream", byteLength: 5 };
      await store.putArtifact("acme", "s6", ref as never, bytes);
      await store.putArtifact("acme", "s7", ref as never, bytes);
      await store.putArtifact("acme", "s6", ref as never, bytes);
      const found = await store.artifact("acme", "s6", ref.id);
      assert.deepEqual(found?.bytes, bytes);
      assert.equal(found?.ref.byteLength, 5);
      assert.deepEqual((await store.artifacts("acme", "s6")).map((r) => r.id), [ref.id]);
      assert.equal(await store.artifact("evil", "s6", ref.id), undefined);
    });

    test("appends audit records in order, read by tenant or whole", async () => {
      const seqs = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.appendAudit(i % 2 ? "acme" : "other", { type: "call", i })),
      );
      assert.equal(new Set(seqs).size, 20);
      const all = await store.audit();
      assert.equal(all.length, 20);
      assert.deepEqual(all.map((r) => r.seq), [...all.map((r) => r.seq)].sort((a, b) => a - b));
      assert.equal((await store.audit({ tenant: "acme" })).length, 10);
      assert.deepEqual(
        (await store.audit({ afterSeq: all[17].seq })).map((r) => r.record.i),
        [18, 19].map((n) => all[n].record.i),
      );
      assert.equal((await store.audit({ limit: 3 })).length, 3);
    });

    test("prunes the sessions that are over, whole, and keeps the rest", async () => {
      await store.prune(7_000); // The sessions of the tests above (ended at 2,000 and 6,000).
      const at = (id: string, lastActive: number) => ({ ...session(id, "acme"), lastActive });
      const call = (sessionId: string, state: "running" | "done") => ({
        sessionId,
        requestId: "1",
        tenant: "acme",
        owner: "replica-1",
        tool: "bash",
        streamId: null,
        startedAt: 10_000,
        state,
        answer: state === "done" ? { content: [] } : null,
        endedAt: state === "done" ? 10_500 : null,
      });
      const question = (id: string, sessionId: string) => ({
        id,
        tenant: "acme",
        sessionId,
        question: { kind: "command", subject: "ls" },
        askedAt: 10_000,
        answer: null,
        answeredBy: null,
        answeredAt: null,
      });
      const blob = (text: string) => {
        const bytes = new TextEncoder().encode(text);
        const sha256 = sha256Hex(bytes);
        return { ref: { id: `sha256:${sha256}`, sha256, mediaType: "text/plain", byteLength: bytes.length }, bytes };
      };
      const [own, shared] = [blob("only p-idle's"), blob("p-idle's and p-live's")];
      // Ended long ago; idle long ago and never ended (its replica died); idle long ago with a call still running;
      // active lately.
      await store.createSession(at("p-old", 10_000));
      await store.endSession("p-old", 10_000);
      await store.startCall(call("p-old", "done"));
      await store.askQuestion(question("pq-old", "p-old"));
      await store.createSession(at("p-idle", 10_000));
      await store.appendEvent("p-idle", "stream-1", { n: 1 }, 10);
      await store.appendEvent("p-idle", "stream-1", { n: 2 }, 10);
      await store.startCall(call("p-idle", "done"));
      await store.askQuestion(question("pq-idle", "p-idle"));
      await store.answerQuestion("acme", "pq-idle", "allow", "person", 10_200);
      await store.recordLateResult("acme", "p-idle", {
        ...makeResult({ toolName: "sleep", status: "success", output: "late", attemptId: undefined }),
        attemptId: { callId: "c9", attempt: 1, ownerGeneration: 0 },
        lateResult: true,
        reportedStatus: "timed_out",
        staleOwner: false,
      });
      await store.putArtifact("acme", "p-idle", own.ref as never, own.bytes);
      await store.putArtifact("acme", "p-idle", shared.ref as never, shared.bytes);
      await store.createSession(at("p-running", 10_000));
      await store.startCall(call("p-running", "running"));
      await store.createSession(at("p-live", 50_000));
      await store.putArtifact("acme", "p-live", shared.ref as never, shared.bytes);
      await store.askQuestion(question("pq-live", "p-live"));
      await store.heartbeat("replica-old", 10_000);
      await store.heartbeat("replica-new", 30_000);
      const audit = (await store.audit()).length;
      const grants = await store.grants("acme");

      assert.deepEqual(await store.prune(20_000), {
        sessions: 2,
        events: 2,
        calls: 2,
        questions: 2,
        lateResults: 1,
        artifacts: 2,
        blobs: 1,
        replicas: 1,
      });
      for (const id of ["p-old", "p-idle"]) assert.equal(await store.session("acme", id), undefined, id);
      assert.equal(await store.call("acme", "p-idle", "1"), undefined);
      assert.equal(await store.question("acme", "pq-idle"), undefined);
      assert.deepEqual(await store.lateResults("acme", "p-idle"), []);
      assert.deepEqual(await store.artifacts("acme", "p-idle"), []);
      assert.equal(await store.replicaSeenAt("replica-old"), undefined);
      // What is not over stays: the running call's session, the live session with the blob it shares, its question.
      assert.equal((await store.call("acme", "p-running", "1"))?.state, "running");
      assert.deepEqual((await store.artifact("acme", "p-live", shared.ref.id))?.bytes, shared.bytes);
      assert.deepEqual((await store.pendingQuestions("acme")).map((q) => q.id), ["pq-live"]);
      assert.equal(await store.replicaSeenAt("replica-new"), 30_000);
      // The grants and the audit are never pruned.
      assert.deepEqual(await store.grants("acme"), grants);
      assert.equal((await store.audit()).length, audit);
      assert.deepEqual(Object.values(await store.prune(20_000)), [0, 0, 0, 0, 0, 0, 0, 0]);
    });

    test("never leaves an artifact without its bytes when a prune races its put", async () => {
      // Each round: a blob named only by a session over, swept by the prune, while a live session puts it again,
      // started a few turns later each round so that its two writes fall at every point of the prune's.
      for (let round = 0; round < 120; round++) {
        const bytes = new TextEncoder().encode(`raced blob ${round}`);
        const sha256 = sha256Hex(bytes);
        const ref = { id: `sha256:${sha256}`, sha256, mediaType: "text/plain", byteLength: bytes.length };
        await store.createSession({ ...session(`race-old-${round}`, "acme"), lastActive: 10_000 });
        await store.putArtifact("acme", `race-old-${round}`, ref as never, bytes);
        const later = async () => {
          for (let turn = 0; turn < round % 30; turn++) await Promise.resolve();
          if (round >= 60) await new Promise((resolve) => setTimeout(resolve, round % 4));
          await store.putArtifact("acme", "race-live", ref as never, bytes);
        };
        await Promise.all([store.prune(20_000), later()]);
        assert.deepEqual((await store.artifact("acme", "race-live", ref.id))?.bytes, bytes, `round ${round}`);
      }
    });
  });
}

const scratch = mkdtempSync(join(tmpdir(), "toolfence-store-"));
after(() => rmSync(scratch, { recursive: true, force: true }));
let cluster: PostgresCluster | undefined;
const pgMissing = postgresMissing();
before(async () => {
  if (!pgMissing) cluster = await startPostgres();
}, { timeout: 90_000 });
after(async () => await cluster?.stop(), { timeout: 30_000 });

contract("memory", () => openStore("memory"));
const sqliteModule = "node:sqlite";
const sqliteMissing = await import(sqliteModule).then(() => undefined, () => "this runtime has no node:sqlite");
contract("sqlite", () => openStore(`sqlite:${join(scratch, "store.db")}`), () => sqliteMissing);
contract("postgres", () => openStore(cluster!.url), () => pgMissing);

describe("store migrations", { timeout: 120_000 }, () => {
  it("records the schema version once, also when SQLite connections open one file together", {
    timeout: 30_000,
  }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    const file = join(scratch, "migrate.db");
    const stores = await Promise.all([1, 2, 3].map(() => openStore(`sqlite:${file}`)));
    await Promise.all(stores.map((store) => store.close()));
    const db = await openSqlite(file);
    assert.deepEqual(
      (await db.query("SELECT version FROM schema_version")).map((r) => Number(r.version)),
      MIGRATIONS.map((m) => m.version),
    );
    await db.close();
  });

  it("refuses a database whose schema is newer than this toolfence", { timeout: 30_000 }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    const file = join(scratch, "newer.db");
    await (await openStore(`sqlite:${file}`)).close();
    const db = await openSqlite(file);
    await db.run("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)", [SCHEMA_VERSION + 1, 0]);
    await db.close();
    await assert.rejects(openStore(`sqlite:${file}`), /newer than this toolfence knows/);
  });

  it("migrates PostgreSQL once when replicas start together", { timeout: 60_000 }, async (t) => {
    if (pgMissing) return t.skip(pgMissing);
    const url = cluster!.url.replace(/\/postgres$/, "/fleet");
    const admin = await openPostgres(cluster!.url, 1);
    await admin.run("CREATE DATABASE fleet");
    await admin.close();
    const stores = await Promise.all([1, 2, 3, 4].map(() => openStore(url, { poolSize: 2 })));
    await Promise.all(stores.map((store) => store.close()));
    const db = await openPostgres(url, 1);
    assert.deepEqual(
      (await db.query("SELECT version FROM schema_version")).map((r) => Number(r.version)),
      MIGRATIONS.map((m) => m.version),
    );
    await db.close();
  });

  // Schema 1's event ids were the store-wide `seq`; schema 2 gives them opaque ids. A store of schema 1 is migrated
  // in place: the events it kept resume from their old (numeric) id, new events get opaque ones.
  async function schemaOneResumes(db: SqlDriver, reopen: () => Promise<Store>): Promise<void> {
    await db.exclusive(async (tx) => {
      await tx.run("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)");
      for (const statement of MIGRATIONS[0].statements) await tx.run(dialectSql(statement, db.dialect));
      await tx.run("INSERT INTO schema_version (version, applied_at) VALUES (1, 0)");
    });
    await db.run(
      "INSERT INTO sessions (id, tenant, generation, owner, created_at, last_active, ended_at, data) " +
        "VALUES ('old', 'acme', 0, 'r', 1, 1, NULL, '{}')",
    );
    for (const n of [1, 2]) {
      await db.run("INSERT INTO events (session_id, stream_id, message) VALUES ('old', 's', ?)", [`{"n":${n}}`]);
    }
    const [first] = await db.query("SELECT MIN(seq) AS seq FROM events");
    await db.close();
    const store = await reopen();
    try {
      const oldId = String(Number(first.seq));
      assert.equal(await store.eventStream("old", oldId), "s");
      const fresh = await store.appendEvent("old", "s", { n: 3 }, 256);
      assert.doesNotMatch(fresh, /^\d+$/);
      assert.deepEqual((await store.eventsAfter("old", oldId))?.events.map((e) => e.message), [{ n: 2 }, { n: 3 }]);
    } finally {
      await store.close();
    }
  }

  it("migrates a SQLite store of schema 1: its kept events still resume", { timeout: 30_000 }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    const file = join(scratch, "schema1.db");
    await schemaOneResumes(await openSqlite(file), () => openStore(`sqlite:${file}`));
  });

  it("migrates a PostgreSQL store of schema 1: its kept events still resume", { timeout: 60_000 }, async (t) => {
    if (pgMissing) return t.skip(pgMissing);
    const url = cluster!.url.replace(/\/postgres$/, "/schema1");
    const admin = await openPostgres(cluster!.url, 1);
    await admin.run("CREATE DATABASE schema1");
    await admin.close();
    await schemaOneResumes(await openPostgres(url, 1), () => openStore(url));
  });

  it("names what it accepts when the address is of no known kind", { timeout: 60_000 }, async () => {
    await assert.rejects(openStore("mysql://x"), /give memory, sqlite:PATH or postgres:\/\//);
    await assert.rejects(openStore("sqlite:"), /needs a file/);
  });
});

describe("a store's artifacts", { timeout: 120_000 }, () => {
  // Before, a fleet's store kept every artifact of a session until a prune, which spares the sessions still open: a
  // tenant writing outputs in a loop filled the database that every tenant shares (300 outputs of 1 MB, 300 MB kept).
  const kinds: [string, () => string | undefined, () => string, (() => Promise<SqlDriver>) | undefined][] = [
    ["memory", () => undefined, () => "memory", undefined],
    [
      "sqlite",
      () => sqliteMissing,
      () => `sqlite:${join(scratch, "bounded.db")}`,
      () => openSqlite(join(scratch, "bounded.db")),
    ],
    ["postgres", () => pgMissing, () => cluster!.url, () => openPostgres(cluster!.url, 1)],
  ];
  for (const [kind, missing, address, driver] of kinds) {
    it(`are bounded per tenant on a ${kind} store, the oldest dropped with their bytes`, {
      timeout: 60_000,
    }, async (t) => {
      const reason = missing();
      if (reason) return t.skip(reason);
      const store = await openStore(address(), { maxTenantArtifactBytes: 8_000 });
      const artifact = (text: string) => {
        const bytes = new TextEncoder().encode(text);
        const sha256 = sha256Hex(bytes);
        return { ref: { id: `sha256:${sha256}`, sha256, mediaType: "text/plain", byteLength: bytes.length }, bytes };
      };
      try {
        const quiet = artifact("the quiet tenant's one output");
        await store.putArtifact("quiet", "q1", quiet.ref as never, quiet.bytes);
        const flood = Array.from({ length: 40 }, (_, i) => artifact(`${i} `.padEnd(1_000, "x")));
        for (const [i, { ref, bytes }] of flood.entries()) {
          await store.putArtifact("flood", i % 2 ? "f1" : "f2", ref as never, bytes);
        }
        const kept = [...await store.artifacts("flood", "f1"), ...await store.artifacts("flood", "f2")];
        assert.ok(kept.length >= 3 && kept.length <= 8, `${kept.length} kept`);
        assert.deepEqual((await store.artifact("flood", "f1", flood[39].ref.id))?.bytes, flood[39].bytes);
        assert.equal(await store.artifact("flood", "f2", flood[0].ref.id), undefined);
        // Another tenant's are its own: the flood never pushes them out.
        assert.deepEqual((await store.artifact("quiet", "q1", quiet.ref.id))?.bytes, quiet.bytes);
        // The newest is kept even past the bound on its own.
        const big = artifact("y".repeat(10_000));
        await store.putArtifact("flood", "f1", big.ref as never, big.bytes);
        assert.deepEqual((await store.artifact("flood", "f1", big.ref.id))?.bytes, big.bytes);
        assert.deepEqual([...await store.artifacts("flood", "f1"), ...await store.artifacts("flood", "f2")], [big.ref]);
        if (driver) {
          // And the bytes of those dropped are gone from the database, not only their references.
          const db = await driver();
          const blobs = (await db.query("SELECT sha256 FROM blobs")).map((row) => String(row.sha256));
          await db.close();
          assert.deepEqual(blobs.filter((key) => key.endsWith(":flood")), [`${big.ref.sha256}:flood`]);
        }
      } finally {
        await store.close();
      }
    });
  }
});
