/**
 * The input digest of a scratch copy.
 *
 * @module
 */

import { createHash } from "node:crypto";
import type { FileState } from "@toolfence/core";

const VERSION = "toolfence-scratch-input-digest/1";

/**
 * The input digest of a tree of entries (relative path to state): hex SHA-256
 * over one line per entry, sorted by path, holding its relative path, type,
 * mode and content hash. Sizes and times do not count, nor where the tree
 * lies: two workspaces with the same content have the same digest.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { inputDigest } from "@toolfence/policy";
 * const state = { type: "file", size: 3, mode: 0o644, sha256: "ab".repeat(32) } as const;
 * console.log(inputDigest(new Map([["a.txt", state]])) === inputDigest(new Map([["a.txt", state]]))); // true
 * ```
 */
export function inputDigest(entries: ReadonlyMap<string, FileState>): string {
  const hash = createHash("sha256").update(VERSION + "\n");
  const paths = [...entries.keys()].sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  for (const relative of paths) {
    const state = entries.get(relative)!;
    hash.update(JSON.stringify([relative, state.type, state.mode, state.sha256 ?? ""]) + "\n");
  }
  return hash.digest("hex");
}
