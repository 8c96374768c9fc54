/**
 * Step 4 of a call: the context a tool sees (`ctx`), one small object per
 * attempt with its methods on the prototype.
 *
 * @module
 */

import type { ArtifactRef } from "./result.ts";
import type { ProgressEvent, ToolContext } from "./context.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { SessionBase } from "./session.ts";
import type { CallPolicy, PathResolver } from "./services.ts";
import type { FileChange } from "./effects.ts";
import type { CallOptions } from "./executor.ts";

/** The call a context belongs to (`CallRun`): where its fields come from and what it records goes. */
export interface ContextSink<T> {
  readonly session: SessionBase;
  readonly options: CallOptions<T>;
  readonly metadata: Record<string, unknown>;
  /** Keeps an artifact the tool stored, once. */
  recordArtifact(ref: ArtifactRef): void;
  /** Keeps a file change the tool reported. */
  recordFileChange(change: FileChange): void;
}

/**
 * The context of one attempt. Its fields are read-only at run time, not only in the types (as xun's context): a
 * tool cannot repoint its session or value. They are getters on the prototype that read the call, not own fields
 * of a frozen instance: freezing each context was a twentieth of a call, and assigning to a getter-only field
 * throws all the same.
 */
export class CallContext<T> implements ToolContext<T> {
  // The call itself, not copies of its fields or its lists: those are made only when a tool records something.
  #sink: ContextSink<T>;
  #toolName: string;
  #attempt: number;
  #signal: AbortSignal | undefined;

  constructor(sink: ContextSink<T>, toolName: string, attempt: number, signal: AbortSignal | undefined) {
    this.#sink = sink;
    this.#toolName = toolName;
    this.#attempt = attempt;
    this.#signal = signal;
  }

  get session(): SessionBase {
    return this.#sink.session;
  }

  get toolName(): string {
    return this.#toolName;
  }

  get callId(): string | undefined {
    return this.#sink.options.callId;
  }

  get attempt(): number {
    return this.#attempt;
  }

  get value(): T {
    return this.#sink.options.context as T;
  }

  get metadata(): Record<string, unknown> {
    return this.#sink.metadata;
  }

  get idempotencyKey(): string | undefined {
    return this.#sink.options.idempotencyKey;
  }

  /** Made on first use when nothing can abort the attempt (most tools never look). */
  get signal(): AbortSignal {
    return this.#signal ??= new AbortController().signal;
  }

  #artifacts?: ArtifactStore;

  // What follows reads the call, never the getters above: a field a tool shadows on its own context (with
  // Object.defineProperty; assigning throws) changes what it reads, not where its images, progress and changes go.

  get workspace(): PathResolver {
    return this.#sink.session.workspace;
  }

  get policy(): CallPolicy {
    return this.#sink.session.policy;
  }

  /** The session's store, recording what this call puts so the result can list it. */
  get artifacts(): ArtifactStore {
    return this.#artifacts ??= recordingStore(this.#sink.session.artifacts, this.#sink);
  }

  deferImage(image: Uint8Array | string, note?: string): Promise<void> {
    return this.#sink.session.deferImage(image, { toolName: this.#toolName, callId: this.#sink.options.callId, note });
  }

  progress(message: string, fraction?: number): void {
    const event: ProgressEvent = { toolName: this.#toolName, callId: this.#sink.options.callId, message, fraction };
    this.#sink.options.onProgress?.(event);
    this.#sink.session.emitProgress(event);
  }

  recordFileChange(change: FileChange, beforeImage?: Uint8Array): void {
    this.#sink.recordFileChange(change);
    this.#sink.session.emitFileChange({
      change,
      toolName: this.#toolName,
      callId: this.#sink.options.callId,
      beforeImage,
    });
  }
}

// Nor can a tool patch what every context does.
Object.freeze(CallContext.prototype);

function recordingStore<T>(store: ArtifactStore, sink: ContextSink<T>): ArtifactStore {
  return {
    async put(content, info) {
      const ref = await store.put(content, info);
      sink.recordArtifact(ref);
      return ref;
    },
    get: (id) => store.get(id),
    ref: (id) => store.ref(id),
    list: () => store.list(),
  };
}
