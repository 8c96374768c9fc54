// The file trees of a scratch copy: reading the state of an entry, walking a
// tree and copying it, every look-up in its pinned folder and never through a
// link (see ../confined_fs.ts), so that a link to something outside never
// brings that content in.

import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import type { FileState } from "@toolfence/core";
import {
  chmodConfined,
  createConfined,
  inFolder,
  lstatConfined,
  mkdirConfined,
  namesConfined,
  openReadConfined,
  PATH_MAX_BYTES,
  quickLstat,
  readlinkConfined,
  symlinkConfined,
  writeAll,
} from "@toolfence/internal";
import { CLONE_BATCH, cloneInto, type CloneJob, type CloneState, openForClone } from "./_clone.ts";

const CHUNK = 1 << 20;
// Files below this size are read synchronously.
const SMALL = 64 * 1024;

/** The entries of a tree by path relative to its root (`/`-separated). */
export type Tree = Map<string, FileState>;

/** What a walk or copy met that it does not carry: FIFOs, sockets, devices. */
export interface TreeReport {
  /** Relative paths of the special files left out. */
  skipped: string[];
}

function readChunk(fd: number, buffer: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) =>
    fs.read(fd, buffer, 0, buffer.length, null, (error, n) => (error ? reject(error) : resolve(n)))
  );
}

function changedUnderUs(real: string): Error {
  return Object.assign(new Error(`${real} changed while it was read`), { code: "ECHANGED", path: real });
}

// Small chunks are written synchronously, like they are read.
function writeFully(fd: number, chunk: Uint8Array, sync: boolean): Promise<void> {
  if (!sync) return writeAll(fd, chunk);
  for (let offset = 0; offset < chunk.length;) offset += fs.writeSync(fd, chunk, offset, chunk.length - offset);
  return Promise.resolve();
}

