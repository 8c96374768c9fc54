import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ToolBox } from "../../../toolbox.ts";
import type { SessionBase } from "../../../core/session.ts";
import type { Session } from "../../../policy/session.ts";
import type { SubagentContext, SubagentGetter } from "../../../tools/agents/mod.ts";
import { delay, withSession } from "../../core/_helpers.ts";

function boxWith(getter: SubagentGetter): ToolBox {
  return new ToolBox().withDefaults("system").withSubagents(getter);
}

describe("agent_run", () => {
  test("withSubagents registers both tools; the getter gets the parent, the task and a child session", {
    timeout: 60_000,
  }, async () => {
    const seen: { parent: SessionBase; task: string; context: SubagentContext }[] = [];
    const box = boxWith((parent, task, context) => {
      seen.push({ parent, task, context });
      return { run: (t) => ({ answer: t.toUpperCase() }) };
    });
    assert.equal(box.isEnabled("agent_run"), true);
    assert.equal(box.isEnabled("agent_run_parallel"), true);
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run", { task: "count files", name: "counter" });
      assert.equal(result.status, "success", result.error);
      assert.deepEqual(result.output, { name: "counter", output: { answer: "COUNT FILES" } });
      const [{ parent, task, context }] = seen;
      assert.equal(parent, session);
      assert.equal(task, "count files");
      assert.equal(context.name, "counter");
      assert.equal(context.session.depth, 1);
      assert.equal(context.session.workspace, session.workspace);
      // The child is the policy's Session at run time; the getter sees the core's SessionBase.
      const child = context.session as Session;
      assert.notEqual(child.state, session.state);
      assert.deepEqual(child.state.commandAllowlist(), session.state.commandAllowlist());
      assert.equal(context.canDelegate, true);
      assert.equal(context.session.closed, true, "the child session is closed after the run");
    });
  });

  test("the caller's ctx.value reaches the getter (xun)", { timeout: 60_000 }, async () => {
    const values: unknown[] = [];
    const box = boxWith((_parent, _task, context) => {
      values.push(context.value);
      return { run: () => "ok" };
    });
    await withSession(async (session) => {
      assert.equal(
        (await box.call(session, "agent_run", { task: "t" }, { context: { user: "ada" } })).status,
        "success",
      );
      assert.equal((await box.call(session, "agent_run", { task: "t" })).status, "success");
      assert.deepEqual(values, [{ user: "ada" }, undefined]);
    });
  });

  test("a failing sub-agent is a clear error", { timeout: 60_000 }, async () => {
    const box = boxWith(() => ({
      run: () => {
        throw new Error("out of ideas");
      },
    }));
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run", { task: "x", name: "thinker" });
      assert.equal(result.errorCode, "subagent_failed");
      assert.equal(result.error, "Sub-agent thinker failed: out of ideas");
      const invalid = await boxWith((() => ({})) as unknown as SubagentGetter).call(session, "agent_run", {
        task: "x",
      });
      assert.equal(invalid.errorCode, "invalid_subagent");
    });
  });

  test(
    "the depth limit: at depth 3 the tools are disabled for the child and refuse to run",
    { timeout: 60_000 },
    async () => {
      const depths: number[] = [];
      const enabledAt: boolean[] = [];
      const box: ToolBox = boxWith((_parent, task, { session, toolbox, canDelegate }) => ({
        async run(_task, signal) {
          depths.push(session.depth);
          const childBox = toolbox(box);
          enabledAt.push(childBox.isEnabled("agent_run") && childBox.isEnabled("agent_run_parallel"));
          assert.equal(canDelegate, session.depth < 3);
          const deeper = await childBox.call(session, "agent_run", { task }, { signal });
          return { depth: session.depth, deeper: deeper.status === "success" ? deeper.output : deeper.errorCode };
        },
      }));
      await withSession(async (session) => {
        const result = await box.call(session, "agent_run", { task: "recurse" });
        assert.equal(result.status, "success", result.error);
        assert.deepEqual(depths, [1, 2, 3]);
        assert.deepEqual(enabledAt, [true, true, false]);
        const innermost = JSON.stringify(result.output);
        assert.match(innermost, /"depth":3,"deeper":"tool_disabled"/);
        // Even through a toolbox that still has the tools, a depth-3 session may not delegate.
        const deep = session.child().child().child();
        const refused = await box.call(deep, "agent_run_parallel", { tasks: ["x"] });
        assert.equal(refused.status, "skipped");
        assert.equal(refused.errorCode, "depth_limit");
        await deep.close();
      });
    },
  );

  test("a cancel of the parent reaches the sub-agent", { timeout: 60_000 }, async () => {
    const signals: AbortSignal[] = [];
    const box = boxWith((_p, _t, context) => ({
      run: (_task, signal) => {
        signals.push(signal);
        assert.equal(signal, context.signal);
        return delay(60_000, signal);
      },
    }));
    await withSession(async (session) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const result = await box.call(session, "agent_run", { task: "wait" }, { signal: controller.signal });
      assert.equal(result.status, "cancelled");
      assert.ok(Date.now() - started < 2000);
      assert.equal(signals.length, 1);
      assert.equal(signals[0].aborted, true);
    });
  });
});

