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

/** The context of one attempt. */
export class CallContext<T> implements ToolContext<T> {
  readonly session: SessionBase;
  readonly callId: string | undefined;
  readonly value: T;
  readonly metadata: Record<string, unknown>;
  readonly idempotencyKey: string | undefined;

  constructor(
    sink: ContextSink<T>,
    readonly toolName: string,
    readonly attempt: number,
    signal: AbortSignal | undefined,
  ) {
    const { options } = sink;
    this.session = sink.session;
    this.callId = options.callId;
    this.value = options.context as T;
    this.metadata = sink.metadata;
    this.idempotencyKey = options.idempotencyKey;
    this.#signal = signal;
    // The call itself, not copies of its lists: those are made only when a tool records something.
    this.#sink = sink;
    // Read-only at run time, not only in the types (as xun's context): a tool cannot repoint its session or value.
    Object.freeze(this);
  }

  #sink: ContextSink<T>;
  #signal: AbortSignal | undefined;

  /** Made on first use when nothing can abort the attempt (most tools never look). */
  get signal(): AbortSignal {
    return this.#signal ??= new AbortController().signal;
  }

  #artifacts?: ArtifactStore;

  get workspace(): PathResolver {
    return this.session.workspace;
  }

  get policy(): CallPolicy {
    return this.session.policy;
  }

  /** The session's store, recording what this call puts so the result can list it. */
  get artifacts(): ArtifactStore {
    return this.#artifacts ??= recordingStore(this.session.artifacts, this.#sink);
  }

  deferImage(image: Uint8Array | string, note?: string): Promise<void> {
    return this.session.deferImage(image, { toolName: this.toolName, callId: this.callId, note });
  }

  progress(message: string, fraction?: number): void {
    const event: ProgressEvent = { toolName: this.toolName, callId: this.callId, message, fraction };
    this.#sink.options.onProgress?.(event);
    this.session.emitProgress(event);
  }

  recordFileChange(change: FileChange, beforeImage?: Uint8Array): void {
    this.#sink.recordFileChange(change);
    this.session.emitFileChange({ change, toolName: this.toolName, callId: this.callId, beforeImage });
  }
}

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
