/**
 * What a shell command changed in the workspace, from the state of the
 * workspace when it started and when it ended (the policy's process door opens
 * a window before the command and closes it after; the changes go into the
 * run's outcome): a stat of every entry (links not followed), compared by
 * inode, size, mtime, ctime, mode and type; content hashed only where that
 * comparison says something changed, with a per-session hash cache keyed by
 * device, inode, size, mtime and ctime.
 *
 * The session keeps the entries between commands, and a window looks only
 * where something may have changed: for a command in the sandbox, at the
 * names the watch of the workspace's folders reported (inotify, read by a
 * resident program of ours, `_folder_events.ts`) and at the files with more
 * than one name; otherwise at every entry (a stat scan), as the first look
 * is. {@linkcode watchWorkspace} says why the first cannot miss a change.
 *
 * Not `Deno.watchFs`: a watcher built on it was dropped, because its events
 * are not the whole truth (its channel drops events when full, without a word;
 * it drops those whose path does not resolve, a link to itself renamed over a
 * file among them; it drops the watcher's own errors). The program reads the
 * kernel's queue itself and says when it overflowed. A write through a shared
 * memory mapping raises no event of its own, but its file was opened for
 * writing, and the last close of it does. A write through a hard link outside
 * the workspace's folders raises its event there: such files are stat'ed at
 * every look, and the temp dir (the one other folder a sandboxed command may
 * write) is watched for writes to files with more than one name.
 *
 * Before-hashes are known when the cache has the file's key from an earlier
 * look (or the window's start hashed it: new or changed files within a small
 * budget are hashed then); otherwise the before state of a modified or
 * deleted file says `sha256: null` (unknown) and the change cannot be undone.
 * A rename is recognised by its inode, times and content
 * ({@linkcode isRename}). The session temp dir is not compared (the
 * command's output files live there).
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
import { isSettled } from "@toolfence/core";
import { denoLstat, namesIn } from "./_runtime_fs.ts";
import { type FolderPin, inFolder } from "./confined_fs.ts";
import { FolderEvents } from "./_folder_events.ts";
import type { EntryKind, WorkspaceListing } from "./sandbox_mounts.ts";
import { serialQueue } from "./serial_queue.ts";
import { type Slicer, slicer } from "./slicer.ts";

/** Past this many entries the workspace is not compared (the call reports no changes); see {@linkcode scanWorkspace}. */
export const MAX_SCAN_ENTRIES = 200_000;
/** Bytes of new or changed files the before snapshot may hash, so that their before-hashes are known. */
export const BEFORE_HASH_BUDGET = 8 << 20;
/**
 * How many files the before snapshot may hash, whatever their size: each is an open, a read and a close on the
 * server's thread. Bytes alone did not bound it: 200,000 empty files a command made were hashed one by one at the
 * next command's start, the whole server's event loop held for 20 s.
 */
export const BEFORE_HASH_FILES = 2048;
/**
 * Bytes of the files a command created or changed that its change report may read to hash them; past it a file's
 * `after` says `sha256: null` (unknown). The report reads them on the server's thread, outside every limit of the
 * command, and bytes cost the command nothing to make: before, a command's 32 sparse files of 64 MiB and 256 hard
 * links of one 1 MiB file (no disk, milliseconds) had 2.3 GiB read and hashed after it, 5 s of the server's time, and
 * `truncate -s 1G` of 8 files 23 s; thousands of them would have taken hours.
 */
export const AFTER_HASH_BUDGET = 256 << 20;
/**
 * The largest file the change report hashes: each is read in one synchronous stretch, and one sparse file of 256 MiB
 * held the event loop 1.5 s here (16 MiB: a few tens of milliseconds). A bigger one's `after` says `sha256: null`.
 */
export const AFTER_HASH_FILE_BYTES = 16 << 20;

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
  /** Its number of hard links (names). */
  links: number;
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
  /**
   * The folders it found but could not list (relative paths): their real
   * path is longer than the system's limit on a path ({@linkcode PATH_MAX_BYTES}),
   * so no call can enter them by name. What lies below them is not seen.
   */
  unlisted: string[];
  /** The wall-clock time it started, in milliseconds. */
  startedAt: number;
  /** How long the scan took, in milliseconds. */
  ms: number;
}

/**
 * The longest real path, in bytes, that the scans enter (Linux's PATH_MAX,
 * 4,096 bytes with the closing NUL). A command can make folders deeper than
 * that one `chdir` at a time; a scan lists them as folders it could not
 * enter, and a change report below them says it is incomplete.
 */
export const PATH_MAX_BYTES = 4095;

const encoder = new TextEncoder();
const caches = new WeakMap<object, Map<string, string>>();
const NOTHING: ReadonlySet<string> = new Set();
const NOTHING_FOUND: ReadonlyMap<string, StatEntry> = new Map();

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
        links: stat.nlink ?? 1,
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
      links: stat.nlink,
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

/** How many names of one folder are stat-ed in one go (the folder is pinned again, by its device and inode, for each). */
const STAT_CHUNK = 256;

