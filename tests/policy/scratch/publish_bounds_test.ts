// What a scratch copy's changes may cost the server and the workspace: bytes cost a command nothing to make (a
// sparse file takes no disk), but `Scratch.changes()`, which the model's `publish` tool runs, read and hashed them
// all, and a publication wrote them densely into the workspace. Before, 8 sparse files of 1 GiB made by a command
// in the copy had 8 GiB hashed at every `publish` call (34 s of the server's thread), and once approved written out.
// Now new or changed files are hashed within PUBLISH_HASH_BUDGET, and a file past it is refused before anyone is
// asked; what the copy wrote itself, and what was hashed before and kept its stat, costs nothing again.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { createScratch, PUBLISH_HASH_BUDGET, PUBLISH_HASH_FILES } from "../../../policy/scratch/scratch.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { ToolBox } from "../../../toolbox.ts";
import { publishTool } from "../../../tools/scratch/publish.ts";
import { RACY_MS } from "../../../core/settled_stat.ts";
import { fingerprint } from "./_tree_fingerprint.ts";

const noBwrap = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;

let root: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-scratch-bounds-")));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

let counter = 0;
async function workspace(): Promise<string> {
  const workdir = path.join(root, `case-${counter++}`, "W");
  await fsp.mkdir(workdir, { recursive: true });
  await fsp.writeFile(path.join(workdir, "a.txt"), "alpha\n");
  return workdir;
}

