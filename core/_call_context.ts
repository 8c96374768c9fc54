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

/** The context of one attempt. */
export class CallContext<T> implements ToolContext<T> {
  constructor(
    readonly session: SessionBase,
    readonly toolName: string,
    readonly callId: string | undefined,
    readonly attempt: number,
    readonly value: T,
    signal: AbortSignal | undefined,
    private readonly onProgress: ((event: ProgressEvent) => void) | undefined,
    private readonly produced: ArtifactRef[],
    readonly metadata: Record<string, unknown>,
    readonly idempotencyKey: string | undefined,
    private readonly changes: FileChange[],
  ) {
    this.#signal = signal;
    // Read-only at run time, not only in the types (as xun's context): a tool cannot repoint its session or value.
    Object.freeze(this);
  }

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
    return this.#artifacts ??= recordingStore(this.session.artifacts, this.produced);
  }

  deferImage(image: Uint8Array | string, note?: string): Promise<void> {
    return this.session.deferImage(image, { toolName: this.toolName, callId: this.callId, note });
  }

  progress(message: string, fraction?: number): void {
    const event: ProgressEvent = { toolName: this.toolName, callId: this.callId, message, fraction };
    this.onProgress?.(event);
    this.session.emitProgress(event);
  }

  recordFileChange(change: FileChange, beforeImage?: Uint8Array): void {
    this.changes.push(change);
    this.session.emitFileChange({ change, toolName: this.toolName, callId: this.callId, beforeImage });
  }
}

function recordingStore(store: ArtifactStore, produced: ArtifactRef[]): ArtifactStore {
  return {
    async put(content, info) {
      const ref = await store.put(content, info);
      if (!produced.some((p) => p.id === ref.id)) produced.push(ref);
      return ref;
    },
    get: (id) => store.get(id),
    ref: (id) => store.ref(id),
    list: () => store.list(),
  };
}
