/**
 * The interfaces the policy implements for the core: path resolution inside a
 * workspace, the checks a tool goes through, and the runtime fence. The core
 * calls these and never builds them; `@toolfence/policy` provides the default
 * implementations and wires them into its `Session`.
 *
 * @module
 */
import type { Stats } from "node:fs";
import type { Fence } from "./fence.ts";
import type { ProcessDoor } from "./process_door.ts";

/** Where a resolved path lies. */
export interface ResolvedLocation {
  /** Absolute path with every symlink resolved (but see `followFinalSymlink`). */
  path: string;
  /** `temp` for the session temp dir, else `workdir`. */
  area: "workdir" | "temp";
  /** Whether something exists at `path` now. */
  exists: boolean;
}

/**
 * Path resolution inside the folders an agent may use (`ctx.workspace`).
 * `@toolfence/policy`'s `Workspace` implements it.
 */
export interface PathResolver {
  /** The real path of the working folder. */
  readonly workdir: string;
  /** Resolves a model-given path; throws a `ToolError` (`outside_workspace`, ...) when it leads out. */
  resolve(path: string, options?: { followFinalSymlink?: boolean }): Promise<ResolvedLocation>;
  /** A real path as the model should see it (relative to the workdir where possible). */
  relative(absPath: string): string;
  /** The session's temp dir, created on first use. */
  tempDir(): Promise<string>;
  /** Which area a real path lies in, if any. */
  areaOf(realPath: string): "workdir" | "temp" | undefined;
  /** The folder the session temp dir is made in (a tool's `temp` needs point there). */
  readonly tempParent: string;
}

/**
 * What a write does to its path:
 * - `write`: create the file or replace its content; the policy decides which
 *   from what is there (asks only when something is);
 * - `create`: a new file (asks only if something already exists there);
 * - `overwrite`: replace a file's content;
 * - `copy`: the destination of a copy, or of a move;
 * - `move`: the source of a move (it disappears from there);
 * - `delete`: remove a file or folder;
 * - `mkdir`: create a folder (never asks, unless the folder is protected).
 *
 * `move` and `delete` act on a symlink itself, not on its target, so the
 * link's location is what must lie in the workspace.
 */
export type WriteKind =
  | "write"
  | "create"
  | "overwrite"
  | "move"
  | "copy"
  | "delete"
  | "mkdir";

/**
 * A path resolved by the policy, once per call: where it really is, in which
 * area, and what was there. Tools act on `path` with the confined operations
 * of `confined_fs.ts`, passing `roots`.
 */
export interface FileTarget {
  /** Absolute real path (a final symlink kept as a link where the action acts on links). */
  path: string;
  /** `temp` for the session temp dir, else `workdir`. */
  area: "workdir" | "temp";
  /** Whether something was at `path` when it was resolved. */
  existed: boolean;
  /** Its lstat then; undefined when nothing was there. */
  stat?: Stats;
  /** The real paths of the workspace's areas, for confined operations. */
  roots: readonly string[];
}

/** Options of {@linkcode Policy.resolveTarget}. */
export interface TargetOptions {
  /** `read` or `write`: which the fence must allow. Default `read`. */
  access?: "read" | "write";
  /** Whether a symlink at the last component is followed (default `true`). */
  followFinalSymlink?: boolean;
}

/** Options of {@linkcode Policy.authorize}. */
export interface AuthorizeOptions {
  /**
   * The real path of a folder whose entries the write puts at (or, for
   * `move` and `delete`, removes from) the target: each entry counts for
   * protection as if it were at the target (a folder holding `config` moved
   * to `.git`; a folder holding `.npmrc` deleted). For `move` and `delete` of
   * a folder it defaults to the folder itself.
   */
  tree?: string;
}

/** How shell commands are confined by the OS. */
export type SandboxSetting = "auto" | "required" | "off";

/**
 * The checks behind every operation of a session (`ctx.policy`).
 * `@toolfence/policy`'s `Policy` implements it.
 */
export interface CallPolicy {
  /** The runtime fence. */
  readonly fence: Fence;
  /** The OS sandbox mode for shell commands. */
  readonly sandbox: SandboxSetting;
  /** The one door every process of a tool goes through. */
  readonly processes: ProcessDoor;
  /** The real path of `path` for reading, after the workspace and fence checks. */
  resolveForRead(path: string): Promise<string>;
  /** The real path to write for `path`, after the workspace, fence and write-permission checks. */
  resolveForWrite(path: string, action: WriteKind, signal?: AbortSignal): Promise<string>;
  /** The one resolution of a path in a call, checked against the workspace and the fence; nothing is asked. */
  resolveTarget(path: string, options?: TargetOptions): Promise<FileTarget>;
  /** The entry `name` inside the resolved folder `parent`, without resolving the folder again. */
  childTarget(parent: FileTarget, name: string, access?: "read" | "write"): Promise<FileTarget>;
  /** {@linkcode CallPolicy.resolveTarget} for writing, then {@linkcode CallPolicy.authorize}. */
  writeTarget(path: string, action: WriteKind, signal?: AbortSignal, options?: AuthorizeOptions): Promise<FileTarget>;
  /** The write-permission flow for a resolved target; throws `permission_denied` when the write may not go ahead. */
  authorize(
    target: FileTarget,
    action: WriteKind,
    signal?: AbortSignal,
    options?: AuthorizeOptions & { shown?: string },
  ): Promise<void>;
  /** Resolves when a shell command may start; throws `permission_denied` when it may not. */
  authorizeCommand(command: string, signal?: AbortSignal): Promise<unknown>;
  /**
   * Whether the policy hides a real path from every tool (a deny rule of a
   * policy file): listings and searches leave it out. Absent: nothing is hidden.
   */
  isHidden?(realPath: string): boolean;
  /** The hidden globs, relative to the workspace root, for the OS sandbox to mask. Absent: none. */
  readonly hiddenPaths?: readonly string[];
}
