/**
 * The exact state of one path (type, size, sha256 and mode, as a
 * `FileChange` reports it), read without following links and in the pinned
 * folder, with its content when asked: the before-images of undo.
 *
 * @module
 */

import fs from "node:fs";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import type { FileState } from "@toolfence/core";
import { lstatConfined, openReadConfined, readlinkConfined } from "./confined_fs.ts";

/** A file larger than this has no content kept by {@linkcode fileEntryConfined}. */
export const IMAGE_FILE_LIMIT = 16 << 20;

/** A path's state, with its exact content (a link's target text) when kept. */
export interface FileEntry {
  /** Its state. */
  state: FileState;
  /** Its exact content, when kept. */
  image?: Uint8Array;
}

const CHUNK = 1 << 20;
// The reads here are synchronous, so one buffer serves them all: a fresh zeroed 1 MiB buffer per file cost about
// 130 µs (its pages faulted in), more than reading and hashing a small file.
let chunkBuffer: Uint8Array | undefined;

// The state of a stat result, or undefined for what is not a file, link or folder.
function kindOf(stat: fs.Stats): FileState["type"] | undefined {
  if (stat.isFile()) return "file";
  if (stat.isSymbolicLink()) return "symlink";
  if (stat.isDirectory()) return "directory";
  return undefined;
}

// Reads the whole regular file `real` (confined, never through a link): its
// sha256, and its bytes while within `room`.
function readFile(real: string, size: number, room: number): { sha256: string; size: number; bytes?: Uint8Array } {
  const fd = openReadConfined(real);
  try {
    const hash = createHash("sha256");
    let keep = size <= Math.min(room, IMAGE_FILE_LIMIT);
    const parts: Uint8Array[] = [];
    const buffer = chunkBuffer ??= new Uint8Array(CHUNK);
    let read = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, CHUNK, null);
      if (n === 0) break;
      read += n;
      hash.update(buffer.subarray(0, n));
      if (keep && read <= size) parts.push(buffer.slice(0, n));
      else if (keep) {
        // It grew while read (another process writes it): no image, and nothing more held. Before, every chunk up
        // to the end was kept until the end, as much as the writer added (a sparse GiB in microseconds).
        keep = false;
        parts.length = 0;
      }
    }
    if (!keep || read > size) return { sha256: hash.digest("hex"), size: read };
    const bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    const image = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return { sha256: hash.digest("hex"), size: read, bytes: image };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The exact state of the path `real` (its content hashed), or null when
 * nothing is there; see {@linkcode fileEntryConfined}.
 *
 * Requires `--allow-read` for the path.
 *
 * @example
 * ```ts
 * import { fileStateConfined } from "@toolfence/internal";
 * console.log(fileStateConfined(await Deno.realPath(await Deno.makeTempDir()))?.type); // "directory"
 * ```
 */
export function fileStateConfined(real: string): FileState | null {
  return fileEntryConfined(real, 0)?.state ?? null;
}

/**
 * The exact state of the path `real` (a real path the policy resolved; never
 * following a final link, read in its pinned folder), with its content (a
 * link's target text) when it fits in `room` bytes and
 * {@linkcode IMAGE_FILE_LIMIT}; undefined when nothing (or nothing but a
 * FIFO, socket or device) is there.
 *
 * Requires `--allow-read` for the path.
 *
 * @example
 * ```ts
 * import { fileEntryConfined } from "@toolfence/internal";
 * const file = await Deno.makeTempFile();
 * await Deno.writeTextFile(file, "hi");
 * console.log(fileEntryConfined(await Deno.realPath(file), 1024)?.state.size); // 2
 * ```
 */
export function fileEntryConfined(real: string, room = 0): FileEntry | undefined {
  const stat = lstatConfined(real);
  if (stat === undefined) return undefined;
  const type = kindOf(stat);
  if (type === undefined) return undefined;
  const mode = stat.mode & 0o7777;
  if (type === "directory") return { state: { type, size: 0, sha256: null, mode } };
  if (type === "symlink") {
    const bytes = new Uint8Array(Buffer.from(readlinkConfined(real)));
    return { state: { type, size: bytes.byteLength, sha256: sha256(bytes), mode }, image: bytes };
  }
  // The size read is the size reported: a file growing meanwhile is reported as it was read.
  const { sha256: digest, size, bytes } = readFile(real, stat.size, room);
  return { state: { type, size, sha256: digest, mode }, image: bytes };
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
