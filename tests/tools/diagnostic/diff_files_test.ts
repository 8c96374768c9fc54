import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { diagnosticTools, type DiffFilesResult } from "../../../tools/diagnostic/mod.ts";
import { withSession } from "../../core/_helpers.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";

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

// A racer (tests/_link_swapper.ts) swaps a.txt for a link to a file outside the workspace and back. readTextFile
// opened the resolved path, which followed the link swapped in after the resolution: the outside file's line came back
// in the diff within a few hundred calls.
describe("diff_files against a file swapped for a link during the call", () => {
  test("never the text of the file the link leads to", { timeout: 60_000 }, async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "toolfence-diff-outside-"));
    const secret = path.join(outside, "secret.txt");
    await writeFile(secret, "DIFFSECRET\n");
    try {
      await withSession(async (session, dir) => {
        await writeFile(path.join(dir, "a.txt"), "inside\n");
        await writeFile(path.join(dir, "b.txt"), "other\n");
        let calls = 0;
        let answered = 0;
        await whileSwappedForLink(dir, "a.txt", secret, async () => {
          const deadline = performance.now() + 4_000;
          while (performance.now() < deadline) {
            const result = await box.call(session, "diff_files", { a: "a.txt", b: "b.txt" });
            const text = JSON.stringify(result);
            assert.ok(!text.includes("DIFFSECRET"), `call ${calls} returned the file outside: ${text}`);
            calls++;
            if (result.status === "success") answered++;
          }
        });
        // The race must have let calls through, and refused some, or it proved nothing.
        assert.ok(answered > 0 && answered < calls, `${answered} of ${calls} calls answered`);
      });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
