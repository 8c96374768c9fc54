// A workspace folder deleted or replaced while the session runs (issue 21,
// deliverable 5): every file tool answers workspace_missing and nothing
// re-creates the folder or writes into its replacement.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { openFence } from "../../../policy/fence.ts";
import { fsTools } from "../../../tools/fs/fs_tools.ts";
import { patchTools } from "../../../tools/patch/patch_tools.ts";
import { tempFolder } from "./_helpers.ts";

let root: string;
before(async () => {
  root = await tempFolder();
});
after(() => fsp.rm(root, { recursive: true, force: true }));

const box = new ToolBox().register(...fsTools(), ...patchTools());
const CALLS: [string, Record<string, unknown>][] = [
  ["write_file", { path: "a/b.txt", content: "x" }],
  ["write_file", { path: "top.txt", content: "x" }],
  ["mkdir", { path: "x/y" }],
  ["mkdir", { path: "." }],
  ["edit_file", { path: "f.txt", old_text: "f", new_text: "g" }],
  ["apply_patch", { patch: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n" }],
  ["copy", { src: "f.txt", dst: "g.txt" }],
  ["move", { src: "f.txt", dst: "g.txt" }],
  ["delete", { path: "f.txt" }],
  ["read_file", { path: "f.txt" }],
];

describe("a vanished workspace", () => {
  for (const how of ["deleted", "replaced by a new folder", "replaced by a file"]) {
    test(`${how}: every file tool says workspace_missing and nothing is re-created`, { timeout: 60_000 }, async () => {
      const workdir = path.join(root, how.replaceAll(" ", "-"));
      await fsp.mkdir(workdir);
      await fsp.writeFile(path.join(workdir, "f.txt"), "f");
      const session = new Session({ workspace: workdir, autoConfirm: true, fence: openFence() });
      await fsp.rename(workdir, workdir + ".away");
      if (how === "replaced by a new folder") await fsp.mkdir(workdir);
      if (how === "replaced by a file") await fsp.writeFile(workdir, "");
      for (const [name, args] of CALLS) {
        const result = await box.call(session, name, args);
        assert.equal(result.errorCode, "workspace_missing", `${name} ${JSON.stringify(args)}: ${result.error}`);
      }
      await session.close();
      if (how === "deleted") await assert.rejects(fsp.lstat(workdir), { code: "ENOENT" });
      if (how === "replaced by a new folder") assert.deepEqual(await fsp.readdir(workdir), []);
      assert.deepEqual(await fsp.readdir(workdir + ".away"), ["f.txt"]);
    });
  }
});
