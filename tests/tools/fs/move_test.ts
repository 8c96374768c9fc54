import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { ok, unchanged } from "./_helpers.ts";
import { asked, at, l, person, useToolLayout, withHost } from "./_tool_layout.ts";

useToolLayout();

describe("move", () => {
  test("renames, moves into an existing folder, and creates missing parents", { timeout: 60_000 }, async () => {
    const renamed = ok(await l.call("move", { src: "inside.txt", dst: "renamed.txt" }));
    assert.deepEqual(renamed, { from: at("inside.txt"), to: at("renamed.txt"), type: "file", replaced: false });
    ok(await l.call("move", { src: "renamed.txt", dst: "sub" }));
    assert.equal(await fsp.readFile(at("sub", "renamed.txt"), "utf8"), "inside\n");
    ok(await l.call("move", { src: "sub", dst: "deeper/still/sub2" }));
    assert.ok(fs.existsSync(at("deeper/still/sub2/deep.txt")));
  });

  test("replacing a file asks; refusals and impossible moves change nothing", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("other.txt"), "other\n");
    await withHost(person("deny"));
    await fsp.writeFile(at("other.txt"), "other\n");
    const denied = await unchanged(l.root, () => l.call("move", { src: "inside.txt", dst: "other.txt" }));
    assert.equal(denied.errorCode, "permission_denied");
    await fsp.mkdir(at("sub", "nested"));
    const intoItself = await unchanged(l.root, () => l.call("move", { src: "sub", dst: "sub/nested" }));
    assert.equal(intoItself.errorCode, "invalid_destination");
    await fsp.mkdir(at("box"));
    await fsp.mkdir(at("box", "sub"));
    const ontoFolder = await unchanged(l.root, () => l.call("move", { src: "sub", dst: "box" }));
    assert.equal(ontoFolder.errorCode, "already_exists");
    const missing = await unchanged(l.root, () => l.call("move", { src: "ghost", dst: "x" }));
    assert.equal(missing.errorCode, "not_found");
    const ontoLink = await unchanged(l.root, () => l.call("move", { src: "inside.txt", dst: "link-in" }));
    assert.equal(ontoLink.errorCode, "invalid_destination");
  });

  test("a person's 'once' replaces the file", { timeout: 60_000 }, async () => {
    await withHost(person("once"));
    await fsp.writeFile(at("other.txt"), "other\n");
    const out = ok(await l.call("move", { src: "inside.txt", dst: "other.txt" }));
    assert.equal(out.replaced, true);
    assert.equal(await fsp.readFile(at("other.txt"), "utf8"), "inside\n");
    assert.equal(asked.length, 2, "moving the source away and replacing the target both ask");
  });

  test("moves across file systems (the temp dir on another device)", { timeout: 60_000 }, async (t) => {
    const shm = "/dev/shm";
    if (!fs.existsSync(shm) || fs.statSync(shm).dev === fs.statSync(l.workdir).dev) {
      t.skip("needs /dev/shm on a different device than the temp folder");
      return;
    }
    const ws = await fsp.mkdtemp(path.join(shm, "toolfence-ws-"));
    const session = new Session({ workspace: ws, autoConfirm: true });
    try {
      const { path: temp } = ok(await l.box.call(session, "temp_dir", {})) as { path: string };
      await fsp.mkdir(path.join(temp, "tree"));
      await fsp.writeFile(path.join(temp, "tree", "f.txt"), "across\n");
      await fsp.symlink("f.txt", path.join(temp, "tree", "l"));
      ok(await l.box.call(session, "move", { src: path.join(temp, "tree"), dst: "tree" }));
      assert.equal(await fsp.readFile(path.join(ws, "tree", "f.txt"), "utf8"), "across\n");
      assert.equal(await fsp.readlink(path.join(ws, "tree", "l")), "f.txt");
      assert.equal(fs.existsSync(path.join(temp, "tree")), false);
    } finally {
      await session.close();
      await fsp.rm(ws, { recursive: true, force: true });
    }
  });
});
