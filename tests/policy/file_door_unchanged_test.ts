// FileDoor.unchangedSince tells a reader that holds a file open whether the file changed while it was read, from an
// lstat of its real path against the stat of the open descriptor: only the very file (device and inode) with the
// same size and times is unchanged; a rewrite, an append, a file renamed over it, a removal, a symlink in its place
// (even to the file itself) and a folder swapped in are changes. Paths outside the workspace or hidden are refused.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Session } from "../../policy/session.ts";
import { parsePolicyFile } from "../../policy/config/load.ts";
import { PolicyRules } from "../../policy/config/rules.ts";

let root: string;
let ws: string;
let session: Session;

before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-unchanged-")));
  ws = path.join(root, "ws");
  await fsp.mkdir(ws);
  const policyFile = path.join(root, "policy.json");
  const policy = JSON.stringify({ paths: { deny: ["secret.txt"] } });
  await fsp.writeFile(policyFile, policy);
  session = new Session({
    workspace: ws,
    rules: PolicyRules.fromLayers([parsePolicyFile(policyFile, policy, "cli")], ws),
  });
});
after(async () => {
  await session.close();
  await fsp.rm(root, { recursive: true, force: true });
});

// The stat of the file at `name` as a reader holding it open sees it, and a way to ask the door about it later.
async function opened(name: string, content = "one\n"): Promise<{ real: string; unchanged: () => boolean }> {
  const real = path.join(ws, name);
  await fsp.writeFile(real, content);
  const fd = fs.openSync(real, "r");
  const stat = fs.fstatSync(fd);
  fs.closeSync(fd);
  return { real, unchanged: () => session.policy.files.unchangedSince(real, stat) };
}

describe("FileDoor.unchangedSince", () => {
  test("the same file, untouched, is unchanged", { timeout: 60_000 }, async () => {
    const f = await opened("same.txt");
    assert.equal(f.unchanged(), true);
  });

  test("an append, a same-size rewrite with a new time, a removal are changes", { timeout: 60_000 }, async () => {
    const appended = await opened("appended.txt");
    await fsp.appendFile(appended.real, "two\n");
    assert.equal(appended.unchanged(), false);

    const rewritten = await opened("rewritten.txt");
    await fsp.writeFile(rewritten.real, "ONE\n");
    // A rewrite within the file clock's tick may keep every time: the door is told by a time set apart.
    const later = new Date(Date.now() + 5_000);
    await fsp.utimes(rewritten.real, later, later);
    assert.equal(rewritten.unchanged(), false);

    const removed = await opened("removed.txt");
    await fsp.rm(removed.real);
    assert.equal(removed.unchanged(), false);
  });

  test(
    "another file renamed over it, a symlink to it, a folder in its place are changes",
    { timeout: 60_000 },
    async () => {
      const replaced = await opened("replaced.txt");
      await fsp.writeFile(path.join(ws, "next.txt"), "one\n");
      await fsp.rename(path.join(ws, "next.txt"), replaced.real);
      assert.equal(replaced.unchanged(), false);

      // The file moved away and a link to it put in its place: the lstat finds the link, never the file behind it.
      const linked = await opened("linked.txt");
      await fsp.rename(linked.real, path.join(ws, "moved.txt"));
      await fsp.symlink("moved.txt", linked.real);
      assert.equal(linked.unchanged(), false);

      const folder = await opened("folder.txt");
      await fsp.rm(folder.real);
      await fsp.mkdir(folder.real);
      assert.equal(folder.unchanged(), false);
    },
  );

  test("a path outside the workspace or hidden by the policy is refused", { timeout: 60_000 }, async () => {
    const outside = path.join(root, "outside.txt");
    await fsp.writeFile(outside, "x\n");
    const stat = fs.lstatSync(outside);
    assert.throws(() => session.policy.files.unchangedSince(outside, stat), { code: "outside_workspace" });
    const secret = path.join(ws, "secret.txt");
    await fsp.writeFile(secret, "x\n");
    assert.throws(() => session.policy.files.unchangedSince(secret, fs.lstatSync(secret)), {
      code: "permission_denied",
    });
  });
});
