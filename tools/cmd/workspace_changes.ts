/**
 * What a shell command changed in the workspace, from a comparison of the
 * workspace before it started and after it ended: a stat snapshot of every
 * entry (links not followed), compared by inode, size, mtime, ctime, mode and
 * type; content hashed only where that comparison says something changed, with
 * a per-session hash cache keyed by device, inode, size, mtime and ctime.
 *
 * Before-hashes are known when the cache has the file's key from an earlier
 * snapshot (or the before snapshot hashed it: new or changed files within a
 * small budget are hashed then); otherwise the before state of a modified or
 * deleted file says `sha256: null` (unknown) and the change cannot be undone.
 * A rename is recognised by its inode. The session temp dir is not compared
 * (the command's output files live there).
 *
 * @module
 */

import fs from "node:fs";
import path from "node:path";
import type { FileChange, FileState, SessionBase, ToolContext } from "@toolfence/core";
import { fileEntryConfined } from "@toolfence/policy";

/** Past this many entries the workspace is not compared (the call reports no changes); see {@linkcode scanWorkspace}. */
export const MAX_SCAN_ENTRIES = 200_000;
/** Bytes of new or changed files the before snapshot may hash, so that their before-hashes are known. */
export const BEFORE_HASH_BUDGET = 8 << 20;

interface StatEntry {
  type: FileState["type"];
  mode: number;
  size: number;
  ino: number;
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
  /** How long the scan took, in milliseconds. */
  ms: number;
}

const caches = new WeakMap<object, Map<string, string>>();

function cacheOf(session: SessionBase): Map<string, string> {
  let cache = caches.get(session.workspace);
  if (cache === undefined) caches.set(session.workspace, cache = new Map());
  return cache;
}

function typeOf(stat: fs.Stats): FileState["type"] | undefined {
  if (stat.isFile()) return "file";
  if (stat.isDirectory()) return "directory";
  if (stat.isSymbolicLink()) return "symlink";
  return undefined;
}

/**
 * Stats every entry under `root` (never following a link), skipping the
 * folders in `skip` (real paths), up to {@linkcode MAX_SCAN_ENTRIES}.
 */
