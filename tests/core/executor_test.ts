import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { ToolError } from "../../core/errors.ts";
import { readArtifactWindow } from "../../core/artifacts.ts";
import { callbackHost } from "../../policy/hosts.ts";
import { delay, withSession } from "./_helpers.ts";

const empty = v.object({});

describe("timeouts", () => {
  test(
    "the signal aborts at the deadline and the result is timed_out, never retried",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        let runs = 0;
        let abortedAt = 0;
        const started = performance.now();
        const box = new ToolBox().register(tool({
          name: "slow",
          description: "d",
          input: empty,
          timeoutMs: 50,
          retry: { maxAttempts: 3, backoffMs: 1 },
          run: async (_a, ctx) => {
            runs++;
            await delay(5_000, ctx.signal).catch(() => (abortedAt = performance.now()));
          },
        }));
        const r = await box.call(session, "slow", {});
        assert.equal(r.status, "timed_out");
        assert.equal(r.errorKind, "execution");
        assert.equal(r.errorCode, "timeout");
        assert.equal(r.workerStillRunning, false, "the tool honoured its signal");
        assert.equal(r.attempts, 1);
        assert.equal(runs, 1);
        assert.ok(abortedAt - started >= 45 && abortedAt - started < 1_000, `aborted after ${abortedAt - started} ms`);
      });
    },
  );

  test("a tool that ignores its signal is reported as still running", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let finished = false;
      const box = new ToolBox({ graceMs: 20 }).register(tool({
        name: "stubborn",
        description: "d",
        input: empty,
        run: async () => {
          await delay(300);
          finished = true;
        },
      }));
      const started = performance.now();
      const r = await box.call(session, "stubborn", {}, { timeoutMs: 30 });
      assert.equal(r.status, "timed_out");
      assert.equal(r.workerStillRunning, true);
      assert.equal(r.reconciliationRequired, true);
      assert.ok(performance.now() - started < 250, "the result did not wait for the tool");
      assert.equal(finished, false);
      await delay(350);
    });
  });

  test("a per-call timeout overrides the tool's", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(tool({
        name: "t",
        description: "d",
        input: empty,
        timeoutMs: 10,
        run: (_a, ctx) => delay(60, ctx.signal).then(() => "done"),
      }));
      assert.equal((await box.call(session, "t", {}, { timeoutMs: 1_000 })).output, "done");
      assert.equal((await box.call(session, "t", {})).status, "timed_out");
    });
  });
});

describe("cancellation", () => {
  test("the caller's signal reaches the running tool and the result is cancelled", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let sawAbort = false;
      const box = new ToolBox().register(tool({
        name: "wait",
        description: "d",
        input: empty,
        run: async (_a, ctx) => {
          await delay(5_000, ctx.signal).catch(() => (sawAbort = true));
          throw new Error("stopped");
        },
      }));
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 30);
      const r = await box.call(session, "wait", {}, { signal: controller.signal });
      assert.equal(r.status, "cancelled");
      assert.equal(r.errorKind, "execution");
      assert.equal(r.errorCode, "cancelled");
      assert.equal(r.workerStillRunning, false);
      assert.equal(sawAbort, true);
    });
  });

  test("an already aborted signal runs nothing", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let runs = 0;
      const box = new ToolBox().register(tool({ name: "t", description: "d", input: empty, run: () => runs++ }));
      const r = await box.call(session, "t", {}, { signal: AbortSignal.abort() });
      assert.equal(r.status, "cancelled");
      assert.equal(r.attempts, 0);
      assert.equal(runs, 0);
    });
  });

  test("a signal that aborts while the hooks or the approval wait runs nothing", { timeout: 60_000 }, async () => {
    // Before: the attempt listened for the abort event, which had already fired, so a call stopped while a before-call
    // hook, an async needsApproval or the host's question was pending ran to its end (its writes, its command) and
    // answered success; over MCP, a cancelled request's tool ran with no one to read its answer.
    const host = callbackHost({
      choose: (req) => req.defaultChoice,
      // A host (a UI) whose yes arrives after the call was stopped.
      confirm: () => delay(100).then(() => true),
    });
    await withSession(async (session) => {
      let runs = 0;
      const run = () => ++runs;
      const hooked = new ToolBox().register(tool({ name: "t", description: "d", input: empty, run }))
        .beforeToolCall(() => delay(100).then(() => undefined));
      const slowCheck = new ToolBox().register(
        tool({ name: "t", description: "d", input: empty, needsApproval: () => delay(100).then(() => false), run }),
      );
      const asked = new ToolBox().register(
        tool({ name: "t", description: "d", input: empty, needsApproval: true, run }),
      );
      for (const [what, box] of [["hook", hooked], ["needsApproval", slowCheck], ["question", asked]] as const) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(new Error("stopped")), 20);
        const r = await box.call(session, "t", {}, { signal: controller.signal });
        assert.equal(r.status, "cancelled", `${what}: ${r.status}`);
        assert.equal(r.attempts, 0, what);
        assert.equal(runs, 0, `${what}: the tool ran`);
      }
    }, { host });
  });
});

