import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ToolResult } from "../../../core/result.ts";
import { denyAllHost } from "../../../policy/hosts.ts";
import { ok, unchanged } from "./_helpers.ts";
import { at, l, useToolLayout, withHost } from "./_tool_layout.ts";
import { IS_DENO } from "../../_runtime.ts";

useToolLayout();

describe("delete", () => {
  test("a file asks; denial leaves it", { timeout: 60_000 }, async () => {
    await withHost(denyAllHost());
    const result = await unchanged(l.root, () => l.call("delete", { path: "inside.txt" }));
    assert.equal(result.errorCode, "permission_denied");
  });

  test("a folder that is not empty needs recursive, then goes with all its entries", { timeout: 60_000 }, async () => {
    const refused = await unchanged(l.root, () => l.call("delete", { path: "sub" }));
    assert.equal(refused.errorCode, "directory_not_empty");
    await fsp.mkdir(at("sub", "inner"));
    await fsp.symlink(path.join(l.outside, "dir"), at("sub", "inner", "out"));
    const out = ok(await l.call("delete", { path: "sub", recursive: true }));
    assert.equal(out.deleted, "directory");
    assert.equal(out.entries, 3);
    assert.equal(fs.existsSync(at("sub")), false);
    assert.equal(fs.existsSync(path.join(l.outside, "dir", "s.txt")), true, "links inside are not followed");
    ok(await l.call("mkdir", { path: "empty" }));
    assert.equal(ok(await l.call("delete", { path: "empty" })).deleted, "directory");
  });

  test(
    "a real `deno run` with only --allow-read and --allow-write for the workspace deletes a folder and lives",
    { timeout: 60_000, skip: IS_DENO ? false : "needs deno" },
    async () => {
      await fsp.mkdir(at("sub", "inner"));
      await fsp.writeFile(at("sub", "inner", "x.txt"), "x\n");
      const probe = fileURLToPath(new URL("./_delete_probe.ts", import.meta.url));
      const flags = [`--allow-read=${l.workdir}`, `--allow-write=${l.workdir}`];
      const payload = JSON.stringify({ workdir: l.workdir, args: { path: "sub", recursive: true } });
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          "deno",
          ["run", "--no-prompt", ...flags, probe, payload],
          { timeout: 60_000 },
          (error, out, stderr) => error ? reject(new Error(`the probe died: ${stderr}`)) : resolve(out),
        );
      });
      const result = JSON.parse(stdout) as ToolResult;
      assert.equal(result.status, "success", result.error);
      assert.deepEqual(result.output, { path: at("sub"), deleted: "directory", entries: 3 });
      assert.equal(fs.existsSync(at("sub")), false);
    },
  );

  test(
    "a deletion the operating system stops halfway says what it deleted and what remains",
    { timeout: 60_000 },
    async (t) => {
      await fsp.mkdir(at("sub", "locked"));
      await fsp.writeFile(at("sub", "locked", "kept.txt"), "kept\n");
      for (let i = 0; i < 20; i++) await fsp.writeFile(at("sub", `f${i}.txt`), `${i}\n`);
      // An immutable folder: not even root may delete what is in it.
      try {
        execFileSync("chattr", ["+i", at("sub", "locked")], { stdio: "ignore" });
      } catch {
        t.skip("needs chattr +i (root, and a file system that supports it)");
        return;
      }
      try {
        const result = await l.call("delete", { path: "sub", recursive: true });
        assert.equal(result.errorCode, "os_permission_denied");
        const remaining = fs.readdirSync(at("sub"), { recursive: true }).length;
        // Entries in readdir order: the locked folder may come first, and then nothing went.
        if (remaining === 23) assert.doesNotMatch(result.error!, /were deleted/);
        else {assert.match(
            result.error!,
            new RegExp(`; ${23 - remaining} of its 23 entries were deleted, ${remaining} remain`),
          );}
        assert.ok(fs.existsSync(at("sub", "locked", "kept.txt")));
      } finally {
        execFileSync("chattr", ["-i", at("sub", "locked")]);
      }
    },
  );

  test("the workspace itself and missing paths are refused", { timeout: 60_000 }, async () => {
    const root = await unchanged(l.root, () => l.call("delete", { path: ".", recursive: true }));
    assert.equal(root.errorCode, "permission_denied");
    assert.match(root.error!, /root of the workspace/);
    assert.equal((await l.call("delete", { path: "nope.txt" })).errorCode, "not_found");
  });
});