/** The hex SHA-256 of a string. */
export function sha256Text(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Thrown by {@linkcode readRegular} when a file holds more than the bytes it may read. */
export class PastLimit extends Error {
  constructor(readonly real: string, readonly limit: number) {
    super(`${real} holds more than ${limit} bytes`);
  }
}

/**
 * Streams the regular file `real` (opened without following a link, and
 * checked to be the entry `stat` described) through `sink`; returns its
 * SHA-256 and size. Throws {@linkcode PastLimit} once it has read more than
 * `limit` bytes (a file may grow while it is read).
 */
export async function readRegular(
  real: string,
  stat: fs.Stats,
  sink?: (chunk: Uint8Array) => Promise<void>,
  limit = Infinity,
): Promise<{ sha256: string; size: number }> {
  const fd = openReadConfined(real);
  try {
    const opened = fs.fstatSync(fd);
    if (!opened.isFile() || opened.ino !== stat.ino || opened.dev !== stat.dev) throw changedUnderUs(real);
    const hash = createHash("sha256");
    let size = 0;
    if (opened.size < SMALL) {
      // A small file in one synchronous read or two: no round trips through the thread pool.
      const buffer = new Uint8Array(SMALL);
      for (let n = fs.readSync(fd, buffer, 0, SMALL, null); n > 0; n = fs.readSync(fd, buffer, 0, SMALL, null)) {
        const chunk = buffer.subarray(0, n);
        hash.update(chunk);
        if (sink) await sink(chunk);
        size += n;
        if (size > limit) throw new PastLimit(real, limit);
      }
      return { sha256: hash.digest("hex"), size };
    }
    const buffer = new Uint8Array(CHUNK);
    for (;;) {
      const n = await readChunk(fd, buffer);
      if (n === 0) break;
      const chunk = buffer.subarray(0, n);
      hash.update(chunk);
      if (sink) await sink(chunk);
      size += n;
      if (size > limit) throw new PastLimit(real, limit);
    }
    return { sha256: hash.digest("hex"), size };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The state of the entry at the real path `real`, never following a final
 * link; undefined when nothing is there, `special` for a FIFO, socket or device.
 */
export async function stateAt(real: string): Promise<FileState | "special" | undefined> {
  const stat = lstatConfined(real);
  if (stat === undefined) return undefined;
  return await stateOf(real, stat);
}

async function stateOf(real: string, stat: fs.Stats): Promise<FileState | "special"> {
  const mode = stat.mode & 0o7777;
  if (stat.isSymbolicLink()) {
    const target = readlinkConfined(real);
    return { type: "symlink", size: Buffer.byteLength(target), sha256: sha256Text(target), mode };
  }
  if (stat.isDirectory()) return { type: "directory", size: 0, sha256: null, mode };
  if (!stat.isFile()) return "special";
  const { sha256, size } = await readRegular(real, stat);
  return { type: "file", size, sha256, mode };
}

// How many names of a folder are lstat-ed in one pinned block.
const STAT_CHUNK = 256;

// The lstat of every entry of a folder, in pinned blocks of STAT_CHUNK names, `visit` told of them first and called
// between blocks (see WalkOptions.visit).
async function entriesOf(dir: string, visit?: WalkOptions["visit"]): Promise<[string, fs.Stats][]> {
  const names = namesConfined(dir).sort();
  await visit?.(names.length);
  const found: [string, fs.Stats][] = [];
  for (let start = 0; start < names.length; start += STAT_CHUNK) {
    if (start > 0) await visit?.(0);
    inFolder(dir, (at) => {
      for (const name of names.slice(start, start + STAT_CHUNK)) {
        try {
          found.push([name, quickLstat(at(name))]);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
    });
  }
  return found;
}

/** What a walk does with each entry. */
export interface WalkOptions {
  /** Leaves an entry out (and, for a folder, all below it); `stat` is the entry's lstat. */
  skip?: (relative: string, real: string, stat: fs.Stats) => boolean;
  /** Copies every entry into this folder, which must exist (its subtree is made as the walk goes). */
  copyTo?: string;
  /** Stops between entries. */
  signal?: AbortSignal;
  /** Clone regular files into the copy where possible (see `_clone.ts`). */
  clone?: CloneState;
  /** Reads a regular file's state when nothing is copied (default: hashes it whole with {@linkcode readRegular}). */
  readFile?: (real: string, relative: string, stat: fs.Stats) => Promise<{ sha256: string | null; size: number }>;
  /** Told the lstat of each regular file's copy once it is written. */
  copied?: (stat: fs.Stats) => void;
  /**
   * Told how many entries a folder holds before they are looked at, and called with 0 between blocks of them and
   * between entries: a promise it returns is awaited (to let the event loop run), and it may throw to stop the walk.
   */
  visit?: (entries: number) => Promise<void> | undefined;
}

/**
 * Walks the entry `real` (relative path `relative`) and everything below it
 * into `tree`, copying as it goes when `options.copyTo` is set. `stat` is the
 * entry's lstat. Special files are left out and listed in `report`. A
 * folder's mode is set on its copy once its entries are in, so that a
 * read-only folder can be filled.
 */
export async function walkEntry(
  real: string,
  relative: string,
  stat: fs.Stats,
  tree: Tree,
  report: TreeReport,
  options: WalkOptions,
): Promise<void> {
  options.signal?.throwIfAborted();
  if (options.skip?.(relative, real, stat)) return;
  // A path longer than the system takes cannot be looked at by its name, nor made in the workspace: it is left out
  // like a special file. Before, a command's 30 nested folders of 200 letters made every look at the copy fail (a
  // misleading path_changed), so nothing else could be published.
  if (Buffer.byteLength(real) > PATH_MAX_BYTES) {
    report.skipped.push(relative);
    return;
  }
  const mode = stat.mode & 0o7777;
  const copy = options.copyTo === undefined ? undefined : path.posix.join(options.copyTo, relative);
  if (stat.isSymbolicLink()) {
    const target = readlinkConfined(real);
    if (copy !== undefined) symlinkConfined(target, copy);
    tree.set(relative, { type: "symlink", size: Buffer.byteLength(target), sha256: sha256Text(target), mode });
  } else if (stat.isFile()) {
    if (copy === undefined) {
      const { sha256, size } = await (options.readFile?.(real, relative, stat) ?? readRegular(real, stat));
      tree.set(relative, { type: "file", size, sha256, mode });
      return;
    }
    const { fd } = createConfined(copy, mode, true);
    try {
      const { sha256, size } = await readRegular(real, stat, (chunk) => writeFully(fd, chunk, stat.size < SMALL));
      tree.set(relative, { type: "file", size, sha256, mode });
      options.copied?.(fs.fstatSync(fd));
    } finally {
      fs.closeSync(fd);
    }
  } else if (stat.isDirectory()) {
    if (copy !== undefined) mkdirConfined(copy, 0o700);
    tree.set(relative, { type: "directory", size: 0, sha256: null, mode });
    await walkChildren(real, relative, copy, tree, report, options);
    if (copy !== undefined) chmodConfined(copy, mode);
  } else {
    report.skipped.push(relative);
  }
}

/**
 * Walks the whole tree under the folder `root` (not the root itself) into a
 * {@linkcode Tree}, copying it below `options.copyTo` when set.
 */
export async function walkTree(root: string, options: WalkOptions = {}): Promise<{ tree: Tree; report: TreeReport }> {
  const tree: Tree = new Map();
  const report: TreeReport = { skipped: [] };
  await walkChildren(root, "", options.copyTo, tree, report, options);
  return { tree, report };
}

// The entries of the folder `real` (relative path `relative`, "" for a root), copied into `copy` when set: the
// regular files cloned in batches where cloning works, everything else one by one.
async function walkChildren(
  real: string,
  relative: string,
  copy: string | undefined,
  tree: Tree,
  report: TreeReport,
  options: WalkOptions,
): Promise<void> {
  const children = await entriesOf(real, options.visit);
  const cloned = new Set<string>();
  const files = children.filter(([name, child]) =>
    child.isFile() && !options.skip?.(relative === "" ? name : relative + "/" + name, real + "/" + name, child)
  );
  // In batches, so that a folder of many files never holds more than one batch of descriptors open.
  for (let start = 0; copy !== undefined && options.clone?.usable && start < files.length; start += CLONE_BATCH) {
    const jobs: (CloneJob & { name: string })[] = [];
    try {
      for (const [name, child] of files.slice(start, start + CLONE_BATCH)) {
        const fd = openForClone(real + "/" + name, child);
        if (fd !== undefined) jobs.push({ fd, stat: child, to: copy + "/" + name, name });
      }
      const left = new Set(cloneInto(copy, jobs, options.clone));
      for (const job of jobs) if (!left.has(job)) cloned.add(job.name);
    } finally {
      for (const job of jobs) fs.closeSync(job.fd);
    }
  }
  for (const [name, child] of children) {
    options.signal?.throwIfAborted();
    await options.visit?.(0);
    const childRelative = relative === "" ? name : relative + "/" + name;
    if (!cloned.has(name)) {
      await walkEntry(real + "/" + name, childRelative, child, tree, report, options);
      continue;
    }
    // The digest is of what the copy holds: the clone is read back.
    const made = copy + "/" + name;
    const stat = lstatConfined(made)!;
    const { sha256, size } = await readRegular(made, stat);
    tree.set(childRelative, { type: "file", size, sha256, mode: child.mode & 0o7777 });
    options.copied?.(stat);
  }
}

/** The lstat of `real` in its pinned folder (undefined when absent). */
export { lstatConfined };
