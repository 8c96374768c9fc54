import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { diagnosticTools, type DiffFilesResult } from "../../../tools/diagnostic/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...diagnosticTools());

describe("diff_files", () => {
  test("a unified diff, empty when equal", { timeout: 90_000 }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, "v"));
      await writeFile(path.join(dir, "v", "a.txt"), "one\ntwo\nthree\n");
      await writeFile(path.join(dir, "v", "b.txt"), "one\nTWO\nthree\nfour\n");
      await writeFile(path.join(dir, "v", "c.txt"), "one\ntwo\nthree\n");
      const same = (await box.call(session, "diff_files", { a: "v/a.txt", b: "v/c.txt" })).output as DiffFilesResult;
      assert.deepEqual(same, { diff: "", identical: true, added: 0, removed: 0 });
      const changed = (await box.call(session, "diff_files", { a: "v/a.txt", b: "v/b.txt" }))
        .output as DiffFilesResult;
      assert.equal(changed.identical, false);
      assert.deepEqual([changed.added, changed.removed], [2, 1]);
      assert.equal(
        changed.diff,
        "--- v/a.txt\n+++ v/b.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n three\n+four\n",
      );
      assert.equal(
        (await box.call(session, "diff_files", { a: "v/a.txt", b: "../x" })).errorCode,
        "outside_workspace",
      );
    });
  });
});
