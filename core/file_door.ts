/**
 * The file door: the one way a tool reaches the files of a session
 * (`ctx.policy.files`). A model-given path is resolved once into a
 * {@linkcode FileTarget} that has passed every rule (the workspace and the
 * temp dir, the tenant's own folder, the policy files' deny and read-only
 * rules, the runtime fence, symlinks and `..`); a write is judged by
 * {@linkcode FileDoor.authorize} (protected paths, the permission question);
 * and the operations act on targets only, each re-checking at the moment it
 * acts that the target still leads where it was judged to lead (a link swapped
 * in during the call is refused), under the path locks where they change
 * something. The core declares the door; `@toolfence/policy` implements it.
 *
 * @module
 */
import type { Dirent, Stats } from "node:fs";
import type { AuthorizeOptions, FileTarget, TargetOptions, WriteKind } from "./services.ts";
import type { FileState } from "./effects.ts";

/** What is at a path, for a change report: its state, and its exact content (a link's target text) when kept. */
export interface FileSnapshot {
  /** Its state. */
  state: FileState;
  /** Its exact content, when kept. */
  image?: Uint8Array;
}

/** What {@linkcode FileDoor.copy} copied. */
export interface CopiedCounts {
  /** Regular files copied. */
  files: number;
  /** Folders copied. */
  directories: number;
  /** Symlinks recreated as links. */
  links: number;
  /** Paths (relative to the source) of FIFOs, sockets and devices that were not copied. */
  skipped: string[];
}

/**
 * The operations on files, behind every rule of the policy. Every method
 * that takes a path string takes a model-given path (resolved here) or, where
 * it says so, a real path that an earlier target of this door produced; a
 * real path outside the workspace's areas, or hidden by the policy, is
 * refused.
 */
export interface FileDoor {
  /**
   * The one resolution of a path in a call: the real path it leads to, after
   * the workspace, tenant, path-rule and fence checks for `access`. Nothing
   * is asked. Throws `outside_workspace`, `permission_denied`, `fence_denied`.
   */
  resolve(path: string, options?: TargetOptions): Promise<FileTarget>;
  /** The entry `name` of the resolved folder `parent` (a final symlink not followed), checked like `resolve`. */
  child(parent: FileTarget, name: string, access?: "read" | "write"): Promise<FileTarget>;
  /** The write-permission judgement of a resolved target; throws `permission_denied` when it may not go ahead. */
  authorize(
    target: FileTarget,
    action: WriteKind,
    signal?: AbortSignal,
    options?: AuthorizeOptions & { shown?: string },
  ): Promise<void>;
  /** Whether the policy hides a real path from every tool. */
  isHidden(realPath: string): boolean;
  /** The hidden globs, relative to the workspace root (for a walker's pruning and the OS sandbox). */
  readonly hiddenPaths: readonly string[];
  /**
   * Opens a resolved file for reading, re-checked by the open itself: in its
   * folder pinned at the real path that was judged, without following a link
   * anywhere on its path (a folder swapped for a link since it was resolved is
   * refused); non-blocking, so a FIFO cannot hang it. Returns the descriptor;
   * the caller closes it. `check`, when given, is handed an lstat of the
   * target taken right before the open by its name in that pinned folder
   * (undefined when nothing is there), and may throw to refuse it; it must not
   * look at the path again itself (a stat by the path follows a link swapped
   * in since, and tells what lies where it leads).
   */
  openRead(target: FileTarget, check?: (now: Stats | undefined) => void): Promise<number>;
  /** Runs `fn` holding the path locks of `targets`, after re-checking each. */
  locked<T>(targets: readonly FileTarget[], fn: () => Promise<T>): Promise<T>;
  /**
   * Writes `data` to the target atomically (a temp file renamed over it),
   * creating its missing folders; returns the topmost folder it created (for
   * {@linkcode FileDoor.discard} to undo), or undefined. A target that did
   * not exist when resolved (so no question about replacing it was asked) is
   * written only while its path is free: an entry that appeared there since
   * is left alone and the write is `path_changed`. The same holds for the
   * destination of {@linkcode FileDoor.copy} and {@linkcode FileDoor.move}.
   */
  write(target: FileTarget, data: string | Uint8Array, options?: { mode?: number }): Promise<string | undefined>;
  /** Creates the folder of `target` and its missing parents; returns the topmost created, or undefined. */
  mkdir(target: FileTarget, options?: { parentsOnly?: boolean }): Promise<string | undefined>;
  /**
   * Copies the file, folder or symlink `source` to `destination` (not
   * following links), through a temp name renamed into place.
   */
  copy(source: FileTarget, destination: FileTarget, signal?: AbortSignal): Promise<CopiedCounts>;
  /** Moves `source` to `destination` (a rename, or a copy and removal across file systems). */
  move(source: FileTarget, destination: FileTarget, signal?: AbortSignal): Promise<void>;
  /** Removes a file, a symlink (as a link) or a folder with everything in it. */
  remove(target: FileTarget, signal?: AbortSignal): Promise<void>;
  /** Removes what this door's `write`/`mkdir` created (`realPath` from their result) when undoing; quietly. */
  discard(realPath: string): Promise<void>;
  /**
   * Opens for reading a file that a walk of a resolved target found (grep's
   * files): the real path is re-checked to lie in the workspace and not be
   * hidden, and opened in its pinned folder without following a link anywhere
   * on it, non-blocking. Synchronous, as a search opens thousands of files.
   * Returns the descriptor; the caller closes it.
   */
  openFound(realPath: string): number;
  /** The lstat of a real path in the workspace, undefined when nothing is there. */
  lstat(realPath: string): Stats | undefined;
  /**
   * Whether the entry at a real path in the workspace is still the version of
   * the file that `opened` (the stat of a descriptor the caller holds)
   * describes: the same device and inode (the open descriptor keeps the inode
   * from being reused), size, and modification and status-change times. One
   * lstat of the path, not pinned: a path that leads elsewhere now finds
   * another entry, and a missing one is gone, both "changed". For a reader
   * that holds the file open, to tell whether it changed while it was read,
   * at a fraction of an fstat's cost under Deno.
   */
  unchangedSince(realPath: string, opened: Stats): boolean;
  /** What is at a real path in the workspace, for a change report; its content only within `room` bytes. */
  snapshot(realPath: string, room?: number): FileSnapshot | undefined;
  /**
   * The entries of a folder that the policy does not hide: a resolved target
   * (re-checked first), or a real path under one (a walk's inner folder, a
   * change report). list_dir, and the walk of glob and grep, list through this.
   */
  entries(folder: FileTarget | string): Dirent[];
}
