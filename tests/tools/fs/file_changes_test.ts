// filesystemChanges of every built-in write tool, compared with the disk
// (read independently with node:fs before and after each call): write_file,
// edit_file, apply_patch, move, copy, delete and mkdir, on success and on
// failure, and over a seeded random sequence of calls.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { openFence } from "../../../policy/fence.ts";
import type { ToolResult } from "../../../core/result.ts";
import { assertChangesMatch, diskState } from "../_file_changes.ts";

let root: string;
let workdir: string;
let session: Session;
const box = new ToolBox().withDefaults("fs", "patch");

async function reset(): Promise<void> {
  // The workspace folder itself stays: a session refuses a replaced one.
  for (const name of await fsp.readdir(workdir)) {
    await fsp.rm(path.join(workdir, name), { recursive: true, force: true });
  }
  await fsp.mkdir(path.join(workdir, "src", "lib"), { recursive: true });
  await fsp.writeFile(path.join(workdir, "README.md"), "# title\n\nbody\n");
  await fsp.writeFile(path.join(workdir, "src", "main.ts"), "export const a = 1;\nexport const b = 2;\n");
  await fsp.writeFile(path.join(workdir, "src", "lib", "util.ts"), "export function f() {}\n");
  await fsp.writeFile(path.join(workdir, "run.sh"), "#!/bin/sh\necho hi\n");
  await fsp.chmod(path.join(workdir, "run.sh"), 0o751);
  await fsp.writeFile(path.join(workdir, "bin.dat"), new Uint8Array([0, 255, 1, 254, 0, 13, 10]));
  await fsp.symlink("src/main.ts", path.join(workdir, "link"));
}

before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-changes-")));
  workdir = path.join(root, "W");
  await fsp.mkdir(workdir);
  session = new Session({ workspace: workdir, autoConfirm: true, fence: openFence() });
});

after(async () => {
  await session.close();
  await fsp.rm(root, { recursive: true, force: true });
});

/** Runs one call and checks its reported changes against the disk; returns the result. */
async function checked(name: string, args: Record<string, unknown>, status = "success"): Promise<ToolResult> {
  const disk = diskState(workdir);
  const result = await box.call(session, name, args);
  assert.equal(result.status, status, `${name} ${JSON.stringify(args)}: ${result.error}`);
  assert.ok(Array.isArray(result.filesystemChanges));
  assertChangesMatch(result.filesystemChanges, disk, diskState(workdir));
  return result;
}

function kinds(result: ToolResult): string[] {
  return result.filesystemChanges.map((c) => `${c.change} ${c.path}${c.from ? ` <- ${c.from}` : ""}`);
}

