// Glob patterns for glob and for grep's file filter, matched by RE2JS in
// linear time (see _glob_syntax.ts). Paths are matched relative to the search
// root, dot files included; a pattern may not climb out of the root or be
// absolute.

import { RE2JS } from "re2js";
import { ToolError } from "@toolfence/core";
import { GlobSyntaxError, globToRe2 } from "./_glob_syntax.ts";

function invalidGlob(glob: string, reason: string, hint: string): ToolError {
  return new ToolError(`Invalid glob ${JSON.stringify(glob)}: ${reason}`, {
    code: "invalid_glob",
    kind: "semantic",
    recoveryHint: hint,
    details: { glob, reason },
  });
}

function checkGlob(glob: string): void {
  if (glob.startsWith("/")) {
    throw invalidGlob(glob, "it is absolute", "Give the folder as `path` and a pattern relative to it.");
  }
  if (glob.split("/").includes("..")) {
    throw invalidGlob(glob, "it climbs out of the search folder with ..", "Give a higher folder as `path` instead.");
  }
  if (glob.includes("\0")) throw invalidGlob(glob, "it contains a NUL byte", "Remove the NUL byte.");
}

function compile(glob: string): (rel: string) => boolean {
  let re: RE2JS;
  try {
    re = RE2JS.compile(globToRe2(glob));
  } catch (error) {
    if (error instanceof GlobSyntaxError) throw invalidGlob(glob, error.message, "Fix the pattern.");
    throw invalidGlob(glob, (error as Error).message.replace(/^error parsing regexp: /, ""), "Simplify the pattern.");
  }
  return (rel) => re.test(rel);
}

// The leading folders of a glob that hold no pattern syntax: only folders on the way to them can hold matches.
function literalBase(glob: string): string {
  const segments = glob.split("/");
  const literal: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (/[*?[\]{}\\()!@+]/.test(segment)) break;
    literal.push(segment);
  }
  return literal.join("/");
}

/** A compiled path pattern for the glob tool. */
export interface PathGlob {
  /** Whether `rel` (relative to the root, `/`-separated) matches. */
  matches(rel: string): boolean;
  /** Whether a folder at `rel` may hold matches, so the walk can skip the others. */
  mayContain(rel: string): boolean;
}

function isPrefix(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(prefix + "/");
}

/**
 * Compiles a glob tool pattern: `*` stays within one folder, `**` crosses
 * folders, `{a,b}` and `[abc]` as usual; `*.ts` matches only at the top, while
 * `**\/*.ts` matches at any depth.
 */
export function pathGlob(glob: string): PathGlob {
  checkGlob(glob);
  const matches = compile(glob);
  const base = literalBase(glob);
  const segments = glob.split("/").length;
  const unbounded = glob.includes("**");
  return {
    matches,
    mayContain(rel) {
      if (base !== "" && !isPrefix(rel, base) && !isPrefix(base, rel)) return false;
      return unbounded || rel.split("/").length < segments;
    },
  };
}

/** A compiled file filter for grep. */
export interface FileFilter {
  /** Whether the file at `rel` (relative to the root) is searched. */
  matches(rel: string): boolean;
  /** A name-only glob that ripgrep's own type filter can apply first, when the filter is one. */
  nameGlob?: string;
}

/**
 * Compiles grep's `glob` filter: without a `/` it matches file names at any
 * depth (`*.ts`), with one it matches the path relative to the root
 * (`src/**\/*.ts`).
 */
export function fileFilter(glob: string): FileFilter {
  checkGlob(glob);
  const nameOnly = !glob.includes("/");
  const test = compile(glob);
  const matches = nameOnly ? (rel: string) => test(rel.slice(rel.lastIndexOf("/") + 1)) : test;
  // Simple name globs mean the same in ripgrep's globset and picomatch.
  const simple = nameOnly && /^[A-Za-z0-9_.*?{},-]+$/.test(glob) && !glob.includes("**") &&
    !/\{[^}]*\{/.test(glob);
  return { matches, nameGlob: simple ? glob : undefined };
}