// Whether `full` is longer than a path any call takes. (A UTF-16 unit is at most 3 bytes of UTF-8: most paths need no
// encoding to tell.)
function pastPathMax(full: string): boolean {
  return full.length * 3 > PATH_MAX_BYTES && encoder.encode(full).length > PATH_MAX_BYTES;
}

// The walk of scanWorkspace, one step at a time: it stops (yields) between chunks of a folder's names and between
// folders, so that a caller may let the event loop run there. Each chunk is stat-ed in the folder pinned at its real
// path and, after the first, at the device and inode the first found (a folder swapped for a link meanwhile is
// refused, never listed: a walk by path would report the entries of the folder outside it leads to).
function* scanSteps(
  root: string,
  skip: readonly string[],
  ignore: ReadonlySet<string>,
  scan: WorkspaceScan,
): Generator<void, void> {
  const entries = scan.entries;
  // A folder's entries, stat-ed in it; undefined when it could not be listed (it went, or it was swapped).
  const list = function* (dir: string): Generator<void, [string, StatEntry][] | undefined> {
    const found: [string, StatEntry][] = [];
    // One chunk of the folder's names stat-ed, in the folder entered.
    const statChunk = (at: (name: string) => string, names: readonly string[], start: number) => {
      for (const name of names.slice(start, start + STAT_CHUNK)) {
        if (entries.size + found.length >= MAX_SCAN_ENTRIES) {
          scan.incomplete = true;
          break;
        }
        const entry = lstatEntry(at(name));
        if (entry !== undefined) found.push([name, entry]);
      }
    };
    try {
      // The names and their first chunk in one entry of the folder: each entry is a chdir by the folder's absolute
      // path and a getcwd(), both as long as the folder is deep (a tree of 2,100 nested folders took 2,100 such pairs
      // more, 23 of 42 s of the server's CPU in a profile of one command's report).
      const [names, pin] = inFolder(dir, (at) => {
        const self = fs.lstatSync(at("."));
        const names = namesIn(at("."));
        statChunk(at, names, 0);
        return [names, { dev: self.dev, ino: self.ino }] as const;
      });
      for (let start = STAT_CHUNK; start < names.length && !scan.incomplete; start += STAT_CHUNK) {
        yield;
        inFolder(dir, (at) => statChunk(at, names, start), pin);
      }
    } catch {
      return undefined;
    }
    return found;
  };
  // The folders being walked, depth first, each with its entries and the next of them to take. A stack, not a
  // generator per folder: each step of a generator nested n deep resumes all n (a tree of 2,100 nested folders spent
  // 6 s in them).
  const rootFound = yield* list(root);
  if (rootFound === undefined) return;
  const stack = [{ dir: root, prefix: "", found: rootFound, next: 0 }];
  while (stack.length > 0) {
    const folder = stack[stack.length - 1];
    if (folder.next >= folder.found.length) {
      stack.pop();
      continue;
    }
    const i = folder.next++;
    // A folder of 50,000 files is kept in steps too.
    if (i > 0 && i % STAT_CHUNK === 0) yield;
    const [name, entry] = folder.found[i];
    if (entries.size >= MAX_SCAN_ENTRIES) {
      scan.incomplete = true;
      return;
    }
    const full = folder.dir + "/" + name;
    if (ignore.has(full)) continue;
    const rel = folder.prefix + name;
    entries.set(rel, entry);
    if (entry.type !== "directory" || skip.includes(full)) continue;
    // Past the limit every call by this path fails (ENAMETOOLONG): said, not skipped in silence.
    if (pastPathMax(full)) {
      scan.unlisted.push(rel);
      continue;
    }
    yield;
    const found = yield* list(full);
    if (found !== undefined) stack.push({ dir: full, prefix: rel + "/", found, next: 0 });
  }
}

// A scan of `root` that has found nothing yet, started now.
function emptyScan(root: string): WorkspaceScan {
  return { root, entries: new Map(), incomplete: false, unlisted: [], startedAt: Date.now(), ms: 0 };
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
  const started = performance.now();
  const scan = emptyScan(root);
  for (const _ of scanSteps(root, skip, ignore, scan)) {
    // all at once
  }
  scan.ms = performance.now() - started;
  return scan;
}

// scanWorkspace, letting the event loop run every SLICE_MS (see there).
async function scanWorkspaceSliced(
  root: string,
  skip: readonly string[],
  ignore: ReadonlySet<string>,
): Promise<WorkspaceScan> {
  const started = performance.now();
  const scan = emptyScan(root);
  const slice = slicer();
  for (const _ of scanSteps(root, skip, ignore, scan)) await slice.pause();
  scan.ms = performance.now() - started;
  return scan;
}

/** A comparison in progress: one command's window on the workspace. */
export interface WorkspaceWatch {
  /**
   * Looks at the workspace again (unless the listing's `created` looked once
   * the command was gone), compares, and reports every change since the watch
   * started to `ctx.recordFileChange` (the context of the call that reports
   * them: the command's, or for a job the first that sees it ended); returns
   * them. Call it once the command and everything it started are gone.
   */
  finish(ctx: ToolContext): Promise<FileChange[]>;
  /** Closes the window without a report (the command did not start). */
  abandon(): Promise<void>;
  /**
   * The session's entries, up to date as the window opened, for the sandbox's
   * protected-path plan (see `protectedMounts`).
   */
  listing: WorkspaceListing;
}

