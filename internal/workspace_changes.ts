/**
 * What a shell command changed in the workspace, from a comparison of the
 * workspace before it started and after it ended (the policy's process door
 * takes both, and reports the changes in the run's outcome): a stat snapshot of every
 * entry (links not followed), compared by inode, size, mtime, ctime, mode and
 * type; content hashed only where that comparison says something changed, with
 * a per-session hash cache keyed by device, inode, size, mtime and ctime.
 *
 * Before-hashes are known when the cache has the file's key from an earlier
 * snapshot (or the before snapshot hashed it: new or changed files within a
 * small budget are hashed then); otherwise the before state of a modified or
 * deleted file says `sha256: null` (unknown) and the change cannot be undone.
 * A rename is recognised by its inode, times and content
 * ({@linkcode isRename}). The session temp dir is not compared (the
 * command's output files live there).
 *
 * Why two full scans and not a folder watcher (inotify through
 * `Deno.watchFs`): a watcher was built and dropped, because its events are
 * not the whole truth, and a command that knows that could hide a change.
 * Events are lost for a symlink that points at itself (the watcher follows
 * it to classify it), including one renamed over an existing file, whose
 * deletion then goes unseen; a folder moved keeps its watch under its old
 * name; and a write through a hard link made in the temp dir is reported
 * there, not in the workspace; and writes through a shared memory mapping
 * raise no inotify event at all. A stat scan sees each of these. It costs about
 * 10 µs an entry here (bench/workspace_changes.ts, BENCHMARKS.md).
 *
 * A stat key names a file's content only once it is settled
 * ({@linkcode isSettled}): a hash is cached only for a file whose ctime was
 * `RACY_MS` older than the scan that saw it, and a file changed more
 * recently than that before the command started is compared by its
 * content, not its key.
 *
 * @module
 */

import fs from "node:fs";
import path from "node:path";
import type { FileChange, FileDoor, FileState, SessionBase, ToolContext } from "@toolfence/core";
import { comparePaths, isSettled } from "@toolfence/core";
import { denoLstat, namesIn } from "./_runtime_fs.ts";
import { inFolder } from "./confined_fs.ts";

/** Past this many entries the workspace is not compared (the call reports no changes); see {@linkcode scanWorkspace}. */
export const MAX_SCAN_ENTRIES = 200_000;
/** Bytes of new or changed files the before snapshot may hash, so that their before-hashes are known. */
export const BEFORE_HASH_BUDGET = 8 << 20;

/** What a scan keeps of one entry. */
export interface StatEntry {
  /** File, folder, link or other. */
  type: FileState["type"];
  /** Its mode bits. */
  mode: number;
  /** Its size in bytes. */
  size: number;
  /** Its inode number. */
  ino: number;
  /** Its birth time in milliseconds, where the file system keeps one; else null. */
  birth: number | null;
  /** Its modification time in milliseconds. */
  mtime: number;
  /** Its status-change time in milliseconds (which no call can set back). */
  ctime: number;
  /** dev:ino:size:mtime:ctime, the key of the hash cache. */
  key: string;
}

/** A stat snapshot of a workspace: entries by path relative to its root. */
export interface WorkspaceScan {
  /** The real path of the root. */
  root: string;
  /** Entries by relative path (`/` separators). */
  entries: Map<string, StatEntry>;
  /** Whether the scan stopped at {@linkcode MAX_SCAN_ENTRIES}. */
  incomplete: boolean;
  /** The wall-clock time it started, in milliseconds. */
  startedAt: number;
  /** How long the scan took, in milliseconds. */
  ms: number;
}

const caches = new WeakMap<object, Map<string, string>>();
const NOTHING: ReadonlySet<string> = new Set();

function cacheOf(session: SessionBase): Map<string, string> {
  let cache = caches.get(session.workspace);
  if (cache === undefined) caches.set(session.workspace, cache = new Map());
  // Keys of files long gone are dropped all at once, past a bound.
  if (cache.size > MAX_SCAN_ENTRIES) cache.clear();
  return cache;
}

function typeOf(stat: fs.Stats): FileState["type"] | undefined {
  if (stat.isFile()) return "file";
  if (stat.isDirectory()) return "directory";
  if (stat.isSymbolicLink()) return "symlink";
  return undefined;
}