describe("retries", () => {
  test("a flaky tool succeeds on the third attempt with exact bookkeeping", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const attemptsSeen: number[] = [];
      const box = new ToolBox().register(tool({
        name: "flaky",
        description: "d",
        input: empty,
        retry: { maxAttempts: 5, backoffMs: 10 },
        run: (_a, ctx) => {
          attemptsSeen.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error(`fail ${ctx.attempt}`);
          return "ok";
        },
      }));
      const r = await box.call(session, "flaky", {});
      assert.equal(r.status, "success");
      assert.equal(r.output, "ok");
      assert.equal(r.attempts, 3);
      assert.deepEqual(attemptsSeen, [1, 2, 3]);
      assert.ok(r.latencyMs >= 30, `backoff 10 + 20 ms, latency ${r.latencyMs}`);
    });
  });

  test(
    "gives up after maxAttempts with the last error; the predicate can stop retries",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        let runs = 0;
        const box = new ToolBox().register(
          tool({
            name: "always",
            description: "d",
            input: empty,
            retry: { maxAttempts: 3, backoffMs: 1 },
            run: () => {
              throw new Error(`fail ${++runs}`);
            },
          }),
          tool({
            name: "picky",
            description: "d",
            input: empty,
            retry: { maxAttempts: 3, backoffMs: 1, retryIf: (e) => (e as Error).message !== "fatal" },
            run: () => {
              throw new Error("fatal");
            },
          }),
        );
        const r = await box.call(session, "always", {});
        assert.equal(r.attempts, 3);
        assert.equal(r.error, "fail 3");
        assert.equal((await box.call(session, "picky", {})).attempts, 1);
      });
    },
  );

  test("maxRetries (qitos's max_retries) counts the runs after the first; with maxAttempts, the smaller", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const counted = (name: string, retry: { maxAttempts?: number; maxRetries?: number }) =>
        tool({
          name,
          description: "d",
          input: empty,
          retry: { ...retry, backoffMs: 1 },
          run: () => {
            throw new Error("again");
          },
        });
      const box = new ToolBox().register(
        counted("two_retries", { maxRetries: 2 }),
        counted("no_retry", { maxRetries: 0 }),
        counted("both", { maxAttempts: 5, maxRetries: 1 }),
      );
      assert.equal((await box.call(session, "two_retries", {})).attempts, 3);
      assert.equal((await box.call(session, "no_retry", {})).attempts, 1);
      assert.equal((await box.call(session, "both", {})).attempts, 2);
    });
  });

  test("validation and policy outcomes are never retried", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let runs = 0;
      const box = new ToolBox().register(tool({
        name: "policy",
        description: "d",
        input: v.object({ n: v.number() }),
        retry: { maxAttempts: 3, backoffMs: 1 },
        run: () => {
          runs++;
          throw new ToolError("outside", { code: "outside_workspace", kind: "policy" });
        },
      }));
      assert.equal((await box.call(session, "policy", { n: "x" })).attempts, 0);
      const r = await box.call(session, "policy", { n: 1 });
      assert.equal(r.errorCode, "outside_workspace");
      assert.equal(r.attempts, 1);
      assert.equal(runs, 1);
    });
  });
});

