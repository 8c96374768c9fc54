// The confined primitive on its own: each operation acts in the folder it
// was given or not at all, names are single components, a folder swapped for
// a link is path_changed, cross-folder moves land where they should (and
// across areas say EXDEV), and the debris sweep removes only what dead
// processes left.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import {
  copyTreeConfined,
  createConfined,
  inFolder,
  mkdirsConfined,
  moveConfined,
  placeInFolder,
  removeTreeConfined,
  renameInFolder,
  tempName,
  tempNameOwner,
  unlinkConfined,
} from "../../internal/confined_fs.ts";
import { sweepDebris, sweepSessionTempDirs } from "../../policy/_debris.ts";
import { Workspace } from "../../policy/workspace.ts";

let root: string;
let W: string;
let outside: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-confined-")));
  W = path.join(root, "W");
  outside = path.join(root, "outside");
  await fsp.mkdir(W);
  await fsp.mkdir(outside);
});
after(() => fsp.rm(root, { recursive: true, force: true }));

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return "no error";
};

describe("confined operations", () => {
  test("the working folder is restored after every pinned block, also when it throws", { timeout: 60_000 }, () => {
    const home = process.cwd();
    inFolder(W, () => assert.equal(process.cwd(), W));
    assert.equal(process.cwd(), home);
    assert.throws(() =>
      inFolder(W, () => {
        throw new Error("inside");
      }), /inside/);
    assert.equal(process.cwd(), home);
  });

  test(
    "a folder that is a link now is path_changed, and nothing is created through it",
    { timeout: 60_000 },
    async () => {
      await fsp.symlink(outside, path.join(W, "swapped"));
      assert.equal(codeOf(() => createConfined(path.join(W, "swapped", "x.txt"))), "path_changed");
      assert.equal(codeOf(() => mkdirsConfined(path.join(W, "swapped", "d"), [W])), "path_changed");
      assert.equal(codeOf(() => unlinkConfined(path.join(W, "swapped", "x.txt"))), "path_changed");
      assert.deepEqual(await fsp.readdir(outside), []);
    },
  );

  test("names are single components", { timeout: 60_000 }, () => {
    assert.throws(() => renameInFolder(W, "../x", "y"), TypeError);
    assert.throws(() => renameInFolder(W, "x", "a/b"), TypeError);
    assert.throws(() => renameInFolder(W, "..", "y"), TypeError);
  });

  test("mkdirs never creates a root, and refuses paths outside the roots", { timeout: 60_000 }, async () => {
    const gone = path.join(root, "gone");
    assert.equal(codeOf(() => mkdirsConfined(path.join(gone, "a"), [gone])), "workspace_missing");
    await assert.rejects(fsp.lstat(gone), { code: "ENOENT" });
    assert.equal(codeOf(() => mkdirsConfined(path.join(outside, "a"), [W])), "outside_workspace");
    assert.equal(mkdirsConfined(path.join(W, "m", "n"), [W]), path.join(W, "m"));
    assert.equal(mkdirsConfined(path.join(W, "m", "n"), [W]), undefined);
  });

  test("a move across folders lands at its destination, replacing a file; across areas it is EXDEV", {
    timeout: 60_000,
  }, async () => {
    await fsp.mkdir(path.join(W, "p", "q", "r"), { recursive: true });
    await fsp.mkdir(path.join(W, "s", "t"), { recursive: true });
    await fsp.writeFile(path.join(W, "p", "q", "r", "f.txt"), "moved");
    await fsp.writeFile(path.join(W, "s", "t", "g.txt"), "old");
    moveConfined(path.join(W, "p", "q", "r", "f.txt"), path.join(W, "s", "t", "g.txt"), [W]);
    assert.equal(await fsp.readFile(path.join(W, "s", "t", "g.txt"), "utf8"), "moved");
    moveConfined(path.join(W, "s", "t", "g.txt"), path.join(W, "top.txt"), [W]);
    moveConfined(path.join(W, "top.txt"), path.join(W, "p", "q", "down.txt"), [W]);
    assert.equal(await fsp.readFile(path.join(W, "p", "q", "down.txt"), "utf8"), "moved");
    for (const dir of ["p", "p/q", "p/q/r", "s", "s/t", "."]) {
      assert.deepEqual((await fsp.readdir(path.join(W, dir))).filter((n) => n.startsWith(".toolfence-")), []);
    }
    const other = path.join(root, "T");
    await fsp.mkdir(other, { recursive: true });
    assert.equal(
      codeOf(() => moveConfined(path.join(W, "p", "q", "down.txt"), path.join(other, "x"), [W, other])),
      "EXDEV",
    );
  });

  test(
    "placed, never replacing: an entry that lies at the name is left alone, EEXIST",
    { timeout: 60_000 },
    async () => {
      const dir = path.join(W, "place");
      await fsp.mkdir(path.join(dir, "d1", "e"), { recursive: true });
      await fsp.mkdir(path.join(dir, "taken"));
      await fsp.writeFile(path.join(dir, "taken", "keep.txt"), "keep");
      await fsp.writeFile(path.join(dir, "f1"), "one");
      await fsp.symlink("f1", path.join(dir, "l1"));
      await fsp.writeFile(path.join(dir, "there"), "there");
      await fsp.mkdir(path.join(dir, "empty"));
      // A file, a link and a folder, onto a file, a link, an empty and a full folder.
      for (const from of ["f1", "l1", "d1"]) {
        for (const to of ["there", "l1", "empty", "taken"].filter((name) => name !== from)) {
          assert.equal(codeOf(() => placeInFolder(dir, from, to)), "EEXIST", `${from} onto ${to}`);
        }
      }
      assert.equal(await fsp.readFile(path.join(dir, "there"), "utf8"), "there");
      assert.equal(await fsp.readlink(path.join(dir, "l1")), "f1");
      assert.equal(await fsp.readFile(path.join(dir, "taken", "keep.txt"), "utf8"), "keep");
      assert.deepEqual(await fsp.readdir(path.join(dir, "empty")), []);
      // A free name takes each kind, under its new name only.
      placeInFolder(dir, "f1", "f2");
      placeInFolder(dir, "l1", "l2");
      placeInFolder(dir, "d1", "d2");
      assert.equal(await fsp.readFile(path.join(dir, "f2"), "utf8"), "one");
      assert.equal(await fsp.readlink(path.join(dir, "l2")), "f1");
      assert.ok((await fsp.lstat(path.join(dir, "d2", "e"))).isDirectory());
      assert.deepEqual((await fsp.readdir(dir)).sort(), ["d2", "empty", "f2", "l2", "taken", "there"]);
      // Across folders, the last step is the same placement.
      assert.equal(
        codeOf(() => moveConfined(path.join(dir, "f2"), path.join(dir, "taken", "keep.txt"), [W], { replace: false })),
        "EEXIST",
      );
      assert.equal(await fsp.readFile(path.join(dir, "taken", "keep.txt"), "utf8"), "keep");
      assert.equal(await fsp.readFile(path.join(dir, "f2"), "utf8"), "one");
      moveConfined(path.join(dir, "d2", "e"), path.join(dir, "taken", "e"), [W], { replace: false });
      assert.ok((await fsp.lstat(path.join(dir, "taken", "e"))).isDirectory());
    },
  );

  test(
    "a tree is removed and copied entry by entry, links kept as links and never followed",
    { timeout: 60_000 },
    async () => {
      await fsp.writeFile(path.join(outside, "keep.txt"), "keep");
      const tree = path.join(W, "tree");
      await fsp.mkdir(path.join(tree, "a", "b"), { recursive: true });
      await fsp.writeFile(path.join(tree, "a", "b", "f.txt"), "f");
      await fsp.chmod(path.join(tree, "a", "b", "f.txt"), 0o640);
      await fsp.symlink(outside, path.join(tree, "out"));
      const counts = await copyTreeConfined(tree, path.join(W, "tree2"), new AbortController().signal);
      assert.deepEqual(counts, { files: 1, directories: 3, links: 1, skipped: [] });
      assert.equal((await fsp.stat(path.join(W, "tree2", "a", "b", "f.txt"))).mode & 0o777, 0o640);
      assert.equal(await fsp.readlink(path.join(W, "tree2", "out")), outside);
      let removed = 0;
      await removeTreeConfined(tree, new AbortController().signal, () => removed++);
      assert.equal(removed, 4);
      await assert.rejects(fsp.lstat(tree), { code: "ENOENT" });
      assert.equal(await fsp.readFile(path.join(outside, "keep.txt"), "utf8"), "keep");
    },
  );
});