/** How {@linkcode watchWorkspace} may look at the workspace. */
export interface WatchOptions {
  /**
   * Whether the command runs in the sandbox, where it reaches the workspace
   * only through the workspace's own mount: then the names the watch of its
   * folders reports are all it can have changed, and only they are looked at.
   * Without it (or without the watch) the whole workspace is scanned.
   */
  sandboxed?: boolean;
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
 * const was = { type: "file", mode: 0o644, size: 2, ino: 7, links: 1, birth: 1000, mtime: 1000, ctime: 1000, key: "" } as const;
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
 * Starts watching the workspace of `ctx` for one command, and returns its
 * window: `finish` reports what changed in it. The session keeps the
 * workspace's entries between commands (one stat per entry, taken once), and
 * each comparison looks only where something may have changed:
 *
 * - For a sandboxed command ({@linkcode WatchOptions.sandboxed}), where the
 *   session watches the workspace's folders (inotify, by a resident Perl
 *   program: `_folder_events.ts`), at the names the events named since the
 *   last look, and at the files with more than one name. The cost is a few
 *   stats and no scan: about 0.1 ms when nothing changed.
 * - Otherwise (the sandbox off, no Perl, the watch broken or its events lost),
 *   at every entry: a stat scan of the whole workspace, as the first look is.
 *
 * Why a sandboxed command's change cannot be missed: every change to an
 * entry goes through a folder of the workspace by name, and the kernel queues
 * an event on that folder's watch as the system call happens (a write, a
 * truncation, a mode or time, a creation, a removal, a rename from or to,
 * and the last close of a file opened for writing, which a write through a
 * shared memory mapping needs); the program reads the kernel's queue itself,
 * adds a watch to each folder made or moved in before it looks inside, and
 * says when the queue overflowed or a watch could not be added (then the whole
 * workspace is scanned). A folder new to the session is scanned whole (what
 * was made in it before its watch), a folder removed or replaced drops what
 * was in it. A name in another folder for the same file (a hard link) is the
 * one way a file changes without an event on its own folder: inside the
 * sandbox a link can only be made within the workspace's mount (link(2)
 * across mounts fails with EXDEV), where the new name raises its event, and
 * every file with more than one name is stat'ed at each look. The sandbox
 * ends every process of the command before `finish` (the processes' last
 * closes come before their group is gone), and each look first asks the
 * program to read the kernel's queue to its end.
 *
 * New or changed files (not in the hash cache) are hashed within
 * {@linkcode BEFORE_HASH_BUDGET} when the window opens, so that their before
 * state is known.
 *
 * Requires `--allow-read` for the workspace, and `--allow-run` of perl for
 * the watch (without it every look is a scan).
 *
 * @example
 * ```ts ignore
 * const watch = await watchWorkspace(ctx, { sandboxed: true });
 * // ... the command runs and ends ...
 * const changes = await watch.finish(ctx);
 * ```
 */
export async function watchWorkspace(ctx: ToolContext, options: WatchOptions = {}): Promise<WorkspaceWatch> {
  const live = await liveWorkspaceOf(ctx);
  const sandboxed = options.sandboxed === true;
  const window = await live.open(ctx.policy.files, sandboxed);
  let finished: Promise<FileChange[]> | undefined;
  const close = () => live.close(window, sandboxed);
  return {
    finish: (reporter) =>
      finished ??= close().then(({ before, after, unseen }) => {
        if (window.incomplete) {
          noteIncomplete(reporter, { reason: "too_many_entries", limit: MAX_SCAN_ENTRIES });
          return [];
        }
        if (unseen.length > 0) {
          noteIncomplete(reporter, {
            reason: "path_too_long",
            folders: unseen.slice(0, UNSEEN_NAMED),
            ...(unseen.length > UNSEEN_NAMED ? { more: unseen.length - UNSEEN_NAMED } : {}),
          });
        }
        return reportScanChanges(reporter, before, after, window.hashes);
      }),
    abandon: () => (finished ??= close().then(() => [])).then(() => {}),
    listing: {
      ignore: (paths) => live.ignore(window, paths),
      matching: (matches) => live.matching(matches),
      kindOf: (rel) => kindOfEntry(live.entries.get(rel)),
      created: (matches) => live.settle(window, sandboxed, matches),
      movedAway: (rels) => live.restat(rels),
    },
  };
}

/** The most folders {@linkcode ChangeReportIncomplete} names; it counts the rest. */
const UNSEEN_NAMED = 10;

/**
 * Why a command's `filesystemChanges` may not hold every change, in its
 * result's `metadata.filesystemChangesIncomplete`: past
 * {@linkcode MAX_SCAN_ENTRIES} nothing is compared (the list is empty
 * whatever the command did); folders deeper than the system's limit on a path
 * cannot be listed, and what changed below them is left out.
 */
export type ChangeReportIncomplete =
  | { reason: "too_many_entries"; limit: number }
  | { reason: "path_too_long"; folders: string[]; more?: number };

function noteIncomplete(ctx: ToolContext, why: ChangeReportIncomplete): void {
  ctx.metadata.filesystemChangesIncomplete = why;
}

