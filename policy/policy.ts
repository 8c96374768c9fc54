/**
 * What a tool sees as `ctx.policy`: resolving paths for reading and writing
 * with every check in one place (workspace, fence, write permission), so that
 * no tool reaches around the policy.
 *
 * @module
 */
import { textPrefix } from "@toolfence/core";
import fs from "node:fs";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type {
  AuthorizeOptions,
  ChoiceOutcome,
  ChoiceRequest,
  ChoiceSource,
  ConfirmRequest,
  FileTarget,
  TargetOptions,
  WriteKind,
} from "@toolfence/core";
import { runtimeFence } from "./fence.ts";
import { type Fence, requireFence } from "@toolfence/core";
import { PolicyProcessDoor } from "./_process_door.ts";
import { limitsOfPolicy } from "./limits.ts";
import type { ProcessDoor } from "@toolfence/core";
import type { SandboxMode } from "./sandbox.ts";
import {
  authorizeCommand,
  type AuthorizeCommandOptions,
  type CommandAuthorization,
} from "./shell/authorize_command.ts";
import type { RiskAssessor } from "./shell/risk.ts";
import type { PolicyState } from "./state.ts";
import { type ResolvedPath, statTaken, type Workspace } from "./workspace.ts";
import {
  deniedEntries,
  inodeKey,
  isWithin,
  linkedInodes,
  literalGlob,
  lstatConfined,
  pathChangedError,
  protectedLinkTargets,
  quickLstat,
  readdirConfined,
} from "@toolfence/internal";
import { DEFAULT_PROTECTED_PATHS, isProtectedPath, mayContainProtectedPath } from "./protected_paths.ts";
import { type CommandRule, describeRule, type PathOutcome, type PathRule, PolicyRules } from "./config/rules.ts";
import type { PolicyDecisionEvent } from "./audit/audit_log.ts";
import { PolicyFileDoor } from "./file_door.ts";
import { type ElicitationAnswers, policySettings } from "./config/settings.ts";
import { type Destination, type DestinationAnswer, DestinationJudge, type QuestionBudget } from "./egress/judge.ts";
import type { EgressConnection } from "./egress/proxy.ts";

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

/** What a write does to its path: see `WriteKind` in `@toolfence/core`. */
export type WriteAction = WriteKind;

/** The answers of the write-permission question. */
export type WriteChoice = "grant" | "once" | "deny";

/** The network of a session's sandboxed commands, from the policy files. */
export interface CommandNetwork {
  /** `proxy`: through the egress proxy, judged by `allow` and `deny`; `none`: only a private loopback. */
  mode: "none" | "proxy";
  /** The `network.allow` entries. */
  allow: readonly string[];
  /** The `network.deny` entries. */
  deny: readonly string[];
}

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
  /** Protected-path globs in addition to {@linkcode DEFAULT_PROTECTED_PATHS} (see `protected_paths.ts`). */
  protectedPaths?: readonly string[];
  /** The policy files' rules (commands and paths); default none. */
  rules?: PolicyRules;
  /** Called with every decision the policy makes (for the audit log); default none. */
  onDecision?: (event: PolicyDecisionEvent) => void;
  /** Where a person's "allow from now on" of a command is saved (see `AuthorizeCommandOptions.saveRule`). */
  saveRule?: AuthorizeCommandOptions["saveRule"];
}

// A folder with more entries than this is not walked for protected paths: it
// is taken as holding one, and asks.
const MAX_TREE_ENTRIES = 20_000;
// How much of the command line a connection's record keeps: a command may make thousands of connections, and the
// call's own record has the whole line once.
const MAX_CONNECTION_COMMAND_CHARS = 1000;
// How long the workspace's denied files with other names are taken as known: one lookup walks the denied paths.
const ALIAS_LOOKUP_MS = 1_000;
// How long where the workspace's protected links lead is taken as known: one lookup walks the whole workspace (1 s
// for 55,000 entries), and the links are a person's (one a command makes is moved away when it ends, and the file
// tools ask a person before making one, after which they are looked up again), so they change seldom.
const PROTECTED_LINKS_LOOKUP_MS = 30_000;