export function scanWorkspace(root: string, skip: readonly string[] = []): WorkspaceScan {
  const started = performance.now();
  const entries = new Map<string, StatEntry>();
  let incomplete = false;
  const walk = (dir: string, prefix: string): void => {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (entries.size >= MAX_SCAN_ENTRIES) {
        incomplete = true;
        return;
      }
      const full = dir + "/" + name;
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(full);
      } catch {
        continue;
      }
      const type = typeOf(stat);
      if (type === undefined) continue;
      const rel = prefix + name;
      entries.set(rel, {
        type,
        mode: stat.mode & 0o7777,
        size: type === "directory" ? 0 : stat.size,
        ino: stat.ino,
        key: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`,
      });
      if (type === "directory" && !skip.includes(full)) walk(full, rel + "/");
    }
  };
  walk(root, "");
  return { root, entries, incomplete, ms: performance.now() - started };
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

// The sha256 of `real` by its stat key: from the cache, else hashed (confined) and cached.
function hashed(cache: Map<string, string>, real: string, entry: StatEntry): FileState | null {
  if (entry.type === "directory") return { type: "directory", size: 0, sha256: null, mode: entry.mode };
  const known = cache.get(entry.key);
  if (known !== undefined) return { type: entry.type, size: entry.size, sha256: known, mode: entry.mode };
  let read;
  try {
    read = fileEntryConfined(real, 0);
  } catch {
    return null;
  }
  if (read === undefined || read.state.type !== entry.type) return null;
  if (read.state.sha256 !== null && read.state.size === entry.size) cache.set(entry.key, read.state.sha256);
  return read.state;
}

function unknownState(entry: StatEntry, cache: Map<string, string>): FileState {
  if (entry.type === "directory") return { type: "directory", size: 0, sha256: null, mode: entry.mode };
  return { type: entry.type, size: entry.size, sha256: cache.get(entry.key) ?? null, mode: entry.mode };
}

/**
 * Starts watching the workspace of `ctx` for one command: the before
 * snapshot, now. Where the runtime can watch folders (`Deno.watchFs`), the
 * session keeps a live index of the workspace and only the paths the kernel
 * reports as touched are looked at; elsewhere (or when the watcher lost
 * events) both snapshots are full stat scans. New or changed files (not in
 * the hash cache) are hashed within {@linkcode BEFORE_HASH_BUDGET} so that
 * their before state is known.
 */
export async function watchWorkspace(ctx: ToolContext): Promise<WorkspaceWatch> {
  const live = await liveIndexOf(ctx);
  if (live !== undefined) {
    const watch = await live.watch();
    if (watch !== undefined) return watch;
  }
  return await watchWorkspaceByScan(ctx);
}

/** {@linkcode watchWorkspace} by two full stat scans, without a watcher (where none is available). */
export async function watchWorkspaceByScan(ctx: ToolContext): Promise<WorkspaceWatch> {
  const root = ctx.workspace.workdir;
  const skip = await skippedFolders(ctx);
  const cache = cacheOf(ctx.session);
  const before = scanWorkspace(root, skip);
  hashWithinBudget(root, before.entries, cache);
  return {
    before,
    finish: (reporter) => {
      const after = scanWorkspace(root, skip);
      if (before.incomplete || after.incomplete) return Promise.resolve([]);
      return Promise.resolve(reportScanChanges(reporter, before, after, cache));
    },
  };
}

function hashWithinBudget(root: string, entries: Iterable<[string, StatEntry]>, cache: Map<string, string>): void {
  let budget = BEFORE_HASH_BUDGET;
  for (const [rel, entry] of entries) {
    if (entry.type !== "file" || cache.has(entry.key) || entry.size > budget) continue;
    budget -= entry.size;
    hashed(cache, path.join(root, rel), entry);
  }
}

function statEntry(full: string): StatEntry | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(full);
  } catch {
    return undefined;
  }
  const type = typeOf(stat);
  if (type === undefined) return undefined;
  return {
    type,
    mode: stat.mode & 0o7777,
    size: type === "directory" ? 0 : stat.size,
    ino: stat.ino,
    key: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`,
  };
}

const indexes = new WeakMap<object, Promise<LiveIndex | undefined>>();

function liveIndexOf(ctx: ToolContext): Promise<LiveIndex | undefined> {
  const key = ctx.session.workspace;
  let index = indexes.get(key);
  if (index === undefined) {
    index = LiveIndex.open(ctx).catch(() => undefined);
    indexes.set(key, index);
  }
  return index;
}

type DenoWatch = {
  watchFs?: (paths: string[], options: { recursive: boolean }) => AsyncIterable<WatchEvent> & { close(): void };
};
interface WatchEvent {
  kind: string;
  paths: string[];
  flag?: string | null;
}

/**
 * The workspace as the kernel reports it changing: a stat index built once by
 * a full scan, and a recursive watcher whose events name the paths to look at
 * again. A barrier (a file touched in a folder of the session temp dir that
 * the same watcher covers, whose event comes after every earlier one) makes
 * sure every event of a command has arrived before its changes are read.
 */
class LiveIndex {
  readonly entries: Map<string, StatEntry>;
  /** Paths touched since the index was last brought up to date, and the sets of the commands being watched. */
  readonly #dirty = new Set<string>();
  readonly #watches = new Set<Set<string>>([this.#dirty]);
  #broken = false;
  #barrier = 0;
  readonly #waiting = new Map<string, () => void>();

  private constructor(
    readonly key: object,
    readonly root: string,
    readonly skip: readonly string[],
    readonly syncDir: string,
    readonly cache: Map<string, string>,
    readonly watcher: AsyncIterable<WatchEvent> & { close(): void },
    scan: WorkspaceScan,
  ) {
    this.entries = scan.entries;
    void this.#listen();
  }

  static async open(ctx: ToolContext): Promise<LiveIndex | undefined> {
    const deno = (globalThis as { Deno?: DenoWatch }).Deno;
    if (typeof deno?.watchFs !== "function") return undefined;
    const root = ctx.workspace.workdir;
    const skip = await skippedFolders(ctx);
    const temp = await ctx.workspace.tempDir();
    const syncDir = path.join(temp, "watch-sync");
    fs.mkdirSync(syncDir, { recursive: true, mode: 0o700 });
    const watcher = deno.watchFs([root, syncDir], { recursive: true });
    const scan = scanWorkspace(root, skip);
    if (scan.incomplete) {
      watcher.close();
      return undefined;
    }
    const index = new LiveIndex(ctx.session.workspace, root, skip, syncDir, cacheOf(ctx.session), watcher, scan);
    hashWithinBudget(root, scan.entries, index.cache);
    ctx.session.onClose(() => index.close());
    // Events of the scan's own reads are not changes; the first barrier also proves the watcher delivers.
    if (!(await index.sync())) return undefined;
    return index;
  }

  close(): void {
    this.#broken = true;
    try {
      this.watcher.close();
    } catch {
      // already closed
    }
  }

  async #listen(): Promise<void> {
    try {
      for await (const event of this.watcher) {
        if (event.flag === "rescan") this.#broken = true;
        for (const full of event.paths) {
          if (full.startsWith(this.syncDir + "/")) {
            this.#waiting.get(full)?.();
            continue;
          }
          if (full !== this.root && !full.startsWith(this.root + "/")) continue;
          if (this.skip.some((s) => full === s || full.startsWith(s + "/"))) continue;
          if (event.kind === "access") continue;
          const rel = full.slice(this.root.length + 1);
          if (rel === "") continue;
          for (const watch of this.#watches) watch.add(rel);
        }
      }
    } catch {
      // the watcher failed
    }
    this.#broken = true;
  }

  /** Waits until every event before now has arrived; false when the watcher does not answer. */
  async sync(): Promise<boolean> {
    if (this.#broken) return false;
    const marker = path.join(this.syncDir, `sync-${++this.#barrier}`);
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 2_000);
      this.#waiting.set(marker, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    try {
      fs.writeFileSync(marker, "");
    } catch {
      this.#waiting.delete(marker);
      return false;
    }
    const ok = await arrived;
    this.#waiting.delete(marker);
    fs.rmSync(marker, { force: true });
    if (!ok) this.#broken = true;
    return ok && !this.#broken;
  }

  /** Brings the index up to date with the paths in `touched` (and what is under new folders); returns their old entries. */
  #update(touched: Iterable<string>): Map<string, StatEntry | undefined> {
    const old = new Map<string, StatEntry | undefined>();
    const note = (rel: string) => {
      if (!old.has(rel)) old.set(rel, this.entries.get(rel));
    };
    const visit = (rel: string) => {
      note(rel);
      const was = this.entries.get(rel);
      const full = path.join(this.root, rel);
      const now = this.skip.includes(full) ? undefined : statEntry(full);
      if (now === undefined) this.entries.delete(rel);
      else this.entries.set(rel, now);
      if (was?.type === "directory" && now?.type !== "directory") {
        for (const key of [...this.entries.keys()]) if (key.startsWith(rel + "/")) visit(key);
      }
      if (now?.type === "directory" && (was?.type !== "directory" || was.ino !== now.ino)) {
        // A folder new here (made, or moved in): what is inside came with it, without events of its own.
        for (const key of [...this.entries.keys()]) if (key.startsWith(rel + "/")) visit(key);
        let names: string[] = [];
        try {
          names = fs.readdirSync(full);
        } catch {
          // gone again
        }
        for (const name of names) visit(rel + "/" + name);
      }
    };
    for (const rel of touched) visit(rel);
    return old;
  }

  /** A watch for one command, or undefined when the index cannot be trusted (use a full scan then). */
  async watch(): Promise<WorkspaceWatch | undefined> {
    // What changed since the last command (other tools, other processes) is taken in first.
    if (!(await this.sync())) {
      this.close();
      indexes.delete(this.key);
      return undefined;
    }
    const since = [...this.#dirty];
    this.#dirty.clear();
    this.#update(since);
    const changed: [string, StatEntry][] = [];
    for (const rel of since) {
      const entry = this.entries.get(rel);
      if (entry !== undefined) changed.push([rel, entry]);
    }
    hashWithinBudget(this.root, changed, this.cache);
    const touched = new Set<string>();
    this.#watches.add(touched);
    const started = performance.now();
    return {
      before: { root: this.root, entries: this.entries, incomplete: false, ms: performance.now() - started },
      finish: async (reporter) => {
        // Every event of the command must have arrived before its changes are read.
        const complete = await this.sync();
        this.#watches.delete(touched);
        if (!complete) {
          // Events were lost: what the command did cannot be known; the next command starts a new index.
          this.close();
          indexes.delete(this.key);
          return [];
        }
        return this.#finish(reporter, touched);
      },
    };
  }

  #finish(reporter: ToolContext, touched: Set<string>): FileChange[] {
    const old = this.#update(touched);
    const before = new Map<string, StatEntry>();
    const after = new Map<string, StatEntry>();
    for (const [rel, entry] of old) {
      if (entry !== undefined) before.set(rel, entry);
      const now = this.entries.get(rel);
      if (now !== undefined) after.set(rel, now);
    }
    return reportScanChanges(
      reporter,
      { root: this.root, entries: before, incomplete: false, ms: 0 },
      { root: this.root, entries: after, incomplete: false, ms: 0 },
      this.cache,
    );
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

function reportScanChanges(
  ctx: ToolContext,
  before: WorkspaceScan,
  after: WorkspaceScan,
  cache: Map<string, string>,
): FileChange[] {
  const root = before.root;
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
    if (was.key === now.key && was.mode === now.mode && was.type === now.type) continue;
    const beforeState = unknownState(was, cache);
    const afterState = hashed(cache, path.join(root, rel), now);
    if (afterState === null) continue;
    if (
      beforeState.type === afterState.type && beforeState.mode === afterState.mode &&
      beforeState.size === afterState.size && beforeState.sha256 !== null &&
      beforeState.sha256 === afterState.sha256
    ) continue; // touched, not changed
    if (was.type === "directory" && now.type === "directory" && was.mode === now.mode) continue; // entries changed
    changes.push({ path: rel, change: "modified", before: beforeState, after: afterState });
  }
  for (const [rel, was] of before.entries) {
    if (after.entries.has(rel)) continue;
    if (was.type !== "directory") deleted.set(was.ino, [rel, was]);
    gone.push([rel, was]);
  }
  const movedFrom = new Set<string>();
  for (const [rel, now] of created) {
    const afterState = hashed(cache, path.join(root, rel), now);
    if (afterState === null) continue;
    const source = now.type !== "directory" ? deleted.get(now.ino) : undefined;
    if (source !== undefined && source[1].size === now.size && source[1].type === now.type) {
      movedFrom.add(source[0]);
      changes.push({
        path: rel,
        change: "moved",
        from: source[0],
        before: unknownState(source[1], cache),
        after: afterState,
      });
      continue;
    }
    changes.push({ path: rel, change: "created", before: null, after: afterState });
  }
  const ordered = changes.sort((a, b) => compare(a.path, b.path));
  const removals = gone.filter(([rel]) => !movedFrom.has(rel)).sort((a, b) => compare(b[0], a[0]))
    .map(([rel, was]): FileChange => ({ path: rel, change: "deleted", before: unknownState(was, cache), after: null }));
  const all = [...ordered, ...removals];
  for (const change of all) ctx.recordFileChange(change);
  return all;
}

function compare(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}
