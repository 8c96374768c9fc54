// Several edits of one file in one parallel batch: edit tools are not
// concurrency-safe, so callMany runs them one at a time, in declaration order,
// and every edit lands. A control run forces edit_file to run concurrently
// (parallelToolNames): the edits then collide, and the per-path lock around the
// check-then-write step must turn every collision into a reported hash conflict,
// never a success whose edit is lost.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import "../../tools/mod.ts";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";

const EDITS = 16;

let dir: string;
let session: Session;
let box: ToolBox;
before(async () => {
  dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-paredit-")));
  session = new Session({ workspace: dir, autoConfirm: true });
  box = new ToolBox().withDefaults("fs", "patch");
});
after(async () => {
  await session.close();
  await fsp.rm(dir, { recursive: true, force: true });
});

const lines = (tag: string) => Array.from({ length: EDITS }, (_, i) => `${tag} line ${i}`).join("\n") + "\n";

describe("edits in a parallel batch", () => {
  test("two edits of one file in one parallel batch both apply", { timeout: 60_000 }, async () => {
    await fsp.writeFile(path.join(dir, "two.txt"), "alpha\nbeta\ngamma\n");
    const { results } = await box.callMany(session, [
      { name: "read_file", args: { path: "two.txt" } },
      { name: "edit_file", args: { path: "two.txt", old_text: "alpha", new_text: "ALPHA" } },
      { name: "edit_file", args: { path: "two.txt", old_text: "gamma", new_text: "GAMMA" } },
      { name: "read_file", args: { path: "two.txt" } },
    ], { mode: "parallel" });
    assert.deepEqual(results.map((r) => r.status), ["success", "success", "success", "success"]);
    assert.equal(await fsp.readFile(path.join(dir, "two.txt"), "utf8"), "ALPHA\nbeta\nGAMMA\n");
    // The reads on either side of the edits see the file before and after them.
    assert.match(JSON.stringify(results[0].output), /alpha/);
    assert.match(JSON.stringify(results[3].output), /ALPHA[^]*GAMMA/);
  });

  test(
    `${EDITS} edits of one file, interleaved with reads, all land in declaration order`,
    { timeout: 60_000 },
    async () => {
      const file = path.join(dir, "many.txt");
      await fsp.writeFile(file, lines("old"));
      const calls = Array.from({ length: EDITS }, (_, i) => [
        { name: "edit_file", args: { path: "many.txt", old_text: `old line ${i}\n`, new_text: `new line ${i}\n` } },
        { name: "read_file", args: { path: "many.txt", offset: i, limit: 1 } },
      ]).flat();
      // A chain: the second edit only matches once the first has run.
      calls.push(
        { name: "edit_file", args: { path: "many.txt", old_text: "new line 0\n", new_text: "first\n" } },
        { name: "edit_file", args: { path: "many.txt", old_text: "first\n", new_text: "second\n" } },
      );
      const { results } = await box.callMany(session, calls, { mode: "parallel", maxConcurrency: 8 });
      assert.deepEqual(results.filter((r) => r.status !== "success").map((r) => r.error), []);
      assert.equal(await fsp.readFile(file, "utf8"), lines("new").replace("new line 0\n", "second\n"));

      // Control: edit_file forced concurrency-safe.
      await fsp.writeFile(file, lines("old"));
      const forced = await box.callMany(
        session,
        calls.slice(0, EDITS * 2).filter((c) => c.name === "edit_file"),
        { mode: "parallel", maxConcurrency: EDITS, parallelToolNames: ["edit_file"] },
      );
      const content = await fsp.readFile(file, "utf8");
      const landed =
        Array.from({ length: EDITS }, (_, i) => content.includes(`new line ${i}\n`)).filter(Boolean).length;
      const reportedOk = forced.results.filter((r) => r.status === "success").length;
      console.log(
        `parallel edits: ${EDITS + 2} serialised edits all landed; control with edit_file forced concurrent: ` +
          `${reportedOk} reported success, ${landed} landed, ${reportedOk - landed} lost`,
      );
      // Forced to run together, the edits collide, but under the path lock a collision is a
      // hash conflict the model is told about, never a success that is silently lost.
      assert.equal(reportedOk, landed);
    },
  );
});
