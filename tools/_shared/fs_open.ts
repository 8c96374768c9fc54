// Opening a file for reading without ever blocking on it: the type is checked
// from the lstat the file door takes right before it opens (FIFOs,
// sockets and devices are refused unopened), and the open itself is the door's:
// re-checked, non-blocking, and refusing a symlink swapped in anywhere on the
// path since, so a race cannot turn the read into a hang or a read outside the
// workspace.

import fs from "node:fs";
import type { FileDoor, FileTarget } from "@toolfence/core";
import { ToolError } from "@toolfence/core";
import { fileOpError, notFound, wrongType } from "./fs_errors.ts";

/**
 * Files up to this size are read by {@linkcode openForReading} with
 * synchronous calls. Each asynchronous call is a round trip through the
 * thread pool (50-80 µs on a busy 2-core machine) while the call itself takes
 * a few µs, so a small file costs more in round trips than in work; reading
 * this much blocks the event loop for well under a millisecond.
 */
export const SYNC_READ_BYTES = 256 << 10;

/** The most a chunked read of a whole file reads at once. */
export const READ_CHUNK = 1 << 20;

/**
 * A buffer for reading, in chunks, a file that has `size` bytes left: that
 * many and one more (so that one read takes it all and the next finds its
 * end), at least 16 KiB (for a file that grew since its stat), at most
 * {@linkcode READ_CHUNK}. A zeroed 1 MiB buffer costs about 130 µs here (its
 * pages are faulted in), more than all the rest of reading a small file.
 */
export function readBufferFor(size: number): Uint8Array {
  return new Uint8Array(Math.min(READ_CHUNK, Math.max(size + 1, 16 << 10)));
}

/** What a stat result is, in words for messages ("a directory", "a FIFO (named pipe)", ...). */
export function describeType(stat: fs.Stats): string {
  if (stat.isFile()) return "a regular file";
  if (stat.isDirectory()) return "a directory";
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  return "a special file";
}

/** A short machine-readable type name. */
export function typeName(stat: fs.Stats): string {
  if (stat.isFile()) return "file";
  if (stat.isDirectory()) return "directory";
  if (stat.isSymbolicLink()) return "symlink";
  if (stat.isFIFO()) return "fifo";
  if (stat.isSocket()) return "socket";
  if (stat.isCharacterDevice()) return "char_device";
  if (stat.isBlockDevice()) return "block_device";
  return "other";
}

// The stat of a path, before opening it, must be a regular file.
function requireRegular(before: fs.Stats, shown: string, real: string, directoryHint: string): void {
  if (before.isDirectory()) throw wrongType(shown, real, "a directory", "a regular file", directoryHint);
  if (!before.isFile()) {
    throw wrongType(shown, real, describeType(before), "a regular file", "Only regular files can be read.");
  }
}

// What was opened must be the regular file that stat saw.
function requireSameFile(before: fs.Stats, opened: fs.Stats, shown: string, real: string): void {
  if (!opened.isFile() || opened.ino !== before.ino || opened.dev !== before.dev) {
    throw wrongType(shown, real, describeType(opened), "a regular file", "The file was replaced just now; try again.");
  }
}

