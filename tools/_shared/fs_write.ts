// Write helpers shared by the fs and patch tools: creating missing parent
// folders in a way that can be undone, sibling temp names for
// replace-by-rename, and copying trees with symlinks kept as links.

import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileOpError } from "./fs_errors.ts";

/**
 * Creates the missing folders above `realPath` and returns the topmost one it
 * created (remove it to undo), or undefined when all existed.
 */
export async function makeParents(realPath: string, shown: string): Promise<string | undefined> {
  try {
    return await fsp.mkdir(path.dirname(realPath), { recursive: true }) ?? undefined;
  } catch (error) {
    throw fileOpError(error, shown, path.dirname(realPath), "creating the folders of");
  }
}

/** Removes what {@linkcode makeParents} created; quietly, since it runs while handling another failure. */
export async function undoParents(created: string | undefined): Promise<void> {
  if (created !== undefined) await fsp.rm(created, { recursive: true, force: true }).catch(() => {});
}

/** A fresh name in the same folder as `realPath`, for building something there and renaming it into place. */
export function siblingTempPath(realPath: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  const suffix = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return path.join(path.dirname(realPath), `.toolfence-${suffix}.tmp`);
}

/** What a tree copy did. */
export interface CopyCounts {
  files: number;
  directories: number;
  links: number;
  /** Paths (relative to the source) of FIFOs, sockets and devices that were not copied. */
  skipped: string[];
}

/**
 * Copies `from` to `to` (which must not exist) without following any
 * symlink: links are recreated as links with the same target text, so a link
 * to something outside the workspace never brings that content in. Regular
 * files keep their mode; special files are skipped and listed.
 */
export async function copyTree(
  from: string,
  to: string,
  signal: AbortSignal,
  counts: CopyCounts = { files: 0, directories: 0, links: 0, skipped: [] },
  relative = "",
): Promise<CopyCounts> {
  signal.throwIfAborted();
  const stat = await fsp.lstat(from);
  if (stat.isSymbolicLink()) {
    await fsp.symlink(await fsp.readlink(from), to);
    counts.links++;
  } else if (stat.isFile()) {
    await fsp.copyFile(from, to, fs.constants.COPYFILE_EXCL);
    await fsp.chmod(to, stat.mode & 0o7777);
    counts.files++;
  } else if (stat.isDirectory()) {
    await fsp.mkdir(to, { mode: 0o700 });
    for (const name of (await fsp.readdir(from)).sort()) {
      await copyTree(path.join(from, name), path.join(to, name), signal, counts, path.join(relative, name));
    }
    await fsp.chmod(to, stat.mode & 0o7777);
    counts.directories++;
  } else {
    counts.skipped.push(relative || path.basename(from));
  }
  return counts;
}
