// .gitignore rules as git applies them: each folder's file speaks for the
// paths beneath it, and the deepest rule that matches (ignore or `!` re-include)
// wins. Only .gitignore files inside the workspace count: those of the folders
// between the workspace root and the search root, then those met on the way
// down. Nothing above the workspace and no global git settings are read, so the
// result depends on the workspace alone.

import fsp from "node:fs/promises";
import path from "node:path";
import ignore from "ignore";

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

/** Reads `dir/.gitignore`, or undefined when there is none (or it cannot be read). */
export async function readGitignore(dir: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(path.join(dir, ".gitignore"), "utf8");
  } catch {
    return undefined;
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
export async function parentLevels(base: string, root: string): Promise<IgnoreLevel | undefined> {
  const rel = path.relative(base, root);
  if (rel === "") return undefined;
  const parts = rel.split("/");
  let level: IgnoreLevel | undefined;
  for (let depth = 0; depth < parts.length; depth++) {
    const dirRel = parts.slice(0, depth).join("/");
    const text = await readGitignore(path.join(base, dirRel));
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
