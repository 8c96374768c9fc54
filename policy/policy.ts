/**
 * What a tool sees as `ctx.policy`: resolving paths for reading and writing
 * with every check in one place (workspace, fence, write permission), so that
 * no tool reaches around the policy.
 *
 * @module
 */
import fsp from "node:fs/promises";
import { ToolError } from "@toolfence/core";
import type { ChoiceOutcome, ChoiceRequest, ConfirmRequest } from "@toolfence/core";
import { type Fence, requireFence, runtimeFence } from "./fence.ts";
import type { SandboxMode } from "./sandbox.ts";
import { authorizeCommand, type CommandAuthorization } from "./authorize_command.ts";
import type { RiskAssessor } from "./risk.ts";
import type { PolicyState } from "./state.ts";
import type { Workspace } from "./workspace.ts";

/** Whoever answers the policy's questions; every `Host` is one. */
export interface PolicyAsker {
  /** Asks a question with fixed answers. */
  choose<T extends string>(
    req: ChoiceRequest<T>,
    signal?: AbortSignal,
  ): Promise<ChoiceOutcome<T>>;
  /** Asks a yes/no question. */
  confirm(
    req: ConfirmRequest,
    signal?: AbortSignal,
  ): Promise<ChoiceOutcome<boolean>>;
}

/**
 * What a write does to its path:
 * - `create`: a new file (asks only if something already exists there);
 * - `overwrite`: replace a file's content;
 * - `copy`: the destination of a copy, or of a move;
 * - `move`: the source of a move (it disappears from there);
 * - `delete`: remove a file or folder;
 * - `mkdir`: create a folder (never asks).
 *
 * `move` and `delete` act on a symlink itself, not on its target, so the
 * link's location is what must lie in the workspace.
 */
export type WriteAction =
  | "create"
  | "overwrite"
  | "move"
  | "copy"
  | "delete"
  | "mkdir";

/** The answers of the write-permission question. */
export type WriteChoice = "grant" | "once" | "deny";

/** Options of the {@linkcode Policy} constructor. */
export interface PolicyOptions {
  /** The session's workspace. */
  workspace: Workspace;
  /** The session's allowlists and grants. */
  state: PolicyState;
  /** Who is asked. */
  asker: PolicyAsker;
  /** The runtime fence; default {@linkcode runtimeFence}. */
  fence?: Fence;
  /** The OS sandbox mode for shell commands; default `auto`. */
  sandbox?: SandboxMode;
  /** Judges commands that are not allowlisted; default the rules-based {@linkcode rulesRiskAssessor}. */
  assessor?: RiskAssessor;
}

const VERBS: Record<WriteAction, string> = {
  create: "overwrite the existing",
  overwrite: "overwrite",
  copy: "overwrite the existing",
  move: "move away",
  delete: "delete",
  mkdir: "create the folder",
};

/**
 * The checks behind every file operation of a session.
 *
 * Write permission (SPEC section 5): writes inside the temp dir never ask;
 * neither do writes a person granted before, nor creating something that does
 * not exist yet. Anything that would destroy existing content (overwrite, copy
 * or move onto it, move it away, delete it) asks with three options: allow and
 * grant (the default), allow this time only, deny. Only a person's "grant"
 * (`source: "user"`) adds the path to the session's write grants; an automatic
 * answer allows once and never grants.
 *
 * Requires `--allow-read` for the workspace, and `--allow-write` for writes.
 *
 * @example
 * ```ts
 * import { Policy } from "@toolfence/policy";
 * import { PolicyState } from "@toolfence/policy";
 * import { Workspace } from "@toolfence/policy";
 * import { autoHost } from "@toolfence/policy";
 * const policy = new Policy({
 *   workspace: new Workspace(Deno.cwd()),
 *   state: new PolicyState(),
 *   asker: autoHost(),
 * });
 * const file = await policy.resolveForWrite("notes/new.md", "create");
 * console.log(file);
 * ```
 */
export class Policy {
  /** The session's workspace. */
  readonly workspace: Workspace;
  /** The session's allowlists and grants. */
  readonly state: PolicyState;
  /** The runtime fence. */
  readonly fence: Fence;
  /** The OS sandbox mode for shell commands. */
  readonly sandbox: SandboxMode;
  readonly #asker: PolicyAsker;
  readonly #assessor?: RiskAssessor;