function lstatEntry(full: string): StatEntry | undefined {
  try {
    if (denoLstat !== undefined) {
      const stat = denoLstat(full);
      const type = stat.isFile ? "file" : stat.isDirectory ? "directory" : stat.isSymlink ? "symlink" : undefined;
      if (type === undefined) return undefined;
      return {
        type,
        mode: (stat.mode ?? 0) & 0o7777,
        size: type === "directory" ? 0 : stat.size,
        ino: stat.ino ?? 0,
        birth: stat.birthtime?.getTime() ?? null,
        mtime: stat.mtime?.getTime() ?? 0,
        ctime: stat.ctime?.getTime() ?? 0,
        key: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtime?.getTime()}:${stat.ctime?.getTime()}`,
      };
    }
    const stat = fs.lstatSync(full);
    const type = typeOf(stat);
    if (type === undefined) return undefined;
    return {
      type,
      mode: stat.mode & 0o7777,
      size: type === "directory" ? 0 : stat.size,
      ino: stat.ino,
      // Node gives 0 where the file system keeps no birth time.
      birth: stat.birthtimeMs > 0 ? stat.birthtimeMs : null,
      mtime: stat.mtimeMs,
      ctime: stat.ctimeMs,
      key: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`,
    };
  } catch {
    return undefined;
  }
}

/**
 * Stats every entry under `root` (never following a link), skipping the
 * folders in `skip` (real paths; the folder itself is kept, not what is in
 * it) and leaving out the entries in `ignore` (absolute paths) altogether, up
 * to {@linkcode MAX_SCAN_ENTRIES}.
 */
export function scanWorkspace(
  root: string,
  skip: readonly string[] = [],
  ignore: ReadonlySet<string> = NOTHING,
): WorkspaceScan {
  const startedAt = Date.now();
  const started = performance.now();
  const entries = new Map<string, StatEntry>();
  let incomplete = false;
  const walk = (dir: string, prefix: string): void => {
    // Listed and stat-ed in the folder pinned at its real path (a folder a command swapped for a link meanwhile is
    // refused, never listed): a walk by path would report the entries of the folder outside it leads to.
    let found: [string, StatEntry][];
    try {
      found = inFolder(dir, (at) => {
        const here: [string, StatEntry][] = [];
        for (const name of namesIn(at("."))) {
          if (entries.size + here.length >= MAX_SCAN_ENTRIES) {
            incomplete = true;
            break;
          }
          const entry = lstatEntry(at(name));
          if (entry !== undefined) here.push([name, entry]);
        }
        return here;
      });
    } catch {
      return;
    }
    for (const [name, entry] of found) {
      if (entries.size >= MAX_SCAN_ENTRIES) {
        incomplete = true;
        return;
      }
      const full = dir + "/" + name;
      if (ignore.has(full)) continue;
      const rel = prefix + name;
      entries.set(rel, entry);
      if (entry.type === "directory" && !skip.includes(full)) walk(full, rel + "/");
    }
  };
  walk(root, "");
  return { root, entries, incomplete, startedAt, ms: performance.now() - started };
}

/** A comparison in progress: the before snapshot of one command. */
export interface WorkspaceWatch {
  /** The before snapshot. */
  before: WorkspaceScan;
  /**
   * Takes the after snapshot, compares, and reports every change to
   * `ctx.recordFileChange` (the context of the call that reports them: the
   * command's, or for a job the first that sees it ended); returns them. Call
   * it once the command and everything it started are gone.
   */
  finish(ctx: ToolContext): Promise<FileChange[]>;
}

// Whether `entry`, seen by a scan that started at `scannedAt`, last changed long enough before it that any later
// change gives it another stat key.
function settled(entry: StatEntry, scannedAt: number): boolean {
  return isSettled(entry.ctime, scannedAt);
}

