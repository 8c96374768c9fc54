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
