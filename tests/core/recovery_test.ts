// What a result tells a caller recovering after a timeout, a cancel or a crash: declared effects and
// their state, why a call was or was not retried, late results, attempt ids, batch closure, provenance.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { type AnyTool, tool } from "../../core/tool.ts";
import { fail } from "../../core/failure.ts";
import { ToolError } from "../../core/errors.ts";
import { effectStateOf, makeResult, type ToolResult, type ToolStatus } from "../../core/result.ts";
import { type Effect, EFFECTS } from "../../core/effects.ts";
import { DEFAULT_LATE_RESULTS_MAX_COUNT, type LateResult, LateResults } from "../../core/late_results.ts";
import type { ToolContext } from "../../core/context.ts";
import { delay, withSession } from "./_helpers.ts";

const empty = v.object({});

describe("effect state", () => {
  test("follows the rule for every declaration, status and recorded change (generative)", { timeout: 60_000 }, () => {
    const declarations: (readonly Effect[] | null)[] = [null, [], ["reads"]];
    // Every non-empty subset of the effects.
    for (let mask = 1; mask < 1 << EFFECTS.length; mask++) declarations.push(EFFECTS.filter((_, i) => mask & (1 << i)));
    const statuses: ToolStatus[] = ["success", "error", "skipped", "timed_out", "cancelled"];
    let checked = 0;
    for (const declaredEffects of declarations) {
      for (const status of statuses) {
        for (const attempts of [0, 1, 3]) {
          for (const changes of [undefined, [], [{ path: "a" }]]) {
            for (const errorKind of status === "success" ? [undefined] : ["semantic", "execution", "policy"] as const) {
              for (const claimed of [undefined, "applied", "not_applied", "none"] as const) {
                const state = effectStateOf({
                  status,
                  declaredEffects,
                  attempts,
                  errorKind,
                  effectState: claimed,
                  filesystemChanges: changes,
                });
                const world = (declaredEffects ?? []).filter((e) => e !== "reads");
                if (declaredEffects === null) assert.equal(state, "no_effect_declared");
                else if (world.length === 0) assert.equal(state, "none");
                else if (attempts === 0) assert.equal(state, "not_applied", "a tool that never ran did nothing");
                else if (status === "timed_out" || status === "cancelled") assert.equal(state, "unknown");
                else if (changes?.length) {
                  assert.equal(state, "applied", "a recorded change is applied, whatever is claimed");
                } else if (claimed) assert.equal(state, claimed);
                else if (status === "success") assert.notEqual(state, "unknown");
                else assert.ok(["not_applied", "unknown"].includes(state), state);
                checked++;
                if (status === "skipped" && state === "applied") continue; // refused by makeResult below
                if (status !== "success" && errorKind === undefined) continue;
                const r = makeResult({
                  status,
                  toolName: "t",
                  declaredEffects,
                  attempts,
                  effectState: claimed,
                  ...(status === "success" ? {} : {
                    error: "x",
                    errorCode: "c",
                    errorKind: status === "skipped" ? "policy" : status === "error" ? errorKind : "execution",
                  }),
                });
                assert.equal(
                  r.reconciliationRequired,
                  r.effectState === "unknown" || (
                    r.effectState === "no_effect_declared" && attempts > 0 &&
                    (status === "timed_out" || status === "cancelled")
                  ),
                );
              }
            }
          }
        }
      }
    }
    assert.ok(checked > 3_000, `${checked}`);
  });

  test(
    "every result carries declaredEffects, effectState and reconciliationRequired",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const box = new ToolBox().register(
          tool({ name: "plain", description: "d", input: empty, run: () => 1 }),
          tool({ name: "reader", description: "d", input: empty, effects: ["reads"], run: () => 1 }),
          tool({ name: "pure", description: "d", input: empty, effects: [], run: () => 1 }),
          tool({ name: "runner", description: "d", input: empty, effects: ["runs_processes"], run: () => 1 }),
          tool({
            name: "writer",
            description: "d",
            input: v.object({ refuse: v.optional(v.boolean(), false) }),
            effects: ["writes_files"],
            run: ({ refuse }) => {
              if (refuse) throw new ToolError("outside", { code: "outside_workspace", kind: "policy" });
              return 1;
            },
          }),
        );
        const states = async (name: string, args: unknown = {}) => {
          const r = await box.call(session, name, args);
          return [r.declaredEffects, r.effectState, r.reconciliationRequired];
        };
        assert.deepEqual(await states("plain"), [null, "no_effect_declared", false]);
        assert.deepEqual(await states("reader"), [["reads"], "none", false]);
        assert.deepEqual(await states("pure"), [[], "none", false]);
        assert.deepEqual(await states("runner"), [["runs_processes"], "applied", false]);
        assert.deepEqual(await states("writer"), [["writes_files"], "applied", false]);
        assert.deepEqual(await states("writer", { refuse: true }), [["writes_files"], "not_applied", false]);
        assert.deepEqual(await states("writer", { refuse: "no" }), [["writes_files"], "not_applied", false]);
        assert.deepEqual(await states("nope"), [null, "no_effect_declared", false]);
      });
    },
  );
});

