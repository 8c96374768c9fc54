/**
 * The default session: the core's `SessionBase` with the workspace, policy
 * state, runtime fence, OS sandbox mode, risk assessor and deny-all host of
 * this package wired in. `@toolfence/toolfence` exports it as `Session`.
 *
 * @module
 */

import { type AgentModel, type ArtifactStore, type Host, SessionBase, UsageError } from "@toolfence/core";
import { Workspace } from "./workspace.ts";
import { PolicyState, type PolicyStateData } from "./state.ts";
import { Policy } from "./policy.ts";
import type { Fence } from "@toolfence/core";
import type { SandboxMode } from "./sandbox.ts";
import type { RiskAssessor } from "./shell/risk.ts";
import { denyAllHost } from "./hosts.ts";
import type { PolicyRules } from "./config/rules.ts";
import type { PolicyDecisionEvent } from "./audit/audit_log.ts";
import { type Checkpoint, FileHistory, type FileHistoryOptions, type UndoReport } from "./file_history.ts";
import { groupsRemoved } from "./limits.ts";

/** Options of a {@linkcode Session}. */
export interface SessionOptions {
  /** The workdir (an existing folder) or a ready {@linkcode Workspace}. */
  workspace: string | Workspace;
  /** Who answers questions; default: nobody (anything that asks is refused). */
  host?: Host;
  /** Take the default answer of every question a rule may answer, marked `auto`. */
  autoConfirm?: boolean;
  /** The model's capabilities, e.g. `["vision"]`. */
  capabilities?: readonly string[];
  /** Policy state (allowlists and grants), or its JSON. */
  state?: PolicyState | Partial<PolicyStateData>;
  /** Artifact store; default in memory. */
  artifacts?: ArtifactStore;
  /** The runtime fence; default the real one. */
  fence?: Fence;
  /** OS sandbox for shell commands; default `auto`. */
  sandbox?: SandboxMode;
  /** Sub-agent depth; 0 for a top-level agent. */
  depth?: number;
  /**
   * Judges shell commands that are not allowlisted; default the rules-based
   * assessor. A function is given the session first (an assessor that asks the
   * session's model needs it: `modelRiskAssessor()` of `@toolfence/tools`).
   */
  assessor?: RiskAssessor | ((session: Session) => RiskAssessor);
  /** The session's model, for `withSubagents()` without a getter and a model risk assessor; default none. */
  model?: AgentModel;
  /** Protected-path globs added to the defaults (writes to them always ask a person; see `protected_paths.ts`). */
  protectedPaths?: readonly string[];
  /** The policy files' rules (see {@linkcode loadPolicy}); default none. */
  rules?: PolicyRules;
  /**
   * Where a person's "allow from now on" of a command is saved, e.g. an
   * allow rule added to the project file with `addRuleToFile`; default
   * nowhere (commands are asked yes or no).
   */
  saveRule?: { where: string; save(pattern: string): Promise<void> | void };
  /** Records every policy decision of the session (e.g. `AuditLog.decision`); default none. */
  onDecision?: (session: Session, event: PolicyDecisionEvent) => void;
  /**
   * The file history behind checkpoints and undo: a ready {@linkcode FileHistory}
   * (a child session shares its parent's), or its options (`dir` keeps it on
   * disk). Default: in memory.
   */
  history?: FileHistory | FileHistoryOptions;
}

/**
 * One agent's run with the default policy. Tools see it as `ctx.session`.
 * Requires `--allow-read` for the workspace (and `--allow-write` once a tool
 * writes or the temp dir is made).
 *
 * @example
 * ```ts
 * import { Session } from "@toolfence/policy";
 * const session = new Session({ workspace: Deno.cwd(), autoConfirm: true });
 * console.log(session.workspace.workdir);
 * await session.close();
 * ```
 */
export class Session extends SessionBase {
  /** The workspace that confines paths. */
  declare readonly workspace: Workspace;
  /** The policy tools go through. */
  declare readonly policy: Policy;
  /** Allowlists and grants. */
  readonly state: PolicyState;
  /** Every file change this session's calls reported, with before-images: checkpoints and undo. */
  readonly history: FileHistory;
  readonly #options: SessionOptions;

