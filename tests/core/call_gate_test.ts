// The session's call gate: generated sequences of shared (concurrency-safe)
// and exclusive tasks, each taking a random time, arriving together or spread
// out; whatever the timing, an exclusive task never overlaps another task,
// tasks start in the order they arrived, and shared tasks that arrive together
// with no exclusive one between them do run together.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import fc from "fast-check";
import { CallGate } from "../../core/call_gate.ts";
import { SessionBase } from "../../core/session.ts";
import { delay } from "./_helpers.ts";

interface Span {
  index: number;
  shared: boolean;
  start: number;
  end: number;
}

async function runThrough(gate: CallGate, plan: { shared: boolean; ms: number; arriveMs: number }[]): Promise<Span[]> {
  const spans: Span[] = [];
  let clock = 0;
  const tick = () => ++clock;
  await Promise.all(plan.map(async ({ shared, ms, arriveMs }, index) => {
    if (arriveMs > 0) await delay(arriveMs);
    await gate.run(shared, async () => {
      const span: Span = { index, shared, start: tick(), end: 0 };
      spans.push(span);
      await delay(ms);
      span.end = tick();
    });
  }));
  return spans;
}

describe("CallGate", () => {
  test(
    "an exclusive task runs alone, tasks start in arrival order (generated timings)",
    { timeout: 60_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ shared: fc.boolean(), ms: fc.integer({ min: 0, max: 3 }), arriveMs: fc.constant(0) }), {
            minLength: 1,
            maxLength: 12,
          }),
          async (plan) => {
            const spans = await runThrough(new CallGate(), plan);
            // All arrive in one turn, in index order: they start in index order.
            assert.deepEqual(spans.map((s) => s.index), plan.map((_, i) => i));
            for (const a of spans) {
              for (const b of spans) {
                if (a === b || (a.shared && b.shared)) continue;
                const overlap = a.start < b.end && b.start < a.end;
                assert.equal(overlap, false, `task ${a.index} and ${b.index} overlapped`);
              }
            }
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  test("arrivals spread over time still never overlap an exclusive task", { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            shared: fc.boolean(),
            ms: fc.integer({ min: 0, max: 3 }),
            arriveMs: fc.integer({ min: 0, max: 4 }),
          }),
          { minLength: 2, maxLength: 10 },
        ),
        async (plan) => {
          const spans = await runThrough(new CallGate(), plan);
          assert.equal(spans.length, plan.length);
          for (const a of spans) {
            for (const b of spans) {
              if (a === b || (a.shared && b.shared)) continue;
              assert.ok(!(a.start < b.end && b.start < a.end), `task ${a.index} and ${b.index} overlapped`);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  test("shared tasks that arrive together run together; an exclusive one between them is a barrier", {
    timeout: 60_000,
  }, async () => {
    const spans = await runThrough(new CallGate(), [
      { shared: true, ms: 5, arriveMs: 0 },
      { shared: true, ms: 5, arriveMs: 0 },
      { shared: false, ms: 1, arriveMs: 0 },
      { shared: true, ms: 1, arriveMs: 0 },
    ]);
    const [a, b, c, d] = [0, 1, 2, 3].map((i) => spans.find((s) => s.index === i)!);
    assert.ok(a.start < b.end && b.start < a.end, "the two shared tasks overlap");
    assert.ok(c.start > a.end && c.start > b.end, "the exclusive task waits for both");
    assert.ok(d.start > c.end, "the shared task after it waits for it");
  });

  test("a task that throws releases the gate", { timeout: 60_000 }, async () => {
    const gate = new CallGate();
    const failed = gate.run(false, () => Promise.reject(new Error("boom")));
    const next = gate.run(false, () => Promise.resolve("ran"));
    await assert.rejects(failed, /boom/);
    assert.equal(await next, "ran");
  });

  test("a waiting task whose signal aborts starts at once, outside the gate, and no longer holds back the rest", {
    timeout: 60_000,
  }, async () => {
    const gate = new CallGate();
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((done) => release = done);
    const reader = gate.run(true, async () => {
      order.push("reader starts");
      await held;
      order.push("reader ends");
    });
    const abort = new AbortController();
    // An exclusive task waiting for the reader holds back the shared task behind it.
    const writer = gate.run(false, () => {
      order.push(abort.signal.aborted ? "writer not run" : "writer runs");
      return Promise.resolve("writer");
    }, abort.signal);
    const second = gate.run(true, () => {
      order.push("second reader runs");
      return Promise.resolve("second");
    });
    await delay(20);
    assert.deepEqual(order, ["reader starts"]);
    abort.abort(new Error("stopped"));
    assert.equal(await writer, "writer");
    assert.equal(await second, "second");
    // Both settled while the reader still runs: the aborted writer did not wait for it, and the shared task behind
    // the writer joined the reader.
    assert.deepEqual(order.slice(1).sort(), ["second reader runs", "writer not run"]);
    assert.equal(order.length, 3);
    release();
    await reader;
    // The gate's count is whole again: an exclusive task runs once the reader has ended.
    assert.equal(await gate.run(false, () => Promise.resolve("after")), "after");
    // Aborted before it came, a task starts at once too.
    assert.equal(await gate.run(false, () => Promise.resolve("late"), AbortSignal.abort()), "late");
  });

  test("every session has its own gate, and a child session another", { timeout: 60_000 }, async () => {
    const { Session } = await import("../../policy/session.ts");
    const session = new Session({ workspace: os.tmpdir() });
    try {
      assert.ok(session.callGate instanceof CallGate);
      assert.ok(session instanceof SessionBase);
      const child = session.child();
      assert.notEqual(child.callGate, session.callGate);
      await child.close();
    } finally {
      await session.close();
    }
  });
});
