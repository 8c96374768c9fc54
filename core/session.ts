/**
 * The session base: one agent's run, with its host, capabilities, artifacts and
 * deferred images, and the path resolution and policy it is given. The core
 * builds neither; `@toolfence/policy`'s `Session` is this base with the default
 * workspace, policy state, fence and deny-all host wired in (as Hono's `Hono`
 * is `HonoBase` with a router).
 *
 * @module
 */

import { readFile } from "node:fs/promises";
import type { ChoiceOutcome, ChoiceRequest, ConfirmRequest, Host, QuestionSubject } from "./host.ts";
import { currentCallScope } from "./_call_scope.ts";
import { type ArtifactStore, MemoryArtifactStore } from "./artifacts.ts";
import { checkImage, type DeferredImage } from "./images.ts";
import type { ProgressEvent } from "./context.ts";
import type { FileChange } from "./effects.ts";
import type { HookSet } from "./hooks.ts";
import type { CallPolicy, PathResolver } from "./services.ts";
import { UsageError } from "./errors.ts";
import { LateResults } from "./late_results.ts";
import { CallGate } from "./call_gate.ts";
import type { AgentModel } from "./model.ts";
import { NO_WORKSPACE, NOBODY, noPolicy } from "./_standalone.ts";

/**
 * Options of a {@linkcode SessionBase}. Each of `workspace`, `policy` and
 * `host` left out refuses: without a workspace nothing resolves, without a
 * policy every file and process operation is refused (`permission_denied`),
 * without a host no question is answered. So `new SessionBase()` calls tools
 * that touch nothing outside their arguments, and fails closed for the rest.
 */
export interface SessionBaseOptions {
  /** Path resolution inside the workspace; default none (nothing resolves). */
  workspace?: PathResolver;
  /** Makes the session's policy; it gets the session to ask questions through. Default: every door refuses. */
  policy?: (session: SessionBase) => CallPolicy;
  /** Who answers questions; default nobody (every question is refused). */
  host?: Host;
  /** Take the default answer of every question a rule may answer, marked `auto`. */
  autoConfirm?: boolean;
  /** The model's capabilities, e.g. `["vision"]`. */
  capabilities?: readonly string[];
  /** Artifact store; default in memory. */
  artifacts?: ArtifactStore;
  /** Sub-agent depth; 0 for a top-level agent. */
  depth?: number;
  /**
   * The session's model: what `withSubagents()` without a getter, and a model
   * risk assessor, run with. Child sessions share it. Default none.
   */
  model?: AgentModel;
}

/** One file change a call reported, as {@linkcode SessionBase.onFileChange} listeners get it. */
export interface FileChangeEvent {
  /** The change, as the call's result lists it. */
  change: FileChange;
  /** The tool that made it. */
  toolName: string;
  /** The provider's call id, when given. */
  callId?: string;
  /** The exact content before the change (a symlink's target), when the tool kept it. */
  beforeImage?: Uint8Array;
}

/** What a child session may change (see {@linkcode SessionBase.child}). */
export interface ChildSessionOptions {
  /** Who answers the child's questions; default the parent's host. */
  host?: Host;
  /** The child model's capabilities; default the parent's. */
  capabilities?: readonly string[];
}

/**
 * One agent's run, as the core sees it. Tools see it as `ctx.session`. Most
 * code wants the default-wired `Session` of `@toolfence/policy` (also exported
 * by `@toolfence/toolfence`); this base is for embedders who bring their own
 * path resolution and policy. Built with no options it is the core alone:
 * tools that touch only their arguments run, and every file, process or
 * question is refused (`permission_denied`).
 *
 * @example The core alone
 * ```ts
 * import * as v from "valibot";
 * import { SessionBase, tool, ToolBox } from "@toolfence/core";
 * const shout = tool({
 *   name: "shout",
 *   description: "Upper-case a text.",
 *   input: v.object({ text: v.string() }),
 *   run: ({ text }) => text.toUpperCase(),
 * });
 * const session = new SessionBase();
 * const result = await new ToolBox().register(shout).call(session, "shout", { text: "hi" });
 * console.log(result.status, result.output); // success HI
 * await session.close();
 * ```
 *
 * @example With a workspace policy wired by hand
 * ```ts
 * import { SessionBase } from "@toolfence/core";
 * import { autoHost, Policy, PolicyState, Workspace } from "@toolfence/policy";
 * const workspace = new Workspace(Deno.cwd());
 * const session = new SessionBase({
 *   host: autoHost(),
 *   workspace,
 *   policy: () => new Policy({ workspace, state: new PolicyState(), asker: autoHost() }),
 * });
 * console.log(session.depth); // 0
 * await session.close();
 * ```
 */
