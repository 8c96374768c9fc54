/**
 * The interfaces the policy implements for the core: path resolution inside a
 * workspace, the checks a tool goes through, and the runtime fence. The core
 * calls these and never builds them; `@toolfence/policy` provides the default
 * implementations and wires them into its `Session`.
 *
 * @module
 */

/** What a tool may touch: files to read or write, programs to run, the network, the environment. */
export type FencePermission = "read" | "write" | "run" | "net" | "env";

/** The fence's answer for one permission and target. */
export interface FenceAnswer {
  /** Whether the operation may go ahead. */
  allowed: boolean;
  /** When closed: the flag that would open it, e.g. `--allow-write=/abs/path`. */
  flag?: string;
}

/**
 * The outer fence around every tool: the runtime's own permission flags.
 *
 * @example
 * ```ts
 * import type { Fence } from "@toolfence/core";
 * const closedToWrites: Fence = {
 *   query: (permission) => ({ allowed: permission !== "write", flag: "--allow-write" }),
 *   closedEntirely: (permission) => permission === "write",
 * };
 * console.log(closedToWrites.query("write").allowed); // false
 * ```
 */
export interface Fence {
  /** Whether `permission` is open for `target` (a real path, a command name, a host, a variable); all targets when omitted. */
  query(permission: FencePermission, target?: string): FenceAnswer;
  /** Whether `permission` is closed for every target (with `probes`: for each of them), so tools needing it can be hidden. */
  closedEntirely(permission: FencePermission, probes?: readonly string[]): boolean;
}

/** A fence that allows everything: what the core assumes when nobody passes one. */
export const OPEN_FENCE: Fence = Object.freeze({
  query: (): FenceAnswer => ({ allowed: true }),
  closedEntirely: (): boolean => false,
});

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
}

/** What a write does to its path (see `@toolfence/policy`'s `Policy.resolveForWrite`). */
export type WriteKind = "create" | "overwrite" | "move" | "copy" | "delete" | "mkdir";

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
  /** The real path of `path` for reading, after the workspace and fence checks. */
  resolveForRead(path: string): Promise<string>;
  /** The real path to write for `path`, after the workspace, fence and write-permission checks. */
  resolveForWrite(path: string, action: WriteKind, signal?: AbortSignal): Promise<string>;
  /** Resolves when a shell command may start; throws `permission_denied` when it may not. */
  authorizeCommand(command: string, signal?: AbortSignal): Promise<unknown>;
}
