import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ToolBox } from "../../../toolbox.ts";
import { systemTools } from "../../../tools/system/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...systemTools());

describe("sleep", () => {
  test("waits the given time", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const started = Date.now();
      const result = await box.call(session, "sleep", { seconds: 0.2 });
      assert.equal(result.status, "success");
      assert.ok(Date.now() - started >= 190);
    });
  });

  test("a cancel ends it at once", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 100);
      const result = await box.call(session, "sleep", { seconds: 60 }, { signal: controller.signal });
      assert.equal(result.status, "cancelled");
      assert.ok(!result.workerStillRunning);
      assert.ok(Date.now() - started < 1000);
    });
  });

  test("a call timeout ends it at once, and nothing keeps running", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const result = await box.call(session, "sleep", { seconds: 60 }, { timeoutMs: 100 });
      assert.equal(result.status, "timed_out");
      assert.ok(!result.workerStillRunning);
    });
  });

  test("more than ten minutes is refused", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      assert.equal((await box.call(session, "sleep", { seconds: 601 })).errorCode, "invalid_arguments");
    });
  });
});

test("sleep reports progress once a second, growing to the whole wait", { timeout: 60_000 }, async () => {
  await withSession(async (session) => {
    const seen: { message: string; fraction?: number }[] = [];
    const result = await box.call(session, "sleep", { seconds: 2.5 }, { onProgress: (e) => void seen.push(e) });
    assert.equal(result.status, "success");
    assert.deepEqual(seen.map((e) => e.message), ["slept 1 s of 2.5 s", "slept 2 s of 2.5 s"]);
    assert.ok(
      seen.every((e, i) => e.fraction! > 0 && e.fraction! < 1 && (i === 0 || e.fraction! > seen[i - 1].fraction!)),
    );
  });
});