// The state of `real` with its sha256: from the cache by its stat key, else hashed (confined), and cached when the
// key is settled.
function hashed(
  files: FileDoor,
  cache: Map<string, string>,
  real: string,
  entry: StatEntry,
  scannedAt: number,
): FileState | null {
  if (entry.type === "directory") return { type: "directory", size: 0, sha256: null, mode: entry.mode };
  const known = cache.get(entry.key);
  if (known !== undefined) return { type: entry.type, size: entry.size, sha256: known, mode: entry.mode };
  let read;
  try {
    read = files.snapshot(real, 0);
  } catch {
    return null;
  }
  if (read === undefined || read.state.type !== entry.type) return null;
  if (read.state.sha256 !== null && read.state.size === entry.size && settled(entry, scannedAt)) {
    cache.set(entry.key, read.state.sha256);
  }
  return read.state;
}

/**
 * Whether `now`, an entry at a path the before snapshot did not have, is
 * `was`, an entry that is gone from its path, renamed. A rename keeps the
 * inode, the type, the size, the modification and birth times and the
 * content; the inode alone does not say it, as Linux reuses a freed inode
 * number at once: a file deleted and another made by one command (`rm a;
 * echo x > b`) can share one, and, made within one tick of the kernel's
 * file clock, also their times. So all of them are compared: the birth
 * times where the file system keeps them, the contents by their SHA-256
 * where both are known (`null` where not). A file renamed and then written
 * is not recognised, and is reported as deleted and created.
 *
 * @example
 * ```ts
 * import { isRename } from "@toolfence/internal";
 * const was = { type: "file", mode: 0o644, size: 2, ino: 7, birth: 1000, mtime: 1000, ctime: 1000, key: "" } as const;
 * console.log(isRename(was, { ...was, key: "moved" }, null, null)); // true
 * console.log(isRename(was, { ...was, birth: 2000, mtime: 2000 }, null, null)); // false: another file
 * console.log(isRename(was, was, "a".repeat(64), "b".repeat(64))); // false: other bytes in a reused inode
 * ```
 */
export function isRename(
  was: StatEntry,
  now: StatEntry,
  wasSha256: string | null,
  nowSha256: string | null,
): boolean {
  if (was.ino !== now.ino || was.type !== now.type || was.size !== now.size || was.mtime !== now.mtime) return false;
  if (was.birth !== null && now.birth !== null && was.birth !== now.birth) return false;
  return wasSha256 === null || nowSha256 === null || wasSha256 === nowSha256;
}

// The before state of `entry` with the hash the cache or the before snapshot has of it, else `sha256: null`.
function beforeState(entry: StatEntry, hashes: BeforeHashes): FileState {
  if (entry.type === "directory") return { type: "directory", size: 0, sha256: null, mode: entry.mode };
  const sha256 = hashes.cache.get(entry.key) ?? hashes.unsettled.get(entry.key) ?? null;
  return { type: entry.type, size: entry.size, sha256, mode: entry.mode };
}

// What the before snapshot knows of contents: the session's cache, and the hashes of files too recently changed
// to be cached (by stat key, which is unique within one scan).
interface BeforeHashes {
  cache: Map<string, string>;
  unsettled: Map<string, string>;
}

/**
 * Starts watching the workspace of `ctx` for one command: the before
 * snapshot, now, a stat scan of every entry. New or changed files (not in
 * the hash cache) are hashed within {@linkcode BEFORE_HASH_BUDGET} so that
 * their before state is known. `finish` scans again and compares. Entries
 * in `ignore` (absolute paths: the sandbox's placeholders, mount points the
 * command cannot change, gone before `finish`) are in neither scan.
 *
 * Requires `--allow-read` for the workspace.
 *
 * @example
 * ```ts ignore
 * const watch = await watchWorkspace(ctx);
 * // ... the command runs and ends ...
 * const changes = await watch.finish(ctx);
 * ```
 */
export async function watchWorkspace(ctx: ToolContext, ignore: readonly string[] = []): Promise<WorkspaceWatch> {
  const root = ctx.workspace.workdir;
  const skip = await skippedFolders(ctx);
  const cache = cacheOf(ctx.session);
  const ignored = ignore.length === 0 ? NOTHING : new Set(ignore);
  const before = scanWorkspace(root, skip, ignored);
  const hashes = hashWithinBudget(ctx.policy.files, before, cache);
  return {
    before,
    finish: (reporter) => {
      const after = scanWorkspace(root, skip, ignored);
      if (before.incomplete || after.incomplete) return Promise.resolve([]);
      return Promise.resolve(reportScanChanges(reporter, before, after, hashes));
    },
  };
}