const VERBS: Record<WriteAction, string> = {
  write: "overwrite",
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
 * Protected paths (see `protected_paths.ts`, extended by
 * `PolicyOptions.protectedPaths`): creating, changing, moving (either side),
 * copying onto or deleting one, or a folder that holds one, always asks a
 * person, in the temp dir too, new file or not, whatever was granted before.
 * Only a person's answer counts (the question is marked `requirePerson`, and
 * an answer with `source: "auto"` is a refusal); where nobody can be asked it
 * is refused. The paths are judged by where they really lead, relative to the
 * area's root, case-insensitively.
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
  /** The protected-path globs in force: the defaults and the session's own. */
  readonly protectedPaths: readonly string[];
  /** The policy files' rules. */
  readonly rules: PolicyRules;
  /** The deny globs of the rules, relative to the workspace root: hidden from every tool and the sandbox. */
  readonly hiddenPaths: readonly string[];
  /** The file door of the session: what the tools reach files through (see {@linkcode PolicyFileDoor}). */
  readonly files: PolicyFileDoor;
  /** The one door every process of a tool goes through (see `_process_door.ts`). */
  readonly processes: ProcessDoor;
  readonly #asker: PolicyAsker;
  readonly #assessor?: RiskAssessor;
  readonly #onDecision?: (event: PolicyDecisionEvent) => void;
  readonly #saveRule?: AuthorizeCommandOptions["saveRule"];
  #commandJudge?: DestinationJudge;
  // The denied files that have other names (hard links), by inode; the places in the workspace denied links lead
  // that no rule denies (real path: whether a folder); and when that was looked up.
  // The entries the denied links of the workspace go through on their way (see deniedEntries' `ways`).
  #linked?: {
    at: number;
    inodes: ReadonlySet<string> | undefined;
    leadTo: ReadonlyMap<string, boolean>;
    ways: ReadonlySet<string>;
  };

  // Where the workspace's protected links lead (real path: whether a folder), and when that was looked up.
  #protectedLinks?: { at: number; leadTo: ReadonlyMap<string, boolean> };

  readonly #processDoor: PolicyProcessDoor;

  /** Creates the policy of a session. */
  constructor(options: PolicyOptions) {
    this.workspace = options.workspace;
    this.state = options.state;
    this.#asker = options.asker;
    this.#assessor = options.assessor;
    this.fence = options.fence ?? runtimeFence;
    this.sandbox = options.sandbox ?? "auto";
    // Path rules are relative to this session's workspace (a tenant's, under HTTP serving).
    this.rules = (options.rules ?? PolicyRules.empty(this.workspace.workdir)).withRoot(this.workspace.workdir);
    this.protectedPaths = Object.freeze([
      ...DEFAULT_PROTECTED_PATHS,
      ...(options.protectedPaths ?? []),
      ...policyFilesIn(this.rules, this.workspace.workdir),
    ]);
    this.#onDecision = options.onDecision;
    this.#saveRule = options.saveRule;
    this.hiddenPaths = Object.freeze(this.rules.hiddenGlobs());
    this.files = new PolicyFileDoor(this);
    const sandboxRead = Object.freeze(policySettings(this.rules).sandboxRead);
    this.processes = this.#processDoor = new PolicyProcessDoor({
      workspace: this.workspace,
      fence: this.fence,
      sandbox: this.sandbox,
      hiddenPaths: this.hiddenPaths,
      // A read-only rule holds inside the sandbox as a protected path does (bound read-only, and what a command
      // makes there moved away after it): the line's analysis judges only the paths the line names, and a write it
      // cannot name (`F=vendor/lib.js; echo x > "$F"`, a script, a build) rewrote a read-only file in the sandbox.
      protectedPaths: Object.freeze([...this.protectedPaths, ...this.rules.readOnlyGlobs()]),
      limits: limitsOfPolicy(this),
      sandboxRead: () => sandboxRead,
      resolveForRead: (p) => this.resolveForRead(p),
      authorizeCommand: (command, signal, cwd) => this.authorizeCommand(command, signal, cwd),
      confirm: (req, signal) => this.#asker.confirm(req, signal),
    });
  }

  /**
   * Ends what the policy keeps for its session's commands (the user namespace
   * their sandboxes enter); the session's close calls it.
   */
  close(): Promise<void> {
    return this.#processDoor.close();
  }

  /**
   * What the path rules decide for a path: the path as named (relative to
   * the workdir, or absolute) and, when given, where it really leads; the
   * stricter of the two.
   */
  pathDecision(named: string, real?: string): PathOutcome {
    const lexical = this.rules.decidePath(path.posix.resolve(this.workspace.workdir, named));
    if (real === undefined) return lexical;
    const resolved = this.rules.decidePath(real);
    const order = { allow: 0, "read-only": 1, deny: 2 } as const;
    return order[resolved.decision] >= order[lexical.decision] && resolved.decision !== "allow" ? resolved : lexical;
  }

  /** Whether the path rules hide `realPath` (a path the tools must neither list, read nor write). */
  isHidden(realPath: string): boolean {
    if (!this.rules.hasPathRules) return false;
    return this.rules.decidePath(realPath).decision === "deny" || this.#deniedLinkLeadsTo(realPath);
  }

  // Whether `realPath` is, or lies in, a place of the workspace that a denied link leads to (`app/.env ->
  // ../conf/prod.txt`, `secrets -> vault`): the bytes the denied name shows, which the sandbox hides as it hides
  // the name (deniedEntries: a denied link stands for where it leads), so the tools hide them too.
  #deniedLinkLeadsTo(realPath: string): boolean {
    if (this.hiddenPaths.length === 0) return false;
    for (const [place, folder] of this.#hiddenLookup().leadTo) {
      if (realPath === place || (folder && realPath.startsWith(`${place}/`))) return true;
    }
    return false;
  }

  /**
   * Whether the file `stat` describes is another name (a hard link) of a file
   * the path rules hide, which must be no more readable than that file. Only
   * a file with more than one name can be; the workspace's denied files with
   * more than one name are looked up at most once a second, and a workspace
   * too large to look through counts every such file as one (fail closed).
   */
  isHiddenAlias(stat: { isFile(): boolean; nlink: number; dev: number; ino: number }): boolean {
    if (this.hiddenPaths.length === 0 || !stat.isFile() || stat.nlink < 2) return false;
    return this.#hiddenLookup().inodes?.has(inodeKey(stat)) ?? true;
  }

  /**
   * Whether some file the path rules hide may have another name now (as
   * {@linkcode isHiddenAlias} looks it up): when not, a read needs no stat
   * to tell.
   */
  mayHaveHiddenAliases(): boolean {
    if (this.hiddenPaths.length === 0) return false;
    const { inodes, leadTo } = this.#hiddenLookup();
    return inodes === undefined || inodes.size > 0 || leadTo.size > 0;
  }

  // The workspace's hidden files that have more than one name, by inode (undefined: too many entries to tell), and
  // where its denied links lead that no rule denies (none known past too many entries: the sandbox then refuses to
  // run, and the rules still hide the names), looked up at most once per ALIAS_LOOKUP_MS.
  #hiddenLookup(): {
    inodes: ReadonlySet<string> | undefined;
    leadTo: ReadonlyMap<string, boolean>;
    ways: ReadonlySet<string>;
  } {
    const now = Date.now();
    if (this.#linked === undefined || now - this.#linked.at > ALIAS_LOOKUP_MS) {
      let inodes: ReadonlySet<string> | undefined;
      const leadTo = new Map<string, boolean>();
      const ways = new Set<string>();
      try {
        const denied = deniedEntries(this.workspace.workdir, this.hiddenPaths, [], new Map(), ways);
        inodes = linkedInodes(denied);
        for (const [place, folder] of denied) {
          if (this.rules.decidePath(place).decision !== "deny") leadTo.set(place, folder);
        }
      } catch {
        inodes = undefined;
      }
      this.#linked = { at: now, inodes, leadTo, ways };
    }
    return this.#linked;
  }

  // The refusal of a path that is another name of a hidden file, or where a hidden link leads: it says no more than
  // a hidden path's does.
  #hiddenAliasRefusal(named: string, real: string, linkTarget: boolean): ToolError {
    this.#emit({
      kind: "path",
      subject: real,
      decision: "deny",
      answeredBy: "rule",
      reason: linkTarget
        ? "where a link the policy hides leads"
        : "another name (a hard link) of a path the policy hides",
    });
    const why = linkTarget ? "a link the policy hides leads to it" : "it is another name of a file the policy hides";
    return new ToolError(`Path ${named} is denied by the policy (${why})`, {
      code: "permission_denied",
      kind: "policy",
      status: "skipped",
      recoverable: false,
      recoveryHint: "Do not try to reach this path in any other way; work on other files.",
      details: { path: named, reason: linkTarget ? "target of a hidden link" : "hard link to a hidden file" },
    });
  }

  /**
   * Throws the policy's refusal when `stat` (of `real`, as the call named it:
   * `named`, else its path in the workspace) is another name of a hidden file,
   * or `real` lies where a hidden link leads.
   */
  requireNotHiddenAlias(real: string, stat: fs.Stats | undefined, named?: string): void {
    const linkTarget = this.#deniedLinkLeadsTo(real);
    if (linkTarget || (stat !== undefined && this.isHiddenAlias(stat))) {
      throw this.#hiddenAliasRefusal(named ?? this.workspace.relative(real), real, linkTarget);
    }
  }

  #requireVisible(named: string, real: string, access: "read" | "write"): void {
    if (!this.rules.hasPathRules) return;
    const outcome = this.pathDecision(named, real);
    const refused = outcome.decision === "deny" || (outcome.decision === "read-only" && access === "write");
    if (outcome.shadow && !refused) {
      this.#emit({
        kind: "path",
        subject: real,
        decision: "allow",
        answeredBy: "rule",
        reason: `shadow mode: ${describeRule(outcome.shadow)}`,
        shadow: ruleRef(outcome.shadow),
      });
    }
    if (refused) {
      const rule = outcome.rule!;
      const hidden = outcome.decision === "deny";
      this.#emit({
        kind: "path",
        subject: real,
        decision: "deny",
        answeredBy: "rule",
        reason: `${access}: ${describeRule(rule)}`,
        rule: ruleRef(rule),
      });
      throw new ToolError(
        hidden
          ? `Path ${named} is denied by the policy (${describeRule(rule)})`
          : `Path ${named} is read-only by the policy (${describeRule(rule)})`,
        {
          code: "permission_denied",
          kind: "policy",
          status: "skipped",
          recoverable: false,
          recoveryHint: hidden
            ? "Do not try to reach this path in any other way; work on other files."
            : "Do not write it; it may be read.",
          details: { path: named, rule: { pattern: rule.pattern, kind: rule.kind, ...rule.source } },
        },
      );
    }
  }

  /**
   * The real path of `path` for reading: it must lie in the workspace and the
   * fence must allow reading it.
   */
  async resolveForRead(path: string): Promise<string> {
    return (await this.resolveTarget(path)).path;
  }

  /**
   * The one resolution of a path in a call: `path` (relative to the workdir,
   * or absolute) is resolved through the workspace, following symlinks (a
   * final one only with `followFinalSymlink`), must lie in the workspace, and
   * the fence must allow `access` to where it really leads. Nothing is asked.
   * Throws what {@linkcode Workspace.resolve} throws, and `fence_denied`.
   */
  async resolveTarget(path: string, options: TargetOptions = {}): Promise<FileTarget> {
    const resolved = await this.workspace.resolve(path, { followFinalSymlink: options.followFinalSymlink ?? true });
    this.#requireVisible(path, resolved.path, options.access ?? "read");
    requireFence(this.fence, options.access ?? "read", resolved.path);
    const found = this.#confirmedLstat(path, resolved);
    this.requireNotHiddenAlias(resolved.path, found.stat, path);
    // An entry to be changed itself (a final link not followed: moved, removed, replaced, published over) must not
    // be on the way of a hidden link (see authorize); a publication of a scratch copy passes here alone.
    if (options.access === "write" && options.followFinalSymlink === false && this.#onHiddenWay(resolved.path, false)) {
      this.#emit({
        kind: "path",
        subject: resolved.path,
        decision: "deny",
        answeredBy: "rule",
        reason: "a change of the way of a hidden link",
      });
      throw denied(path, "write", "a link the policy hides leads through it");
    }
    return {
      path: resolved.path,
      area: resolved.area,
      ...found,
      roots: this.workspace.roots(),
      access: options.access ?? "read",
    };
  }

  // The lstat of a resolved target, as the resolution found it, confirmed by its name in its pinned folder where it
  // lies deeper than one name below a root: the resolution's lstat of each name by its absolute path follows a link
  // swapped in for a folder of the path since that folder was looked at, and what it found there told whether a path
  // outside exists (file_info of d/x.txt was path_changed only where the folder outside held an x.txt, not_found
  // where it did not). Where the two disagree (something there or not, another entry), the path changed during the
  // call; the answer never depends on where a link leads. An entry right in a root is looked up in that root, which
  // no command can swap.
  #confirmedLstat(named: string, resolved: ResolvedPath): { existed: boolean; stat?: fs.Stats } {
    const real = resolved.path;
    const taken = statTaken(resolved);
    const roots = this.workspace.roots();
    if (roots.includes(real) || roots.includes(path.posix.dirname(real))) return lstatOf(real, taken);
    let now: fs.Stats | undefined;
    try {
      now = lstatConfined(real);
    } catch (error) {
      if (error instanceof ToolError) throw error;
      // Unsure whether something is there (see lstatOf): count it as there.
      return { existed: true };
    }
    const agrees = now === undefined
      ? !resolved.exists
      : resolved.exists && (taken === undefined || (taken.dev === now.dev && taken.ino === now.ino));
    if (!agrees) {
      throw pathChangedError(`${named} changed during the call (a folder on its way is not the one it was)`, {
        path: real,
      });
    }
    return now === undefined ? { existed: false } : { existed: true, stat: now };
  }

  /**
   * The entry `name` inside the resolved folder `parent` (a final symlink not
   * followed), without resolving the folder again; the fence must allow
   * `access` to it.
   */
  // deno-lint-ignore require-await -- async so that a refusal is a rejected promise, as for every other door.
  async childTarget(parent: FileTarget, name: string, access: "read" | "write" = "write"): Promise<FileTarget> {
    if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
      throw new ToolError(`${JSON.stringify(name)} is not a file name`, { code: "invalid_path", kind: "semantic" });
    }
    const child = path.posix.join(parent.path, name);
    this.#requireVisible(child, child, access);
    requireFence(this.fence, access, child);
    return { path: child, area: parent.area, ...lstatOf(child), roots: parent.roots, access };
  }

  /**
   * The path to write for `path`: it must lie in the workspace after following
   * every symlink (a link, even a dangling one, that leads out is refused), the
   * fence must allow writing it, and the write-permission flow must allow it.
   * For `move` and `delete` a final symlink is not followed (they act on the
   * link). The workspace folder and the temp dir themselves cannot be deleted
   * or moved. {@linkcode writeTarget} returns the whole resolved target.
   */
  async resolveForWrite(path: string, action: WriteAction, signal?: AbortSignal): Promise<string> {
    return (await this.writeTarget(path, action, signal)).path;
  }

  /**
   * {@linkcode resolveTarget} for writing, then {@linkcode authorize}: the
   * resolved target of a write the policy allows.
   */
  async writeTarget(
    path: string,
    action: WriteAction,
    signal?: AbortSignal,
    options: AuthorizeOptions = {},
  ): Promise<FileTarget> {
    const actsOnLink = action === "move" || action === "delete";
    const target = await this.resolveTarget(path, { access: "write", followFinalSymlink: !actsOnLink });
    await this.authorize(target, action, signal, { ...options, shown: path });
    return target;
  }

  /**
   * The write-permission flow for a resolved target: returns when the write
   * may go ahead, throws `permission_denied` (kind `policy`, status `skipped`)
   * when it may not. Whether `write` creates or overwrites is decided here,
   * from what was at the target when it was resolved.
   */
  async authorize(
    target: FileTarget,
    action: WriteAction,
    signal?: AbortSignal,
    options: AuthorizeOptions & { shown?: string } = {},
  ): Promise<void> {
    signal?.throwIfAborted();
    const real = target.path;
    const area = this.workspace.areaOf(real);
    if (area === undefined || !real.startsWith("/")) {
      throw new ToolError(`Path ${real} is not within the agent's workspace`, {
        code: "outside_workspace",
        kind: "policy",
        details: { path: real, workdir: this.workspace.workdir },
      });
    }
    const shown = this.workspace.relative(real);
    this.#requireVisible(options.shown ?? real, real, "write");
    if ((action === "move" || action === "delete") && (await this.#isRoot(real))) {
      throw denied(options.shown ?? shown, action, "it is the root of the workspace");
    }
    const kind = action === "write" ? (target.existed ? "overwrite" : "create") : action;
    // Removing a folder removes what it holds: judge its entries even when the caller did not say.
    const removes = (action === "move" || action === "delete") && target.stat?.isDirectory();
    // A link or folder a hidden link goes through: moved or removed, the hidden link would lead nowhere, and what
    // it hid (which no rule names) would be shown. Before, deleting `via` of `app/.env -> ../via/prod.txt`,
    // `via -> conf` (or the folder `x` of `../x/../conf/prod.txt`) had read_file print conf/prod.txt.
    if ((action === "move" || action === "delete") && this.#onHiddenWay(real, removes === true)) {
      this.#emit({
        kind: "path",
        subject: real,
        decision: "deny",
        answeredBy: "rule",
        reason: `${kind} of the way of a hidden link`,
      });
      throw denied(options.shown ?? shown, kind, "a link the policy hides leads through it");
    }
    // Moving, copying or deleting a folder that holds a hidden path would move it out of its rule's reach
    // (or destroy it): refused.
    const tree = options.tree ?? (removes ? real : undefined);
    if (tree !== undefined && this.hiddenPaths.length > 0) {
      const hidden = this.#hiddenIn(tree);
      if (hidden !== undefined) {
        this.#emit({
          kind: "path",
          subject: hidden,
          decision: "deny",
          answeredBy: "rule",
          reason: `${kind} of a folder`,
        });
        // The refusal does not name what it found: the hidden path is not the model's to learn.
        throw denied(options.shown ?? shown, kind, "it holds a path the policy hides");
      }
    }
    const guarded = this.#protectedAt(real, area, options.tree ?? (removes ? real : undefined)) ??
      (target.existed ? undefined : this.#protectedAncestor(real, area));
    if (guarded !== undefined) {
      await this.#askPerson(real, shown, kind, guarded, signal, options.proposed);
      // A protected path a person let change may now be a link, or lead elsewhere: where protected links lead is
      // looked up again at the next write, not up to PROTECTED_LINKS_LOOKUP_MS later.
      this.#protectedLinks = undefined;
      return;
    }
    if (area === "temp") return;
    if (kind === "mkdir") return;
    if (this.state.isWriteGranted(real)) return;
    if (!target.existed) return;
    const outcome = await this.#asker.choose<WriteChoice>({
      title: "Write permission",
      message: `The agent wants to ${VERBS[kind]} ${shown} (${real}). Allow?`,
      about: { path: real, ...writeTexts(this.files, real, target.existed, options.proposed) },
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
    const answeredBy = answererOf(outcome.source);
    if (outcome.choice === "grant" || outcome.choice === "once") {
      if (outcome.choice === "grant" && outcome.source === "user") this.state.grantWrite(real);
      this.#emit({ kind: "write", subject: real, decision: "allow", answeredBy, reason: `${kind}: ${outcome.choice}` });
      return;
    }
    this.#emit({ kind: "write", subject: real, decision: "deny", answeredBy, reason: `${kind}: denied` });
    throw denied(shown, kind, "the user denied it");
  }

  /**
   * The write-permission flow alone, for a path already resolved through the
   * workspace: returns when the write may go ahead, throws
   * `permission_denied` (kind `policy`, status `skipped`) when it may not.
   */
  async authorizeWrite(realPath: string, action: WriteAction, signal?: AbortSignal): Promise<void> {
    const area = this.workspace.areaOf(realPath) ?? "workdir";
    const target: FileTarget = { path: realPath, area, ...lstatOf(realPath), roots: this.workspace.roots() };
    await this.authorize(target, action, signal);
  }

  #emit(event: PolicyDecisionEvent): void {
    try {
      this.#onDecision?.(event);
    } catch {
      // An audit sink that fails must not change the decision.
    }
  }

  /** The policy files' `answers.elicitation`: what an answer of the MCP client counts for. */
  get clientAnswers(): ElicitationAnswers {
    return policySettings(this.rules).elicitation;
  }

  /** The policy files' `network.allow` and `network.deny` (the browser refuses what `deny` names too). */
  get networkRules(): { readonly allow: readonly string[]; readonly deny: readonly string[] } {
    const { allow, deny } = this.commandNetwork;
    return { allow, deny };
  }

  /**
   * The network of this session's sandboxed commands: the policy files'
   * `sandbox.network` and `network` section (see `PolicySettings.sandboxNetwork`).
   */
  get commandNetwork(): CommandNetwork {
    const settings = policySettings(this.rules);
    return { mode: settings.sandboxNetwork, allow: settings.network.allow, deny: settings.network.deny };
  }

  /**
   * Judges a connection a sandboxed command makes through the egress proxy
   * (`http:` for a request, `https:` for a CONNECT tunnel) by
   * {@linkcode Policy.commandNetwork} with the session's one
   * {@linkcode DestinationJudge}: a destination no rule decides is asked
   * about (a person's or, unless `answers.elicitation` is `refuse`, the MCP
   * client's "allow" holds for the session and the origin; a "deny" refuses
   * the whole host for the session without asking again; an automatic answer
   * refuses), within the command's `questions` budget when one is given.
   * Throws `url_not_allowed` or `dns_failed`.
   */
  judgeConnection(
    scheme: string,
    hostname: string,
    port: string,
    context: { command: string; signal?: AbortSignal; questions?: QuestionBudget },
  ): Promise<Destination> {
    this.#commandJudge ??= this.#newCommandJudge();
    return this.#commandJudge.judge(scheme, hostname, port, context.signal, context.questions);
  }

  #newCommandJudge(): DestinationJudge {
    const { allow, deny } = this.commandNetwork;
    const clientMayAnswer = this.clientAnswers !== "refuse";
    return new DestinationJudge({ allow, deny }, {
      who: "The command",
      ask: async ({ origin, addresses, inside }, signal): Promise<DestinationAnswer> => {
        const outcome = await this.#asker.choose<"allow" | "deny">({
          title: "Network destination",
          message: `A sandboxed command wants to connect to ${origin}` +
            (inside ? ` (${addresses[0]}, a ${inside} address: this machine or its network)` : "") +
            ", which is not on the policy's network.allow. Allow it for the rest of this session? " +
            "Deny refuses every port of the host for the rest of the session, without asking again.",
          options: [{ value: "allow", label: "Allow for this session" }, {
            value: "deny",
            label: "Deny this host for this session",
          }],
          defaultChoice: "deny",
          about: { destination: { origin, ...(inside ? { inside } : {}) } },
        }, signal);
        const answeredBy = outcome.source === "user" ? "person" : outcome.source === "client" ? "client" : "auto";
        const counts = outcome.source === "user" || (outcome.source === "client" && clientMayAnswer);
        // The client's yes allows one action, the command (before, it was the session's: every later command of
        // the session reached the destination without a question).
        const holds = outcome.source === "client" && this.clientAnswers !== "grant" ? "asker" : "session";
        return { allowed: outcome.choice === "allow" && counts, answeredBy, holds };
      },
    });
  }

  /** Records a request or tunnel of a sandboxed command through the egress proxy, allowed or refused, for the audit log. */
  recordConnection(connection: EgressConnection, command: string): void {
    const details = connection.details ?? {};
    const resolved = Array.isArray(details.addresses) ? details.addresses.join(",") : undefined;
    // An allowed connection says who allowed it (a person's "yes" was recorded as a rule's before).
    const answered = connection.answeredBy ?? details.answeredBy;
    this.#emit({
      kind: "connection",
      subject: connection.target,
      decision: connection.allowed ? "allow" : "deny",
      answeredBy: answered === "person" || answered === "client" || answered === "auto" ? answered : "rule",
      method: connection.method,
      // Cut: a connection's record is one of many a command may make, and the call's own record has the whole line.
      command: command.length > MAX_CONNECTION_COMMAND_CHARS
        ? `${textPrefix(command, MAX_CONNECTION_COMMAND_CHARS)}... (${command.length} characters)`
        : command,
      ...(connection.address ?? resolved ? { address: connection.address ?? resolved } : {}),
      ...(connection.rule ?? details.deniedBy ? { networkRule: String(connection.rule ?? details.deniedBy) } : {}),
      ...(connection.reason ? { reason: connection.reason } : {}),
    });
  }

  /**
   * Whether a shell command may start, asking this session's host where the
   * command analysis says so (see {@linkcode authorizeCommand}); throws
   * `permission_denied` when it may not. `cwd` (absolute) is the folder it
   * will run in, when not the workspace root: its relative paths are judged
   * from there.
   */
  async authorizeCommand(
    command: string,
    signal?: AbortSignal,
    cwd?: string,
  ): Promise<CommandAuthorization> {
    if (this.#onDecision === undefined) return await this.#authorizeCommand(command, signal, cwd);
    try {
      const allowed = await this.#authorizeCommand(command, signal, cwd);
      this.#emit({
        kind: "command",
        subject: command,
        decision: "allow",
        answeredBy: allowed.via === "confirmed" ? answererOf(allowed.source) : "rule",
        reason: `via ${allowed.via}`,
        ...(allowed.rule ? { rule: ruleRef(allowed.rule) } : {}),
        ...(allowed.shadow ? { shadow: ruleRef(allowed.shadow) } : {}),
      });
      return allowed;
    } catch (error) {
      const details = (error as ToolError).details as Record<string, unknown> | undefined;
      const rule = details?.rule as PolicyDecisionEvent["rule"] | undefined;
      const source = details?.source;
      this.#emit({
        kind: "command",
        subject: command,
        decision: "deny",
        answeredBy: source === "user" || source === "auto" || source === "client" ? answererOf(source) : "rule",
        reason: typeof details?.why === "string" ? details.why : (error as Error).message,
        ...(rule ? { rule } : {}),
      });
      throw error;
    }
  }

  #authorizeCommand(command: string, signal?: AbortSignal, cwd?: string): Promise<CommandAuthorization> {
    return authorizeCommand(
      {
        state: this.state,
        asker: this.#asker,
        assessor: this.#assessor,
        sandbox: this.sandbox,
        workspaceRoot: this.workspace.workdir,
        ...(cwd === undefined ? {} : { cwd }),
        ...(this.workspace.roots()[1] === undefined ? {} : { tempDir: this.workspace.roots()[1] }),
        protectedPaths: this.protectedPaths,
        rules: this.rules,
        ...(this.#saveRule ? { saveRule: this.#saveRule } : {}),
        ...(this.commandNetwork.mode === "proxy" ? { network: this.commandNetwork } : {}),
      },
      command,
      signal,
    );
  }

  // The first protected path the write touches (relative to its area's root),
  // or undefined. With `tree`, each entry under it counts as lying under `real`.
  #protectedAt(real: string, area: "workdir" | "temp", tree: string | undefined): string | undefined {
    const root = area === "temp" ? this.workspace.roots()[1] ?? this.workspace.workdir : this.workspace.workdir;
    const relative = real === root ? "" : real.slice(root.length + 1);
    const patterns = this.protectedPaths;
    if (isProtectedPath(relative, patterns)) return relative;
    const led = area === "workdir" ? this.#protectedLinkLeadsTo(real, tree) : undefined;
    if (led !== undefined) return led;
    if (tree === undefined || !mayContainProtectedPath(relative, patterns)) return undefined;
    let seen = 0;
    const walk = (dir: string, under: string): string | undefined => {
      let entries: fs.Dirent[];
      try {
        entries = readdirConfined(dir);
      } catch {
        // Cannot look inside: it may hold anything.
        return under || relative || ".";
      }
      for (const entry of entries) {
        if (++seen > MAX_TREE_ENTRIES) return `${under || relative} (too many entries to check)`;
        const inner = under === "" ? entry.name : `${under}/${entry.name}`;
        if (isProtectedPath(inner, patterns)) return inner;
        if (entry.isDirectory() && mayContainProtectedPath(inner, patterns)) {
          const found = walk(`${dir}/${entry.name}`, inner);
          if (found !== undefined) return found;
        }
      }
      return undefined;
    };
    return walk(tree, relative);
  }

  // The protected link of the workspace that leads to `real`, to a folder holding it, or (for a `tree` removed or
  // moved whole) into it, as `LINK (it leads to PLACE)`; undefined when none does. A protected name that is a link
  // (`.git/hooks/pre-commit -> ../../scripts/pre-commit`, the usual way of sharing a hook) runs or loads what it
  // leads to, and the protected paths were judged at the real path alone: before, an automatic answer let
  // write_file rewrite the hook, named by the link or by its target, which the next `git commit` ran. Looked up at
  // most every PROTECTED_LINKS_LOOKUP_MS.
  #protectedLinkLeadsTo(real: string, tree: string | undefined): string | undefined {
    const now = Date.now();
    if (this.#protectedLinks === undefined || now - this.#protectedLinks.at > PROTECTED_LINKS_LOOKUP_MS) {
      let leadTo: ReadonlyMap<string, boolean>;
      try {
        leadTo = protectedLinkTargets(this.workspace.workdir, this.protectedPaths);
      } catch {
        // Past the walk's bound: where protected links lead is not known (commands that may write are refused in
        // such a workspace, see protectedMounts).
        leadTo = new Map();
      }
      this.#protectedLinks = { at: now, leadTo };
    }
    for (const [place, folder] of this.#protectedLinks.leadTo) {
      const inside = real === place || (folder && real.startsWith(`${place}/`)) ||
        (tree !== undefined && place.startsWith(`${real}/`));
      if (inside) return `${this.workspace.relative(place)} (a protected link leads there)`;
    }
    return undefined;
  }

  // Whether `real` (or, for a folder, an entry in it) is on the way of a hidden link of the workspace.
  #onHiddenWay(real: string, folder: boolean): boolean {
    if (this.hiddenPaths.length === 0) return false;
    const { ways } = this.#hiddenLookup();
    if (ways.has(real)) return true;
    if (!folder) return false;
    for (const way of ways) if (way.startsWith(`${real}/`)) return true;
    return false;
  }

  // The first hidden path under the folder `tree` (real paths), or undefined; a folder
  // that cannot be read counts as holding one.
  #hiddenIn(tree: string): string | undefined {
    let seen = 0;
    const walk = (dir: string): string | undefined => {
      if (this.isHidden(dir)) return dir;
      let entries: fs.Dirent[];
      try {
        entries = readdirConfined(dir);
      } catch {
        return dir;
      }
      for (const entry of entries) {
        if (++seen > MAX_TREE_ENTRIES) return dir;
        const inner = `${dir}/${entry.name}`;
        if (this.isHidden(inner)) return inner;
        const stat = entry.isFile() && this.mayHaveHiddenAliases() ? lstatOf(inner).stat : undefined;
        if (stat !== undefined && this.isHiddenAlias(stat)) return inner;
        if (entry.isDirectory()) {
          const found = walk(inner);
          if (found !== undefined) return found;
        }
      }
      return undefined;
    };
    return walk(tree);
  }

  // A write to a path that does not exist creates its missing folders: the
  // first of them that is protected (`.git` for `.git/HEAD`), or undefined.
  #protectedAncestor(real: string, area: "workdir" | "temp"): string | undefined {
    const root = area === "temp" ? this.workspace.roots()[1] ?? this.workspace.workdir : this.workspace.workdir;
    for (let folder = path.posix.dirname(real); folder.length > root.length; folder = path.posix.dirname(folder)) {
      if (lstatOf(folder).existed) return undefined;
      const relative = folder.slice(root.length + 1);
      if (isProtectedPath(relative, this.protectedPaths)) return relative;
    }
    return undefined;
  }

  async #askPerson(
    real: string,
    shown: string,
    action: Exclude<WriteAction, "write">,
    guarded: string,
    signal: AbortSignal | undefined,
    proposed: string | undefined,
  ): Promise<void> {
    const what = guarded === this.workspace.relative(real) ? shown : `${shown} (it touches ${guarded})`;
    const outcome = await this.#asker.choose<"once" | "deny">({
      title: "Protected path",
      message: `The agent wants to ${VERBS[action]} ${what}, a file that changes what programs do later ` +
        `(${real}). Only a person may allow this. Allow this time?`,
      options: [
        { value: "once", label: "Allow this time only" },
        { value: "deny", label: "Deny" },
      ],
      defaultChoice: "deny",
      requirePerson: true,
      about: {
        path: real,
        reasons: [`${guarded} is a protected path`],
        ...writeTexts(this.files, real, lstatOf(real).existed, proposed),
      },
    }, signal);
    // Only a person's yes counts, whatever the asker did with requirePerson.
    const yes = outcome.choice === "once" && outcome.source === "user";
    this.#emit({
      kind: "write",
      subject: real,
      decision: yes ? "allow" : "deny",
      answeredBy: answererOf(outcome.source),
      reason: `${action} of a protected path (${guarded})`,
    });
    if (yes) return;
    throw denied(
      what,
      action,
      outcome.source === "user"
        ? "the user denied it"
        : outcome.source === "client"
        ? "it is a protected path and only a person may allow it, not the MCP client's answer"
        : "it is a protected path and only a person may allow it",
    );
  }

  async #isRoot(realPath: string): Promise<boolean> {
    return realPath === this.workspace.workdir ||
      (this.workspace.tempDirCreated && realPath === await this.workspace.tempDir());
  }
}

