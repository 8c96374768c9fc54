import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ToolBox } from "../../../toolbox.ts";
import { systemTools } from "../../../tools/system/mod.ts";
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