export class SessionBase {
  /** Path resolution inside the workspace. */
  readonly workspace: PathResolver;
  /** Who answers questions. */
  readonly host: Host;
  /** Whether rule-answerable questions take their default. */
  readonly autoConfirm: boolean;
  /** The model's capabilities. */
  readonly capabilities: readonly string[];
  /** The policy tools go through. */
  readonly policy: CallPolicy;
  /** Artifacts of this session. */
  readonly artifacts: ArtifactStore;
  /** Sub-agent depth. */
  readonly depth: number;
  /** The session's model (see {@linkcode SessionBaseOptions.model}), if it was given one. */
  readonly model?: AgentModel;
  /** Hooks that apply to every call of this session. */
  readonly hooks: HookSet = { before: [], after: [], afterBatch: [] };
  /** This session's id, in every result's `provenance` and in the call ids it makes. */
  readonly id: string = crypto.randomUUID();
  /** What timed-out and cancelled tools settled with after their calls ended (list and event). */
  readonly lateResults: LateResults = new LateResults();
  #generation = 0;
  #calls = 0;
  readonly #callIdPrefix = `${this.id}:`;
  /**
   * The gate that gives calls arriving one by one the order of a batch:
   * concurrency-safe calls together, any other call alone, first come first
   * served. The framework adapters, the AI SDK adapter and the MCP server pass
   * every call of this session through it; code that runs a framework's
   * parallel tool calls itself should too:
   * `session.callGate.run(isConcurrencySafe(tool), () => toolbox.call(session, ..., { signal }), signal)`
   * (a call stopped while it waits then ends at once, as cancelled).
   * `callMany` orders its own batch and does not use it.
   */
  readonly callGate: CallGate = new CallGate();
  #options: SessionBaseOptions;
  #images: DeferredImage[] = [];
  #progressListeners = new Set<(event: ProgressEvent) => void>();
  #fileChangeListeners = new Set<(event: FileChangeEvent) => void>();
  #closers: (() => unknown)[] = [];
  #closed = false;
  #closing?: Promise<void>;

  /** Creates a session from its parts; the parts left out refuse (see {@linkcode SessionBaseOptions}). */
  constructor(options: SessionBaseOptions = {}) {
    if (options.policy !== undefined && typeof options.policy !== "function") {
      throw new UsageError(
        "SessionBase's policy option is a function (session) => CallPolicy; for the default wiring use Session from @toolfence/policy: new Session({ workspace })",
      );
    }
    this.#options = options;
    this.workspace = options.workspace ?? NO_WORKSPACE;
    this.host = options.host ?? NOBODY;
    this.autoConfirm = options.autoConfirm ?? false;
    this.capabilities = [...(options.capabilities ?? [])];
    this.artifacts = options.artifacts ?? new MemoryArtifactStore();
    this.depth = options.depth ?? 0;
    if (options.model !== undefined) this.model = options.model;
    this.policy = options.policy ? options.policy(this) : noPolicy();
  }

  /**
   * The owner generation: 0 at first, one more at each {@linkcode SessionBase.takeOver}.
   * Each result's `attemptId` names the generation its call started in.
   */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Marks a new owner of the session (e.g. a runner that restarted and resumes
   * it): calls started before are from a stale owner, and their late results
   * say so. Returns the new generation.
   */
  takeOver(): number {
    return ++this.#generation;
  }

