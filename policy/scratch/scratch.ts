/**
 * A scratch copy of the workspace: the agent works in a copy made in the
 * session's temp dir, and nothing reaches the real workspace until a
 * publication applies the changes a person approved (see the `publish` tool
 * of `@toolfence/tools`). Disposing of the copy never publishes.
 *
 * The copy is made entry by entry, each looked up in its pinned folder and
 * never through a link (see `confined_fs.ts`): a symlink is copied as a
 * symlink with the same target text, so a link that leads out of the
 * workspace never brings what it points at into the copy, and it stays
 * outside the scratch session's workspace. FIFOs, sockets and devices are
 * left out and listed in {@linkcode Scratch.skipped}. Protected paths are
 * copied like any file; writing them in the copy asks as it does in the
 * workspace, and publishing a change to one always asks a person.
 *
 * The scratch session keeps the path rules of the policy files (rebased to
 * the copy, absolute globs that name places in the workspace included): what
 * they deny or hide is hidden in the copy too, from every
 * tool and inside the OS sandbox. What they hide is not copied at all (nor
 * what the repository keeps of it, another name of a hidden file, or what a
 * hidden link leads to): the copy lies in the session's temp dir,
 * which the host session's tools and commands reach and no rule covers. A publication passes the workspace's own
 * file door first: a change at a path the rules deny, hide or keep read-only,
 * or one that leads out of the workspace, refuses the whole publication.
 *
 * @module
 */

import fs from "node:fs";
import path from "node:path";
import {
  type FileChange,
  type FileState,
  type Host,
  isSettled,
  requireFence,
  ToolError,
  UsageError,
} from "@toolfence/core";
import { Workspace } from "../workspace.ts";
import { Session, type SessionOptions } from "../session.ts";
import { Policy } from "../policy.ts";
import { isProtectedPath } from "../protected_paths.ts";
import { isWithin, MAX_SCAN_ENTRIES, slicer } from "@toolfence/internal";
import {
  discardConfined,
  inFolder,
  lstatConfined,
  mkdirConfined,
  mkdirsConfined,
  readlinkConfined,
  removeConfined,
  tempNameOwner,
} from "@toolfence/internal";
import { deniedEntries, inodeKey, linkedInodes } from "@toolfence/internal";
import { PastLimit, readRegular, type Tree, type TreeReport, walkEntry, walkTree } from "./_tree.ts";
import { applyChanges, findConflicts, hostChanged, type HostConflict } from "./_apply.ts";
import { inputDigest } from "./digest.ts";
import { cloneState, type CopyMethod } from "./_clone.ts";

export type { HostConflict } from "./_apply.ts";
export type { CopyMethod } from "./_clone.ts";

/** Options of {@linkcode createScratch}. */
export interface ScratchOptions {
  /**
   * Copy only these paths (files or folders, relative to the workspace);
   * default the whole workspace. A path that does not exist yet is covered
   * all the same: the agent may create it, and a publication may bring it over.
   */
  paths?: readonly string[];
  /** Options of the scratch session (its workspace is always the copy); default those of the given session. */
  session?: Omit<SessionOptions, "workspace">;
  /**
   * How regular files are copied: `auto` (the default) clones them
   * (copy-on-write, `cp --reflink=always` from descriptors opened without
   * following links) where the file system can and the runtime may run `sh`,
   * and streams them otherwise; `cp` always goes through `cp --reflink=auto`;
   * `stream` never starts a process.
   */
  copy?: CopyMethod;
  /** Stops the copy. */
  signal?: AbortSignal;
}

/** The changes found in a scratch copy (see {@linkcode Scratch.changes}). */
export interface ScratchChanges {
  /** What changed against the workspace as it was copied, sorted by path. */
  changes: FileChange[];
  /** Special files (FIFOs, sockets, devices) in the copy, which cannot be published. */
  unpublishable: string[];
}

/**
 * Bytes of new or changed files that {@linkcode Scratch.changes} reads to hash them, and so the most a publication
 * writes: past it a file's `after` says `sha256: null` (unknown), and publishing it is refused (`too_large`). The
 * hashes run on the server, outside every limit of the commands that made the bytes, and a publication writes them
 * densely into the workspace; bytes cost a command nothing to make: before, 8 sparse files of 1 GiB (`truncate -s
 * 1G`, no disk used) in the copy had 8 GiB read and hashed by every call of the model's `publish` tool (34 s), and
 * once approved written out whole. Files the copy holds as it was made, and files hashed before whose stat did not
 * change since, are not counted (nor read again).
 */