describe("debris", () => {
  async function deadPid(): Promise<number> {
    const child = spawn("true");
    await new Promise((resolve) => child.on("close", resolve));
    return child.pid!;
  }

  test("temp names carry the pid of their process", { timeout: 60_000 }, () => {
    assert.equal(tempNameOwner(tempName()), process.pid);
    assert.equal(tempNameOwner(".toolfence-0123456789abcdef.tmp"), undefined);
    assert.equal(tempNameOwner("notes.tmp"), undefined);
    // An entry in the middle of a move is the user's, not debris.
    assert.equal(tempNameOwner(`.toolfence-moving-${process.pid}-0123456789abcdef.tmp`), undefined);
  });

  test("the sweep removes files and folders of dead processes only, anywhere in the tree, never through links", {
    timeout: 60_000,
  }, async () => {
    const dir = path.join(root, "sweep");
    await fsp.mkdir(path.join(dir, "deep", "er"), { recursive: true });
    const dead = await deadPid();
    const sleeper = spawn("sleep", ["30"]);
    try {
      const hex = "0123456789abcdef";
      const deadFile = path.join(dir, "deep", "er", `.toolfence-${dead}-${hex}.tmp`);
      const deadFolder = path.join(dir, `.toolfence-${dead}-${hex.replace("0", "1")}.tmp`);
      const liveFile = path.join(dir, `.toolfence-${sleeper.pid}-${hex}.tmp`);
      const mine = path.join(dir, `.toolfence-${process.pid}-${hex}.tmp`);
      await fsp.writeFile(deadFile, "x");
      await fsp.mkdir(path.join(deadFolder, "inner"), { recursive: true });
      await fsp.writeFile(path.join(deadFolder, "inner", "f"), "x");
      await fsp.writeFile(liveFile, "x");
      await fsp.writeFile(mine, "x");
      const outsideDebris = path.join(outside, `.toolfence-${dead}-${hex}.tmp`);
      await fsp.writeFile(outsideDebris, "x");
      await fsp.symlink(outside, path.join(dir, "link-out"));
      const report = sweepDebris(dir);
      assert.deepEqual(report.removed.sort(), [deadFile, deadFolder].sort());
      assert.equal(report.complete, true);
      for (const kept of [liveFile, mine, outsideDebris]) await fsp.lstat(kept);
      const ws = new Workspace(dir);
      assert.deepEqual(ws.swept?.removed, []);
      assert.equal(new Workspace(dir, { sweepDebris: false }).swept, undefined);
    } finally {
      sleeper.kill();
    }
  });

  test("the sweep is bounded", { timeout: 60_000 }, async () => {
    const dir = path.join(root, "bounded");
    await fsp.mkdir(dir);
    for (let i = 0; i < 20; i++) await fsp.writeFile(path.join(dir, `f${i}`), "");
    assert.equal(sweepDebris(dir, { entries: 5, millis: 1000 }).complete, false);
  });

  test("session temp dirs of dead processes are swept, others kept", { timeout: 60_000 }, async () => {
    const parent = path.join(root, "tmp-parent");
    await fsp.mkdir(parent);
    const dead = await deadPid();
    await fsp.mkdir(path.join(parent, `toolfence-${dead}-AbC123`, "x"), { recursive: true });
    await fsp.mkdir(path.join(parent, `toolfence-${process.pid}-XyZ789`));
    await fsp.mkdir(path.join(parent, "toolfence-other"));
    assert.deepEqual(sweepSessionTempDirs(parent), [path.join(parent, `toolfence-${dead}-AbC123`)]);
    assert.deepEqual((await fsp.readdir(parent)).sort(), [`toolfence-${process.pid}-XyZ789`, "toolfence-other"]);
  });
});

describe("a deleted working folder", () => {
  test(
    "confined operations still work when the process's working folder was deleted",
    { timeout: 60_000 },
    async () => {
      const gone = path.join(root, "cwd-gone");
      await fsp.mkdir(gone);
      const home = process.cwd();
      process.chdir(gone);
      try {
        await fsp.rmdir(gone);
        mkdirsConfined(path.join(W, "after-cwd-gone"), [W]);
        assert.ok((await fsp.stat(path.join(W, "after-cwd-gone"))).isDirectory());
      } finally {
        process.chdir(home);
      }
    },
  );
});
