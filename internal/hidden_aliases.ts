// Other names of the policy's denied files. Linux lets one file have many names (hard links), and a deny rule
// names paths: a second name of a denied file, made before the session (a command in the sandbox cannot make one:
// the denied name is a mount there, and link(2) refuses to cross it), would show the file's bytes under a name no
// rule matches. A file names how many names it has (its link count), so the files to look for are known from the
// denied ones alone, and the workspace is walked for them only when one of them has more than one name.

import type fs from "node:fs";
import { entriesIn, nothingToList, walkListed } from "./_runtime_fs.ts";
import { quickLstat } from "./quick_stat.ts";

// Entries looked at in one walk before giving up (as the sandbox's walk for denied paths does).
const MAX_ENTRIES = 200_000;

/** Which file a stat is, across its names: `dev:ino`. */
export function inodeKey(stat: { dev: number; ino: number }): string {
  return `${stat.dev}:${stat.ino}`;
}

/**
 * The files among `denied` (real paths, each with whether it is a folder),
 * and in the denied folders, that have more than one name, by
 * {@linkcode inodeKey}; undefined past 200,000 entries (the caller cannot
 * tell, and fails closed).
 */
export function linkedInodes(denied: ReadonlyMap<string, boolean>): Set<string> | undefined {
  const inodes = new Set<string>();
  let seen = 0;
  const look = (abs: string): boolean => {
    if (++seen > MAX_ENTRIES) return false;
    const stat = lstatOrUndefined(abs);
    if (stat === undefined) return true;
    // A socket or FIFO can have other names too, and is hidden as a file is.
    if (!stat.isDirectory() && !stat.isSymbolicLink() && stat.nlink > 1) inodes.add(inodeKey(stat));
    if (!stat.isDirectory()) return true;
    let entries;
    try {
      entries = entriesIn(abs);
    } catch (error) {
      // Unreadable for us: nothing to read through another name either. Unlistable otherwise (a path past
      // PATH_MAX): its files' other names cannot be told (fail closed).
      return nothingToList(error);
    }
    for (const entry of entries) {
      if (!entry.isSymlink && !look(`${abs}/${entry.name}`)) return false;
    }
    return true;
  };
  for (const abs of denied.keys()) if (!look(abs)) return undefined;
  return inodes;
}

/**
 * The files under `root` that are one of `inodes` by another name than the
 * `covered` entries (real paths, folders not entered); undefined past
 * 200,000 entries. Costs an lstat per file: called only when a denied file
 * has other names.
 */
export function otherNames(
  root: string,
  inodes: ReadonlySet<string> | undefined,
  covered: ReadonlyMap<string, boolean>,
): string[] | undefined {
  if (inodes === undefined) return undefined;
  const found: string[] = [];
  if (inodes.size === 0) return found;
  let seen = 0;
  const complete = walkListed(root, (abs, entry) => {
    if (++seen > MAX_ENTRIES) return "stop";
    if (covered.has(abs)) return false;
    if (!entry.isDirectory && !entry.isSymlink) {
      const stat = lstatOrUndefined(abs);
      if (stat !== undefined && !stat.isDirectory() && inodes.has(inodeKey(stat))) found.push(abs);
    }
    return true;
  });
  return complete ? found : undefined;
}

function lstatOrUndefined(abs: string): fs.Stats | undefined {
  try {
    return quickLstat(abs);
  } catch {
    return undefined;
  }
}