describe("a publication's cost", { timeout: 240_000 }, () => {
  test(
    "sparse files a command makes past the budget are not hashed, and publishing them is refused before anyone is asked",
    { timeout: 120_000, skip: noBwrap },
    async () => {
      const workdir = await workspace();
      const original = await fingerprint(workdir);
      let asked = 0;
      const host = callbackHost({
        choose: <T extends string>(request: { defaultChoice: T }) => Promise.resolve(request.defaultChoice),
        confirm: () => {
          asked++;
          return Promise.resolve(true);
        },
      });
      const scratch = await createScratch(workdir, { session: { host, sandbox: "required" } });
      try {
        const box = new ToolBox().withDefaults("cmd").register(publishTool(scratch, { digest: scratch.digest }));
        const half = PUBLISH_HASH_BUDGET / 2 + 1;
        // Three files of half the budget and a byte, no disk used: more than the budget whatever the order.
        const made = await box.call(scratch.session, "bash", {
          command: `truncate -s ${half} big1 big2 big3 && echo small > ok.txt`,
        });
        assert.equal(made.status, "success", `${made.error}\n${JSON.stringify(made.output)}`);
        asked = 0;
        const { changes } = await scratch.changes();
        const unknown = changes.filter((c) => c.after?.sha256 === null).map((c) => c.path);
        assert.ok(unknown.length >= 2, `past the budget, hashed anyway: ${JSON.stringify(changes)}`);
        assert.equal(changes.find((c) => c.path === "ok.txt")?.after?.sha256?.length, 64);
        const refused = await box.call(scratch.session, "publish", {});
        assert.equal(refused.status, "error");
        assert.equal(refused.errorCode, "too_large", refused.error);
        assert.match(refused.error ?? "", /big\d/);
        assert.equal(asked, 0, "a person was asked about a publication that cannot be made");
        // Nor is its diff made: the diff reads each file's content (up to 512 KiB each) before it is cut.
        const preview = await box.call(scratch.session, "publish", { preview: true });
        assert.equal(preview.errorCode, "too_large", preview.error);
        assert.deepEqual(await fingerprint(workdir), original);
        // Scratch.publish refuses them as well, changing nothing.
        await assert.rejects(
          scratch.publish(changes),
          (error: Error & { code?: string }) => error.code === "too_large",
        );
        assert.deepEqual(await fingerprint(workdir), original);
        // Looks again, once the files' stats are settled, keep the hashes found: all three become known, and the
        // publication is still refused for what it would write.
        await new Promise((resolve) => setTimeout(resolve, RACY_MS + 100));
        let latest = changes;
        for (let look = 0; look < 3; look++) latest = (await scratch.changes()).changes;
        assert.ok(latest.every((c) => c.after?.sha256 !== null), JSON.stringify(latest));
        await assert.rejects(scratch.publish(latest), (error: Error & { code?: string }) => error.code === "too_large");
        assert.deepEqual(await fingerprint(workdir), original);
        // What was hashed is still published on its own.
        const small = await box.call(scratch.session, "publish", { paths: ["ok.txt"] });
        assert.equal(small.status, "success", small.error);
        assert.equal(await fsp.readFile(path.join(workdir, "ok.txt"), "utf8"), "small\n");
        await assert.rejects(fsp.lstat(path.join(workdir, "big1")));
      } finally {
        await scratch.dispose();
      }
    },
  );

  test(
    "a copied file renamed or given many names costs its bytes once: its hash stays known",
    { timeout: 120_000 },
    async () => {
      const workdir = await workspace();
      // A quarter of the budget, hard-linked 16 times in the copy: four budgets' worth of names.
      await fsp.writeFile(path.join(workdir, "data.bin"), new Uint8Array(PUBLISH_HASH_BUDGET / 4).fill(7));
      const scratch = await createScratch(workdir, { session: { sandbox: "off" } });
      try {
        const sha = scratch.baseline("data.bin")?.sha256;
        for (let i = 0; i < 16; i++) {
          await fsp.link(path.join(scratch.root, "data.bin"), path.join(scratch.root, `n${i}`));
        }
        await fsp.rename(path.join(scratch.root, "data.bin"), path.join(scratch.root, "moved.bin"));
        const { changes } = await scratch.changes();
        assert.equal(changes.length, 17);
        for (const change of changes) assert.equal(change.after?.sha256, sha, change.path);
        assert.ok(changes.some((c) => c.change === "moved" && c.from === "data.bin" && c.path === "moved.bin"));
        // Asked again, nothing is read past the budget either.
        const again = await scratch.changes();
        for (const change of again.changes) assert.equal(change.after?.sha256, sha, change.path);
      } finally {
        await scratch.dispose();
      }
    },
  );

  test(
    "many small files a command makes: at most PUBLISH_HASH_FILES are hashed in one look, the server's event loop runs meanwhile, and those not hashed are not published",
    { timeout: 180_000 },
    async () => {
      const workdir = await workspace();
      const original = await fingerprint(workdir);
      const scratch = await createScratch(workdir, { session: { autoConfirm: true, sandbox: "off" } });
      try {
        const box = new ToolBox().register(publishTool(scratch, { digest: scratch.digest }));
        const count = PUBLISH_HASH_FILES + 500;
        // Made behind the tools' back (as a command's change report is bounded on its own, see
        // workspace_scan_bounds_test.ts): only changes() looks at them here.
        await fsp.mkdir(path.join(scratch.root, "m"));
        for (let i = 0; i < count; i++) await fsp.writeFile(path.join(scratch.root, "m", String(i)), "");
        await fsp.writeFile(path.join(scratch.root, "ok.txt"), "small\n");
        // Before, the walk held the event loop from start to end: not one tick of a 5 ms timer ran during it.
        let ticks = 0;
        const timer = setInterval(() => ticks++, 5);
        let changes;
        try {
          ({ changes } = await scratch.changes());
        } finally {
          clearInterval(timer);
        }
        assert.ok(ticks > 0, "the event loop never ran while the copy was compared");
        const files = changes.filter((c) => c.path.startsWith("m/"));
        assert.equal(files.length, count);
        const hashed = files.filter((c) => c.after?.sha256 !== null).length;
        assert.ok(hashed <= PUBLISH_HASH_FILES, `${hashed} new files hashed`);
        await assert.rejects(scratch.publish(files), (error: Error & { code?: string }) => error.code === "too_large");
        assert.deepEqual(await fingerprint(workdir), original);
        // Only the requested paths are hashed: ok.txt is published whatever the copy holds elsewhere.
        const small = await box.call(scratch.session, "publish", { paths: ["ok.txt"] });
        assert.equal(small.status, "success", small.error);
        assert.equal(await fsp.readFile(path.join(workdir, "ok.txt"), "utf8"), "small\n");
      } finally {
        await scratch.dispose();
      }
    },
  );

  test(
    "a path longer than the system takes, made in the copy, is left out as unpublishable, the rest is published, and the copy is removed whole",
    { timeout: 60_000 },
    async () => {
      const workdir = await workspace();
      const scratch = await createScratch(workdir, { session: { autoConfirm: true, sandbox: "off" } });
      try {
        // 30 nested folders of 200 letters: 6,000 bytes, past PATH_MAX.
        execFileSync("perl", [
          "-e",
          "for my $i (1..30) { mkdir('a' x 200) or die; chdir('a' x 200) or die } open(my $f, '>', 'deep.txt') or die",
        ], { cwd: scratch.root });
        await fsp.writeFile(path.join(scratch.root, "a.txt"), "changed\n");
        const { changes, unpublishable } = await scratch.changes();
        assert.equal(unpublishable.length, 1, JSON.stringify(unpublishable));
        assert.ok(changes.some((c) => c.path === "a.txt" && c.change === "modified"));
        const box = new ToolBox().register(publishTool(scratch, { digest: scratch.digest }));
        const published = await box.call(scratch.session, "publish", { paths: ["a.txt"] });
        assert.equal(published.status, "success", published.error);
        assert.equal(await fsp.readFile(path.join(workdir, "a.txt"), "utf8"), "changed\n");
      } finally {
        // Its removal reaches that deep too: before, dispose failed there and left the copy on the disk.
        await scratch.dispose();
      }
      await assert.rejects(fsp.lstat(scratch.root));
    },
  );

  test(
    "a file swapped after the person's answer for a larger one is refused before a byte more is written",
    { timeout: 120_000 },
    async () => {
      const workdir = await workspace();
      const original = await fingerprint(workdir);
      let scratchRoot = "";
      const host = callbackHost({
        choose: <T extends string>(request: { defaultChoice: T }) => Promise.resolve(request.defaultChoice),
        // The person says yes; meanwhile the file they saw becomes a sparse 4 GiB one (no disk used).
        confirm: () => {
          fs.truncateSync(path.join(scratchRoot, "new.txt"), 4 * 1024 ** 3);
          return Promise.resolve(true);
        },
      });
      const scratch = await createScratch(workdir, { session: { host, sandbox: "off" } });
      scratchRoot = scratch.root;
      // The largest file seen in the workspace (temp files of the publication included) while it runs.
      let largest = 0;
      const sampler = setInterval(() => {
        for (const name of fs.readdirSync(workdir)) {
          try {
            largest = Math.max(largest, fs.lstatSync(path.join(workdir, name)).size);
          } catch {
            // gone meanwhile
          }
        }
      }, 5);
      try {
        await fsp.writeFile(path.join(scratch.root, "new.txt"), "new\n");
        const box = new ToolBox().register(publishTool(scratch, { digest: scratch.digest }));
        const result = await box.call(scratch.session, "publish", {});
        assert.equal(result.errorCode, "publish_failed", result.error);
        assert.deepEqual(await fingerprint(workdir), original);
        assert.ok(largest < 1 << 20, `${largest} bytes written into the workspace`);
      } finally {
        clearInterval(sampler);
        await scratch.dispose();
      }
    },
  );
});