describe("approvals", () => {
  const guarded = (needsApproval: boolean | ((a: { n: number }) => boolean)) =>
    tool({ name: "guarded", description: "d", input: v.object({ n: v.number() }), needsApproval, run: ({ n }) => n });

  test("a person's no skips the call; yes runs it and the source is recorded", { timeout: 60_000 }, async () => {
    const asked: string[] = [];
    const answers = [false, true];
    const host = callbackHost({
      choose: (req) => req.defaultChoice,
      confirm: (req) => {
        asked.push(req.message);
        return answers.shift()!;
      },
    });
    await withSession(async (session) => {
      const box = new ToolBox().register(guarded(true));
      const denied = await box.call(session, "guarded", { n: 1 });
      assert.equal(denied.status, "skipped");
      assert.equal(denied.errorKind, "policy");
      assert.equal(denied.errorCode, "not_approved");
      assert.equal(denied.attempts, 0);
      const allowed = await box.call(session, "guarded", { n: 2 });
      assert.equal(allowed.output, 2);
      assert.equal(allowed.metadata.approval, "user");
      assert.match(asked[0], /guarded/);
    }, { host });
  });

  test("autoConfirm approves and marks it auto; a function decides per call", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(guarded((a) => a.n > 10));
      const small = await box.call(session, "guarded", { n: 1 });
      assert.equal(small.metadata.approval, undefined);
      const big = await box.call(session, "guarded", { n: 11 });
      assert.equal(big.status, "success");
      assert.equal(big.metadata.approval, "auto");
    }, { autoConfirm: true });
  });

  test("without a host, a call that needs approval is refused, not run", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const r = await new ToolBox().register(guarded(true)).call(session, "guarded", { n: 1 });
      assert.equal(r.status, "skipped");
      assert.equal(r.errorKind, "policy");
    });
  });
});

