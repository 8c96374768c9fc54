import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { isRename, scanWorkspace, type StatEntry } from "../../internal/workspace_changes.ts";
import { whileSwappedForLink } from "../_link_swapper.ts";

const file: StatEntry = {
  type: "file",
  mode: 0o644,
  size: 2,
  ino: 7,
  links: 1,
  birth: 1000,
  mtime: 1000,
  ctime: 1000,
  key: "k",
};
const [A, B] = ["a".repeat(64), "b".repeat(64)];

describe("isRename", () => {
  test("the same inode, type, size, times and content is the file moved", { timeout: 60_000 }, () => {
    // A rename moves ctime (and so the key), nothing else of these.
    assert.equal(isRename(file, { ...file, key: "other" }, null, null), true);
    assert.equal(isRename(file, { ...file, key: "other" }, A, A), true);
  });

  test("a reused inode with another birth or modification time is another file", { timeout: 60_000 }, () => {
    assert.equal(isRename(file, { ...file, birth: 2000 }, null, null), false);
    assert.equal(isRename(file, { ...file, mtime: 2000 }, null, null), false);
  });

  test("a reused inode with the same times (one tick of the file clock) and other bytes is another file", {
    timeout: 60_000,
  }, () => {
    assert.equal(isRename(file, file, A, B), false);
  });

  test("without birth times, the modification time and the content decide", { timeout: 60_000 }, () => {
    const old = { ...file, birth: null };
    assert.equal(isRename(old, { ...old, key: "other" }, null, null), true);
    assert.equal(isRename(old, { ...file, key: "other" }, null, null), true);
    assert.equal(isRename(old, { ...old, mtime: 1001 }, null, null), false);
    assert.equal(isRename(old, old, A, B), false);
  });

  test("another inode, type or size is never the file moved", { timeout: 60_000 }, () => {
    assert.equal(isRename(file, { ...file, ino: 8 }, A, A), false);
    assert.equal(isRename(file, { ...file, type: "symlink" }, A, A), false);
    assert.equal(isRename(file, { ...file, size: 3 }, A, A), false);
  });
});

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("scans and real renames", () => {
  test("a file renamed is recognised; a file deleted and another made in its inode is not", {
    timeout: 60_000,
  }, async () => {
    const root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-renames-")));
    try {
      let reused = 0;
      // Linux hands a freed inode number to the next file made, most of the time: each round deletes one file and
      // makes another of the same size at once (within one tick of the file clock, mostly), as `rm a && echo o > b`
      // does, and renames a third.
      for (let round = 0; round < 40; round++) {
        fs.writeFileSync(path.join(root, "gone.txt"), "b\n");
        fs.writeFileSync(path.join(root, "kept.txt"), "k\n");
        const before = scanWorkspace(root);
        fs.unlinkSync(path.join(root, "gone.txt"));
        fs.writeFileSync(path.join(root, "made.txt"), "o\n");
        fs.renameSync(path.join(root, "kept.txt"), path.join(root, "renamed.txt"));
        const after = scanWorkspace(root);
        const gone = before.entries.get("gone.txt")!;
        const made = after.entries.get("made.txt")!;
        if (made.ino === gone.ino) reused++;
        assert.equal(isRename(gone, made, sha256("b\n"), sha256("o\n")), false, `round ${round}: not gone.txt moved`);
        const kept = before.entries.get("kept.txt")!;
        assert.equal(isRename(kept, after.entries.get("renamed.txt")!, sha256("k\n"), sha256("k\n")), true);
        fs.unlinkSync(path.join(root, "made.txt"));
        fs.unlinkSync(path.join(root, "renamed.txt"));
      }
      // What the rounds try happened (ext4 and tmpfs, the file systems of CI and of /tmp, reuse inodes at once).
      assert.ok(reused > 0, "no inode was reused in 40 rounds");
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });
});

describe("scanWorkspace: a folder swapped for a link while it is scanned", () => {
  test("never lists the folder a link leads to", { timeout: 60_000 }, async () => {
    const base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-scan-race-")));
    try {
      const root = path.join(base, "W");
      const outside = path.join(base, "outside");
      await fsp.mkdir(path.join(root, "sub"), { recursive: true });
      await fsp.mkdir(outside);
      await fsp.writeFile(path.join(outside, "outside-secret-name.txt"), "x");
      const seen = await whileSwappedForLink(root, "sub", outside, () => {
        const found = new Set<string>();
        for (let i = 0; i < 5000; i++) {
          for (const rel of scanWorkspace(root).entries.keys()) if (rel.includes("outside-secret")) found.add(rel);
        }
        return Promise.resolve([...found]);
      });
      assert.deepEqual(seen, []);
    } finally {
      await fsp.rm(base, { recursive: true, force: true });
    }
  });
});