/** An open file's reads, by descriptor. */
export interface ReadHandle {
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`. */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  /**
   * Reads the whole file from its start: the bytes its stat counted when it was opened (what the caller checked
   * against its limits), and throws `hash_conflict` when the file has grown past them meanwhile.
   */
  readFile(): Promise<Uint8Array>;
  /** Closes the file; it must not be used afterwards. */
  close(): Promise<void>;
}

/** An open regular file and its stat. */
export interface OpenFile {
  handle: ReadHandle;
  stat: fs.Stats;
}

// A target the door's lstat, taken in its pinned folder, found nothing at: gone since it was resolved. Not a stat
// by the path again: that follows a link swapped in for a folder of the path, and its answer or its error (ENOTDIR
// for a file where the link leads, ENOENT for nothing) told whether a path outside the workspace exists.
function gone(target: FileTarget, shown: string): never {
  throw notFound(shown, target.path);
}

// Opens the regular file `target` through the door and checks it is the one its stat saw.
async function openChecked(files: FileDoor, target: FileTarget, shown: string, directoryHint: string) {
  const real = target.path;
  // The type before opening: the lstat the door has just taken (not the resolution's, which may be
  // older), one stat fewer than looking again; the fstat below makes sure the open found that very file.
  let before: fs.Stats | undefined;
  let fd: number;
  try {
    fd = await files.openRead(target, (now) => {
      before = now ?? gone(target, shown);
      requireRegular(before, shown, real, directoryHint);
    });
  } catch (error) {
    throw fileOpError(error, shown, real, "opening");
  }
  try {
    const stat = fs.fstatSync(fd);
    requireSameFile(before!, stat, shown, real);
    return { fd, stat };
  } catch (error) {
    fs.closeSync(fd);
    throw fileOpError(error, shown, real, "reading");
  }
}

/**
 * Opens `target` (a path the file door resolved) for reading, refusing
 * anything but a regular file. `directoryHint` is the fix offered when it is
 * a directory.
 */
export async function openRegularFile(
  files: FileDoor,
  target: FileTarget,
  shown: string,
  directoryHint: string,
): Promise<OpenFile> {
  const { fd, stat } = await openChecked(files, target, shown, directoryHint);
  const read = (buffer: Uint8Array, offset: number, length: number, position: number) =>
    readSomeAsync(fd, buffer, offset, length, position).then((bytesRead) => ({ bytesRead }));
  return {
    stat,
    handle: {
      read,
      // Never past the size the caller checked: before, it read to the end of the file, and a background job
      // that grew a file of 12 bytes (a sparse truncate) between the open and the read had edit_file read 17 MB of
      // it, past its own 64 MiB check by as much as the job liked. One byte more says whether it grew.
      readFile: async () => {
        const chunks: Uint8Array[] = [];
        for (let position = 0;;) {
          const chunk = readBufferFor(stat.size - position);
          const length = Math.min(chunk.length, stat.size + 1 - position);
          const n = await fill((at, len, from) => readSomeAsync(fd, chunk, at, len, from), length, position);
          if (n === 0) break;
          if (position + n > stat.size) {
            throw new ToolError(
              `${shown} grew while it was read (it had ${stat.size} bytes when opened): something is writing to it`,
              {
                code: "hash_conflict",
                recoveryHint: "Wait until whatever writes to it is done, then try again.",
                details: { path: target.path, size: stat.size },
              },
            );
          }
          chunks.push(chunk.subarray(0, n));
          position += n;
        }
        const whole = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
        let at = 0;
        for (const c of chunks) {
          whole.set(c, at);
          at += c.length;
        }
        return whole;
      },
      close: () => Promise.resolve(fs.closeSync(fd)),
    },
  };
}

/**
 * {@linkcode openRegularFile} for a tool that takes files only: a folder or
 * a special file is `not_a_file`.
 */
export async function openFileOnly(files: FileDoor, target: FileTarget, shown: string): Promise<OpenFile> {
  try {
    return await openRegularFile(files, target, shown, "Give the path of a file, not a directory.");
  } catch (error) {
    if (!(error instanceof ToolError) || error.code !== "is_directory" && error.code !== "not_regular_file") {
      throw error;
    }
    throw new ToolError(`${shown} is not a regular file`, { code: "not_a_file", kind: "semantic", cause: error });
  }
}

/**
 * A regular file open for reading by descriptor. Reads are synchronous for a
 * file of at most {@linkcode SYNC_READ_BYTES} (as it was when opened) and go
 * through the thread pool otherwise; stat and close are synchronous either
 * way, as they take the same few µs whatever the size.
 */
export interface ReadableFile {
  /** The file's stat once open: its size bounds every read. */
  readonly stat: fs.Stats;
  /** Reads up to `length` bytes at `position` into the start of `buffer`; fewer only at the end of the file. */
  read(buffer: Uint8Array, length: number, position: number): Promise<number>;
  /**
   * Whether the file is still the version {@linkcode ReadableFile.stat} describes (did it change while it was
   * read?), asked of the file door ({@linkcode FileDoor.unchangedSince}): an lstat of its real path, where an
   * fstat of the descriptor through Deno's Node layer cost three times as much (about 13 against 4 µs).
   */
  unchanged(): boolean;
  /** Closes the file; it must not be used afterwards. */
  close(): void;
}

/**
 * Opens `target` (a path the file door resolved) for reading, refusing
 * anything but a regular file, with the checks of {@linkcode openRegularFile}:
 * the type from the lstat the door takes right before the open,
 * the door's open, and fstat to make sure the file opened is the one that
 * lstat saw.
 */
export async function openForReading(
  files: FileDoor,
  target: FileTarget,
  shown: string,
  directoryHint: string,
): Promise<ReadableFile> {
  const { fd, stat } = await openChecked(files, target, shown, directoryHint);
  const readSome = stat.size <= SYNC_READ_BYTES ? readSomeSync : readSomeAsync;
  return {
    stat,
    read: (buffer, length, position) => fill((at, n, from) => readSome(fd, buffer, at, n, from), length, position),
    unchanged: () => files.unchangedSince(target.path, stat),
    close: () => fs.closeSync(fd),
  };
}

function readSomeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number {
  return fs.readSync(fd, buffer, offset, length, position);
}

function readSomeAsync(
  fd: number,
  buffer: Uint8Array,
  offset: number,
  length: number,
  position: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    fs.read(fd, buffer, offset, length, position, (error, bytesRead) => error ? reject(error) : resolve(bytesRead));
  });
}

// Reads `length` bytes from `position` on, or up to the end of the file: one
// read may return fewer bytes than asked for.
async function fill(
  readSome: (offset: number, length: number, position: number) => number | Promise<number>,
  length: number,
  position: number,
): Promise<number> {
  let total = 0;
  while (total < length) {
    const bytesRead = await readSome(total, length - total, position + total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return total;
}

/** Reads up to `length` bytes at `position` into `buffer`, retrying short reads until EOF. */
export function readFully(
  handle: ReadHandle,
  buffer: Uint8Array,
  length: number,
  position: number,
): Promise<number> {
  return fill(async (offset, n, from) => (await handle.read(buffer, offset, n, from)).bytesRead, length, position);
}