describe("late results", () => {
  test("an effectful tool killed by its timeout needs reconciliation, and its late settling is reported", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const heard: LateResult[] = [];
      session.lateResults.onLateResult((late) => heard.push(late));
      const box = new ToolBox({ graceMs: 10 }).register(tool({
        name: "slow_write",
        description: "d",
        input: empty,
        effects: ["writes_files"],
        // Ignores its signal, as a tool stuck in a blocking write would.
        run: async () => {
          await delay(150);
          return { wrote: "a.txt" };
        },
      }));
      const r = await box.call(session, "slow_write", {}, { timeoutMs: 20, callId: "call-7" });
      assert.deepEqual([r.status, r.effectState, r.reconciliationRequired, r.workerStillRunning], [
        "timed_out",
        "unknown",
        true,
        true,
      ]);
      assert.equal(r.retryDisposition, "stopped");
      assert.deepEqual(session.lateResults.list(), [], "not settled yet");
      await delay(250);
      const late = session.lateResults.list();
      assert.equal(late.length, 1);
      assert.deepEqual(heard, late);
      assert.equal(late[0].toolName, "slow_write");
      assert.equal(late[0].lateResult, true);
      assert.deepEqual(late[0].attemptId, { callId: "call-7", attempt: 1, ownerGeneration: 0 });
      assert.deepEqual(late[0].attemptId, r.attemptId);
      assert.equal(late[0].reportedStatus, "timed_out");
      assert.equal(late[0].status, "success");
      assert.deepEqual(late[0].output, { wrote: "a.txt" });
      assert.deepEqual([late[0].effectState, late[0].reconciliationRequired], ["applied", false], "now we know");
      assert.equal(late[0].staleOwner, false);
      assert.ok(late[0].latencyMs >= 140, `${late[0].latencyMs}`);
    });
  });

  test("a cancelled tool that throws later, or returns a failure, is reported; a stale owner is marked", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox({ graceMs: 5 }).register(
        tool({
          name: "thrower",
          description: "d",
          input: empty,
          run: async () => {
            await delay(60);
            throw new Error("disk full");
          },
        }),
        tool({
          name: "failer",
          description: "d",
          input: empty,
          run: async () => {
            await delay(60);
            return fail("nothing to do", { output: "log" });
          },
        }),
      );
      const controller = new AbortController();
      const calls = [
        box.call(session, "thrower", {}, { signal: controller.signal }),
        box.call(session, "failer", {}, { signal: controller.signal }),
      ];
      await delay(10);
      controller.abort();
      const results = await Promise.all(calls);
      assert.deepEqual(results.map((r) => [r.status, r.reconciliationRequired]), [
        ["cancelled", true],
        ["cancelled", true],
      ]);
      assert.equal(session.takeOver(), 1);
      await delay(120);
      const late = session.lateResults.list();
      assert.deepEqual(
        late.map((l) => [l.toolName, l.reportedStatus, l.status, l.errorCode, l.error, l.output, l.staleOwner]).sort(),
        [
          ["failer", "cancelled", "error", "tool_failed", "nothing to do", "log", true],
          ["thrower", "cancelled", "error", "tool_error", "disk full", null, true],
        ],
      );
      assert.ok(late.every((l) => l.attemptId.ownerGeneration === 0));
      // A call made by the new owner carries its generation.
      assert.equal((await box.call(session, "failer", {})).attemptId?.ownerGeneration, 1);
    });
  });

  test(
    "a tool that settles within the grace period is reported too, never silently dropped",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const box = new ToolBox({ graceMs: 200 }).register(tool({
          name: "t",
          description: "d",
          input: empty,
          run: async () => {
            await delay(40);
            return "done anyway";
          },
        }));
        const r = await box.call(session, "t", {}, { timeoutMs: 10 });
        assert.equal(r.workerStillRunning, false);
        await delay(1);
        assert.deepEqual(session.lateResults.list().map((l) => l.output), ["done anyway"]);
      });
    },
  );
});

