import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ToolBox } from "../../../toolbox.ts";
import { systemTools, zonedIso } from "../../../tools/system/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...systemTools());
const here = path.dirname(fileURLToPath(import.meta.url));

describe("system_info", () => {
  test("reports os, release, arch, time zone, locale and runtime", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const result = await box.call(session, "system_info", {});
      assert.equal(result.status, "success");
      const info = result.output as Record<string, unknown>;
      assert.equal(info.os, process.platform);
      assert.equal(info.arch, process.arch);
      assert.equal(info.time_zone, Intl.DateTimeFormat().resolvedOptions().timeZone);
      assert.equal(typeof info.locale, "string");
      assert.equal(typeof info.release, "string");
      assert.match(String(info.runtime), /^(deno|node) \d+\./);
    });
  });

  test(
    "under a Deno fence without --allow-sys the release is left out, without failing",
    { timeout: 60_000 },
    async () => {
      const repo = path.resolve(here, "../../..");
      const output = await new Promise<string>((resolve, reject) => {
        execFile(
          "deno",
          ["run", "--no-prompt", `--allow-read=${repo}`, path.join(here, "_narrow_probe.ts")],
          { cwd: repo },
          (error, stdout, stderr) => error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        );
      });
      const info = JSON.parse(output);
      assert.equal(info.release, undefined);
      assert.equal(info.os, process.platform);
    },
  );
});

describe("datetime", () => {
  test("gives ISO 8601 with the offset of the zone", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const before = Date.now();
      const result = await box.call(session, "datetime", { time_zone: "Asia/Kolkata" });
      const out = result.output as { iso: string; time_zone: string; utc: string; unix_ms: number; weekday: string };
      assert.match(out.iso, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+05:30$/);
      assert.equal(out.time_zone, "Asia/Kolkata");
      assert.ok(Math.abs(Date.parse(out.iso) - before) < 5000);
      assert.equal(Date.parse(out.iso), Date.parse(out.utc));
      assert.equal(Date.parse(out.utc), out.unix_ms);
      const local = (await box.call(session, "datetime", {})).output as { iso: string; time_zone: string };
      assert.equal(local.time_zone, Intl.DateTimeFormat().resolvedOptions().timeZone);
      assert.match(local.iso, /[+-]\d\d:\d\d$/);
    });
  });

  test("zonedIso handles zero, negative and half-hour offsets", { timeout: 60_000 }, () => {
    assert.equal(zonedIso(new Date(0), "UTC"), "1970-01-01T00:00:00.000+00:00");
    assert.equal(zonedIso(new Date(Date.UTC(2024, 6, 1, 12)), "America/New_York"), "2024-07-01T08:00:00.000-04:00");
    assert.equal(
      zonedIso(new Date(Date.UTC(2024, 0, 1, 0, 0, 0, 7)), "Asia/Kathmandu"),
      "2024-01-01T05:45:00.007+05:45",
    );
  });

  test("an unknown zone is a clear error", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const result = await box.call(session, "datetime", { time_zone: "Mars/Olympus" });
      assert.equal(result.errorCode, "invalid_time_zone");
      assert.match(result.error!, /Mars\/Olympus/);
    });
  });
});

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