describe("agent_run_parallel", () => {
  test(
    "fake sub-agents of different durations: results in input order, at most 4 at once",
    { timeout: 60_000 },
    async () => {
      let running = 0;
      let most = 0;
      const durations = [300, 20, 200, 0, 120, 60, 10];
      const box = boxWith((_p, task) => ({
        async run(_task, signal) {
          running++;
          most = Math.max(most, running);
          try {
            await delay(durations[Number(task)], signal);
            return `result ${task}`;
          } finally {
            running--;
          }
        },
      }));
      await withSession(async (session) => {
        const tasks = durations.map((_, i) => String(i));
        const names = durations.map((_, i) => `agent-${i}`);
        const result = await box.call(session, "agent_run_parallel", { tasks, names });
        assert.equal(result.status, "success", result.error);
        const { results } = result.output as {
          results: { task: string; name: string; status: string; output: string }[];
        };
        assert.deepEqual(
          results.map((r) => [r.task, r.name, r.status, r.output]),
          tasks.map((t, i) => [t, `agent-${i}`, "success", `result ${t}`]),
        );
        assert.equal(most, 4);
      });
    },
  );

  test("one failing sub-agent is reported in its place; the others go on", { timeout: 60_000 }, async () => {
    const box = boxWith((_p, task) => ({
      run: async () => {
        await delay(10);
        if (task === "bad") throw new Error("broken");
        return task;
      },
    }));
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run_parallel", { tasks: ["a", "bad", "c"] });
      assert.deepEqual((result.output as { results: unknown[] }).results, [
        { task: "a", status: "success", output: "a" },
        { task: "bad", status: "error", error: "Sub-agent failed: broken" },
        { task: "c", status: "success", output: "c" },
      ]);
    });
  });

  test("tasks and names of different lengths are one clear error, and nothing runs", { timeout: 60_000 }, async () => {
    let made = 0;
    const box = boxWith(() => {
      made++;
      return { run: () => "x" };
    });
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run_parallel", { tasks: ["a", "b", "c"], names: ["x", "y"] });
      assert.equal(result.errorCode, "invalid_arguments");
      assert.equal(result.error, "tasks has 3 entries but names has 2; give one name per task or leave names out");
      assert.equal(made, 0);
    });
  });

  test("a cancel of the parent cancels every running and waiting sub-agent", { timeout: 60_000 }, async () => {
    const signals: AbortSignal[] = [];
    const sessions: SessionBase[] = [];
    const box = boxWith((_p, _t, { session }) => {
      sessions.push(session);
      return {
        run: (_task, signal) => {
          signals.push(signal);
          return delay(60_000, signal);
        },
      };
    });
    await withSession(async (session) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 150);
      const result = await box.call(session, "agent_run_parallel", { tasks: ["1", "2", "3", "4", "5", "6"] }, {
        signal: controller.signal,
      });
      assert.equal(result.status, "cancelled");
      assert.equal(signals.length, 4, "two were still waiting for a slot and never started");
      assert.ok(signals.every((s) => s.aborted));
      await delay(50);
      assert.ok(sessions.every((s) => s.closed));
    });
  });
});
