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
import type { FileDoor } from "./file_door.ts";
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
 * The folders an agent may use (`ctx.workspace`): where they are, and how a
 * real path is shown. A tool resolves a model-given path only through the
 * file door (`ctx.policy.files.resolve`), which applies every rule; the
 * workspace's own resolution (containment alone) is the policy's.
 * `@toolfence/policy`'s `Workspace` implements it.
 */
export interface PathResolver {
  /** The real path of the working folder. */
  readonly workdir: string;
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
 * A path resolved by the policy's file door, once per call: where it really
 * is, in which area, and what was there. Tools act on it through the door's
 * operations ({@linkcode FileDoor}), which re-check it when they act.
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
  /** What the target was resolved for (default `read`): what a re-check at the moment of an operation checks. */
  access?: "read" | "write";
}

/** Options of {@linkcode FileDoor.resolve}. */
export interface TargetOptions {
  /** `read` or `write`: which the fence must allow. Default `read`. */
  access?: "read" | "write";
  /** Whether a symlink at the last component is followed (default `true`). */
  followFinalSymlink?: boolean;
}

/** Options of {@linkcode FileDoor.authorize}. */
export interface AuthorizeOptions {
  /**
   * The real path of a folder whose entries the write puts at (or, for
   * `move` and `delete`, removes from) the target: each entry counts for
   * protection as if it were at the target (a folder holding `config` moved
   * to `.git`; a folder holding `.npmrc` deleted). For `move` and `delete` of
   * a folder it defaults to the folder itself.
   */
  tree?: string;
  /** For a write: the text the file would have, shown to a person asked about it (as a diff). */
  proposed?: string;
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
  /**
   * The file door: every file effect of a tool (resolve, judge, read a
   * folder, write, move, copy, remove) passes through it.
   */
  readonly files: FileDoor;
  /** The one door every process of a tool goes through. */
  readonly processes: ProcessDoor;
  /**
   * The real path of `path` for reading, after the workspace, path-rule and
   * fence checks (`files.resolve(path).path`): for the tools that hand a
   * folder or file to a process (a command's working folder, a browser
   * upload); file tools use {@linkcode CallPolicy.files}.
   */
  resolveForRead(path: string): Promise<string>;
  /** Resolves when a shell command may start; throws `permission_denied` when it may not. */
  authorizeCommand(command: string, signal?: AbortSignal): Promise<unknown>;
  /** The hidden globs, relative to the workspace root, for the OS sandbox to mask. Absent: none. */
  readonly hiddenPaths?: readonly string[];
  /**
   * The policy files' network rules (`network.allow`, `network.deny`) that the commands' egress proxy judges by;
   * the browser refuses every destination `deny` names too, whatever its own options say. Absent: none.
   */
  readonly networkRules?: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  /**
   * What an answer of the MCP client (a choice whose source is `client`) counts for, by the policy files'
   * `answers.elicitation`: under `refuse` it allows nothing, a destination of the browser included. Absent: `once`.
   */
  readonly clientAnswers?: "refuse" | "once" | "grant";
}