describe("output cap", () => {
  test(
    "a 1 MB output comes back capped with an artifact that holds all of it byte for byte",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const big = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${"é".repeat(40)}`).join("\n");
        assert.ok(big.length > 1_000_000);
        const box = new ToolBox().register(tool({ name: "big", description: "d", input: empty, run: () => big }));
        const r = await box.call(session, "big", {});
        assert.equal(r.status, "success");
        assert.equal(r.truncated, true);
        const text = r.output as string;
        assert.ok(text.length <= 40_000, `capped to ${text.length}`);
        assert.ok(text.startsWith("line 0 "));
        assert.ok(text.endsWith(big.slice(-100)));
        assert.equal(r.omitted, big.length - (text.length - text.match(/\n\[\.\.\. .*? \.\.\.\]\n/)![0].length));
        assert.equal(r.artifacts.length, 1);
        assert.match(
          text,
          new RegExp(`${r.omitted} characters omitted; the whole output is artifact ${r.artifacts[0].id}`),
        );
        const stored = await session.artifacts.get(r.artifacts[0].id);
        assert.deepEqual(stored, new TextEncoder().encode(big));
        const window = await readArtifactWindow(session.artifacts, r.artifacts[0].id, { offset: 500_000, limit: 10 });
        assert.equal(window.content, big.slice(500_000, 500_010));
      });
    },
  );

  test(
    "the cap is configurable per toolbox and per tool; JSON outputs are capped as text",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const box = new ToolBox({ maxOutputChars: 500 }).register(
          tool({ name: "obj", description: "d", input: empty, run: () => ({ items: Array(200).fill("xxxx") }) }),
          tool({ name: "roomy", description: "d", input: empty, maxOutputChars: 5_000, run: () => "y".repeat(2_000) }),
        );
        const obj = await box.call(session, "obj", {});
        assert.equal(obj.truncated, true);
        assert.ok((obj.output as string).length <= 500);
        assert.equal(obj.artifacts[0].mediaType, "application/json");
        const roomy = await box.call(session, "roomy", {});
        assert.equal(roomy.truncated, false);
      });
    },
  );
});

describe("hooks and progress", () => {
  test("before hooks may rewrite arguments (validated again) or short-circuit; after hooks may replace", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(
        tool({ name: "echo", description: "d", input: v.object({ n: v.number() }), run: ({ n }) => n }),
      );
      box.beforeToolCall((
        { args },
      ) => (args.n === 1 ? { args: { n: 100 } } : args.n === 2 ? { args: { n: "bad" } } : undefined));
      session.hooks.before.push(({ args }) => (args.n === 3 ? { output: "cached" } : undefined));
      box.afterToolCall((
        { result },
      ) => (result.output === 100 ? { ...result, metadata: { ...result.metadata, seen: true } } : undefined));
      const rewritten = await box.call(session, "echo", { n: 1 });
      assert.equal(rewritten.output, 100);
      assert.equal(rewritten.metadata.seen, true);
      assert.equal((await box.call(session, "echo", { n: 2 })).errorCode, "invalid_arguments");
      const cached = await box.call(session, "echo", { n: 3 });
      assert.equal(cached.output, "cached");
      assert.equal(cached.attempts, 0);
    });
  });

  test("progress events reach the call's listener and the session's subscribers", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const seen: string[] = [];
      session.onProgress((e) => seen.push(`session:${e.message}:${e.fraction}`));
      const box = new ToolBox().register(tool({
        name: "work",
        description: "d",
        input: empty,
        run: (_a, ctx) => {
          ctx.progress("half", 0.5);
          ctx.progress("done", 1);
        },
      }));
      await box.call(session, "work", {}, { onProgress: (e) => seen.push(`call:${e.message}`) });
      assert.deepEqual(seen, ["call:half", "session:half:0.5", "call:done", "session:done:1"]);
    });
  });
});

test("what every attempt records is in the result; a call that records nothing lists nothing", {
  timeout: 60_000,
}, async () => {
  await withSession(async (session) => {
    const change = (path: string) => ({ path, change: "created" as const, before: null, after: null });
    const box = new ToolBox().register(
      tool({
        name: "flaky_writer",
        description: "d",
        input: empty,
        effects: ["writes_files"],
        idempotent: true,
        retry: { maxAttempts: 2, backoffMs: 1 },
        run: async (_a, ctx) => {
          ctx.recordFileChange(change(`attempt${ctx.attempt}.txt`));
          await ctx.artifacts.put(`log of attempt ${ctx.attempt}`);
          if (ctx.attempt === 1) throw new Error("first attempt fails");
          return "done";
        },
      }),
      tool({ name: "quiet", description: "d", input: empty, effects: ["writes_files"], run: () => "nothing" }),
      tool({
        name: "reporting",
        description: "d",
        input: empty,
        effects: ["writes_files"],
        recordsFileChanges: true,
        run: () => "nothing",
      }),
    );
    const r = await box.call(session, "flaky_writer", {});
    assert.deepEqual([r.status, r.attempts], ["success", 2]);
    assert.deepEqual(r.filesystemChanges.map((c) => c.path), ["attempt1.txt", "attempt2.txt"]);
    assert.equal(r.artifacts.length, 2);
    assert.equal(r.effectState, "applied");
    const quiet = await box.call(session, "quiet", {});
    assert.deepEqual([quiet.filesystemChanges, quiet.artifacts, quiet.effectState], [[], [], "applied"]);
    const reporting = await box.call(session, "reporting", {});
    assert.deepEqual([reporting.filesystemChanges, reporting.effectState], [[], "none"]);
  });
});

test("artifacts a tool stores during a call are listed in its result", { timeout: 60_000 }, async () => {
  await withSession(async (session) => {
    const box = new ToolBox().register(tool({
      name: "report",
      description: "d",
      input: empty,
      run: async (_a, ctx) => {
        const ref = await ctx.artifacts.put("full report", { summary: "the report" });
        await ctx.artifacts.put("full report");
        return { id: ref.id };
      },
    }));
    const r = await box.call(session, "report", {});
    assert.equal(r.artifacts.length, 1);
    assert.equal(r.artifacts[0].summary, "the report");
    assert.deepEqual(r.output, { id: r.artifacts[0].id });
    assert.equal((await box.call(session, "report", {})).artifacts.length, 1, "each call lists its own");
  });
});