// Hashes the files and links of `before` the cache does not have, within the budget: first those changed too
// recently for their stat key to name their content, as only their hashes tell whether the command changed them.
function hashWithinBudget(files: FileDoor, before: WorkspaceScan, cache: Map<string, string>): BeforeHashes {
  const unsettled = new Map<string, string>();
  const unknown: [string, StatEntry][] = [];
  for (const item of before.entries) {
    if (item[1].type !== "directory" && !cache.has(item[1].key)) unknown.push(item);
  }
  unknown.sort(([, a], [, b]) => Number(settled(a, before.startedAt)) - Number(settled(b, before.startedAt)));
  let budget = BEFORE_HASH_BUDGET;
  for (const [rel, entry] of unknown) {
    if (entry.size > budget) continue;
    budget -= entry.size;
    const state = hashed(files, cache, path.join(before.root, rel), entry, before.startedAt);
    if (state?.sha256 && state.size === entry.size && !cache.has(entry.key)) unsettled.set(entry.key, state.sha256);
  }
  return { cache, unsettled };
}

async function skippedFolders(ctx: ToolContext): Promise<string[]> {
  // The temp dir lives elsewhere unless the session was told to put it in the workspace.
  try {
    return [await ctx.workspace.tempDir()];
  } catch {
    return [];
  }
}

function reportScanChanges(
  ctx: ToolContext,
  before: WorkspaceScan,
  after: WorkspaceScan,
  hashes: BeforeHashes,
): FileChange[] {
  const root = before.root;
  const cache = hashes.cache;
  const changes: FileChange[] = [];
  const created: [string, StatEntry][] = [];
  const deleted = new Map<number, [string, StatEntry]>();
  const gone: [string, StatEntry][] = [];
  for (const [rel, now] of after.entries) {
    const was = before.entries.get(rel);
    if (was === undefined) {
      created.push([rel, now]);
      continue;
    }
    const sameStat = was.key === now.key && was.mode === now.mode && was.type === now.type;
    if (sameStat && (was.type === "directory" || settled(was, before.startedAt))) continue;
    const wasState = beforeState(was, hashes);
    const afterState = hashed(ctx.policy.files, cache, path.join(root, rel), now, after.startedAt);
    if (afterState === null) continue;
    if (
      wasState.type === afterState.type && wasState.mode === afterState.mode &&
      wasState.size === afterState.size && wasState.sha256 !== null &&
      wasState.sha256 === afterState.sha256
    ) continue; // touched, not changed
    if (was.type === "directory" && now.type === "directory" && was.mode === now.mode) continue; // entries changed
    changes.push({ path: rel, change: "modified", before: wasState, after: afterState });
  }
  for (const [rel, was] of before.entries) {
    if (after.entries.has(rel)) continue;
    if (was.type !== "directory") deleted.set(was.ino, [rel, was]);
    gone.push([rel, was]);
  }
  const movedFrom = new Set<string>();
  for (const [rel, now] of created) {
    const afterState = hashed(ctx.policy.files, cache, path.join(root, rel), now, after.startedAt);
    if (afterState === null) continue;
    const source = now.type !== "directory" ? deleted.get(now.ino) : undefined;
    if (source !== undefined) {
      const [from, was] = source;
      const before = beforeState(was, hashes);
      if (isRename(was, now, before.sha256, afterState.sha256)) {
        // One rename per gone entry: another new name of the same inode (a hard link made after the move) is new.
        deleted.delete(now.ino);
        movedFrom.add(from);
        changes.push({ path: rel, change: "moved", from, before, after: afterState });
        continue;
      }
    }
    changes.push({ path: rel, change: "created", before: null, after: afterState });
  }
  const ordered = changes.sort((a, b) => comparePaths(a.path, b.path));
  const removals = gone.filter(([rel]) => !movedFrom.has(rel)).sort((a, b) => comparePaths(b[0], a[0]))
    .map(([rel, was]): FileChange => ({ path: rel, change: "deleted", before: beforeState(was, hashes), after: null }));
  const all = [...ordered, ...removals];
  for (const change of all) ctx.recordFileChange(change);
  return all;
}