  /** A call id for a call the provider gave none: `<session id>:<n>`. */
  nextCallId(): string {
    return this.#callIdPrefix + ++this.#calls;
  }

  /** Whether {@linkcode SessionBase.close} has run. */
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
    return this.host.choose(withCall(request), signal);
  }

  /**
   * Asks a yes/no question and resolves to the answer itself, so that
   * `if (await session.confirm(...))` means what it says (an answer object
   * would always be truthy). Same `autoConfirm` rule as
   * {@linkcode SessionBase.choose}. To know who answered, use
   * {@linkcode SessionBase.confirmOutcome}.
   *
   * @example
   * ```ts
   * import { Session } from "@toolfence/policy";
   * const session = new Session({ workspace: Deno.cwd(), autoConfirm: true });
   * if (await session.confirm({ title: "Go", message: "Go on?", defaultChoice: false })) console.log("yes");
   * await session.close();
   * ```
   */
  async confirm(request: ConfirmRequest, signal?: AbortSignal): Promise<boolean> {
    const { choice } = await this.confirmOutcome(request, signal);
    if (typeof choice !== "boolean") throw new TypeError("The host answered a yes/no question with a non-boolean");
    return choice;
  }

  /** Asks a yes/no question; the answer and who gave it (`user`, or `auto` for a rule). Read `.choice`. */
  confirmOutcome(request: ConfirmRequest, signal?: AbortSignal): Promise<ChoiceOutcome<boolean>> {
    if (this.autoConfirm && !request.requirePerson) {
      return Promise.resolve({ choice: request.defaultChoice, source: "auto" });
    }
    return this.host.confirm(withCall(request), signal);
  }

  /**
   * Queues an image for after the current batch. A string is a path, resolved
   * and read through the policy. Throws a `ToolError` for anything but a PNG,
   * JPEG, WebP or GIF of at most `MAX_IMAGE_BYTES` (3.75 MiB: its base64 is
   * the 5 MB Anthropic takes per image) and `MAX_IMAGE_SIDE_PX` (2000 px) on
   * its longest side.
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

  /**
   * Subscribes to the file changes this session's calls report (a checkpoint
   * journal keeps them with their before-images); returns the unsubscribe function.
   */
  onFileChange(listener: (event: FileChangeEvent) => void): () => void {
    this.#fileChangeListeners.add(listener);
    return () => this.#fileChangeListeners.delete(listener);
  }

  /** Delivers a file change a call reported (`ctx.recordFileChange`) to the listeners. */
  emitFileChange(event: FileChangeEvent): void {
    for (const listener of this.#fileChangeListeners) {
      try {
        listener(event);
      } catch {
        // A failing listener must not fail the tool that changed the file.
      }
    }
  }

  /** Registers cleanup to run when the session closes (e.g. killing background jobs). */
  onClose(closer: () => unknown): void {
    this.#closers.push(closer);
  }

  /**
   * A child session for a sub-agent: the same workspace, artifacts and policy
   * factory, depth + 1. Subclasses that hold more state (the policy's
   * `Session` copies its grants) override it.
   */
  child(options: ChildSessionOptions = {}): SessionBase {
    return new SessionBase({
      ...this.#options,
      host: options.host ?? this.host,
      capabilities: options.capabilities ?? this.capabilities,
      artifacts: this.artifacts,
      depth: this.depth + 1,
    });
  }

  /**
   * Runs the cleanups (last registered first). Idempotent: a second call
   * returns the first one's promise, so that whoever closes the session later
   * still waits until the cleanups have ended.
   */
  close(): Promise<void> {
    this.#closed = true;
    return this.#closing ??= this.#runClosers();
  }

  async #runClosers(): Promise<void> {
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

// The question with the call it is asked from, for hosts that show it (see `_call_scope.ts`).
function withCall<R extends { about?: QuestionSubject }>(request: R): R {
  const call = currentCallScope();
  if (call === undefined || request.about?.tool !== undefined) return request;
  return { ...request, about: { ...request.about, tool: call.tool, ...(call.callId ? { callId: call.callId } : {}) } };
}
