import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { planSegments } from "../../core/batch.ts";
import { delay, withSession } from "./_helpers.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

/** A toolbox whose tools record when they start and end. */
function recordingBox(log: string[]) {
  const sleeper = (name: string, extra: Record<string, unknown>) =>
    tool({
      name,
      description: "d",
      input: v.object({ id: v.string(), ms: v.number(), fail: v.optional(v.boolean()) }),
      ...extra,
      run: async ({ id, ms, fail }, ctx) => {
        log.push(`start ${id}`);
        try {
          await delay(ms, ctx.signal);
        } catch {
          log.push(`abort ${id}`);
          throw new Error("aborted");
        }
        log.push(`end ${id}`);
        if (fail) throw new Error(`${id} failed`);
        return id;
      },
    });
  return new ToolBox().register(sleeper("read", { readOnly: true }), sleeper("write", { readOnly: false }));
}

describe("callMany", () => {
  test("segments: consecutive safe calls together, unsafe calls alone", { timeout: 60_000 }, () => {
    assert.deepEqual(planSegments([true, true, false, true, false, false, true], "parallel"), [[0, 1], [2], [3], [4], [
      5,
    ], [6]]);
    assert.deepEqual(planSegments([true, true], "serial"), [[0], [1]]);
  });

  test("results come back in declared order whatever the completion order", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const log: string[] = [];
      // Far enough apart that a loaded machine keeps their order (80, 10 and 40 ms did not: CI run ci18, Node 22).
      const calls = [900, 10, 450].map((ms, i) => ({ name: "read", args: { id: `r${i}`, ms }, callId: `c${i}` }));
      const { results } = await recordingBox(log).callMany(session, calls, { mode: "parallel" });
      assert.deepEqual(results.map((r) => r.output), ["r0", "r1", "r2"]);
      assert.deepEqual(results.map((r) => r.callId), ["c0", "c1", "c2"]);
      assert.deepEqual(log.filter((l) => l.startsWith("end")), ["end r1", "end r2", "end r0"]);
    });
  });

  test("an unsafe call is a barrier between parallel segments", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const log: string[] = [];
      await recordingBox(log).callMany(session, [
        { name: "read", args: { id: "a", ms: 30 } },
        { name: "read", args: { id: "b", ms: 10 } },
        { name: "write", args: { id: "w", ms: 10 } },
        { name: "read", args: { id: "c", ms: 10 } },
      ], { mode: "parallel" });
      assert.deepEqual(log, ["start a", "start b", "end b", "end a", "start w", "end w", "start c", "end c"]);
    });
  });

  test(
    "the default is serial, as qitos's ActionExecutionPolicy: safe calls too run one by one",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const log: string[] = [];
        await recordingBox(log).callMany(session, [
          { name: "read", args: { id: "a", ms: 30 } },
          { name: "read", args: { id: "b", ms: 10 } },
        ]);
        assert.deepEqual(log, ["start a", "end a", "start b", "end b"]);
      });
    },
  );

  test(
    "precedence: parallelToolNames, then needsApproval, then concurrencySafe, then readOnly",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const log: string[] = [];
        const box = recordingBox(log);
        await box.callMany(session, [
          { name: "write", args: { id: "w1", ms: 20 } },
          { name: "write", args: { id: "w2", ms: 5 } },
        ], { mode: "parallel", parallelToolNames: ["write"] });
        assert.deepEqual(log.slice(0, 2), ["start w1", "start w2"], "listed tools run together");
        log.length = 0;
        await box.callMany(session, [
          { name: "read", args: { id: "r1", ms: 20 } },
          { name: "read", args: { id: "r2", ms: 5 } },
        ], { mode: "parallel", parallelToolNames: [] });
        assert.deepEqual(log, ["start r1", "end r1", "start r2", "end r2"], "unlisted tools run alone");
        const approval = new ToolBox().register(
          tool({
            name: "ro_but_asks",
            description: "d",
            input: v.object({}),
            readOnly: true,
            needsApproval: true,
            run: () => 1,
          }),
          tool({ name: "writer_but_safe", description: "d", input: v.object({}), concurrencySafe: true, run: () => 1 }),
        );
        const ask = approval.get("ro_but_asks")!;
        const safe = approval.get("writer_but_safe")!;
        const { isConcurrencySafe } = await import("../../core/tool.ts");
        assert.equal(isConcurrencySafe(ask), false);
        assert.equal(isConcurrencySafe(safe), true);
      });
    },
  );

  test("maxConcurrency bounds the calls running at once", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      let running = 0;
      let peak = 0;
      const box = new ToolBox().register(tool({
        name: "count",
        description: "d",
        input: v.object({}),
        readOnly: true,
        run: async () => {
          peak = Math.max(peak, ++running);
          await delay(10);
          running--;
        },
      }));
      await box.callMany(session, Array.from({ length: 12 }, () => ({ name: "count", args: {} })), {
        mode: "parallel",
        maxConcurrency: 3,
      });
      assert.equal(peak, 3);
    });
  });

  test(
    "fail-fast in the middle of a segment cancels the running and the unstarted calls",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const log: string[] = [];
        const { results } = await recordingBox(log).callMany(session, [
          { name: "read", args: { id: "long", ms: 2_000 } },
          { name: "read", args: { id: "bad", ms: 20, fail: true } },
          { name: "read", args: { id: "queued", ms: 10 } },
          { name: "write", args: { id: "later", ms: 10 } },
        ], { mode: "parallel", failFast: true, maxConcurrency: 2 });
        assert.deepEqual(results.map((r) => r.status), ["cancelled", "error", "cancelled", "cancelled"]);
        assert.equal(results[1].error, "bad failed");
        assert.equal(results[0].attempts, 1);
        assert.match(results[0].error!, /fail-fast/);
        assert.equal(results[2].attempts, 0);
        assert.equal(results[3].attempts, 0);
        assert.match(results[3].error!, /Not run: an earlier call in this batch failed \(fail-fast\)/);
        assert.ok(!log.includes("start queued") && !log.includes("start later"));
        assert.ok(log.includes("abort long"));
      });
    },
  );

  test(
    "without failFast an error does not stop the batch; serial mode runs one by one",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const log: string[] = [];
        const { results } = await recordingBox(log).callMany(session, [
          { name: "read", args: { id: "a", ms: 5, fail: true } },
          { name: "read", args: { id: "b", ms: 5 } },
        ], { mode: "serial" });
        assert.deepEqual(results.map((r) => r.status), ["error", "success"]);
        assert.deepEqual(log, ["start a", "end a", "start b", "end b"]);
      });
    },
  );

  test("a caller's abort cancels the whole batch", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const controller = new AbortController();
      // Once the first call runs, not after a fixed 20 ms: a call stopped before it ran is not run at all (attempts
      // 0), and on a loaded machine (CI run ci18, Node 22) 20 ms came before the first call started.
      const log: string[] = [];
      const started = setInterval(() => {
        if (log.includes("start a")) {
          clearInterval(started);
          controller.abort();
        }
      }, 5);
      const { results } = await recordingBox(log).callMany(session, [
        { name: "read", args: { id: "a", ms: 2_000 } },
        { name: "write", args: { id: "b", ms: 10 } },
      ], { signal: controller.signal });
      clearInterval(started);
      assert.deepEqual(results.map((r) => [r.status, r.attempts]), [["cancelled", 1], ["cancelled", 0]]);
    });
  });

  test(
    "deferred images come after the batch as one message; bad images are tool errors",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session, dir) => {
        await writeFile(join(dir, "shot.bin"), PNG);
        await writeFile(join(dir, "fake.png"), "not really a png");
        const box = new ToolBox().register(tool({
          name: "show",
          description: "d",
          input: v.object({ source: v.string() }),
          readOnly: true,
          run: async ({ source }, ctx) => {
            await ctx.deferImage(source === "bytes" ? PNG : source, `from ${source}`);
            return "queued";
          },
        }));
        const batch = await box.callMany(session, [
          { name: "show", args: { source: "bytes" } },
          { name: "show", args: { source: "shot.bin" } },
          { name: "show", args: { source: "fake.png" } },
          { name: "show", args: { source: "../outside.png" } },
        ]);
        assert.deepEqual(batch.results.map((r) => r.status), ["success", "success", "error", "error"]);
        assert.match(batch.results[2].error!, /fake.png is not a PNG, JPEG, WebP or GIF/);
        assert.equal(batch.results[3].errorCode, "outside_workspace");
        assert.equal(batch.images.length, 2);
        assert.deepEqual(batch.images.map((i) => i.note), ["from bytes", "from shot.bin"]);
        assert.equal(batch.imageMessage!.content.length, 4);
        assert.deepEqual(session.takeDeferredImages(), [], "handed over once");
      });
    },
  );

  test("afterBatch hooks run once", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(tool({ name: "t", description: "d", input: v.object({}), run: () => 1 }));
      let runs = 0;
      box.afterBatch(({ results }) => {
        runs += results.length;
      });
      await box.callMany(session, [{ name: "t" }, { name: "t" }]);
      await box.callMany(session, [{ name: "t" }]);
      assert.equal(runs, 2);
    });
  });
});
