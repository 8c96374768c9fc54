// Walking a folder tree for glob and the built-in grep: never into `.git`,
// never through a symlink (links are reported, not followed), skipping what
// the .gitignore files say when asked to. Folders are read several at a time;
// callers sort what they collect.

import type fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { type IgnoreLevel, ignoreLevel, isIgnored, parentLevels } from "./_ignore.ts";

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
  signal: AbortSignal;
  /** Called for every entry that is not skipped. */
  onEntry(entry: WalkEntry): void;
  /** Whether to look inside folder `rel`; default yes. */
  descend?(rel: string): boolean;
}

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

/**
 * Walks `root` and reports every entry beneath it. Folders that cannot be read
 * (permissions, vanished) are skipped, as ripgrep skips them.
 *
 * Requires `--allow-read` for the root.
 */
export async function walkTree(options: WalkOptions): Promise<void> {
  const rootRel = path.relative(options.base, options.root);
  const queue: Pending[] = [{
    abs: options.root,
    rel: "",
    level: options.skipIgnored ? await parentLevels(options.base, options.root) : undefined,
  }];
  const visit = async (dir: Pending) => {
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(dir.abs, { withFileTypes: true });
    } catch {
      return;
    }
    let level = dir.level;
    if (options.skipIgnored && entries.some((e) => e.name === ".gitignore")) {
      try {
        const text = await fsp.readFile(path.join(dir.abs, ".gitignore"), "utf8");
        level = ignoreLevel(level, rootRel === "" ? dir.rel : dir.rel ? `${rootRel}/${dir.rel}` : rootRel, text);
      } catch {
        // An unreadable .gitignore ignores nothing.
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