export const PUBLISH_HASH_BUDGET = 256 << 20;
/**
 * How many new or changed files {@linkcode Scratch.changes} hashes, whatever their size (each is an open, a read and
 * a close on the server's thread); past it a file's `after.sha256` is null, as past {@linkcode PUBLISH_HASH_BUDGET}.
 * Before, 100,000 empty files a command made in the copy held the server's event loop 18 s at each `publish` call.
 */
export const PUBLISH_HASH_FILES = 20_000;

// A file's identity and content clock: any write changes its ctime, which no command can set. In whole
// milliseconds, as runtimes' stats give them (isSettled allows for the clock's tick).
function statKey(stat: fs.Stats): string {
  return `${copyKey(stat)}:${Math.floor(stat.ctimeMs)}`;
}

// A file the copy wrote, as long as its size and mtime stay (a rename or chmod changes the ctime alone).
function copyKey(stat: fs.Stats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${Math.floor(stat.mtimeMs)}`;
}

/** Session options taken over from a session a scratch copy is made from. */
function optionsOf(session: Session): Omit<SessionOptions, "workspace"> {
  return {
    host: session.host,
    autoConfirm: session.autoConfirm,
    capabilities: session.capabilities,
    state: session.state.clone(),
    artifacts: session.artifacts,
    fence: session.policy.fence,
    sandbox: session.policy.sandbox,
    protectedPaths: session.policy.protectedPaths,
    // The path rules, which the scratch policy rebases to the copy.
    rules: session.policy.rules,
  };
}

// Whether an entry of `workdir` shows what the globs hide under another name, as `Policy.isHiddenAlias` and
// `Policy.isHidden` tell, looked up once for a whole copy: another name (a hard link) of a hidden file, or the file
// or folder a hidden link leads to (`app/.env -> ../conf/prod.txt`, `secrets -> vault`), which the workspace's
// tools and sandbox hide as they hide the link. A workspace too large to look through counts every file with more
// than one name (fail closed); where hidden links lead is then not known, as for the workspace's own policy.
function hiddenElsewhereTest(workdir: string, globs: readonly string[]): (real: string, stat: fs.Stats) => boolean {
  if (globs.length === 0) return () => false;
  let inodes: ReadonlySet<string> | undefined;
  let places: ReadonlyMap<string, boolean> = new Map();
  try {
    places = deniedEntries(workdir, globs);
    inodes = linkedInodes(places);
  } catch {
    inodes = undefined;
  }
  const leadTo = (real: string) => {
    for (let at = real; isWithin(at, workdir); at = path.posix.dirname(at)) {
      const folder = places.get(at);
      if (folder !== undefined && (at === real || folder)) return true;
      if (at === workdir) break;
    }
    return false;
  };
  return (real, stat) => (stat.isFile() && stat.nlink > 1 && (inodes?.has(inodeKey(stat)) ?? true)) || leadTo(real);
}

function refusal(relative: string, what: string): ToolError {
  return new ToolError(`Nothing was published: ${relative} ${what}`, {
    code: "permission_denied",
    kind: "policy",
    status: "skipped",
    recoverable: false,
    recoveryHint: "Ask the user to publish it.",
    details: { path: relative },
  });
}

function normalRelative(relative: string): string {
  return relative === "" ? "." : relative;
}

// Temp files of atomic writes in flight (and backups of a publication) are no part of either tree.
function isDebris(relative: string): boolean {
  return tempNameOwner(path.posix.basename(relative)) !== undefined;
}

/**
 * A scratch copy and the session that works in it. Made by
 * {@linkcode createScratch}.
 *
 * Requires `--allow-read` and `--allow-write` for the workspace and the temp folder.
 *
 * @example
 * ```ts
 * import { createScratch } from "@toolfence/policy";
 * const workdir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${workdir}/a.txt`, "one\n");
 * const scratch = await createScratch(workdir);
 * await Deno.writeTextFile(`${scratch.root}/a.txt`, "two\n");
 * console.log((await scratch.changes()).changes.map((c) => `${c.change} ${c.path}`)); // ["modified a.txt"]
 * console.log(await Deno.readTextFile(`${workdir}/a.txt`)); // one
 * await scratch.dispose();
 * ```
 */
export class Scratch {
  /** The workspace the copy was made from (the host's). */
  readonly host: Workspace;
  /** The copy's real path. */
  readonly root: string;
  /** The workspace over the copy. */
  readonly workspace: Workspace;
  /** The session whose workspace is the copy; every built-in tool works in it unchanged. */
  readonly session: Session;
  /** The input digest: SHA-256 over the relative path, type, mode and content hash of every copied entry. */
  readonly digest: string;
  /** The covered paths, relative to the workspace (`.` for all of it). */
  readonly paths: readonly string[];
  /** Special files of the workspace that were not copied. */
  readonly skipped: readonly string[];
  /** How many files were cloned (copy-on-write, or by `cp` for the `cp` method) rather than streamed. */
  readonly cloned: number;
  readonly #baseline: Tree;
  readonly #folder: string;
  readonly #disposeHost: boolean;
  readonly #hostPolicy: Policy;
  // Hashes of the copy's files by a settled stat key, so that an unchanged file is not read at each `changes()`.
  readonly #hashes = new Map<string, string>();
  // The files the copy wrote (copyKey), whose bytes the copy paid for: hashed outside the budget, once a call.
  readonly #copies: ReadonlySet<string>;
  #publishing: Promise<unknown> = Promise.resolve();
  #disposed = false;

  /** Use {@linkcode createScratch}. */
  constructor(parts: {
    host: Workspace;
    root: string;
    folder: string;
    session: Session;
    baseline: Tree;
    paths: readonly string[];
    skipped: readonly string[];
    disposeHost: boolean;
    cloned: number;
    /** The workspace's own policy (the session's a copy was made from, or one with the scratch session's rules). */
    hostPolicy: Policy;
    /** The copyKey of each regular file the copy wrote. */
    copies: ReadonlySet<string>;
  }) {
    this.#hostPolicy = parts.hostPolicy;
    this.#copies = parts.copies;
    this.cloned = parts.cloned;
    this.host = parts.host;
    this.root = parts.root;
    this.#folder = parts.folder;
    this.session = parts.session;
    this.workspace = parts.session.workspace;
    this.#baseline = parts.baseline;
    this.paths = Object.freeze([...parts.paths]);
    this.skipped = Object.freeze([...parts.skipped]);
    this.#disposeHost = parts.disposeHost;
    this.digest = inputDigest(parts.baseline);
  }

  /** Whether {@linkcode Scratch.dispose} has run. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** Whether the relative path `relative` lies in what the copy covers. */
  covers(relative: string): boolean {
    return this.paths.some((p) => p === "." || relative === p || relative.startsWith(p + "/"));
  }

  /** The state of `relative` in the workspace when the copy was made (or last published); undefined when absent. */
  baseline(relative: string): FileState | undefined {
    return this.#baseline.get(relative);
  }

  /**
   * What changed in the copy against the workspace as it was copied: files,
   * links and folders created, modified (content, link target or mode) or
   * deleted, and files moved (a deletion and a creation of the same content).
   * A path whose type changed is a deletion and a creation. New or changed
   * files are hashed within {@linkcode PUBLISH_HASH_BUDGET} bytes; past it a
   * file's `after.sha256` is null, and publishing that change is refused.
   * With `hashOnly`, only files at or below those paths (relative) are hashed
   * when new or changed; the others' `after.sha256` is null. Throws
   * `too_large` when the copy holds more than `MAX_SCAN_ENTRIES` entries
   * beyond those it was made with.
   *
   * @example
   * ```ts
   * import { createScratch } from "@toolfence/policy";
   * const scratch = await createScratch(await Deno.makeTempDir());
   * await Deno.writeTextFile(`${scratch.root}/new.txt`, "hi\n");
   * console.log((await scratch.changes()).changes[0].change); // created
   * await scratch.dispose();
   * ```
   */
  async changes(options: { hashOnly?: readonly string[] } = {}): Promise<ScratchChanges> {
    this.#requireLive();
    const now: Tree = new Map();
    const report: TreeReport = { skipped: [] };
    const skip = (relative: string) => isDebris(relative);
    const readFile = this.#fileReader(options.hashOnly);
    const visit = this.#visitor();
    if (this.paths.includes(".")) {
      const walked = await walkTree(this.root, { skip, readFile, visit });
      for (const [k, v] of walked.tree) now.set(k, v);
      report.skipped.push(...walked.report.skipped);
    } else {
      for (const relative of this.paths) {
        const real = this.root + "/" + relative;
        const stat = lstatConfined(real);
        if (stat !== undefined) await walkEntry(real, relative, stat, now, report, { skip, readFile, visit });
      }
    }
    // A path that is now a special file is neither deleted nor changed as far as a publication goes: it is left alone.
    const special = new Set(report.skipped);
    const changes = diffTrees(this.#baseline, now).filter((c) => !special.has(c.path));
    return { changes, unpublishable: report.skipped.sort() };
  }

  // Reads the copy's files for one `changes()`: a file hashed before whose stat key is the same is not read again,
  // and past PUBLISH_HASH_BUDGET bytes of files the copy did not write as it is a file's hash is not known.
  #fileReader(
    hashOnly: readonly string[] | undefined,
  ): (real: string, relative: string, stat: fs.Stats) => Promise<{ sha256: string | null; size: number }> {
    const startedAt = Date.now();
    let budget = PUBLISH_HASH_BUDGET;
    let files = PUBLISH_HASH_FILES;
    const wanted = (relative: string) =>
      hashOnly === undefined || hashOnly.some((p) => p === "." || relative === p || relative.startsWith(p + "/"));
    // Within one call, hard links of one file (one stat key) are read once, and a file the copy wrote is read free
    // once: 1,000 links of a copied 100 MiB file cost 100 MiB.
    const seen = new Map<string, string>();
    const paid = new Set<string>();
    return async (real, relative, stat) => {
      const key = statKey(stat);
      const known = this.#hashes.get(key) ?? seen.get(key);
      if (known !== undefined) return { sha256: known, size: stat.size };
      const free = this.#copies.has(copyKey(stat)) && !paid.has(copyKey(stat));
      if (!free && (stat.size > budget || files === 0 || !wanted(relative))) return { sha256: null, size: stat.size };
      if (!free) files--;
      let read;
      try {
        read = await readRegular(real, stat, undefined, free ? stat.size : budget);
      } catch (error) {
        if (!(error instanceof PastLimit)) throw error;
        // It grew while it was read: what it holds now is not known, and the budget is spent.
        if (!free) budget = 0;
        return { sha256: null, size: stat.size };
      }
      if (free) paid.add(copyKey(stat));
      else budget -= read.size;
      seen.set(key, read.sha256);
      // Cached only when any later write gives it another ctime (not within the same tick of the file clock).
      if (read.size === stat.size && isSettled(stat.ctimeMs, startedAt)) this.#hashes.set(key, read.sha256);
      return read;
    };
  }

  // Lets the event loop run every few milliseconds of a walk, and stops one past MAX_SCAN_ENTRIES entries more than
  // the copy was made with: names cost a command next to nothing to make, and each is an lstat on the server's thread.
  #visitor(): (entries: number) => Promise<void> | undefined {
    const slice = slicer();
    const most = this.#baseline.size + MAX_SCAN_ENTRIES;
    let seen = 0;
    return (entries) => {
      seen += entries;
      if (seen > most) {
        throw new ToolError(
          `The scratch copy holds more than ${most} entries (${MAX_SCAN_ENTRIES} more than it was made with): its changes are not compared`,
          {
            code: "too_large",
            recoveryHint:
              "Remove what a command made in bulk in the scratch copy (a cache, a build folder), then publish again.",
            details: { limit: most },
          },
        );
      }
      return slice.pause();
    };
  }

  /**
   * Throws `too_large` when a change of `changes` brings a file whose content
   * {@linkcode Scratch.changes} did not hash (past its bounds), or when the
   * files `changes` write hold more than {@linkcode PUBLISH_HASH_BUDGET} bytes
   * in all: nothing that was not hashed is published, nor more than that.
   */
  requirePublishable(changes: readonly FileChange[]): void {
    const files = changes.filter((c) => c.after?.type === "file");
    const unknown = files.filter((c) => c.after!.sha256 === null);
    // What a publication writes, densely, whatever the copy holds on disk: hashes kept from earlier looks let more
    // than one look's budget be known, and 8 sparse files of 1 GiB would be 8 GiB written into the workspace.
    const bytes = files.reduce((sum, c) => sum + c.after!.size, 0);
    if (unknown.length === 0 && bytes <= PUBLISH_HASH_BUDGET) return;
    const named = unknown.length > 0 ? unknown : [...files].sort((a, b) => b.after!.size - a.after!.size);
    const listed = named.slice(0, 10).map((c) => `${c.path} (${c.after!.size} bytes)`).join(", ");
    throw new ToolError(
      `Nothing was published: the scratch copy's new or changed files hold more than the ${
        PUBLISH_HASH_BUDGET >> 20
      } MiB a publication may bring: ${listed}${named.length > 10 ? ` and ${named.length - 10} more` : ""}`,
      {
        code: "too_large",
        recoveryHint:
          "Remove or shrink these files in the scratch copy, or publish only other paths; ask the user to copy large files themselves.",
        details: { paths: named.map((c) => c.path), bytes, budget: PUBLISH_HASH_BUDGET },
      },
    );
  }

  /** The paths among `changes` whose workspace copy changed since the scratch was made. */
  conflicts(changes: readonly FileChange[]): Promise<HostConflict[]> {
    return findConflicts({ hostRoot: this.host.workdir, before: (r) => this.#baseline.get(r) ?? null }, changes);
  }

  /** Throws `host_changed`, naming each path and its hashes, when a workspace path of `changes` changed since the copy. */
  async requireUnchanged(changes: readonly FileChange[]): Promise<void> {
    const conflicts = await this.conflicts(changes);
    if (conflicts.length > 0) throw hostChanged(conflicts);
  }

  /**
   * The content of a regular file of the workspace (`host`) or of the copy
   * (`scratch`), when it is at most `maxBytes`; undefined otherwise.
   */
  async read(relative: string, side: "host" | "scratch", maxBytes = 1 << 20): Promise<Uint8Array | undefined> {
    const real = (side === "host" ? this.host.workdir : this.root) + "/" + relative;
    let stat: fs.Stats | undefined;
    try {
      stat = lstatConfined(real);
    } catch {
      return undefined;
    }
    if (!stat?.isFile() || stat.size > maxBytes) return undefined;
    const chunks: Uint8Array[] = [];
    await readRegular(real, stat, (chunk) => {
      chunks.push(chunk.slice());
      return Promise.resolve();
    });
    return Buffer.concat(chunks);
  }

  /** The target text of a symlink of the workspace (`host`) or of the copy (`scratch`); undefined when it is none. */
  readLink(relative: string, side: "host" | "scratch"): string | undefined {
    const real = (side === "host" ? this.host.workdir : this.root) + "/" + relative;
    try {
      return lstatConfined(real)?.isSymbolicLink() ? readlinkConfined(real) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Whether a symlink at `relative` with the target text `target` would lead
   * out of the workspace once published, judged by its text alone: an
   * absolute target outside the workspace, a `..` climb above its root, or a
   * `..` after a name (`a/../..`), which a link at `a` could send anywhere.
   */
  leadsOutside(relative: string, target: string): boolean {
    if (path.posix.isAbsolute(target)) return !isWithin(path.posix.normalize(target), this.host.workdir);
    const parts = target.split("/").filter((p) => p !== "" && p !== ".");
    if (parts.some((p, i) => p === ".." && parts.slice(0, i).some((q) => q !== ".."))) return true;
    const joined = path.posix.normalize(path.posix.join(path.posix.dirname(relative), target));
    return joined === ".." || joined.startsWith("../");
  }

  /**
   * Applies `changes` (a subset of {@linkcode Scratch.changes}) to the
   * workspace, every one or none: refuses with `host_changed`, changing
   * nothing, when a workspace path is no longer as it was copied; undoes
   * what it did and throws `publish_failed` on any other failure. Each file
   * is replaced in one rename, so an interrupted publication leaves each
   * file old or new. Afterwards the published state is the new baseline.
   * This applies without asking anyone: the `publish` tool is what shows
   * the person the diff and checks the approved paths and digest.
   *
   * A file whose content was not hashed (past {@linkcode PUBLISH_HASH_BUDGET})
   * refuses the whole publication (`too_large`). Then every path a change touches (where it goes, and where a move came
   * from) passes the workspace's file door: one that the path rules deny,
   * hide or keep read-only, that leads out of the workspace, or that the
   * fence closes refuses the whole publication (`permission_denied`,
   * `outside_workspace`, `fence_denied`), changing nothing; so does a
   * protected path unless `personApproved` says a person approved the
   * publication (the `publish` tool asks one for these).
   *
   * Requires `--allow-read` and `--allow-write` for the workspace.
   */
  publish(
    changes: readonly FileChange[],
    options: { signal?: AbortSignal; onStep?: (what: string) => void; personApproved?: boolean } = {},
  ): Promise<FileChange[]> {
    this.#requireLive();
    const run = this.#publishing.then(async () => {
      this.#requireLive();
      this.requirePublishable(changes);
      await this.#passHostDoor(changes, options.personApproved === true);
      await this.requireUnchanged(changes);
      await applyChanges({
        hostRoot: this.host.workdir,
        scratchRoot: this.root,
        before: (r) => this.#baseline.get(r) ?? null,
        signal: options.signal,
        onStep: options.onStep,
      }, changes);
      // What went first, then what came: a path whose type changed is both.
      for (const change of changes) {
        if (change.change === "moved" && change.from !== undefined) this.#baseline.delete(change.from);
        if (change.after === null) this.#baseline.delete(change.path);
      }
      for (const change of changes) if (change.after !== null) this.#baseline.set(change.path, change.after);
      return [...changes];
    });
    this.#publishing = run.catch(() => {});
    return run;
  }

  // Every path of `changes` through the workspace's own file door, for writing, a final link not followed;
  // a protected path only on a person's word.
  async #passHostDoor(changes: readonly FileChange[], personApproved: boolean): Promise<void> {
    const paths = new Set(changes.flatMap((c) => [c.path, ...(c.from !== undefined ? [c.from] : [])]));
    for (const relative of paths) {
      await this.#resolveOnHost(relative);
      if (!personApproved && isProtectedPath(relative, this.#hostPolicy.protectedPaths)) {
        throw refusal(relative, "is a protected path, and no person approved it");
      }
    }
  }

  async #resolveOnHost(relative: string): Promise<void> {
    try {
      await this.#hostPolicy.resolveTarget(relative, { access: "write", followFinalSymlink: false });
    } catch (error) {
      const judged = error instanceof ToolError && ["permission_denied", "fence_denied"].includes(error.code);
      if (judged || !(error instanceof ToolError)) throw error;
      // It does not resolve in the workspace as it is (a folder there is a link this publication replaces,
      // or a loop); the publication never follows a link, so the rules judge it as named.
      const outcome = this.#hostPolicy.pathDecision(relative);
      if (outcome.decision !== "allow") {
        throw refusal(relative, `is ${outcome.decision === "deny" ? "denied" : "read-only"} by the policy`);
      }
      requireFence(this.#hostPolicy.fence, "write", `${this.host.workdir}/${relative}`);
    }
  }

  /** Closes the scratch session and removes the copy; never publishes. Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.#publishing;
    try {
      await this.session.close();
    } finally {
      await this.workspace.dispose();
      // Without following a link a command put in place of it or of a folder in it (what lies behind is left
      // alone); a failure is thrown, as a dispose must say it left debris.
      await removeConfined(this.#folder);
      if (this.#disposeHost) await this.host.dispose();
    }
  }

  #requireLive(): void {
    if (!this.#disposed) return;
    throw new ToolError("The scratch copy was disposed of", {
      code: "workspace_missing",
      recoverable: false,
      details: { root: this.root },
    });
  }
}

/**
 * The changes from tree `before` to tree `after` (relative path to state),
 * sorted by path; a file or link gone from one place and come with the same
 * content and mode at another is a move; a path whose type changed is a
 * deletion and a creation.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { diffTrees } from "@toolfence/policy";
 * const file = { type: "file", size: 3, mode: 0o644, sha256: "ab".repeat(32) } as const;
 * const changes = diffTrees(new Map([["a.txt", file]]), new Map([["b.txt", file]]));
 * console.log(changes.map((c) => `${c.change} ${c.from} -> ${c.path}`)); // ["moved a.txt -> b.txt"]
 * ```
 */
export function diffTrees(
  before: ReadonlyMap<string, FileState>,
  after: ReadonlyMap<string, FileState>,
): FileChange[] {
  const changes: FileChange[] = [];
  const deleted: FileChange[] = [];
  const created: FileChange[] = [];
  for (const [relative, old] of before) {
    const now = after.get(relative);
    if (now === undefined) deleted.push({ path: relative, change: "deleted", before: old, after: null });
    else if (now.type !== old.type) {
      deleted.push({ path: relative, change: "deleted", before: old, after: null });
      created.push({ path: relative, change: "created", before: null, after: now });
    } else if (now.sha256 !== old.sha256 || now.mode !== old.mode) {
      changes.push({ path: relative, change: "modified", before: old, after: now });
    }
  }
  for (const [relative, now] of after) {
    if (!before.has(relative)) created.push({ path: relative, change: "created", before: null, after: now });
  }
  // A file or link that vanished in one place and appeared with the same content and mode in another moved.
  const key = (s: FileState) => `${s.type}:${s.mode}:${s.sha256}`;
  const gone = new Map<string, FileChange[]>();
  for (const d of deleted) {
    if (d.before!.type === "directory" || d.before!.sha256 === null || after.has(d.path)) continue;
    const list = gone.get(key(d.before!)) ?? [];
    list.push(d);
    gone.set(key(d.before!), list);
  }
  const paired = new Set<FileChange>();
  for (const c of created.sort((a, b) => a.path < b.path ? -1 : 1)) {
    // A file whose content is not known is no move of another.
    if (c.after!.type === "directory" || c.after!.sha256 === null || before.has(c.path)) continue;
    const from = gone.get(key(c.after!))?.shift();
    if (from === undefined) continue;
    paired.add(from).add(c);
    changes.push({ path: c.path, change: "moved", from: from.path, before: from.before, after: c.after });
  }
  for (const c of [...deleted, ...created]) if (!paired.has(c)) changes.push(c);
  // By path; on one path (a type change) the deletion first.
  const rank = (c: FileChange) => (c.change === "deleted" ? 0 : 1);
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : rank(a) - rank(b)));
}

/**
 * Makes a scratch copy of a workspace (or of the named paths) in the
 * session's temp dir and a session whose workspace is the copy. `source` is
 * a session (the copy is made in its temp dir and the scratch session takes
 * its host, grants, sandbox mode and protected paths), a workspace, or a
 * folder path. The input digest ({@linkcode Scratch.digest}) depends only on
 * the copied content: the same files give the same digest wherever the
 * workspace lies and whatever their times.
 *
 * Regular files are cloned (copy-on-write) where the file system offers it
 * and the runtime may run `sh`, and streamed otherwise (see
 * {@linkcode ScratchOptions.copy} and BENCHMARKS.md for the cost).
 *
 * Requires `--allow-read` for the workspace and `--allow-read`,
 * `--allow-write` for the temp folder (and, to clone, `--allow-run=sh` and under Deno `--allow-env`).
 *
 * @example
 * ```ts
 * import { createScratch, Session } from "@toolfence/policy";
 * const session = new Session({ workspace: await Deno.makeTempDir() });
 * const scratch = await createScratch(session);
 * console.log(scratch.session.workspace.workdir === scratch.root, scratch.digest.length); // true 64
 * await scratch.dispose();
 * await session.close();
 * ```
 */
export async function createScratch(
  source: Session | Workspace | string,
  options: ScratchOptions = {},
): Promise<Scratch> {
  const host = source instanceof Session
    ? source.workspace
    : source instanceof Workspace
    ? source
    : new Workspace(source);
  const disposeHost = typeof source === "string";
  const sessionOptions: Omit<SessionOptions, "workspace"> = options.session ??
    (source instanceof Session ? optionsOf(source) : {});
  const covered = await coveredPaths(host, options.paths);
  const temp = await host.tempDir();
  // The temp dir is the host's commands' to change: the copy's folders are made each in its pinned parent, never
  // through a link a command put in place of one (it would lead the copy, and its folders, out of the workspace).
  const folder = temp + "/" + path.posix.basename(inFolder(temp, (at) => fs.mkdtempSync(at("scratch-"))));
  const root = folder + "/workspace";
  try {
    mkdirConfined(root, 0o700);
    const baseline: Tree = new Map();
    const report: TreeReport = { skipped: [] };
    // The copy itself lies in the temp dir, which may lie inside the workdir: it is never copied into itself.
    // Nor is another name (a hard link) of a file the rules hide: its copy would be a file of its own, with one
    // name that no rule matches, and the hidden file's bytes would be read there as the workspace refuses them.
    // Nor is what a hidden link leads to (its copy would lie where no hidden link leads).
    const hiddenElsewhere = hiddenElsewhereTest(host.workdir, [
      ...(sessionOptions.rules?.hiddenGlobs() ?? []),
      ...(source instanceof Session ? source.policy.hiddenPaths : []),
    ]);
    // Nor is a file or folder the rules hide (nor what the repository keeps of it, which they deny while they
    // hide): the copy lies in the temp dir, which the host session's commands read and write, where no rule of
    // the workspace matches it and no mask of its sandbox covers it. Before, with `**\/.env` denied and nobody to
    // ask, the host's `cat <temp dir>/scratch-*\/workspace/.env` printed the secret.
    const hostRules = source instanceof Session ? source.policy : undefined;
    const hidden = (real: string) =>
      (sessionOptions.rules?.hasPathRules === true && sessionOptions.rules.decidePath(real).decision === "deny") ||
      (hostRules?.isHidden(real) ?? false);
    const skip = (relative: string, real: string, stat: fs.Stats) =>
      isDebris(relative) || host.areaOf(real) === "temp" || hiddenElsewhere(real, stat) || hidden(real);
    const clone = cloneState(options.copy ?? "auto", fs.realpathSync(root));
    const copies = new Set<string>();
    const copied = (stat: fs.Stats) => copies.add(copyKey(stat));
    if (covered.includes(".")) {
      const walked = await walkTree(host.workdir, { skip, copyTo: root, signal: options.signal, clone, copied });
      for (const [k, v] of walked.tree) baseline.set(k, v);
      report.skipped.push(...walked.report.skipped);
    } else {
      for (const relative of covered) {
        const real = host.workdir + "/" + relative;
        const stat = lstatConfined(real);
        if (stat === undefined) continue;
        mkdirsConfined(path.posix.dirname(root + "/" + relative), [root], 0o700);
        await walkEntry(real, relative, stat, baseline, report, {
          skip,
          copyTo: root,
          signal: options.signal,
          clone,
          copied,
        });
      }
    }
    const workspace = new Workspace(root, { tempParent: folder, sweepDebris: false });
    const session = new Session({
      ...sessionOptions,
      // Absolute globs that name places in the workspace name the same places in the copy.
      rules: sessionOptions.rules?.forCopyAt(workspace.workdir),
      host: sessionOptions.host as Host | undefined,
      workspace,
    });
    // Made from a workspace alone: its policy has the scratch session's rules, and asks whom that session asks.
    const hostPolicy = source instanceof Session ? source.policy : new Policy({
      workspace: host,
      state: session.state,
      asker: {
        choose: (r, signal) => session.choose(r, signal),
        confirm: (r, signal) => session.confirmOutcome(r, signal),
      },
      fence: session.policy.fence,
      sandbox: session.policy.sandbox,
      protectedPaths: session.policy.protectedPaths,
      rules: session.policy.rules,
    });
    return new Scratch({
      hostPolicy,
      host,
      root: fs.realpathSync(root),
      folder,
      session,
      baseline,
      paths: covered,
      skipped: report.skipped.sort(),
      disposeHost,
      cloned: clone?.cloned ?? 0,
      copies,
    });
  } catch (error) {
    await discardConfined(folder);
    if (disposeHost) await host.dispose();
    throw error;
  }
}

// The named paths as real paths relative to the workdir, nested ones dropped; ["."] for the whole workspace.
async function coveredPaths(host: Workspace, paths: readonly string[] | undefined): Promise<string[]> {
  if (paths === undefined) return ["."];
  if (!Array.isArray(paths) || paths.length === 0) {
    throw new UsageError("createScratch: paths must be a non-empty list of paths inside the workspace");
  }
  const found: string[] = [];
  for (const p of paths) {
    const resolved = await host.resolve(p, { followFinalSymlink: false });
    if (resolved.area !== "workdir" || !isWithin(resolved.path, host.workdir)) {
      throw new ToolError(`Path ${p} is not within the workspace folder`, {
        code: "outside_workspace",
        kind: "policy",
        details: { path: p, resolved: resolved.path },
      });
    }
    found.push(normalRelative(path.posix.relative(host.workdir, resolved.path)));
  }
  if (found.includes(".")) return ["."];
  const sorted = [...new Set(found)].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q + "/")));
}
