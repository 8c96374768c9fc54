// Protected paths a sandboxed command makes, by any route (written, made in a folder moved or copied in, linked,
// nine folders down), never stay in the workspace, and the ones that were there stay as they were: after each of
// seeded random scripts, a walk of the disk with node:fs finds the same protected paths as at the start. The sandbox
// finds them in the session's listing of the workspace (the change report's, kept by the folder watch), not by a
// walk of its own, so this checks that listing against the disk.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { Session } from "../../../policy/session.ts";
import { Workspace } from "../../../policy/workspace.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { isProtectedPath } from "../../../policy/protected_paths.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, failedOutput, okOutput, randomScripts, type ScriptOp } from "./_helpers.ts";
import { tmpfsMountable } from "../../_tmpfs.ts";

const box = cmdBox();
const skip = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;

// The protected paths on disk, as the sandbox's walk finds them: at every depth, never below node_modules or git's
// object store, never through a link.
function protectedOnDisk(root: string): string[] {
  const found: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (isProtectedPath(child)) found.push(child);
      const inGit = path.basename(rel) === ".git" && ["objects", "refs", "logs", "lfs"].includes(entry.name);
      if (entry.isDirectory() && entry.name !== "node_modules" && !inGit) walk(child);
    }
  };
  walk("");
  return found.sort();
}

const OPS: readonly ScriptOp[] = [
  (x, _y, tag) => `mkdir -p $(dirname ${x}) && echo ${tag} > ${x}`,
  (x) => `mkdir -p ${x}`,
  (x) => `rm -rf ${x}`,
  (x, y) => `mkdir -p $(dirname ${y}) && mv ${x} ${y}`,
  (x, y) => `mkdir -p $(dirname ${y}) && cp -r ${x} ${y}`,
  (x, y) => `mkdir -p $(dirname ${x}) && ln -sfn ${y} ${x}`,
  (x, y) => `mkdir -p $(dirname ${y}) && ln ${x} ${y}`,
  (x) => `mkdir -p ${x}/sub/.git/hooks && echo h > ${x}/sub/.git/hooks/pre-commit`,
  (x) => `(cd $(dirname ${x}) && mkdir -p t/.husky && mv t $(basename ${x}))`,
];

const NAMES = [
  "pkg/.npmrc",
  "pkg",
  "a/.git",
  "a/.git/hooks/pre-push",
  "a",
  ".vscode/settings.json",
  "b/c/.husky/x",
  "b",
  "b/c",
  "node_modules/m/.npmrc",
  "x.txt",
  "d1/d2/d3/d4/d5/d6/d7/d8/d9/.npmrc",
  "d1/d2",
  ".git/hooks/pre-commit",
  ".git/config",
];

