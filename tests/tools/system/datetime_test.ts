import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ToolBox } from "../../../toolbox.ts";
import { systemTools, zonedIso } from "../../../tools/system/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...systemTools());

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
