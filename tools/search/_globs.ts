// Glob patterns for glob and for grep's file filter, on picomatch. Paths are
// matched relative to the search root, dot files included; a pattern may not
// climb out of the root or be absolute.

import picomatchModule from "picomatch";
import { ToolError } from "@toolfence/core";

interface PicomatchOptions {
  dot?: boolean;
  basename?: boolean;
}
interface ScanResult {
  base: string;
  glob: string;
  isGlob: boolean;
}
interface Picomatch {
  (glob: string, options?: PicomatchOptions): (path: string) => boolean;
  scan(glob: string): ScanResult;
}

// picomatch ships no types; these are the parts used here.
const picomatch = picomatchModule as unknown as Picomatch;

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
  const matches = picomatch(glob, { dot: true });
  const { base } = picomatch.scan(glob);
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
  const matches = picomatch(glob, { dot: true, basename: nameOnly });
  // Simple name globs mean the same in ripgrep's globset and picomatch.
  const simple = nameOnly && /^[A-Za-z0-9_.*?{},-]+$/.test(glob) && !glob.includes("**") &&
    !/\{[^}]*\{/.test(glob);
  return { matches, nameGlob: simple ? glob : undefined };
}
