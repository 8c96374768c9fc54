/**
 * A session: one agent's run, with its workspace, policy state, host,
 * capabilities, artifacts and deferred images.
 *
 * @module
 */

import { readFile } from "node:fs/promises";
import type { ChoiceOutcome, ChoiceRequest, ConfirmRequest, Host } from "./host.ts";
import { type ArtifactStore, MemoryArtifactStore } from "./artifacts.ts";
import { checkImage, type DeferredImage } from "./images.ts";
import type { ProgressEvent } from "./context.ts";
import type { HookSet } from "./hooks.ts";
import { Workspace } from "../policy/workspace.ts";
import { PolicyState, type PolicyStateData } from "../policy/state.ts";
import { Policy } from "../policy/policy.ts";
import type { Fence } from "../policy/fence.ts";
import type { SandboxMode } from "../policy/sandbox.ts";
import type { RiskAssessor } from "../policy/shell/risk.ts";
import { denyAllHost } from "../policy/hosts.ts";

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
  /** Judges shell commands that are not allowlisted; default the rules-based assessor. */
  assessor?: RiskAssessor;
  /** Protected-path globs added to the defaults (writes to them always ask a person; see `policy/protected_paths.ts`). */
  protectedPaths?: readonly string[];
}

/**
 * One agent's run. Tools see it as `ctx.session`.
 *
 * @example
 * ```ts
 * import { Session } from "./session.ts";
 * const session = new Session({ workspace: Deno.cwd(), autoConfirm: true });
 * console.log(session.workspace.workdir);
 * await session.close();
 * ```
 */
export class Session {
  /** The workspace that confines paths. */
  readonly workspace: Workspace;
  /** Who answers questions. */
  readonly host: Host;
  /** Whether rule-answerable questions take their default. */
  readonly autoConfirm: boolean;
  /** The model's capabilities. */
  readonly capabilities: readonly string[];
  /** Allowlists and grants. */
  readonly state: PolicyState;
  /** The policy tools go through. */
  readonly policy: Policy;
  /** Artifacts of this session. */
  readonly artifacts: ArtifactStore;
  /** Sub-agent depth. */
  readonly depth: number;
  /** Hooks that apply to every call of this session. */
  readonly hooks: HookSet = { before: [], after: [], afterBatch: [] };
  #options: SessionOptions;
  #images: DeferredImage[] = [];
  #progressListeners = new Set<(event: ProgressEvent) => void>();
  #closers: (() => unknown)[] = [];
  #closed = false;

  /** Creates a session. */
  constructor(options: SessionOptions) {
    this.#options = options;
    this.workspace = typeof options.workspace === "string" ? new Workspace(options.workspace) : options.workspace;
    this.host = options.host ?? denyAllHost();
    this.autoConfirm = options.autoConfirm ?? false;
    this.capabilities = [...(options.capabilities ?? [])];
    this.state = options.state instanceof PolicyState ? options.state : new PolicyState(options.state);
    this.artifacts = options.artifacts ?? new MemoryArtifactStore();
    this.depth = options.depth ?? 0;
    // A session that made its workspace removes the workspace's temp dir when it closes.
    if (typeof options.workspace === "string") this.#closers.push(() => this.workspace.dispose());
    this.policy = new Policy({
      workspace: this.workspace,
      state: this.state,
      asker: this,
      fence: options.fence,
      sandbox: options.sandbox,
      assessor: options.assessor,
      protectedPaths: options.protectedPaths,
    });
  }

  /** Whether {@linkcode Session.close} has run. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Asks a question. With `autoConfirm`, the default is taken and marked `auto`,
   * unless the request requires a person.
   */
  choose<T extends string>(request: ChoiceRequest<T>, signal?: AbortSignal): Promise<ChoiceOutcome<T>> {
    if (this.autoConfirm && !request.requirePerson) {
      return Promise.resolve({ choice: request.defaultChoice, source: "auto" });
    }
    return this.host.choose(request, signal);
  }

  /** Asks a yes/no question, with the same `autoConfirm` rule as {@linkcode Session.choose}. */
  confirm(request: ConfirmRequest, signal?: AbortSignal): Promise<ChoiceOutcome<boolean>> {
    if (this.autoConfirm && !request.requirePerson) {
      return Promise.resolve({ choice: request.defaultChoice, source: "auto" });
    }
    return this.host.confirm(request, signal);
  }

  /**
   * Queues an image for after the current batch. A string is a path, resolved
   * and read through the policy. Throws a `ToolError` for anything but a PNG,
   * JPEG, WebP or GIF of at most 10 MB.
   */
  async deferImage(
    image: Uint8Array | string,
    from: { toolName: string; callId?: string; note?: string },
  ): Promise<void> {
    const data = typeof image === "string"
      ? new Uint8Array(await readFile(await this.policy.resolveForRead(image)))
      : image.slice();
    const mediaType = checkImage(data, typeof image === "string" ? image : "the image");
    this.#images.push({ mediaType, data, toolName: from.toolName, callId: from.callId, note: from.note });
  }

  /** Removes and returns the images queued so far. */
  takeDeferredImages(): DeferredImage[] {
    return this.#images.splice(0);
  }

  /** Subscribes to progress events of this session's calls; returns the unsubscribe function. */
  onProgress(listener: (event: ProgressEvent) => void): () => void {
    this.#progressListeners.add(listener);
    return () => this.#progressListeners.delete(listener);
  }

  /** Delivers a progress event to the listeners. */
  emitProgress(event: ProgressEvent): void {
    for (const listener of this.#progressListeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not fail the tool that reported progress.
      }
    }
  }

  /** Registers cleanup to run when the session closes (e.g. killing background jobs). */
  onClose(closer: () => unknown): void {
    this.#closers.push(closer);
  }

  /**
   * A child session for a sub-agent: the same workspace and a copy of the
   * policy state, depth + 1.
   */
  child(options: { host?: Host; capabilities?: readonly string[] } = {}): Session {
    return new Session({
      ...this.#options,
      workspace: this.workspace,
      host: options.host ?? this.host,
      capabilities: options.capabilities ?? this.capabilities,
      state: this.state.clone(),
      artifacts: this.artifacts,
      depth: this.depth + 1,
    });
  }

  /** Runs the cleanups (last registered first). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const errors: unknown[] = [];
    for (const closer of this.#closers.splice(0).reverse()) {
      try {
        await closer();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, "Some session cleanups failed");
  }
}