function kindOfEntry(entry: StatEntry | undefined): EntryKind | undefined {
  if (entry === undefined) return undefined;
  return entry.type === "directory" ? "dir" : entry.type === "symlink" ? "link" : "file";
}

const lives = new WeakMap<object, Promise<LiveWorkspace>>();

// The session's view of its workspace (one per workspace object), closed with the session.
function liveWorkspaceOf(ctx: ToolContext): Promise<LiveWorkspace> {
  const key = ctx.session.workspace;
  let live = lives.get(key);
  if (live === undefined) {
    live = skippedFolders(ctx).then((skip) => new LiveWorkspace(ctx.workspace.workdir, skip, cacheOf(ctx.session)));
    lives.set(key, live);
    ctx.session.onClose(() => {
      lives.delete(key);
      return live!.then((view) => view.end());
    });
  }
  return live;
}

// One command's window: the state at its start of every path that changed since (undefined: it was not there), the
// entries it leaves out, and whether it looked once the command was gone (then its close need not look again).
interface ChangeWindow {
  startedAt: number;
  undo: Map<string, StatEntry | undefined>;
  hashes: BeforeHashes;
  incomplete: boolean;
  ignored: string[];
  settled: boolean;
}

// The workspace's entries as the session last looked at them, and the windows open on it. Looks are one at a time.
class LiveWorkspace {
  readonly root: string;
  readonly skip: readonly string[];
  readonly cache: Map<string, string>;
  // Whether a skipped folder (the temp dir) lies inside the workspace: then it shares the workspace's mount, a
  // command could link a workspace file there out of the watch's sight, and a walk would see entries this view skips.
  readonly #skipInside: boolean;
  entries = new Map<string, StatEntry>();
  // Files with more than one name, and files and links whose content hash the cache lacks.
  readonly linked = new Set<string>();
  readonly uncached = new Set<string>();
  readonly windows = new Set<ChangeWindow>();
  readonly ignored = new Map<string, number>();
  incomplete = false;
  // Folders found but not listed, their paths past PATH_MAX_BYTES (relative paths): nothing below them is seen.
  #unlisted = new Set<string>();
  // The entries each matcher accepts, kept as the entries change (the sandbox's protected paths).
  readonly #indexes = new Map<(rel: string) => boolean, Map<string, EntryKind>>();
  #looked = false;
  #events: FolderEvents | undefined;
  #eventsTried = false;
  readonly #serial = serialQueue();

  constructor(root: string, skip: readonly string[], cache: Map<string, string>) {
    this.root = root;
    this.skip = skip;
    this.cache = cache;
    this.#skipInside = skip.some((dir) => dir === root || dir.startsWith(root + "/"));
  }