describe("filesystemChanges of the write tools match the disk", { concurrency: false }, () => {
  test(
    "write_file: a new file in new folders, a replacement keeping its mode, a refused write",
    { timeout: 60_000 },
    async () => {
      await reset();
      const created = await checked("write_file", { path: "docs/guide/intro.md", content: "hello\n" });
      assert.deepEqual(kinds(created), ["created docs", "created docs/guide", "created docs/guide/intro.md"]);
      const replaced = await checked("write_file", { path: "run.sh", content: "#!/bin/sh\necho bye\n" });
      assert.deepEqual(kinds(replaced), ["modified run.sh"]);
      assert.equal(replaced.filesystemChanges[0].before?.mode, 0o751);
      assert.equal(replaced.filesystemChanges[0].after?.mode, 0o751);
      const refused = await checked(
        "write_file",
        { path: "README.md", content: "x", expected_sha256: "0".repeat(64) },
        "error",
      );
      assert.deepEqual(refused.filesystemChanges, []);
    },
  );

  test("edit_file: one modification; a failed edit reports nothing", { timeout: 60_000 }, async () => {
    await reset();
    const edit = await checked("edit_file", { path: "src/main.ts", old_text: "a = 1", new_text: "a = 10" });
    assert.deepEqual(kinds(edit), ["modified src/main.ts"]);
    const none = await checked("edit_file", { path: "src/main.ts", old_text: "absent", new_text: "x" }, "error");
    assert.deepEqual(none.filesystemChanges, []);
  });

  test("apply_patch: every file of a patch, created, modified, deleted and moved", { timeout: 60_000 }, async () => {
    await reset();
    const patch = [
      "*** Begin Patch",
      "*** Add File: src/new/added.ts",
      "+export const added = true;",
      "*** Update File: README.md",
      "@@",
      " # title",
      "-",
      "+(edited)",
      "*** Delete File: src/lib/util.ts",
      "*** Update File: src/main.ts",
      "*** Move to: src/moved/main.ts",
      "@@",
      "-export const b = 2;",
      "+export const b = 3;",
      "*** End Patch",
      "",
    ].join("\n");
    const result = await checked("apply_patch", { patch });
    assert.deepEqual(kinds(result).sort(), [
      "created src/moved",
      "created src/new",
      "created src/new/added.ts",
      "deleted src/lib/util.ts",
      "modified README.md",
      "moved src/moved/main.ts <- src/main.ts",
    ]);
    const unified = "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n # title\n-(edited)\n+again\n body\n";
    assert.deepEqual(kinds(await checked("apply_patch", { patch: unified })), ["modified README.md"]);
    const misfit = "--- a/README.md\n+++ b/README.md\n@@ -1,1 +1,1 @@\n-not there\n+x\n";
    assert.deepEqual((await checked("apply_patch", { patch: misfit }, "error")).filesystemChanges, []);
  });

  test(
    "move: a file, a folder with everything in it, onto an existing file, into a folder",
    { timeout: 60_000 },
    async () => {
      await reset();
      assert.deepEqual(kinds(await checked("move", { src: "README.md", dst: "docs/README.md" })), [
        "created docs",
        "moved docs/README.md <- README.md",
      ]);
      assert.deepEqual(kinds(await checked("move", { src: "src", dst: "code" })), [
        "moved code <- src",
        "moved code/lib <- src/lib",
        "moved code/lib/util.ts <- src/lib/util.ts",
        "moved code/main.ts <- src/main.ts",
      ]);
      assert.deepEqual(kinds(await checked("move", { src: "run.sh", dst: "bin.dat" })), [
        "deleted bin.dat",
        "moved bin.dat <- run.sh",
      ]);
      assert.deepEqual(kinds(await checked("move", { src: "link", dst: "docs" })), ["moved docs/link <- link"]);
    },
  );

  test("copy: a file, a folder, onto an existing file", { timeout: 60_000 }, async () => {
    await reset();
    assert.deepEqual(kinds(await checked("copy", { src: "run.sh", dst: "run2.sh" })), ["created run2.sh"]);
    assert.deepEqual(kinds(await checked("copy", { src: "src", dst: "backup/src" })), [
      "created backup",
      "created backup/src",
      "created backup/src/lib",
      "created backup/src/lib/util.ts",
      "created backup/src/main.ts",
    ]);
    assert.deepEqual(kinds(await checked("copy", { src: "bin.dat", dst: "README.md" })), ["modified README.md"]);
  });

  test("delete: a file, a symlink as a link, a folder with every file under it", { timeout: 60_000 }, async () => {
    await reset();
    assert.deepEqual(kinds(await checked("delete", { path: "README.md" })), ["deleted README.md"]);
    assert.deepEqual(kinds(await checked("delete", { path: "link" })), ["deleted link"]);
    assert.deepEqual(kinds(await checked("delete", { path: "src", recursive: true })), [
      "deleted src/main.ts",
      "deleted src/lib/util.ts",
      "deleted src/lib",
      "deleted src",
    ]);
    const refused = await checked("delete", { path: "nothing" }, "error");
    assert.deepEqual(refused.filesystemChanges, []);
  });

  test("mkdir: every folder it made; an existing folder reports nothing", { timeout: 60_000 }, async () => {
    await reset();
    assert.deepEqual(kinds(await checked("mkdir", { path: "a/b/c" })), ["created a", "created a/b", "created a/b/c"]);
    assert.deepEqual((await checked("mkdir", { path: "a/b" })).filesystemChanges, []);
  });

  test("read-only tools report no changes", { timeout: 60_000 }, async () => {
    await reset();
    for (const [name, args] of [["read_file", { path: "README.md" }], ["list_dir", { path: "." }]] as const) {
      assert.deepEqual((await checked(name, args)).filesystemChanges, []);
    }
  });

  test("generative: 100 seeded random calls, each one's changes match the disk; the checkpoint restores all", {
    timeout: 60_000,
  }, async () => {
    await reset();
    const initial = diskState(workdir);
    const checkpoint = session.createCheckpoint("generative");
    let seed = 0x5eed;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const names = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g", "src/main.ts", "README.md", "run.sh"];
    const pick = () => names[next(names.length)];
    let changed = 0;
    for (let i = 0; i < 100; i++) {
      const op = next(7);
      const disk = diskState(workdir);
      const args: Record<string, unknown> = op === 0
        ? { path: pick(), content: `content ${i}\n`.repeat(next(4)) }
        : op === 1
        ? { path: pick(), old_text: "content", new_text: `edited ${i}` }
        : op === 2 || op === 3
        ? { src: pick(), dst: pick() }
        : op === 4
        ? { path: pick(), recursive: next(2) === 0 }
        : op === 5
        ? { path: `d/m${next(3)}` }
        : { patch: `*** Begin Patch\n*** Add File: p${i}.txt\n+line ${i}\n*** End Patch\n` };
      const name = ["write_file", "edit_file", "move", "copy", "delete", "mkdir", "apply_patch"][op];
      const result = await box.call(session, name, args);
      assertChangesMatch(result.filesystemChanges, disk, diskState(workdir));
      if (result.status !== "success") {
        assert.deepEqual(result.filesystemChanges, [], `${name} failed: nothing changed`);
      }
      if (result.filesystemChanges.length > 0) changed++;
    }
    assert.ok(changed >= 30, `only ${changed} of 100 calls changed something`);
    await session.restoreCheckpoint(checkpoint.id);
    assert.deepEqual(Object.fromEntries(diskState(workdir)), Object.fromEntries(initial));
  });
});
