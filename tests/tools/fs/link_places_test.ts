// A symlink copied or moved to another place keeps its text, and a relative text leads elsewhere from another
// folder: a/b/link -> ../x leads to a/x, and copied to the top it leads to ../x, outside the workspace. The door
// judges every link a copy or a move places, where it will lie, as a read of the path it leads to: a link that
// would lead outside, to a denied path, or nowhere the policy can follow is refused and nothing changes.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fsTools } from "../../../tools/fs/mod.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { seededRandom } from "../../_seeded_random.ts";
import { exited } from "../../_exited.ts";
import { makeLayout, ok, treeFingerprint, unchanged } from "./_helpers.ts";

const OUTSIDE = "OUTSIDE_X_SECRET";

async function layout(deny: string[] = []) {
  const options = deny.length === 0 ? {} : {
    rules: PolicyRules.fromLayers([
      parsePolicyFile("/p/toolfence.json", JSON.stringify({ paths: { deny } }), "project"),
    ], "/"),
  };
  const l = await makeLayout(fsTools(), options);
  // `x` beside the workspace, and `a/x` inside: what a/b/link -> ../x leads to from each depth.
  await fsp.writeFile(path.join(l.root, "x"), OUTSIDE + "\n");
  await fsp.mkdir(path.join(l.workdir, "a", "b"), { recursive: true });
  await fsp.writeFile(path.join(l.workdir, "a", "x"), "inside a/x\n");
  await fsp.symlink("../x", path.join(l.workdir, "a", "b", "link"));
  // The layout's own links that lead outside or nowhere go: every link left leads inside.
  for (const name of ["link-out", "dir-out", "dangling", "loop-a", "loop-b"]) await fsp.rm(path.join(l.workdir, name));
  return l;
}