  open(files: FileDoor, sandboxed: boolean): Promise<ChangeWindow> {
    return this.#serial(async () => {
      await this.#look(sandboxed);
      const startedAt = Date.now();
      const window: ChangeWindow = {
        startedAt,
        undo: new Map(),
        hashes: await this.#hashBefore(files, startedAt),
        incomplete: this.incomplete,
        ignored: [],
        settled: false,
      };
      this.windows.add(window);
      return window;
    });
  }

  ignore(window: ChangeWindow, paths: readonly string[]): void {
    for (const item of paths) {
      this.ignored.set(item, (this.ignored.get(item) ?? 0) + 1);
      window.ignored.push(item);
    }
  }

  // The entries `matches` accepts; undefined where the entries are not all kept (past MAX_SCAN_ENTRIES, or a temp
  // dir inside the workspace). An index new to the session is made in slices between looks (150,000 entries matched
  // against the protected paths held the loop 0.3 s at a session's first command); the looks then keep it.
  matching(matches: (rel: string) => boolean): Promise<ReadonlyMap<string, EntryKind> | undefined> {
    const known = this.#indexes.get(matches);
    if (known !== undefined && !this.incomplete) return Promise.resolve(known);
    return this.#serial(async () => {
      if (this.incomplete || this.#skipInside) return undefined;
      let index = this.#indexes.get(matches);
      if (index !== undefined) return index;
      index = new Map();
      const slice = slicer();
      for (const [rel, entry] of this.entries) {
        const pause = slice.pause();
        if (pause) await pause;
        if (matches(rel)) index.set(rel, kindOfEntry(entry)!);
      }
      if (this.#indexes.size >= 8) this.#indexes.clear();
      this.#indexes.set(matches, index);
      return index;
    });
  }

  // The look once the command is gone (finish takes no other), and the entries `matches` accepts made since the
  // window opened.
  settle(
    window: ChangeWindow,
    sandboxed: boolean,
    matches: (rel: string) => boolean,
  ): Promise<readonly string[] | undefined> {
    return this.#serial(async () => {
      if (!window.settled) await this.#look(sandboxed);
      window.settled = true;
      if (window.incomplete) return undefined;
      const made: string[] = [];
      for (const [rel, was] of window.undo) {
        if (was === undefined && this.entries.has(rel) && matches(rel)) made.push(rel);
      }
      return made;
    });
  }

  // Looks again at `rels` (relative paths the server itself changed).
  restat(rels: readonly string[]): Promise<void> {
    return this.#serial(async () => {
      await this.#statAll(new Set(rels));
    });
  }

  close(
    window: ChangeWindow,
    sandboxed: boolean,
  ): Promise<{ before: WorkspaceScan; after: WorkspaceScan; unseen: string[] }> {
    return this.#serial(async () => {
      const startedAt = Date.now();
      try {
        if (!window.settled) await this.#look(sandboxed);
      } finally {
        this.windows.delete(window);
        for (const item of window.ignored) {
          const count = (this.ignored.get(item) ?? 1) - 1;
          if (count > 0) this.ignored.set(item, count);
          else this.ignored.delete(item);
        }
      }
      const before = new Map<string, StatEntry>();
      const after = new Map<string, StatEntry>();
      const slice = slicer();
      for (const [rel, was] of window.undo) {
        const pause = slice.pause();
        if (pause) await pause;
        if (was !== undefined) before.set(rel, was);
        const now = this.entries.get(rel);
        if (now !== undefined) after.set(rel, now);
      }
      const scan = (entries: Map<string, StatEntry>, at: number): WorkspaceScan => ({
        root: this.root,
        entries,
        incomplete: false,
        unlisted: [],
        startedAt: at,
        ms: 0,
      });
      // The folders still there that no look could list: what the command did below them is not known.
      const unseen = [...this.#unlisted].filter((rel) => this.entries.get(rel)?.type === "directory").sort();
      return { before: scan(before, window.startedAt), after: scan(after, startedAt), unseen };
    });
  }

  end(): void {
    this.#events?.close();
    this.#events = undefined;
    this.#eventsTried = true;
  }

  // Brings the entries up to date: by the names the watch reports where a sandboxed command may rely on it, else by
  // a scan of every entry. Every path found changed is recorded in the open windows.
  async #look(sandboxed: boolean): Promise<void> {
    // Past MAX_SCAN_ENTRIES nothing is compared, and the session's workspace is not looked at again: each look was a
    // synchronous walk of 200,000 entries, the whole server's event loop held for seconds at every command's start
    // and end (a command of one session made 250,000 empty files; each later `touch y` stalled the loop 3 to 12 s,
    // and another session's `echo hi` took 2.9 s instead of 40 ms).
    if (this.incomplete) return;
    if (sandboxed && !this.#eventsTried) {
      this.#eventsTried = true;
      // A workspace with the temp dir inside is always scanned.
      if (!this.#skipInside) {
        // The other folders a sandboxed command may write (the temp dir) are watched too: a file of the workspace
        // may have a second name there, made from outside the sandbox, and a write through it raises its event there.
        this.#events = await FolderEvents.start([this.root, ...this.skip]);
        this.#looked = false;
      }
    }
    let names: string[] | undefined;
    const linkedOutside = new Set<number>();
    if (this.#events !== undefined) {
      const found = await this.#events.sync();
      if (found.kind === "broken") this.end();
      else if (found.kind === "names") {
        names = found.names[0];
        found.names.slice(1).forEach((outside, i) => {
          for (const name of outside) {
            const entry = lstatEntry(`${this.skip[i]}/${name}`);
            if (entry?.type === "file" && entry.links > 1) linkedOutside.add(entry.ino);
          }
        });
      }
    }
    if (names !== undefined && sandboxed && this.#looked && !this.incomplete) await this.#lookAt(names, linkedOutside);
    else await this.#scanAll();
    this.#looked = true;
    // Past MAX_SCAN_ENTRIES nothing is compared: the watch would only cost.
    if (this.incomplete) this.end();
  }

  #ignoredSet(): ReadonlySet<string> {
    return this.ignored.size === 0 ? NOTHING : new Set(this.ignored.keys());
  }

  // The scan lets the event loop run (see SLICE_MS), and so does applying what it found (each entry recorded in the
  // open windows and matched against the protected paths' indexes: 0.8 to 2 s at 190,000 entries). A reader outside
  // the looks (the sandbox's plan, by `matching` and `kindOf`) meanwhile sees the entries as they were before the look,
  // and indexes that may already hold some of the paths found: paths that are there now, as a plan may see them.
  async #scanAll(): Promise<void> {
    const scan = await scanWorkspaceSliced(this.root, this.skip, this.#ignoredSet());
    const slice = slicer();
    const old = this.entries;
    for (const [rel, now] of scan.entries) {
      const pause = slice.pause();
      if (pause) await pause;
      this.#record(rel, old.get(rel), now);
      this.#indexPut(rel, now);
    }
    for (const [rel, was] of old) {
      if (scan.entries.has(rel)) continue;
      const pause = slice.pause();
      if (pause) await pause;
      this.#record(rel, was, undefined);
      this.#unindex(rel);
    }
    this.entries = scan.entries;
    this.#unlisted = new Set(scan.unlisted);
    this.linked.clear();
    this.uncached.clear();
    for (const [rel, entry] of scan.entries) {
      const pause = slice.pause();
      if (pause) await pause;
      this.#index(rel, entry);
    }
    this.#incomplete(scan.incomplete);
  }

  #incomplete(incomplete: boolean): void {
    this.incomplete = incomplete;
    if (incomplete) { for (const window of this.windows) window.incomplete = true; }
  }

  // Looks at `names` (relative paths), at every file with more than one name, and at every name of the files of
  // `linkedOutside` (inodes with a name outside that was written through): folders first, so that a folder removed or
  // replaced settles what was in it before its entries are looked at.
  async #lookAt(names: readonly string[], linkedOutside: ReadonlySet<number>): Promise<void> {
    const targets = new Set<string>();
    for (const name of names) targets.add(name);
    for (const rel of this.linked) targets.add(rel);
    const relinked = await this.#statAll(targets);
    for (const ino of linkedOutside) relinked.add(ino);
    if (relinked.size === 0) return;
    // A name added to (or taken from) a file changes every name's link count: each is looked at.
    const others = new Set<string>();
    for (const [rel, entry] of this.entries) if (entry.type === "file" && relinked.has(entry.ino)) others.add(rel);
    await this.#statAll(others);
  }

  // Stats `rels` by folder, shallow first; returns the inodes whose link count changed. Lets the event loop run every
  // SLICE_MS (between chunks of a folder's names, between names): 100,000 names an event reported (two folders of
  // 50,000 renamed) held it 1.9 s. Each path is applied whole before the next (what it adds before what it drops), so
  // that a reader between two slices (the sandbox's plan) never misses an entry that is there and was there before.
  async #statAll(rels: ReadonlySet<string>): Promise<Set<number>> {
    const slice = slicer();
    const byFolder = new Map<string, string[]>();
    for (const rel of rels) {
      const slash = rel.lastIndexOf("/");
      const folder = slash < 0 ? "" : rel.slice(0, slash);
      let list = byFolder.get(folder);
      if (list === undefined) byFolder.set(folder, list = []);
      list.push(slash < 0 ? rel : rel.slice(slash + 1));
    }
    const depth = (rel: string) => rel === "" ? 0 : rel.split("/").length;
    const folders = [...byFolder.keys()].sort((a, b) => depth(a) - depth(b));
    const ignored = this.#ignoredSet();
    const relinked = new Set<number>();
    for (const folder of folders) {
      // A folder no longer in the entries went with its own name's event.
      if (folder !== "" && this.entries.get(folder)?.type !== "directory") continue;
      const dir = folder === "" ? this.root : `${this.root}/${folder}`;
      const names = byFolder.get(folder)!;
      if (pastPathMax(dir)) {
        this.#unlisted.add(folder);
        continue;
      }
      let pin: FolderPin | undefined;
      for (let start = 0; start < names.length; start += STAT_CHUNK) {
        const pause = slice.pause();
        if (pause) await pause;
        const chunk = names.slice(start, start + STAT_CHUNK);
        let found: (StatEntry | undefined)[];
        try {
          // Stat-ed in the folder pinned at its real path (and at the device and inode its first chunk found): a
          // folder swapped for a link meanwhile is refused (its own name's event brings it to the next look), never
          // followed out of the workspace.
          found = inFolder(dir, (at) => {
            if (pin === undefined) {
              const self = fs.lstatSync(at("."));
              pin = { dev: self.dev, ino: self.ino };
            }
            return chunk.map((name) => lstatEntry(at(name)));
          }, pin);
        } catch {
          break;
        }
        for (let i = 0; i < chunk.length; i++) {
          const rel = folder === "" ? chunk[i] : `${folder}/${chunk[i]}`;
          if (ignored.has(`${this.root}/${rel}`)) continue;
          const was = this.entries.get(rel);
          const now = found[i];
          await this.#apply(rel, was, now);
          if (
            now?.type === "file" && (now.links > 1 || (was !== undefined && was.links > 1)) &&
            now.links !== was?.links
          ) {
            relinked.add(now.ino);
          }
          const pause = slice.pause();
          if (pause) await pause;
        }
      }
    }
    return relinked;
  }

  // Records and keeps what is at `rel` now. A folder gone takes what the session had in it; a folder named by an event
  // (made, moved in or out, its mode or times changed) is scanned whole: what was made in a folder before its watch
  // was added, and what was written in one while an event still named it by its earlier name, are seen there.
  async #apply(rel: string, was: StatEntry | undefined, now: StatEntry | undefined): Promise<void> {
    if (now !== undefined) this.#put(rel, now);
    else if (was !== undefined) {
      this.#record(rel, was, undefined);
      this.#forget(rel);
    }
    // The session has entries below a path only where it had a folder there.
    const hadBelow = was?.type === "directory";
    if (now?.type === "directory") await this.#rescan(rel, hadBelow);
    else if (hadBelow) await this.#dropBelow(rel, NOTHING_FOUND);
  }

  // Records and keeps `entry` at `rel`.
  #put(rel: string, entry: StatEntry): void {
    this.#record(rel, this.entries.get(rel), entry);
    this.entries.set(rel, entry);
    this.#index(rel, entry);
    this.#indexPut(rel, entry);
  }

  #unindex(rel: string): void {
    for (const index of this.#indexes.values()) index.delete(rel);
  }

  // Keeps the matchers' indexes: a path asked about once keeps its answer, so only new paths are matched.
  #indexPut(rel: string, entry: StatEntry): void {
    for (const [matches, index] of this.#indexes) {
      if (index.has(rel) || matches(rel)) index.set(rel, kindOfEntry(entry)!);
    }
  }

  // Scans the folder `rel` whole: each entry recorded where it changed, and (where `hadBelow`) the session's entries
  // below it no longer there recorded as gone.
  async #rescan(rel: string, hadBelow: boolean): Promise<void> {
    const full = `${this.root}/${rel}`;
    if (pastPathMax(full)) {
      this.#unlisted.add(rel);
      return;
    }
    const scan = await scanWorkspaceSliced(full, this.skip, this.#ignoredSet());
    const slice = slicer();
    for (const [sub, entry] of scan.entries) {
      const pause = slice.pause();
      if (pause) await pause;
      this.#put(`${rel}/${sub}`, entry);
    }
    const prefix = rel + "/";
    for (const unlisted of this.#unlisted) if (unlisted.startsWith(prefix)) this.#unlisted.delete(unlisted);
    for (const sub of scan.unlisted) this.#unlisted.add(`${rel}/${sub}`);
    if (hadBelow) await this.#dropBelow(rel, scan.entries);
    if (scan.incomplete || this.entries.size >= MAX_SCAN_ENTRIES) this.#incomplete(true);
  }

  // Forgets the entries below `rel` that `found` (by path relative to `rel`) does not have. Every entry of the session
  // is looked at, in slices: two folders of 50,000 files named by an event held the loop 150 to 190 ms each here.
  async #dropBelow(rel: string, found: ReadonlyMap<string, StatEntry>): Promise<void> {
    const prefix = rel + "/";
    const slice = slicer();
    for (const [below, entry] of this.entries) {
      const pause = slice.pause();
      if (pause) await pause;
      if (!below.startsWith(prefix) || found.has(below.slice(prefix.length))) continue;
      this.#record(below, entry, undefined);
      this.#forget(below);
    }
  }

  #forget(rel: string): void {
    this.#unindex(rel);
    this.entries.delete(rel);
    this.linked.delete(rel);
    this.uncached.delete(rel);
  }

  #index(rel: string, entry: StatEntry): void {
    if (entry.type === "file" && entry.links > 1) this.linked.add(rel);
    else this.linked.delete(rel);
    if (entry.type !== "directory" && !this.cache.has(entry.key)) this.uncached.add(rel);
    else this.uncached.delete(rel);
  }

  // Notes in each open window the state `rel` had at its start, the first time it changes (or, for a file whose
  // stat key did not yet name its content when the window opened, the first time it is looked at: only its content
  // tells).
  #record(rel: string, was: StatEntry | undefined, now: StatEntry | undefined): void {
    if (this.windows.size === 0) return;
    const changed = was === undefined || now === undefined || was.key !== now.key || was.mode !== now.mode ||
      was.type !== now.type || was.ino !== now.ino;
    for (const window of this.windows) {
      if (window.undo.has(rel)) continue;
      if (changed || (was!.type !== "directory" && !settled(was!, window.startedAt))) window.undo.set(rel, was);
    }
  }

  // Hashes the files and links the cache does not have, within the budget: first those changed too recently for
  // their stat key to name their content, as only their hashes tell whether the command changed them.
  async #hashBefore(files: FileDoor, startedAt: number): Promise<BeforeHashes> {
    const unsettled = new Map<string, string>();
    // Nothing is compared past MAX_SCAN_ENTRIES: no hash is needed.
    if (this.incomplete) return { cache: this.cache, unsettled };
    // In slices, as a look's: 150,000 files without a hash held the loop 0.3 s at each command's start (a sort of them
    // all, then 2,048 files read).
    const slice = slicer();
    const unsettledFirst: [string, StatEntry][] = [];
    const settledLater: [string, StatEntry][] = [];
    for (const rel of this.uncached) {
      const pause = slice.pause();
      if (pause) await pause;
      const entry = this.entries.get(rel);
      if (entry === undefined || this.cache.has(entry.key)) this.uncached.delete(rel);
      else (settled(entry, startedAt) ? settledLater : unsettledFirst).push([rel, entry]);
    }
    let budget = BEFORE_HASH_BUDGET;
    let count = BEFORE_HASH_FILES;
    for (const [rel, entry] of [...unsettledFirst, ...settledLater]) {
      if (count === 0) break;
      const pause = slice.pause();
      if (pause) await pause;
      if (entry.size > budget) continue;
      budget -= entry.size;
      count--;
      const state = hashed(files, this.cache, path.join(this.root, rel), entry, startedAt);
      if (this.cache.has(entry.key)) this.uncached.delete(rel);
      else if (state?.sha256 && state.size === entry.size) unsettled.set(entry.key, state.sha256);
    }
    return { cache: this.cache, unsettled };
  }
}

