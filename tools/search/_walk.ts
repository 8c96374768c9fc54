// Walking a folder tree for glob and the built-in grep: never into `.git`,
// never through a symlink (links are reported, not followed), skipping what
// the .gitignore files say when asked to. Folders are read several at a time;
// callers sort what they collect. Each folder is read through the file door
// (pinned at its real path, the hidden entries left out), never by its path:
// a folder swapped for a link during the walk would otherwise have been read
// where the link leads, and glob listed the names in a folder outside the
// workspace or in a denied one (tests/tools/search/glob_test.ts).

import { Buffer } from "node:buffer";
import type fs from "node:fs";
import path from "node:path";
import type { FileDoor } from "@toolfence/core";
import { type IgnoreLevel, ignoreLevel, isIgnored, parentLevels, readGitignore } from "./_ignore.ts";
import { lostName, NOT_UTF8_REASON } from "../_shared/fs_lost_name.ts";

/** One entry found by {@linkcode walkTree}. */
export interface WalkEntry {
  /** Path relative to the walk's root, with `/` separators. */
  rel: string;
  /** Absolute path. */
  abs: string;
  kind: "file" | "dir" | "symlink" | "other";
}

/** Options of {@linkcode walkTree}. */
export interface WalkOptions {
  /** The folder to walk (a real path). */
  root: string;
  /** The workspace area root above it, where .gitignore files start to count. */
  base: string;
  /** Skip what .gitignore files exclude. */
  skipIgnored: boolean;
  /** The policy's file door: every folder and .gitignore file is read through it, hidden entries left out. */
  files: FileDoor;
  signal: AbortSignal;
  /** Called for every entry that is not skipped. */
  onEntry(entry: WalkEntry): void;
  /** Whether to look inside folder `rel`; default yes. */
  descend?(rel: string): boolean;
  /** Called for what the walk could not read, so that callers say so instead of missing it silently. */
  onSkip?(skip: Skipped): void;
}

/** Something a search could not look at, and why. */
export interface Skipped {
  /** Path relative to the walk's root ("" for the root itself). */
  path: string;
  /** Why, for the model. */
  reason: string;
}

/** The reason text for a failed read of `rel`. */
export function skipReason(error: unknown, fullPath: string): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "ENAMETOOLONG" || Buffer.byteLength(fullPath) > PATH_MAX) {
    return `its path is longer than the system limit of ${PATH_MAX} bytes, so it cannot be opened`;
  }
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "ELOOP") return "too many levels of symbolic links";
  return `it cannot be read (${code ?? (error as Error)?.message ?? "unknown error"})`;
}

/** The longest path the system opens (Linux's PATH_MAX less the NUL). */
export const PATH_MAX = 4095;

/** A name decoded from bytes that are not UTF-8 holds U+FFFD and names no file under that spelling. */
export { NOT_UTF8_REASON };

// Folders read at once; enough to keep the disk busy without exhausting handles.
const CONCURRENCY = 16;

function kindOf(entry: fs.Dirent): WalkEntry["kind"] {
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "dir";
  if (entry.isSymbolicLink()) return "symlink";
  return "other";
}

interface Pending {
  abs: string;
  rel: string;
  level: IgnoreLevel | undefined;
}

// Whether `abs` names nothing: then the name the runtime gave was decoded with replacement characters.
/**
 * Walks `root` and reports every entry beneath it. Folders that cannot be read
 * (permissions, a path over the system's limit) and names that are not UTF-8
 * are passed to `onSkip`; folders that vanished during the walk are not.
 *
 * Requires `--allow-read` for the root.
 */
export async function walkTree(options: WalkOptions): Promise<void> {
  const rootRel = path.relative(options.base, options.root);
  const queue: Pending[] = [{
    abs: options.root,
    rel: "",
    level: options.skipIgnored ? parentLevels(options.files, options.base, options.root) : undefined,
  }];
  const visit = async (dir: Pending) => {
    let entries: fs.Dirent[];
    try {
      entries = options.files.entries(dir.abs);
    } catch (error) {
      // A folder that vanished during the walk held nothing to miss.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || Buffer.byteLength(dir.abs) > PATH_MAX) {
        options.onSkip?.({ path: dir.rel, reason: skipReason(error, dir.abs) });
      }
      return;
    }
    let level = dir.level;
    if (options.skipIgnored && entries.some((e) => e.name === ".gitignore")) {
      // An unreadable .gitignore (a link among them) ignores nothing.
      const text = readGitignore(options.files, dir.abs);
      if (text !== undefined) {
        level = ignoreLevel(level, rootRel === "" ? dir.rel : dir.rel ? `${rootRel}/${dir.rel}` : rootRel, text);
      }
    }
    for (const entry of entries) {
      if (entry.name === ".git") continue;
      const rel = dir.rel ? `${dir.rel}/${entry.name}` : entry.name;
      const kind = kindOf(entry);
      if (options.skipIgnored && level && isIgnored(level, rootRel ? `${rootRel}/${rel}` : rel, kind === "dir")) {
        continue;
      }
      const abs = `${dir.abs}/${entry.name}`;
      if (await lostName(abs)) {
        options.onSkip?.({ path: rel, reason: NOT_UTF8_REASON });
        continue;
      }
      options.onEntry({ rel, abs, kind });
      if (kind === "dir" && (options.descend?.(rel) ?? true)) queue.push({ abs, rel, level });
    }
  };
  let active = 0;
  await new Promise<void>((resolve, reject) => {
    const pump = () => {
      if (options.signal.aborted) return reject(options.signal.reason);
      while (active < CONCURRENCY && queue.length > 0) {
        const dir = queue.pop()!;
        active++;
        visit(dir).then(() => {
          active--;
          pump();
        }, reject);
      }
      if (active === 0 && queue.length === 0) resolve();
    };
    pump();
  });
}