describe("protected paths a sandboxed command makes", { skip }, () => {
  // The placeholders the sandbox puts where a protected path is missing (.git/info, .git/config.worktree) come and
  // go with each command, and the window on the workspace opens before they are made: they are left out of its looks
  // from then on, so no report names them, also for a line that makes protected paths and is refused a hook.
  test("the sandbox's placeholders are no change of the command's", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, ".git/hooks"), { recursive: true });
      await writeFile(path.join(dir, ".git/config"), "[core]\n");
      for (let round = 0; round < 3; round++) {
        const result = await box.call(session, "bash", { command: `touch stamp${round}` });
        assert.deepEqual(result.filesystemChanges.map((c) => `${c.change} ${c.path}`), [`created stamp${round}`]);
      }
      const line =
        "echo x > .npmrc; mkdir -p a/b/.git/hooks; echo y > a/b/.git/hooks/post-checkout; echo z > .git/hooks/pre-commit";
      const result = await box.call(session, "bash", { command: line });
      // The hook's write is refused (read-only): a failed call that still says what it moved.
      const out = failedOutput<BashResult>(result, "error", "command_failed");
      assert.deepEqual(out.protected_paths_moved?.map((m) => m.path), [".npmrc", "a/b/.git"]);
      assert.deepEqual(result.filesystemChanges.map((c) => `${c.change} ${c.path}`), ["created a", "created a/b"]);
      assert.deepEqual(fs.readdirSync(path.join(dir, ".git")).sort(), ["config", "hooks"]);
    }, { autoConfirm: true, host: autoHost(), sandbox: "required" });
  });

  // Two sessions on one workspace, each with its own listing: the placeholders their sandboxes share (.git/info) are
  // neither's making, are not moved out from under the other's sandbox, and are gone once both have ended.
  test("another session's placeholders are no command's making", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, ".git/hooks"), { recursive: true });
      await writeFile(path.join(dir, ".git/config"), "[core]\n");
      const other = new Session({ workspace: dir, sandbox: "required", autoConfirm: true, host: autoHost() });
      try {
        const mine = box.call(session, "bash", { command: "sleep 1.5; touch mine" });
        await new Promise((settle) => setTimeout(settle, 300));
        const theirs = box.call(other, "bash", { command: "test -d .git/info && echo covered; sleep 3; touch theirs" });
        const result = await mine;
        assert.equal(okOutput<BashResult>(result).protected_paths_moved, undefined, JSON.stringify(result.output));
        assert.deepEqual(result.filesystemChanges.map((c) => `${c.change} ${c.path}`), ["created mine"]);
        assert.equal(okOutput<BashResult>(await theirs).stdout, "covered\n");
        assert.deepEqual(fs.readdirSync(path.join(dir, ".git")).sort(), ["config", "hooks"]);
      } finally {
        await other.close();
      }
    }, { autoConfirm: true, host: autoHost(), sandbox: "required" });
  });

  test("never stay, by any route: 30 seeded random scripts, the disk checked after each", {
    timeout: 240_000,
  }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, ".git/hooks"), { recursive: true });
      await writeFile(path.join(dir, ".git/config"), "[core]\n");
      await writeFile(path.join(dir, ".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
      await mkdir(path.join(dir, "node_modules/m"), { recursive: true });
      const start = protectedOnDisk(dir);
      const config = fs.readFileSync(path.join(dir, ".git/config"), "utf8");
      let moved = 0;
      for (const script of randomScripts(0x9a7e, NAMES, 30, (next) => 1 + next(8), OPS)) {
        // Run from a file, so that the command analysis sees none of it: the sandbox alone keeps the paths.
        await writeFile(path.join(dir, "s.sh"), script + "\n");
        const out = okOutput<BashResult>(await box.call(session, "bash", { command: "sh s.sh" }));
        moved += out.protected_paths_moved?.length ?? 0;
        assert.deepEqual(protectedOnDisk(dir), start, `after: ${script}`);
        assert.equal(fs.readFileSync(path.join(dir, ".git/config"), "utf8"), config, script);
      }
      // The scripts made protected paths to move (the test would prove nothing otherwise).
      assert.ok(moved >= 10, `only ${moved} moved`);
    }, { autoConfirm: true, host: autoHost(), sandbox: "required" });
  });
});

describe("protected paths moved to a temp dir on another file system", { skip: skip || tmpfsMountable() }, () => {
  // Across file systems the move is a copy, of bytes the command may make for free (a sparse file, names of one
  // file). Before, a copy that failed (the temp dir's file system full, or past the copy's minute) left the
  // protected path in the workspace, unreported: `.vscode/settings.json` beside a sparse file of 96 MiB stayed there
  // for good. And a copy that fit wrote every byte out densely, into a temp dir that is often a tmpfs (memory).
  test("a protected folder too big to copy is still taken out of the workspace, its bytes not copied", {
    timeout: 120_000,
  }, async () => {
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-temp-tmpfs-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=32m", "tmpfs", temp]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-exdev-"));
    const session = new Session({
      workspace: new Workspace(dir, { tempParent: temp }),
      host: autoHost(),
      autoConfirm: true,
      sandbox: "required",
    });
    try {
      const command = `mkdir .vscode && echo '{"x": 1}' > .vscode/settings.json && ` +
        `perl -e 'open(my $f, ">", ".vscode/pad") or die; truncate($f, 96 << 20) or die; ` +
        `open(my $g, ">", ".npmrc") or die; print $g "registry=http://x/\\n"; truncate($g, 48 << 20) or die'`;
      const out = okOutput<BashResult>(await box.call(session, "bash", { command }));
      assert.deepEqual(protectedOnDisk(dir), [], JSON.stringify(out.protected_paths_moved));
      assert.deepEqual(out.protected_paths_moved?.map((m) => m.path).sort(), [".npmrc", ".vscode"]);
      // In their place, a note: .vscode past the bytes the quarantine copies, .npmrc past the temp dir's room.
      const note = (name: string) =>
        fs.readFileSync(out.protected_paths_moved!.find((m) => m.path === name)!.moved_to, "utf8");
      assert.match(
        note(".vscode"),
        /removed .*\.vscode, .* without a copy: its copy failed \(ENOSPC: copying .* would pass the bytes the copy may write/,
      );
      assert.match(note(".npmrc"), /removed .*\.npmrc, .* without a copy: its copy failed \(ENOSPC: /);
      const used = Number(execFileSync("df", ["--output=used", "-B1", temp]).toString().split("\n")[1]);
      assert.ok(used < 8 << 20, `the temp dir's file system holds ${used} bytes`);
    } finally {
      await session.close();
      execFileSync("umount", ["-l", temp]);
      fs.rmSync(temp, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