describe("links copied or moved to another place", () => {
  test("a relative link that would lead outside from its new place is refused, alone or in a folder", {
    timeout: 60_000,
  }, async () => {
    const l = await layout();
    try {
      // From a/b, ../../x leads to an x in the workspace (there is none); from b, to the x outside.
      await fsp.symlink("../../x", path.join(l.workdir, "a", "b", "up"));
      for (
        const [tool, src, dst] of [
          ["copy", "a/b/link", "link"],
          ["move", "a/b/link", "link"],
          ["copy", "a/b", "b"],
          ["move", "a/b", "b"],
          ["copy", "a/b", "."],
          ["move", "a/b", "sub/.."],
        ]
      ) {
        const result = await unchanged(l.root, () => l.call(tool, { src, dst }));
        assert.equal(result.errorCode, "symlink_target", `${tool} ${src} ${dst}: ${result.status} ${result.error}`);
        assert.doesNotMatch(JSON.stringify(result), new RegExp(OUTSIDE));
      }
      // Where the link still leads inside, it is placed as it is.
      ok(await l.call("copy", { src: "a/b/link", dst: "sub/link" }));
      assert.equal(await fsp.readlink(path.join(l.workdir, "sub", "link")), "../x");
      ok(await l.call("move", { src: "a/b", dst: "sub/b" }));
      assert.equal(await fsp.readlink(path.join(l.workdir, "sub", "b", "link")), "../x");
    } finally {
      await l.cleanup();
    }
  });

  test("a link whose text goes through the new name of the tree is judged once the tree is there", {
    timeout: 60_000,
  }, async () => {
    const l = await layout();
    try {
      // In t, s leads to the workspace (t/..) and l through ../n: while n does not exist that is n/x, inside; once
      // t lies at n, n/s/.. is the folder above the workspace.
      await fsp.mkdir(path.join(l.workdir, "t"));
      await fsp.symlink("..", path.join(l.workdir, "t", "s"));
      await fsp.symlink("../n/s/../x", path.join(l.workdir, "t", "l"));
      for (const tool of ["copy", "move"]) {
        const result = await unchanged(l.root, () => l.call(tool, { src: "t", dst: "n" }));
        assert.equal(result.errorCode, "symlink_target", `${tool}: ${result.status} ${result.error}`);
      }
    } finally {
      await l.cleanup();
    }
  });

  test("a link that would reach a denied path from its new place is refused, and the message does not name it", {
    timeout: 60_000,
  }, async () => {
    const l = await layout(["**/secrets/**"]);
    try {
      await fsp.mkdir(path.join(l.workdir, "secrets"));
      await fsp.writeFile(path.join(l.workdir, "secrets", "key.txt"), "KEY");
      await fsp.mkdir(path.join(l.workdir, "a", "b", "c"));
      // From a/b/c it leads to a/secrets/key.txt, which does not exist; from x/y, to the denied secrets/key.txt.
      await fsp.symlink("../../secrets/key.txt", path.join(l.workdir, "a", "b", "c", "l"));
      for (const [tool, src, dst] of [["copy", "a/b/c/l", "x/y/l"], ["move", "a/b/c", "x/c"]]) {
        const result = await unchanged(l.root, () => l.call(tool, { src, dst }));
        assert.equal(result.errorCode, "symlink_target", `${tool}: ${result.error}`);
        assert.doesNotMatch(result.error!, /secrets/);
      }
    } finally {
      await l.cleanup();
    }
  });

  test("generated trees, copies and moves: every link in the workspace still leads inside", {
    timeout: 120_000,
  }, async () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
      const l = await layout();
      try {
        await fsp.rm(path.join(l.workdir, "a"), { recursive: true });
        const folders = ["p", "p/q", "p/q/r", "s", "s/t"];
        for (const folder of folders) await fsp.mkdir(path.join(l.workdir, folder), { recursive: true });
        const texts = (depth: number) => [
          "../".repeat(depth) + "inside.txt",
          "../".repeat(depth + 1) + "x",
          "../".repeat(Math.max(depth - 1, 0)) + "inside.txt",
          path.join(l.workdir, "inside.txt"),
          "q/../../inside.txt",
          "nothing",
        ];
        let made = 0;
        while (made < 8) {
          const folder = pick(folders);
          const at = path.join(l.workdir, folder, `l${made}`);
          await fsp.symlink(pick(texts(folder.split("/").length)), at);
          if (leadsInside(l.workdir, at)) made++;
          else await fsp.unlink(at);
        }
        for (let step = 0; step < 25; step++) {
          const entries = listAll(l.workdir).filter((e) => !e.startsWith("sub") && e !== "inside.txt");
          if (entries.length === 0) break;
          const src = pick(entries);
          const dst = pick(["", ...folders, "sub", "n/m"].filter((f) => !(f + "/").startsWith(src + "/")));
          const args = { src, dst: path.posix.join(dst, `e${step}`) };
          const tool = pick(["copy", "move"]);
          const before = await treeFingerprint(l.root);
          const result = await l.call(tool, args);
          if (result.status !== "success") {
            assert.equal(await treeFingerprint(l.root), before, `seed ${seed}: a refused ${tool} changed nothing`);
            assert.equal(result.errorCode, "symlink_target", `seed ${seed} ${tool} ${JSON.stringify(args)}`);
          }
          for (const entry of listAll(l.workdir)) {
            const at = path.join(l.workdir, entry);
            if (!fs.lstatSync(at).isSymbolicLink()) continue;
            assert.ok(
              leadsInside(l.workdir, at),
              `seed ${seed}, ${tool} ${JSON.stringify(args)}: ${entry} -> ${fs.readlinkSync(at)} leads outside`,
            );
          }
        }
      } finally {
        await l.cleanup();
      }
    }
  });

  test("a link whose text is swapped while it is copied: what is placed is what was judged", {
    timeout: 120_000,
  }, async () => {
    const l = await layout();
    // From a/b and from c/d alike, ../../inside.txt leads inside and ../../../x outside.
    const link = path.join(l.workdir, "a", "b", "link");
    await fsp.rm(link);
    await fsp.symlink("../../inside.txt", link);
    const racer = spawn("perl", [
      "-e",
      `my ($at) = @ARGV; while (1) { for my $t ("../../inside.txt", "../../../x") {
         symlink($t, "$at.next"); rename("$at.next", $at); } }`,
      link,
    ], { stdio: "ignore" });
    const racerGone = exited(racer);
    const stopRacer = async () => {
      racer.kill("SIGKILL");
      await racerGone;
    };
    try {
      let placed = 0;
      for (let i = 0; i < 60; i++) {
        const src = i % 2 === 0 ? "a/b/link" : "a/b";
        const result = await l.call("copy", { src, dst: `c/d${i}` });
        if (result.status !== "success") {
          assert.ok(["symlink_target", "path_changed", "not_found"].includes(result.errorCode!), result.error);
          continue;
        }
        placed++;
        const copied = path.join(l.workdir, "c", `d${i}`, ...(src === "a/b" ? ["link"] : []));
        const text = fs.readlinkSync(copied);
        assert.equal(text, "../../inside.txt", `copy ${i} placed ${text}`);
      }
      // On a loaded machine every copy of the race may meet a swap and be refused (60 of 60 were once): that a refusal
      // is not all the tool does is shown by a copy once the racer is gone.
      await stopRacer();
      // The racer may have been killed between its symlink and its rename.
      await fsp.rm(`${link}.next`, { force: true });
      await fsp.rm(link);
      await fsp.symlink("../../inside.txt", link);
      const steady = await l.call("copy", { src: "a/b", dst: "c/steady" });
      assert.equal(steady.status, "success", `${placed} of 60 copies placed during the race; then ${steady.error}`);
      assert.equal(fs.readlinkSync(path.join(l.workdir, "c", "steady", "link")), "../../inside.txt");
    } finally {
      await stopRacer();
      await l.cleanup();
    }
  });
});

// Every entry below `root`, relative, links not followed.
function listAll(root: string): string[] {
  const found: string[] = [];
  const visit = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const name = path.posix.join(rel, entry.name);
      found.push(name);
      if (entry.isDirectory()) visit(name);
    }
  };
  visit("");
  return found;
}

// Whether the link `at` leads inside `root` as the kernel follows it; a dangling one by its text from its folder.
function leadsInside(root: string, at: string): boolean {
  let real: string;
  try {
    real = fs.realpathSync(at);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return false;
    real = path.resolve(fs.realpathSync(path.dirname(at)), fs.readlinkSync(at));
  }
  return real === root || real.startsWith(root + "/");
}
