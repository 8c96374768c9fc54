// Listing folders and stat-ing entries at the runtime's own cost, for the walks of a whole workspace (the change
// report's scans, the sandbox's walks for protected paths) and the stats of a read (quickLstat). Under Deno, node:fs goes through Deno's Node layer:
// readdirSync with types builds a Dirent per entry and sorts the names (which no walk needs), lstatSync builds a
// Node Stats, and each costs about twice or three times Deno's own call (bench/workspace_changes.ts, a CPU
// profile of a command in a workspace of 10,000 files). Node has only node:fs.

import fs from "node:fs";
import { isRuntimePermissionError } from "./runtime_permissions.ts";

/** A folder entry's name and type, as the listing tells it (never following a link). */
export interface ListedEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
}

/** Deno's lstat answer (`Deno.FileInfo`), the fields read here. */
export interface RuntimeStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymlink: boolean;
  dev: number;
  ino: number | null;
  mode: number | null;
  nlink: number | null;
  uid: number | null;
  gid: number | null;
  rdev: number | null;
  size: number;
  blksize: number | null;
  blocks: number | null;
  atime: Date | null;
  mtime: Date | null;
  ctime: Date | null;
  birthtime: Date | null;
}

interface DenoRuntime {
  lstatSync(path: string): RuntimeStat;
  readDirSync(path: string): Iterable<ListedEntry>;
}

const deno = (globalThis as { Deno?: DenoRuntime }).Deno;

/** Deno's own lstat, where the runtime is Deno; else undefined (use node:fs). */
export const denoLstat: ((path: string) => RuntimeStat) | undefined = deno?.lstatSync;

/** The names in `dir`, in the file system's order. Throws as the runtime's listing does. */
export function namesIn(dir: string): string[] {
  if (deno === undefined) return fs.readdirSync(dir);
  const names: string[] = [];
  for (const entry of deno.readDirSync(dir)) names.push(entry.name);
  return names;
}

/** The entries of `dir` with their types, in the file system's order. Throws as the runtime's listing does. */
export function entriesIn(dir: string): ListedEntry[] {
  if (deno !== undefined) return [...deno.readDirSync(dir)];
  return fs.readdirSync(dir, { withFileTypes: true }).map((entry) => ({
    name: entry.name,
    isFile: entry.isFile(),
    isDirectory: entry.isDirectory(),
    isSymlink: entry.isSymbolicLink(),
  }));
}

// The errors of a listing that say the folder is not there to list (gone, or replaced by a file, since its entry was
// read) or that this process may not list it (then no process of the same user may, the sandbox's included).
const NOTHING_TO_LIST = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM"]);

/**
 * Whether a listing's `error` says there is nothing the process could see in
 * the folder: gone, not a folder, not listable by this user, or refused by
 * the runtime's own fence (an error without an errno). Any other error
 * (a path longer than the system lets a process name, ENAMETOOLONG; out of
 * descriptors; an I/O error) leaves the folder unseen by the walk, yet
 * reachable by a process that goes there step by step: a walk that must see
 * everything fails there instead of skipping it.
 */
export function nothingToList(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // Node's permission model says ERR_ACCESS_DENIED (a code, unlike Deno's NotCapable): the fence too.
  return typeof code !== "string" || NOTHING_TO_LIST.has(code) || isRuntimePermissionError(error);
}

/**
 * Lists `start` and, breadth first, each folder `visit` asks to enter (by
 * returning true for its entry); a folder with nothing to list
 * ({@linkcode nothingToList}) is skipped, and any other failure to list one is
 * thrown: before, a folder whose path was longer than PATH_MAX was skipped, and
 * the `.env` in it was left out of the sandbox's masks, which a command that
 * went down to it by relative `cd` read.
 * `visit` returning `"stop"` ends the walk, and this then returns false.
 */
export function walkListed(start: string, visit: (abs: string, entry: ListedEntry) => boolean | "stop"): boolean {
  const queue = [start];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    let entries;
    try {
      entries = entriesIn(dir);
    } catch (error) {
      if (nothingToList(error)) continue;
      throw error;
    }
    for (const entry of entries) {
      const abs = dir === "/" ? `/${entry.name}` : `${dir}/${entry.name}`;
      const enter = visit(abs, entry);
      if (enter === "stop") return false;
      if (enter && entry.isDirectory) queue.push(abs);
    }
  }
  return true;
}