// The files the rules were read from that lie in the workspace (`--config ./agent.json`), as globs relative to it
// that name only themselves: they are protected paths wherever they lie, as toolfence.json is. Before, a policy
// file given by `--config` in the workspace was rewritten on an automatic answer (a command's allow rules, the
// sandbox's settings), and the next server started with the agent's own policy.
function policyFilesIn(rules: PolicyRules, workdir: string): string[] {
  const found: string[] = [];
  for (const layer of rules.layers) {
    if (layer.file === undefined || !path.posix.isAbsolute(layer.file)) continue;
    let real = path.posix.normalize(layer.file);
    try {
      real = fs.realpathSync.native(real);
    } catch {
      // Gone, or not to be looked at: its path as given.
    }
    if (isWithin(real, workdir) && real !== workdir) found.push(literalGlob(real.slice(workdir.length + 1)));
  }
  return found;
}

function answererOf(source: ChoiceSource | undefined): PolicyDecisionEvent["answeredBy"] {
  return source === "user" ? "person" : source === "client" ? "client" : "auto";
}

function ruleRef(rule: CommandRule | PathRule): NonNullable<PolicyDecisionEvent["rule"]> {
  return { pattern: rule.pattern, decision: "decision" in rule ? rule.decision : rule.kind, ...rule.source };
}

