import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { autoHost, denyAllHost } from "../../../policy/hosts.ts";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { fsTools } from "../../../tools/fs/mod.ts";
import { ok, unchanged } from "./_helpers.ts";
import { at, l, useToolLayout, withHost } from "./_tool_layout.ts";
import { tmpfsMountable } from "../../_tmpfs.ts";

useToolLayout();

describe("copy", () => {
  test("copies a file with its mode, and a folder with its files, links and folders", { timeout: 60_000 }, async () => {
    await fsp.chmod(at("inside.txt"), 0o640);
    const file = ok(await l.call("copy", { src: "inside.txt", dst: "copy.txt" }));
    assert.equal(file.files, 1);
    assert.equal((await fsp.stat(at("copy.txt"))).mode & 0o777, 0o640);
    await fsp.symlink("deep.txt", at("sub", "rel-link"));
    execFileSync("mkfifo", [at("sub", "pipe")]);
    const tree = ok(await l.call("copy", { src: "sub", dst: "sub-copy" }));
    assert.deepEqual(
      { files: tree.files, directories: tree.directories, links: tree.links, skipped: tree.skipped },
      { files: 1, directories: 1, links: 1, skipped: ["pipe"] },
    );
    assert.equal(await fsp.readlink(at("sub-copy", "rel-link")), "deep.txt");
    ok(await l.call("copy", { src: "inside.txt", dst: "sub" }));
    assert.ok(fs.existsSync(at("sub", "inside.txt")), "an existing folder receives the copy");
  });

  test("replacing asks; impossible copies change nothing", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("other.txt"), "other\n");
    await withHost(denyAllHost());
    await fsp.writeFile(at("other.txt"), "other\n");
    const denied = await unchanged(l.root, () => l.call("copy", { src: "inside.txt", dst: "other.txt" }));
    assert.equal(denied.errorCode, "permission_denied");
    const intoItself = await unchanged(l.root, () => l.call("copy", { src: "sub", dst: "sub/again" }));
    assert.equal(intoItself.errorCode, "invalid_destination");
    const folderOntoFile = await unchanged(l.root, () => l.call("copy", { src: "sub", dst: "other.txt" }));
    assert.equal(folderOntoFile.errorCode, "already_exists");
    execFileSync("mkfifo", [at("pipe")]);
    const fifo = await unchanged(l.root, () => l.call("copy", { src: "pipe", dst: "pipe2" }));
    assert.equal(fifo.errorCode, "not_regular_file");
  });
});

describe("copy on a small disk", { skip: tmpfsMountable() }, () => {
  // A command's sparse files cost it no disk, and a copy writes every byte of them. Before, copying a folder of three
  // sparse files of 64 MiB (4 KiB of disk) wrote 192 MiB of a 256 MiB disk, leaving 64 MiB; a thousand such files
  // (a command makes them in milliseconds) would fill any disk.
  test("a copy that would take the disk below half of its free space is refused before it writes", {
    timeout: 60_000,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-copy-disk-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256m", "tmpfs", dir]);
    const session = new Session({ workspace: dir, host: autoHost() });
    try {
      fs.mkdirSync(path.join(dir, "d"));
      for (const name of ["a", "b", "c"]) {
        fs.writeFileSync(path.join(dir, "d", name), "");
        fs.truncateSync(path.join(dir, "d", name), 64 << 20);
      }
      fs.writeFileSync(path.join(dir, "small.txt"), "small\n");
      const box = new ToolBox().register(...fsTools());
      const refused = await box.call(session, "copy", { src: "d", dst: "e" });
      assert.equal(refused.errorCode, "no_space", refused.error);
      assert.match(refused.error ?? "", /Copying d would take the disk below half of its free space/);
      assert.ok(!fs.existsSync(path.join(dir, "e")));
      const used = Number(execFileSync("df", ["--output=used", "-B1", dir]).toString().split("\n")[1]);
      assert.ok(used < 16 << 20, `the disk holds ${used} bytes`);
      // A copy within the room still goes.
      assert.equal((await box.call(session, "copy", { src: "small.txt", dst: "copy.txt" })).status, "success");
    } finally {
      await session.close();
      execFileSync("umount", ["-l", dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
