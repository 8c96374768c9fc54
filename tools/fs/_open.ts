// Opening a file for reading without ever blocking on it: the type is checked
// with stat before opening (FIFOs, sockets and devices are refused unopened),
// and the open itself is non-blocking and refuses a symlink swapped in since,
// so a race cannot turn the read into a hang or a read outside the workspace.

import fs from "node:fs";
import fsp from "node:fs/promises";
import { fileOpError, wrongType } from "./_errors.ts";

const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOFOLLOW ?? 0);

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

/** An open regular file and its stat. */
export interface OpenFile {
  handle: fsp.FileHandle;
  stat: fs.Stats;
}

/**
 * Opens `real` (a path the policy resolved) for reading, refusing anything but
 * a regular file. `directoryHint` is the fix offered when it is a directory.
 */
export async function openRegularFile(real: string, shown: string, directoryHint: string): Promise<OpenFile> {
  let before: fs.Stats;
  try {
    before = await fsp.stat(real);
  } catch (error) {
    throw fileOpError(error, shown, real, "reading");
  }
  if (before.isDirectory()) throw wrongType(shown, real, "a directory", "a regular file", directoryHint);
  if (!before.isFile()) {
    throw wrongType(shown, real, describeType(before), "a regular file", "Only regular files can be read.");
  }
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(real, OPEN_FLAGS);
  } catch (error) {
    throw fileOpError(error, shown, real, "opening");
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.ino !== before.ino || stat.dev !== before.dev) {
      throw wrongType(shown, real, describeType(stat), "a regular file", "The file was replaced just now; try again.");
    }
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw fileOpError(error, shown, real, "reading");
  }
}

/** Reads up to `length` bytes at `position` into `buffer`, retrying short reads until EOF. */
export async function readFully(
  handle: fsp.FileHandle,
  buffer: Uint8Array,
  length: number,
  position: number,
): Promise<number> {
  let total = 0;
  while (total < length) {
    const { bytesRead } = await handle.read(buffer, total, length - total, position + total);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  return total;
}

/** Whether two stats describe the same unchanged file. */
export function sameVersion(a: fs.Stats, b: fs.Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs;
}