  /** Creates a session. */
  constructor(options: SessionOptions) {
    const given = (options as Partial<SessionOptions> | undefined)?.workspace;
    if (typeof given !== "string" && !(given instanceof Workspace)) {
      throw new UsageError(
        `A Session needs its workspace folder: new Session({ workspace: Deno.cwd() }) (or process.cwd() under Node); got ${
          options === undefined ? "no options" : `workspace: ${given === undefined ? "undefined" : typeof given}`
        }. For a session without files or processes, use new SessionBase() from @toolfence/core.`,
      );
    }
    const workspace = typeof options.workspace === "string" ? new Workspace(options.workspace) : options.workspace;
    const state = options.state instanceof PolicyState ? options.state : new PolicyState(options.state);
    super({
      workspace,
      host: options.host ?? denyAllHost(),
      autoConfirm: options.autoConfirm,
      capabilities: options.capabilities,
      artifacts: options.artifacts,
      depth: options.depth,
      ...(options.model !== undefined ? { model: options.model } : {}),
      policy: (session) =>
        new Policy({
          workspace,
          state,
          // The policy reads who answered, so it asks for the whole outcome.
          asker: {
            choose: (r, signal) => session.choose(r, signal),
            confirm: (r, signal) => session.confirmOutcome(r, signal),
          },
          fence: options.fence,
          sandbox: options.sandbox,
          assessor: typeof options.assessor === "function" ? options.assessor(session as Session) : options.assessor,
          protectedPaths: options.protectedPaths,
          rules: options.rules,
          ...(options.saveRule ? { saveRule: options.saveRule } : {}),
          ...(options.onDecision
            ? { onDecision: (event: PolicyDecisionEvent) => options.onDecision!(session as Session, event) }
            : {}),
        }),
    });
    this.state = state;
    this.#options = options;
    this.history = options.history instanceof FileHistory
      ? options.history
      : new FileHistory(workspace.workdir, () => workspace.roots(), options.history);
    this.onFileChange((event) => this.history.record(event));
    this.onClose(() => this.history.flush());
    // The folders of the cgroups of its last commands may still be on their way out.
    this.onClose(() => groupsRemoved());
    // The user namespace its sandboxes entered ends with it.
    if (this.policy instanceof Policy) this.onClose(() => (this.policy as Policy).close());
    // A session that made its workspace removes the workspace's temp dir when it closes.
    if (typeof options.workspace === "string") this.onClose(() => workspace.dispose());
  }

  /**
   * A child session for a sub-agent: the same workspace and artifacts, a copy
   * of the policy state, depth + 1.
   */
  override child(options: { host?: Host; capabilities?: readonly string[] } = {}): Session {
    return new Session({
      ...this.#options,
      workspace: this.workspace,
      host: options.host ?? this.host,
      capabilities: options.capabilities ?? this.capabilities,
      state: this.state.clone(),
      artifacts: this.artifacts,
      depth: this.depth + 1,
      history: this.history,
    });
  }

  /**
   * Takes a checkpoint of the workspace: {@linkcode Session.restoreCheckpoint}
   * later reverts every file change reported after it (by this session and its
   * sub-agents).
   */
  createCheckpoint(label?: string): Checkpoint {
    return this.history.checkpoint(label);
  }

  /**
   * Restores the checkpoint `id`: the exact bytes and modes of every file
   * changed since, newest change first. Throws a `ToolError` and changes
   * nothing when a file was changed since by something that did not report it
   * (`undo_conflict`, naming the file), or a change cannot be undone
   * (`undo_unavailable`: its before-image was not kept), or the id is unknown
   * (`unknown_checkpoint`).
   */
  restoreCheckpoint(id: string): Promise<UndoReport> {
    return this.history.restore(id);
  }

  /**
   * Undoes the file changes of the calls `callIds` (the call ids given to
   * `box.call`), newest first. Throws a `ToolError` and changes nothing when a
   * later call or anything else changed one of their files since
   * (`undo_conflict`, naming the file and the later call), or a call id is
   * unknown or a change has no before-image (`undo_unavailable`).
   */
  undoCalls(callIds: readonly string[]): Promise<UndoReport> {
    return this.history.undo(callIds);
  }
}
