import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import { denyAllHost } from "../../../policy/hosts.ts";
import { ok, unchanged } from "./_helpers.ts";
import { at, l, useToolLayout, withHost } from "./_tool_layout.ts";

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