describe("retries", () => {
  function flaky(name: string, extra: Partial<AnyTool>, failures: number): AnyTool & { runs: number[] } {
    const runs: number[] = [];
    const t = tool({
      name,
      description: "d",
      input: empty,
      retry: { maxAttempts: 3, backoffMs: 1 },
      ...extra,
      run: (_a: unknown, ctx: ToolContext) => {
        runs.push(ctx.attempt);
        if (runs.length <= failures) throw new Error(`failure ${runs.length}`);
        return { key: ctx.idempotencyKey ?? null };
      },
    } as never) as AnyTool;
    return Object.assign(Object.create(t), { runs });
  }

  test("a tool that declares writes is retried only when idempotent or given a key", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const unsafe = flaky("unsafe", { effects: ["writes_files"] }, 1);
      const idempotent = flaky("idem", { effects: ["writes_files"], idempotent: true }, 1);
      const keyed = flaky("keyed", { effects: ["network"] }, 1);
      const reader = flaky("reader", { effects: ["reads"] }, 1);
      const box = new ToolBox().register(unsafe, idempotent, keyed, reader);
      const r1 = await box.call(session, "unsafe", {});
      assert.deepEqual([r1.status, r1.attempts, r1.retryDisposition, unsafe.runs], [
        "error",
        1,
        "unsafe_effects",
        [1],
      ]);
      // It records no file changes, so an empty list says nothing: it may have written before it failed.
      assert.deepEqual([r1.filesystemChanges, r1.effectState, r1.reconciliationRequired], [[], "unknown", true]);
      // A tool that reports every change it makes, and reported none, changed nothing.
      const reporting = flaky("reporting", { effects: ["writes_files"], recordsFileChanges: true }, 1);
      const r5 = await new ToolBox().register(reporting).call(session, "reporting", {});
      assert.deepEqual([r5.status, r5.effectState, r5.reconciliationRequired], ["error", "not_applied", false]);
      const r2 = await box.call(session, "idem", {});
      assert.deepEqual([r2.status, r2.attempts, r2.retryDisposition], ["success", 2, "not_needed"]);
      const r3 = await box.call(session, "keyed", {}, { idempotencyKey: "order-42" });
      assert.deepEqual([r3.status, r3.attempts, r3.idempotencyKey, r3.output], [
        "success",
        2,
        "order-42",
        { key: "order-42" },
      ]);
      const r4 = await box.call(session, "reader", {});
      assert.deepEqual([r4.status, r4.attempts], ["success", 2]);
    });
  });

  test("retryDisposition names why a failed call was not run again", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(
        tool({
          name: "no_policy",
          description: "d",
          input: empty,
          run: () => {
            throw new Error("x");
          },
        }),
        flaky("exhausted", {}, 5),
        flaky("declined", { retry: { maxAttempts: 3, backoffMs: 1, retryIf: () => false } }, 5),
        tool({
          name: "coded",
          description: "d",
          input: empty,
          retry: { maxAttempts: 3 },
          run: () => {
            throw new ToolError("gone", { code: "not_found" });
          },
        }),
      );
      const disposition = async (name: string) => {
        const r = await box.call(session, name, {});
        return [r.retryDisposition, r.attempts];
      };
      assert.deepEqual(await disposition("no_policy"), ["no_retry_policy", 1]);
      assert.deepEqual(await disposition("exhausted"), ["exhausted", 3]);
      assert.deepEqual(await disposition("declined"), ["declined", 1]);
      assert.deepEqual(await disposition("coded"), ["not_retryable", 1]);
      assert.deepEqual(await disposition("missing"), ["not_needed", 0]);
    });
  });
});

