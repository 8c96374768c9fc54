/**
 * What a tool may do to the world, and what one call did: the declared
 * effects of a tool, the effect state of a call, and the file changes it made.
 *
 * These are the shapes a {@linkcode ToolResult} carries so that a caller can
 * recover after a timeout or a crash: which effects were declared, which
 * happened, and whether the outcome must be reconciled by hand.
 *
 * @module
 */

/**
 * One kind of effect a tool may have. A tool that declares none is treated as
 * `no_effect_declared`, which is not the same as declaring `[]` (no effect).
 */
export type Effect = "reads" | "writes_files" | "runs_processes" | "network";

/** Every {@linkcode Effect}, in a stable order. */
export const EFFECTS: readonly Effect[] = ["reads", "writes_files", "runs_processes", "network"];

/**
 * What is known of a call's effects once it ended:
 * - `no_effect_declared`: the tool declares no effects, so nothing can be said;
 * - `none`: the tool declares only reads, or declared effects and did nothing;
 * - `applied`: a declared effect happened (e.g. a file was written);
 * - `not_applied`: the call failed before any effect could happen;
 * - `unknown`: an effectful call timed out or was cancelled mid-run.
 */
export type EffectState = "no_effect_declared" | "none" | "applied" | "not_applied" | "unknown";

/** The state of one file before or after a change. */
export interface FileState {
  /** What the path names. */
  type: "file" | "symlink" | "directory";
  /** Size in bytes (for a symlink, the length of its target). */
  size: number;
  /**
   * Hex SHA-256 of the content (of the target string for a symlink); `null` for a directory, and for
   * content that is not known (the before state of a file a shell command changed, when no earlier
   * snapshot had hashed it).
   */
  sha256: string | null;
  /** Permission bits, e.g. `0o644`. */
  mode: number;
}

/**
 * Whether two states are the same: type, size, content and mode (a
 * symlink's mode is not compared: Linux gives every link 0o777 and cannot
 * change it).
 *
 * @example
 * ```ts
 * import { sameFileState } from "@toolfence/core";
 * const a = { type: "file", size: 1, sha256: "ab", mode: 0o644 } as const;
 * console.log(sameFileState(a, { ...a, mode: 0o600 })); // false
 * ```
 */
export function sameFileState(a: FileState | null, b: FileState | null): boolean {
  if (a === null || b === null) return a === b;
  return a.type === b.type && a.size === b.size && a.sha256 === b.sha256 &&
    (a.type === "symlink" || a.mode === b.mode);
}

/**
 * One file a call created, modified, moved or deleted. `path` is relative to
 * the workspace, with `/` separators.
 */
export interface FileChange {
  /** The path after the change (for `deleted`, the path that was removed). */
  path: string;
  /** What happened to it. */
  change: "created" | "modified" | "deleted" | "moved";
  /** For `moved`, where it was before. */
  from?: string;
  /** The state before; `null` when it did not exist. */
  before: FileState | null;
  /** The state after; `null` when it no longer exists. */
  after: FileState | null;
}

/**
 * Path order (`/` separators) in which a folder comes right before what is
 * in it: the order of a change report.
 *
 * @example
 * ```ts
 * import { comparePaths } from "@toolfence/core";
 * console.log(["a/b", "a", "a-b"].sort(comparePaths)); // ["a", "a/b", "a-b"]
 * ```
 */
export function comparePaths(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}
