// The per-session line index behind read_file: for each file read, the number
// of newlines before the start of every 1 MiB chunk scanned so far, plus what a
// full scan learnt (total lines, sha256). A later window of the same unchanged
// file starts at the nearest checkpoint instead of scanning from the top.
// Entries are keyed by the real path and invalidated by any change of device,
// inode, size, mtime or ctime.

import type fs from "node:fs";
import { CHUNK_BYTES } from "./_newlines.ts";

/** What read_file learnt about one version of one file. */
export interface LineIndex {
  /** The stat the index belongs to. */
  readonly stamp: string;
  /** Length of the UTF-8 byte-order mark at the start (0 or 3). */
  readonly bomLength: number;
  /** Line endings seen in the first chunk. */
  readonly lineEnding: "lf" | "crlf" | "mixed" | "none";
  /** `newlinesBefore[i]`: newlines in bytes `[0, i * CHUNK_BYTES)`; grows as scans pass chunk boundaries. */
  readonly newlinesBefore: number[];
  /** Total lines, once some scan reached the end of the file. */
  totalLines?: number;
  /** Hex SHA-256 of the whole file, when a full scan computed it. */
  sha256?: string;
}

/** Most files whose index a session keeps; the least recently used goes first. */
const MAX_ENTRIES = 32;

const bySession = new WeakMap<object, Map<string, LineIndex>>();

/** The identity of one version of a file. */
export function stampOf(stat: fs.Stats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

/** The index of `realPath` in `owner`'s cache if it still matches `stat`. */
export function cachedIndex(owner: object, realPath: string, stat: fs.Stats): LineIndex | undefined {
  const entries = bySession.get(owner);
  const index = entries?.get(realPath);
  if (!index) return undefined;
  entries!.delete(realPath);
  if (index.stamp !== stampOf(stat)) return undefined;
  entries!.set(realPath, index); // most recently used last
  return index;
}

/** Stores `index` for `realPath` in `owner`'s cache. */
export function storeIndex(owner: object, realPath: string, index: LineIndex): void {
  let entries = bySession.get(owner);
  if (!entries) bySession.set(owner, entries = new Map());
  entries.delete(realPath);
  entries.set(realPath, index);
  while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
}

/** Drops what `owner`'s cache knows about `realPath` (it changed while being read). */
export function forgetIndex(owner: object, realPath: string): void {
  bySession.get(owner)?.delete(realPath);
}

/**
 * The chunk to start from to find the start of line `line` (0-based, > 0):
 * the last checkpoint with fewer newlines before it than `line`.
 */
export function startingChunk(index: LineIndex, line: number): number {
  const marks = index.newlinesBefore;
  let lo = 0;
  let hi = marks.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (marks[mid] < line) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Records that chunk `chunk` (fully read, {@linkcode CHUNK_BYTES} long) holds `newlines` newlines. */
export function recordChunk(index: LineIndex, chunk: number, newlines: number): void {
  if (chunk === index.newlinesBefore.length - 1) index.newlinesBefore.push(index.newlinesBefore[chunk] + newlines);
}

/** Byte offset where chunk `chunk` starts. */
export function chunkStart(chunk: number): number {
  return chunk * CHUNK_BYTES;
}