describe("attempt ids, normalized requests and provenance", () => {
  test(
    "every result names its attempt, the arguments it ran with, and what let it run",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const add = tool({
          name: "add",
          description: "Add.",
          input: v.object({ a: v.number(), tags: v.optional(v.array(v.string()), []) }),
          needsApproval: ({ a }) => a > 100,
          run: ({ a, tags }) => a + tags.length,
        });
        const box = new ToolBox().register(add);
        const r = await box.call(session, "add", '{"a": 1, "tags": "x, y"}');
        assert.equal(r.output, 3);
        assert.deepEqual(r.normalizedRequest, { a: 1, tags: ["x", "y"] }, "after array-string parsing");
        assert.match(r.attemptId!.callId, new RegExp(`^${session.id}:\\d+$`));
        assert.deepEqual([r.attemptId!.attempt, r.attemptId!.ownerGeneration], [1, 0]);
        assert.equal(r.provenance!.sessionId, session.id);
        assert.match(r.provenance!.definitionSha256, /^[0-9a-f]{64}$/);
        assert.equal(r.provenance!.authorization, "none_needed");
        const again = await box.call(session, "add", { a: 2 }, { callId: "c-1" });
        assert.deepEqual(again.normalizedRequest, { a: 2, tags: [] }, "after defaults");
        assert.equal(again.attemptId!.callId, "c-1");
        assert.notEqual(r.attemptId!.callId, (await box.call(session, "add", { a: 1 })).attemptId!.callId);
        assert.equal(again.provenance!.definitionSha256, r.provenance!.definitionSha256);
        const approved = await box.call(session, "add", { a: 101 });
        assert.equal(approved.provenance!.authorization, "auto");
        const refused = await box.call(session, "add", { a: "x" });
        assert.equal(refused.normalizedRequest, undefined);
        assert.deepEqual(refused.attemptId!.attempt, 0);
        // Another definition of the same name hashes differently.
        const other = new ToolBox().register(tool({ ...add, description: "Add two.", run: () => 0 } as never));
        const o = await other.call(session, "add", { a: 1 });
        assert.notEqual(o.provenance!.definitionSha256, r.provenance!.definitionSha256);
        // None of it reaches the model.
        const { toModelText } = await import("../../core/result.ts");
        assert.equal(toModelText(r), "3");
      }, { autoConfirm: true });
    },
  );

  test("a before-call hook that answers is the authorization", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(tool({ name: "t", description: "d", input: empty, run: () => 1 }))
        .beforeToolCall(() => ({ output: "cached" }));
      const r = await box.call(session, "t", {});
      assert.deepEqual([r.output, r.provenance?.authorization, r.attempts], ["cached", "hook", 0]);
    });
  });
});

describe("batch closure", () => {
  const box = new ToolBox().register(
    tool({ name: "ok", description: "d", input: empty, readOnly: true, run: () => 1 }),
    tool({
      name: "bad",
      description: "d",
      input: empty,
      readOnly: true,
      run: () => {
        throw new ToolError("no", { code: "not_found" });
      },
    }),
    tool({
      name: "slow",
      description: "d",
      input: empty,
      readOnly: true,
      run: (_a, ctx) => delay(2_000, ctx.signal),
    }),
  );

  test("completed, fail-fast naming the call that caused it, and cancelled", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const done = await box.callMany(session, [{ name: "ok" }, { name: "bad" }]);
      assert.deepEqual(done.batchClosure, { kind: "completed" });
      const ff = await box.callMany(session, [{ name: "slow" }, { name: "bad", callId: "b1" }, { name: "slow" }], {
        mode: "parallel",
        failFast: true,
      });
      assert.deepEqual(ff.batchClosure, {
        kind: "fail_fast",
        causedBy: { index: 1, toolName: "bad", callId: "b1", status: "error" },
      });
      assert.deepEqual(ff.results.map((r: ToolResult) => r.status), ["cancelled", "error", "cancelled"]);
      assert.ok(ff.results.every((r) => r.batchClosure === ff.batchClosure), "each result says how its batch ended");
      assert.equal((await box.call(session, "ok", {})).batchClosure, undefined, "a lone call has none");
      const controller = new AbortController();
      const pending = box.callMany(session, [{ name: "slow" }, { name: "ok" }], { signal: controller.signal });
      await delay(20);
      controller.abort(new Error("user pressed stop"));
      const cancelled = await pending;
      assert.deepEqual(cancelled.batchClosure, { kind: "cancelled", reason: "user pressed stop" });
    });
  });
});