  /** Creates the policy of a session. */
  constructor(options: PolicyOptions) {
    this.workspace = options.workspace;
    this.state = options.state;
    this.#asker = options.asker;
    this.#assessor = options.assessor;
    this.fence = options.fence ?? runtimeFence;
    this.sandbox = options.sandbox ?? "auto";
  }

  /**
   * The real path of `path` for reading: it must lie in the workspace and the
   * fence must allow reading it.
   */
  async resolveForRead(path: string): Promise<string> {
    const resolved = await this.workspace.resolve(path);
    requireFence(this.fence, "read", resolved.path);
    return resolved.path;
  }

  /**
   * The path to write for `path`: it must lie in the workspace after following
   * every symlink (a link, even a dangling one, that leads out is refused), the
   * fence must allow writing it, and the write-permission flow must allow it.
   * For `move` and `delete` a final symlink is not followed (they act on the
   * link). The workspace folder and the temp dir themselves cannot be deleted
   * or moved.
   */
  async resolveForWrite(
    path: string,
    action: WriteAction,
    signal?: AbortSignal,
  ): Promise<string> {
    const actsOnLink = action === "move" || action === "delete";
    const resolved = await this.workspace.resolve(path, {
      followFinalSymlink: !actsOnLink,
    });
    if (
      actsOnLink &&
      (resolved.path === this.workspace.workdir ||
        await this.#isTempRoot(resolved.path))
    ) {
      throw denied(path, action, "it is the root of the workspace");
    }
    requireFence(this.fence, "write", resolved.path);
    await this.authorizeWrite(resolved.path, action, signal);
    return resolved.path;
  }

  /**
   * The write-permission flow alone, for a path already resolved through the
   * workspace: returns when the write may go ahead, throws
   * `permission_denied` (kind `policy`, status `skipped`) when it may not.
   */
  async authorizeWrite(
    realPath: string,
    action: WriteAction,
    signal?: AbortSignal,
  ): Promise<void> {
    signal?.throwIfAborted();
    // Defence in depth for callers that resolved the path themselves.
    const area = this.workspace.areaOf(realPath);
    if (area === undefined || !realPath.startsWith("/")) {
      throw new ToolError(`Path ${realPath} is not within the agent's workspace`, {
        code: "outside_workspace",
        kind: "policy",
        details: { path: realPath, workdir: this.workspace.workdir },
      });
    }
    if (area === "temp") return;
    if (action === "mkdir") return;
    if (this.state.isWriteGranted(realPath)) return;
    if (!await exists(realPath)) return;
    const shown = this.workspace.relative(realPath);
    const outcome = await this.#asker.choose<WriteChoice>({
      title: "Write permission",
      message: `The agent wants to ${VERBS[action]} ${shown} (${realPath}). Allow?`,
      options: [
        {
          value: "grant",
          label: "Allow, and allow further writes to it this session",
        },
        { value: "once", label: "Allow this time only" },
        { value: "deny", label: "Deny" },
      ],
      defaultChoice: "grant",
    }, signal);
    if (outcome.choice === "grant") {
      if (outcome.source === "user") this.state.grantWrite(realPath);
      return;
    }
    if (outcome.choice === "once") return;
    throw denied(shown, action, "the user denied it");
  }

  /**
   * Whether a shell command may start, asking this session's host where the
   * command analysis says so (see {@linkcode authorizeCommand}); throws
   * `permission_denied` when it may not.
   */
  authorizeCommand(
    command: string,
    signal?: AbortSignal,
  ): Promise<CommandAuthorization> {
    return authorizeCommand(
      { state: this.state, asker: this.#asker, assessor: this.#assessor },
      command,
      signal,
    );
  }

  async #isTempRoot(realPath: string): Promise<boolean> {
    return this.workspace.tempDirCreated &&
      realPath === await this.workspace.tempDir();
  }
}

async function exists(realPath: string): Promise<boolean> {
  try {
    await fsp.lstat(realPath);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    // Unsure whether something would be destroyed: ask.
    return true;
  }
}

function denied(path: string, action: WriteAction, why: string): ToolError {
  return new ToolError(
    `Permission to ${action === "mkdir" ? "create" : action} ${path} was denied: ${why}`,
    {
      code: "permission_denied",
      kind: "policy",
      status: "skipped",
      recoverable: false,
      recoveryHint: "Do not retry this write; ask the user or work on something else.",
      details: { path, action },
    },
  );
}
