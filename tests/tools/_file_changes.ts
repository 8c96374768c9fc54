/**
 * An oracle for `filesystemChanges`: the state of every entry of a folder,
 * read straight from the disk with plain node:fs (independently of the
 * snapshots the tools take), and a check that a list of reported changes
 * turns the state before into the state after, each change's before and
 * after states being exactly what the disk held.
 *
 * @module
 */

import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import type { FileChange, FileState } from "../../core/effects.ts";

/** Every entry under `root` (links not followed) by relative path, with its exact state. */
export function diskState(root: string, skip: (rel: string) => boolean = () => false): Map<string, FileState> {
  const states = new Map<string, FileState>();
  const walk = (dir: string, prefix: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const rel = prefix + name;
      if (skip(rel)) continue;
      const full = path.join(dir, name);
      const stat = fs.lstatSync(full);
      const mode = stat.mode & 0o7777;
      if (stat.isDirectory()) {
        states.set(rel, { type: "directory", size: 0, sha256: null, mode });
        walk(full, rel + "/");
      } else if (stat.isSymbolicLink()) {
        const target = Buffer.from(fs.readlinkSync(full));
        states.set(rel, { type: "symlink", size: target.length, sha256: sha(target), mode });
      } else if (stat.isFile()) {
        const bytes = fs.readFileSync(full);
        states.set(rel, { type: "file", size: bytes.length, sha256: sha(bytes), mode });
      }
    }
  };
  walk(root, "");
  return states;
}

function sha(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Asserts that `changes` are exactly the difference between `before` and
 * `after`: applied in order to `before` they give `after`, every change's
 * `before` is what the path held then and its `after` what it holds now, and
 * no entry changed without a change naming it. With `unknownBefore`, a
 * `sha256: null` before-hash of a file is accepted (the shell tools' honest
 * "not known").
 */
export function assertChangesMatch(
  changes: readonly FileChange[],
  before: Map<string, FileState>,
  after: Map<string, FileState>,
  options: { unknownBefore?: boolean } = {},
): void {
  const state = new Map(before);
  const sameBefore = (expected: FileState | undefined, reported: FileState | null, where: string) => {
    if (expected === undefined || reported === null) {
      assert.equal(reported, expected ?? null, `${where}: before`);
      return;
    }
    if (options.unknownBefore && reported.type !== "directory" && reported.sha256 === null) {
      assert.deepEqual({ ...reported, sha256: expected.sha256 }, expected, `${where}: before (hash unknown)`);
    } else assert.deepEqual(reported, expected, `${where}: before`);
  };
  for (const change of changes) {
    const where = `${change.change} ${change.path}${change.from ? ` from ${change.from}` : ""}`;
    assert.ok(!path.isAbsolute(change.path) && !change.path.includes("\\"), `${where}: a workspace-relative path`);
    switch (change.change) {
      case "created":
        assert.equal(state.has(change.path), false, `${where}: existed already`);
        assert.equal(change.before, null, `${where}: before of a creation`);
        break;
      case "deleted":
        sameBefore(state.get(change.path), change.before, where);
        assert.equal(change.after, null, `${where}: after of a deletion`);
        break;
      case "modified":
        sameBefore(state.get(change.path), change.before, where);
        assert.notEqual(change.after, null, `${where}: after of a modification`);
        break;
      case "moved":
        assert.ok(change.from !== undefined, `${where}: a move names its source`);
        sameBefore(state.get(change.from!), change.before, where);
        assert.equal(state.has(change.path), false, `${where}: the destination was still taken`);
        state.delete(change.from!);
        break;
    }
    if (change.after === null) state.delete(change.path);
    else state.set(change.path, change.after);
  }
  assert.deepEqual(
    Object.fromEntries([...state].sort()),
    Object.fromEntries([...after].sort()),
    `the changes ${JSON.stringify(changes)} do not turn the disk before into the disk after`,
  );
}
