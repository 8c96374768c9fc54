/**
 * A real folder layout for the policy tests: a root R holding the workspace
 * `W`, a sibling `W-secrets`, an `outside` folder with a secret, and a folder
 * in which temp dirs are created.
 *
 * @module
 */
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import assert from "node:assert/strict";
import { ToolError } from "../../core/errors.ts";

/** Paths of one fixture layout. */
export interface Layout {
  root: string;
  workdir: string;
  secrets: string;
  outside: string;
  tempParent: string;
  cleanup(): Promise<void>;
}

/** Creates the layout under a fresh temp folder (real paths throughout). */
export async function makeLayout(): Promise<Layout> {
  const root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-policy-test-")));
  const workdir = path.join(root, "W");
  const secrets = path.join(root, "W-secrets");
  const outside = path.join(root, "outside");
  const tempParent = path.join(root, "tmp");
  for (const dir of [workdir, secrets, outside, tempParent, path.join(workdir, "sub")]) {
    await fsp.mkdir(dir, { recursive: true });
  }
  await fsp.writeFile(path.join(secrets, "x"), "secret sibling\n");
  await fsp.writeFile(path.join(outside, "secret.txt"), "secret outside\n");
  await fsp.writeFile(path.join(workdir, "file.txt"), "inside\n");
  await fsp.writeFile(path.join(workdir, "sub", "a.txt"), "a\n");
  return {
    root,
    workdir,
    secrets,
    outside,
    tempParent,
    // Retried a few times: an entry a test's killed helper process made in its last moment is not a failure.
    cleanup: () => fsp.rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }),
  };
}

/** Asserts that `promise` rejects with a ToolError of `code` (and kind, when given); returns it. */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
  kind?: string,
): Promise<ToolError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ToolError, `expected a ToolError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  if (kind !== undefined) assert.equal(caught.kind, kind);
  return caught;
}

/** Whether something (even a dangling symlink) exists at `p`. */
export async function exists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch {
    return false;
  }
}
