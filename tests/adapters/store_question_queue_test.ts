// The console's queue in a store shared by replicas: two queues on one SQLite file, each through its own
// connection, as two replicas hold (the store contract, store_test.ts, runs the races on PostgreSQL too; the
// fleet test runs this queue on it). A question asked on one is shown and answered on the other, the first
// answer wins, a withdrawn question leaves both, a gone replica's question leaves the page, and a tenant never
// sees another's.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { Store } from "../../core/mod.ts";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { consoleHost, StoreQuestionQueue } from "../../adapters/mcp/console/mod.ts";

const OPTIONS = [{ value: "once", label: "Allow" }, { value: "deny", label: "Deny" }];
const POLL_MS = 20;

function question(tenant: string) {
  return { tenant, title: "Command confirmation", message: "Run it?", options: OPTIONS, defaultChoice: "deny" };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!await check()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Awaits a call that ends at a replica's next look at the store. The queues poll on unreferenced timers (a waiting
 * question keeps no process alive), so under Node a test awaiting only them would find the event loop empty and be
 * cancelled; this deadline is a referenced timer, and a clear failure if the call never ends.
 */
async function within<T>(call: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within 10 s`)), 10_000);
  });
  try {
    return await Promise.race([call, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const sqliteModule = "node:sqlite";
const sqliteMissing = await import(sqliteModule).then(() => undefined, () => "this runtime has no node:sqlite");

describe("questions in a store shared by two replicas", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolfence-questions-"));
  let stores: Store[] = [];
  let a: StoreQuestionQueue;
  let b: StoreQuestionQueue;

  before(async () => {
    if (sqliteMissing) return;
    const address = `sqlite:${join(dir, "store.db")}`;
    stores = await Promise.all([openStore(address), openStore(address)]);
    // Both replicas are alive for the whole file: their heartbeats are in the store, a minute ahead.
    await stores[0].heartbeat("replica-a", Date.now() + 60_000);
    await stores[1].heartbeat("replica-b", Date.now() + 60_000);
    a = new StoreQuestionQueue(stores[0], { replica: "replica-a", pollMs: POLL_MS });
    b = new StoreQuestionQueue(stores[1], { replica: "replica-b", pollMs: POLL_MS });
  }, { timeout: 30_000 });

  after(async () => {
    await Promise.all(stores.map((store) => store.close()));
    rmSync(dir, { recursive: true, force: true });
  }, { timeout: 30_000 });

  test("a question asked on one replica is answered on the other, never by another tenant", {
    timeout: 60_000,
  }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    const changes: number[] = [];
    const stop = b.watch("alice", () => changes.push(1));
    const asked = a.ask({ ...question("alice"), session: "s-1" }, new AbortController().signal);
    // A change made elsewhere is heard by polling (a watcher may hear of one change more than once).
    await until(() => changes.length > 0, "B's console hears of A's question");
    const [shown] = await b.pending("alice");
    assert.equal(shown.session, "s-1");
    assert.deepEqual(shown.options, OPTIONS);
    assert.deepEqual(await b.pending("bob"), []);
    assert.equal(await b.answer("bob", shown.id, "once"), "unknown");
    assert.equal(await b.answer("alice", shown.id, "always"), "invalid_choice");
    const heard = changes.length;
    assert.equal(await b.answer("alice", shown.id, "once"), true);
    assert.equal(await within(asked, "the call on A gets B's answer"), "once");
    assert.equal(await a.answer("alice", shown.id, "deny"), "unknown", "an answered question is gone");
    await until(() => changes.length > heard, "B's console hears of the answer");
    stop();
  });

  test("the first answer wins when both replicas answer at once", { timeout: 60_000 }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    const asked = a.ask(question("alice"), new AbortController().signal);
    await until(async () => (await b.pending("alice")).length === 1, "B shows it");
    const [shown] = await b.pending("alice");
    const answers = await Promise.all([a.answer("alice", shown.id, "once"), b.answer("alice", shown.id, "deny")]);
    assert.equal(answers.filter((answer) => answer === true).length, 1, JSON.stringify(answers));
    assert.equal(await within(asked, "the call gets the first answer"), answers[0] === true ? "once" : "deny");
  });

  test(
    "a withdrawn question (its call cancelled or timed out) leaves every replica",
    { timeout: 60_000 },
    async (t) => {
      if (sqliteMissing) return t.skip(sqliteMissing);
      const cancel = new AbortController();
      const host = consoleHost(a, "alice", { timeoutMs: 60_000 });
      const asked = host.choose({ title: "T", message: "M", options: OPTIONS, defaultChoice: "deny" }, cancel.signal);
      await until(async () => (await b.pending("alice")).length === 1, "B shows it");
      const [shown] = await b.pending("alice");
      cancel.abort(new Error("the client cancelled"));
      await assert.rejects(asked, /the client cancelled/);
      await until(async () => (await b.pending("alice")).length === 0, "withdrawn on B");
      assert.equal(await b.answer("alice", shown.id, "once"), "unknown");
      // And a question nobody answers in time leaves B too.
      const timed = consoleHost(a, "alice", { timeoutMs: 300 });
      await assert.rejects(timed.confirm({ title: "T", message: "M", defaultChoice: false }), /nobody answered/);
      await until(async () => (await b.pending("alice")).length === 0, "timed out on B");
    },
  );

  test("a question of a replica that is gone waits no more", { timeout: 60_000 }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    const gone = new StoreQuestionQueue(stores[0], { replica: "replica-gone", pollMs: POLL_MS });
    await stores[0].heartbeat("replica-gone", Date.now());
    const cancel = new AbortController();
    const asked = gone.ask(question("alice"), cancel.signal).catch(() => "withdrawn");
    await until(async () => (await b.pending("alice")).length === 1, "B shows it while its replica lives");
    await stores[0].forgetReplica("replica-gone");
    assert.deepEqual(await b.pending("alice"), []);
    cancel.abort(new Error("done"));
    assert.equal(await asked, "withdrawn");
  });

  test("whatever the interleaving of answers on either replica and withdrawals, each call ends once", {
    timeout: 60_000,
  }, async (t) => {
    if (sqliteMissing) return t.skip(sqliteMissing);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("answer-a", "answer-b", "abort", "stranger"), { minLength: 1, maxLength: 5 }),
        async (steps) => {
          const controllers = steps.map(() => new AbortController());
          const answers = controllers.map((c, i) =>
            a.ask({ ...question("alice"), message: `call ${i}` }, c.signal).then((v) => v, () => "aborted")
          );
          await until(async () => (await b.pending("alice")).length === steps.length, "all asked");
          // Asked in one millisecond, they may be listed in any order: each is found by its message.
          const listed = await b.pending("alice");
          const ids = steps.map((_, i) => listed.find((q) => q.message === `call ${i}`)!.id);
          await Promise.all(steps.map(async (step, i) => {
            if (step === "answer-a") assert.equal(await a.answer("alice", ids[i], "once"), true);
            else if (step === "answer-b") assert.equal(await b.answer("alice", ids[i], "deny"), true);
            else if (step === "abort") controllers[i].abort(new Error("cancelled"));
            else assert.equal(await b.answer("bob", ids[i], "deny"), "unknown");
          }));
          // An answer given on B reaches the call on A at A's next look; then the calls left end.
          const answered = steps.flatMap((step, i) => step.startsWith("answer") ? [answers[i]] : []);
          await within(Promise.all(answered), "the answered calls end");
          for (const c of controllers) c.abort(new Error("the call ended"));
          const settled = await Promise.all(answers);
          const expected = { "answer-a": "once", "answer-b": "deny", abort: "aborted", stranger: "aborted" };
          steps.forEach((step, i) => assert.equal(settled[i], expected[step]));
          await until(async () => (await b.pending("alice")).length === 0, "nothing left waiting");
        },
      ),
      { numRuns: 15 },
    );
  });
});
