// Fixtures for the file-tool tests: a real temporary layout with a workspace,
// a sibling folder that shares its name as a prefix, and an outside folder
// that symlinks in the workspace lead to; a fingerprint of a whole tree to
// prove that a failed call changed nothing; and a toolbox call helper.

import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Session, type SessionOptions } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import type { ToolResult } from "../../../core/result.ts";
import type { AnyTool } from "../../../core/tool.ts";
import { openFence } from "../../../policy/fence.ts";

/** The layout every path test runs in. */
export interface Layout {
  /** The folder holding everything below. */
  root: string;
  /** The workspace `W`. */
  workdir: string;
  /** `W-secrets` beside it. */
  sibling: string;
  /** A folder outside the workspace with `secret.txt` and `dir/s.txt`. */
  outside: string;
  session: Session;
  box: ToolBox;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  cleanup(): Promise<void>;
}

/**
 * Makes the layout. In `W`: `inside.txt`, `sub/deep.txt`, and the links
 * `link-in` (to inside.txt), `link-out` (to outside/secret.txt), `dir-out` (to
 * outside/dir), `dangling` (to outside/nothing.txt, which does not exist),
 * `loop-a` and `loop-b` (to each other).
 */
export async function makeLayout(tools: AnyTool[], options: Omit<SessionOptions, "workspace"> = {}): Promise<Layout> {
  const root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-tools-")));
  const workdir = path.join(root, "W");
  const sibling = path.join(root, "W-secrets");
  const outside = path.join(root, "outside");
  await fsp.mkdir(path.join(workdir, "sub"), { recursive: true });
  await fsp.mkdir(sibling);
  await fsp.mkdir(path.join(outside, "dir"), { recursive: true });
  await fsp.writeFile(path.join(workdir, "inside.txt"), "inside\n");
  await fsp.writeFile(path.join(workdir, "sub", "deep.txt"), "deep\n");
  await fsp.writeFile(path.join(sibling, "x"), "sibling secret\n");
  await fsp.writeFile(path.join(outside, "secret.txt"), "outside secret\n");
  await fsp.writeFile(path.join(outside, "dir", "s.txt"), "outside dir secret\n");
  await fsp.symlink("inside.txt", path.join(workdir, "link-in"));
  await fsp.symlink(path.join(outside, "secret.txt"), path.join(workdir, "link-out"));
  await fsp.symlink(path.join(outside, "dir"), path.join(workdir, "dir-out"));
  await fsp.symlink(path.join(outside, "nothing.txt"), path.join(workdir, "dangling"));
  await fsp.symlink("loop-b", path.join(workdir, "loop-a"));
  await fsp.symlink("loop-a", path.join(workdir, "loop-b"));
  const session = new Session({
    workspace: workdir,
    autoConfirm: true,
    fence: openFence(),
    ...options,
  });
  const box = new ToolBox().register(...tools);
  return {
    root,
    workdir,
    sibling,
    outside,
    session,
    box,
    call: (name, args) => box.call(session, name, args),
    async cleanup() {
      await session.close();
      await fsp.rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * A fingerprint of everything under `dir`: every entry's path, type, mode,
 * and content hash (files) or target (links), without following links.
 */
export async function treeFingerprint(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const visit = async (p: string, rel: string) => {
    const stat = await fsp.lstat(p);
    hash.update(`${rel}\0${stat.mode}\0`);
    if (stat.isSymbolicLink()) hash.update(`link:${await fsp.readlink(p)}\0`);
    else if (stat.isFile()) hash.update(createHash("sha256").update(await fsp.readFile(p)).digest("hex"));
    else if (stat.isDirectory()) {
      for (const name of (await fsp.readdir(p)).sort()) await visit(path.join(p, name), `${rel}/${name}`);
    }
  };
  await visit(dir, ".");
  return hash.digest("hex");
}

/** Runs `fn` and fails unless the tree under `dir` is byte-for-byte the same afterwards. */
export async function unchanged<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const before = await treeFingerprint(dir);
  const value = await fn();
  const after = await treeFingerprint(dir);
  if (before !== after) throw new Error(`the tree under ${dir} changed`);
  return value;
}

/** A fresh temporary folder (a real path) for tests that need only files. */
export async function tempFolder(): Promise<string> {
  return await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-tools-")));
}

/** The output of a successful result as a record; throws with the error otherwise. */
export function ok(result: ToolResult): Record<string, unknown> {
  if (result.status !== "success") {
    throw new Error(`expected success, got ${result.status} [${result.errorCode}]: ${result.error}`);
  }
  return result.output as Record<string, unknown>;
}