// Synchronous on purpose (see Workspace's walk): one lstat, microseconds, on every path a call resolves; none when
// the resolution took it already (`taken`).
function lstatOf(realPath: string, taken?: fs.Stats): { existed: boolean; stat?: fs.Stats } {
  if (taken) return { existed: true, stat: taken };
  try {
    return { existed: true, stat: quickLstat(realPath) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { existed: false };
    // Unsure whether something would be destroyed: count it as there.
    return { existed: true };
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

// The largest file whose text a write question shows (as a diff).
const MAX_SHOWN_TEXT = 256 * 1024;

// A write question's texts: the file's text now (when it is a text file small enough) and the text it would have.
// The text now is read through the file door (openFound: in the folder pinned at its real path, never following a
// link), not by path: a file swapped for a link between the resolution and the question showed the question the
// text of the file the link led to, outside the workspace (tests/tools/fs/write_file_test.ts).
function writeTexts(
  files: PolicyFileDoor,
  real: string,
  existed: boolean,
  proposed: string | undefined,
): { before?: string; after?: string } {
  if (proposed === undefined || proposed.length > MAX_SHOWN_TEXT) return {};
  if (!existed) return { after: proposed };
  try {
    const fd = files.openFound(real);
    try {
      const info = fs.fstatSync(fd);
      if (!info.isFile() || info.size > MAX_SHOWN_TEXT) return {};
      const before = new TextDecoder("utf-8", { fatal: true }).decode(fs.readFileSync(fd));
      return { before, after: proposed };
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not text, gone, or changed: the question shows no diff.
    return {};
  }
}
