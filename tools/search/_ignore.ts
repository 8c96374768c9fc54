// .gitignore rules as git applies them: each folder's file speaks for the
// paths beneath it, and the deepest rule that matches (ignore or `!` re-include)
// wins. Only .gitignore files inside the workspace count: those of the folders
// between the workspace root and the search root, then those met on the way
// down. Nothing above the workspace and no global git settings are read, so the
// result depends on the workspace alone.

import fs from "node:fs";
import path from "node:path";
import ignore from "ignore";
import type { FileDoor } from "@toolfence/core";

type Ignore = ReturnType<typeof ignore>;

/** The rules of one folder's .gitignore, linked to those of the folders above. */
export interface IgnoreLevel {
  /** The folder, relative to the workspace area root ("" for the root). */
  readonly dir: string;
  readonly rules: Ignore;
  /** The file's text, for handing the rules to ripgrep. */
  readonly text: string;
  readonly parent: IgnoreLevel | undefined;
}

/**
 * Reads `dir/.gitignore` (`dir` a real path of the workspace) through the file door, or undefined when there is
 * none, or it cannot be read, or it is not a regular file. The door opens it in its folder pinned at `dir`, never
 * following a link: a read by path followed a `.gitignore` that was a link to a file outside the workspace or to a
 * denied one, and its lines became rules whose effect on the results told them apart.
 */
export function readGitignore(files: FileDoor, dir: string): string | undefined {
  let fd: number;
  try {
    fd = files.openFound(path.posix.join(dir, ".gitignore"));
  } catch {
    return undefined;
  }
  try {
    return fs.fstatSync(fd).isFile() ? fs.readFileSync(fd, "utf8") : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** A level for `dir` (relative to the area root) below `parent`. */
export function ignoreLevel(parent: IgnoreLevel | undefined, dir: string, text: string): IgnoreLevel {
  return { dir, rules: ignore({ ignorecase: false }).add(text), text, parent };
}

/**
 * The levels of the folders from `base` (the workspace area root) down to the
 * parent of `root`; `root`'s own .gitignore is read by the walk itself.
 */
export function parentLevels(files: FileDoor, base: string, root: string): IgnoreLevel | undefined {
  const rel = path.relative(base, root);
  if (rel === "") return undefined;
  const parts = rel.split("/");
  let level: IgnoreLevel | undefined;
  for (let depth = 0; depth < parts.length; depth++) {
    const dirRel = parts.slice(0, depth).join("/");
    const text = readGitignore(files, dirRel === "" ? base : path.posix.join(base, dirRel));
    if (text !== undefined) level = ignoreLevel(level, dirRel, text);
  }
  return level;
}

/** Whether `rel` (relative to the area root) is ignored by `level` and the levels above it. */
export function isIgnored(level: IgnoreLevel | undefined, rel: string, isDir: boolean): boolean {
  for (let l = level; l; l = l.parent) {
    const local = l.dir === "" ? rel : rel.slice(l.dir.length + 1);
    let verdict;
    try {
      verdict = l.rules.test(isDir ? local + "/" : local);
    } catch {
      // `ignore` refuses some unusual names; git would match them against no rule.
      continue;
    }
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]!#{}]/g, "\\$&");
}

/**
 * The rules of `levels` rewritten relative to the area root, outermost first,
 * as one ignore file: a pattern without a slash in `dir/.gitignore` becomes
 * `/dir/**\/pattern`, one with a slash `/dir/pattern`. ripgrep reads it with
 * `--ignore-file` from the area root, so that it applies the same parent rules
 * as the built-in walk.
 */
export function rebasedIgnoreText(level: IgnoreLevel | undefined): string {
  const chain: IgnoreLevel[] = [];
  for (let l = level; l; l = l.parent) chain.unshift(l);
  const out: string[] = [];
  for (const l of chain) {
    for (let line of l.text.split("\n")) {
      line = line.replace(/\r$/, "");
      if (line.trim() === "" || line.startsWith("#")) continue;
      if (l.dir === "") {
        out.push(line);
        continue;
      }
      const negated = line.startsWith("!");
      const pattern = negated ? line.slice(1) : line;
      const anchored = pattern.replace(/\/+$/, "").includes("/");
      const prefix = "/" + escapeGlob(l.dir) + "/";
      const rebased = anchored ? prefix + pattern.replace(/^\//, "") : prefix + "**/" + pattern;
      out.push((negated ? "!" : "") + rebased);
    }
  }
  return out.join("\n") + "\n";
}