test("a tool that honours its signal leaves no late result", { timeout: 60_000 }, async () => {
  await withSession(async (session) => {
    const box = new ToolBox({ graceMs: 200 }).register(
      tool({ name: "polite", description: "d", input: empty, run: (_a, ctx) => delay(5_000, ctx.signal) }),
      tool({
        name: "checks",
        description: "d",
        input: empty,
        run: async (_a, ctx) => {
          await delay(30);
          ctx.signal.throwIfAborted();
        },
      }),
    );
    const controller = new AbortController();
    const pending = box.call(session, "polite", {}, { signal: controller.signal });
    await delay(5);
    controller.abort();
    assert.equal((await pending).status, "cancelled");
    assert.equal((await box.call(session, "checks", {}, { timeoutMs: 5 })).status, "timed_out");
    await delay(50);
    assert.deepEqual(session.lateResults.list(), []);
  });
});

test("a tool that rejects with its signal's reason leaves no late result, whatever the caller aborted with", {
  timeout: 60_000,
}, async () => {
  await withSession(async (session) => {
    // As sleep does; an MCP client's notifications/cancelled aborts with its `reason`, a plain string.
    const box = new ToolBox({ graceMs: 200 }).register(tool({
      name: "rejects_with_reason",
      description: "d",
      input: empty,
      run: (_a, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))),
    }));
    for (const reason of ["the client cancelled", new Error("stop"), undefined]) {
      const controller = new AbortController();
      const pending = box.call(session, "rejects_with_reason", {}, { signal: controller.signal });
      await delay(5);
      controller.abort(reason);
      assert.equal((await pending).status, "cancelled");
    }
    await delay(50);
    assert.deepEqual(session.lateResults.list(), []);
  });
});

describe("late results are bounded", () => {
  const lateOf = (n: number, output: unknown = n): LateResult => ({
    ...makeResult({ toolName: "t", status: "success", output }),
    attemptId: { callId: `c${n}`, attempt: 1, ownerGeneration: 0 },
    lateResult: true,
    reportedStatus: "timed_out",
    staleOwner: false,
  } as LateResult);

  test("by count: the oldest dropped first and counted, every one still heard", { timeout: 60_000 }, () => {
    const late = new LateResults();
    let heard = 0;
    late.onLateResult(() => heard++);
    const extra = 7;
    for (let n = 0; n < DEFAULT_LATE_RESULTS_MAX_COUNT + extra; n++) late.record(lateOf(n));
    assert.equal(heard, DEFAULT_LATE_RESULTS_MAX_COUNT + extra);
    assert.equal(late.list().length, DEFAULT_LATE_RESULTS_MAX_COUNT);
    assert.equal(late.dropped, extra);
    assert.equal(late.list()[0].attemptId.callId, `c${extra}`);
    assert.equal(late.list().at(-1)!.attemptId.callId, `c${DEFAULT_LATE_RESULTS_MAX_COUNT + extra - 1}`);
  });

  test("by bytes: the newest kept whole even past the budget, the others dropped", { timeout: 60_000 }, () => {
    const late = new LateResults({ maxBytes: 10_000 });
    late.record(lateOf(0, "a".repeat(4_000)));
    late.record(lateOf(1, "b".repeat(4_000)));
    assert.equal(late.dropped, 0);
    late.record(lateOf(2, "c".repeat(4_000)));
    assert.deepEqual(late.list().map((l) => l.attemptId.callId), ["c1", "c2"]);
    late.record(lateOf(3, "d".repeat(50_000)));
    assert.deepEqual(late.list().map((l) => l.attemptId.callId), ["c3"]);
    assert.equal(late.dropped, 3);
    assert.throws(() => new LateResults({ maxCount: 0 }), TypeError);
    assert.throws(() => new LateResults({ maxBytes: 0 }), TypeError);
  });
});