async function skippedFolders(ctx: ToolContext): Promise<string[]> {
  // The temp dir lives elsewhere unless the session was told to put it in the workspace.
  try {
    return [await ctx.workspace.tempDir()];
  } catch {
    return [];
  }
}

// `items` in comparePaths's order (a folder right before what is in it), each path's key made once: comparePaths splits
// both paths at every comparison, and sorting 120,000 changes with it held the event loop for seconds. The key is the
// path with `/` as U+0000, below every character a name may hold, so that plain string order is comparePaths's. Sorted
// in runs of SORT_RUN and merged two by two, letting the event loop run between them: one sort of 150,000 keys held it
// 0.2 to 0.3 s.
async function byPath<T>(items: readonly T[], pathOf: (item: T) => string, slice: Slicer): Promise<T[]> {
  let runs: Keyed<T>[][] = [];
  for (let start = 0; start < items.length; start += SORT_RUN) {
    const pause = slice.pause();
    if (pause) await pause;
    const run = items.slice(start, start + SORT_RUN).map((item) => ({
      key: pathOf(item).replaceAll("/", "\u0000"),
      item,
    }));
    runs.push(run.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
  while (runs.length > 1) {
    const merged: Keyed<T>[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      merged.push(i + 1 < runs.length ? await merge(runs[i], runs[i + 1], slice) : runs[i]);
    }
    runs = merged;
  }
  return (runs[0] ?? []).map(({ item }) => item);
}

/** How many keys byPath sorts in one go (a few milliseconds). */
const SORT_RUN = 8192;

interface Keyed<T> {
  key: string;
  item: T;
}

// The sorted runs `a` and `b` as one, `a`'s first where keys are equal.
async function merge<T>(a: Keyed<T>[], b: Keyed<T>[], slice: Slicer): Promise<Keyed<T>[]> {
  const out: Keyed<T>[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if ((out.length & 1023) === 0) {
      const pause = slice.pause();
      if (pause) await pause;
    }
    out.push(a[i].key <= b[j].key ? a[i++] : b[j++]);
  }
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}

// Hashes what changed, letting the event loop run every SLICE_MS: a command that touched 120,000 files had as many
// files hashed here in one synchronous stretch.
async function reportScanChanges(
  ctx: ToolContext,
  before: WorkspaceScan,
  after: WorkspaceScan,
  hashes: BeforeHashes,
): Promise<FileChange[]> {
  const slice = slicer();
  const root = before.root;
  const cache = hashes.cache;
  // Within AFTER_HASH_BUDGET and AFTER_HASH_FILE_BYTES: a file the cache has is not read; one past either is not
  // either. The bytes read are taken, not the size seen: a file another command grows meanwhile spends the rest.
  let budget = AFTER_HASH_BUDGET;
  const stateAfter = (rel: string, now: StatEntry): FileState | null => {
    if (now.type === "file" && !cache.has(now.key)) {
      if (now.size > Math.min(budget, AFTER_HASH_FILE_BYTES)) {
        return { type: now.type, size: now.size, sha256: null, mode: now.mode };
      }
      const state = hashed(ctx.policy.files, cache, path.join(root, rel), now, after.startedAt);
      budget -= state?.size ?? now.size;
      return state;
    }
    return hashed(ctx.policy.files, cache, path.join(root, rel), now, after.startedAt);
  };
  const changes: FileChange[] = [];
  const created: [string, StatEntry][] = [];
  const deleted = new Map<number, [string, StatEntry]>();
  const gone: [string, StatEntry][] = [];
  // What the path rules hide is never named to the model, whoever changed it: a command the person let run without
  // the sandbox, or another process meanwhile (before, `.env` deleted or renamed to a visible name was reported as
  // deleted, with its size). A visible file renamed from a hidden name is reported as created.
  const hidden = (rel: string) => ctx.policy.files.isHidden(path.join(root, rel));
  for (const [rel, now] of after.entries) {
    const pause = slice.pause();
    if (pause) await pause;
    const was = before.entries.get(rel);
    if (was === undefined) {
      if (!hidden(rel)) created.push([rel, now]);
      continue;
    }
    const sameStat = was.key === now.key && was.mode === now.mode && was.type === now.type;
    if (sameStat && (was.type === "directory" || settled(was, before.startedAt))) continue;
    if (hidden(rel)) continue;
    const wasState = beforeState(was, hashes);
    const afterState = stateAfter(rel, now);
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
    const pause = slice.pause();
    if (pause) await pause;
    if (after.entries.has(rel) || hidden(rel)) continue;
    if (was.type !== "directory") deleted.set(was.ino, [rel, was]);
    gone.push([rel, was]);
  }
  const movedFrom = new Set<string>();
  for (const [rel, now] of created) {
    const pause = slice.pause();
    if (pause) await pause;
    const afterState = stateAfter(rel, now);
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
  const ordered = await byPath(changes, (change) => change.path, slice);
  const removals = (await byPath(gone.filter(([rel]) => !movedFrom.has(rel)), ([rel]) => rel, slice)).reverse()
    .map(([rel, was]): FileChange => ({ path: rel, change: "deleted", before: beforeState(was, hashes), after: null }));
  const all = [...ordered, ...removals];
  // Recorded in slices too: each goes to the session's listeners (its file history appends a line to its journal:
  // 1.7 s for 120,000 changes in an MCP server).
  for (const change of all) {
    const pause = slice.pause();
    if (pause) await pause;
    ctx.recordFileChange(change);
  }
  return all;
}
