// A session's own artifacts in a store the server's options give every session (OwnArtifacts), and the
// artifacts of a session taken over from another replica (AdoptedArtifacts): the ones the store holds for it (their
// references read once, when the session is taken over; their bytes fetched when first read, checked against
// their hash) beside the ones made here. So `read_artifact` and `resources/read` find what the session made on
// the replica it came from.

import { type ArtifactInfo, type ArtifactRef, type ArtifactStore, sha256Hex } from "@toolfence/core";

/** An artifact's bytes as the store keeps them. */
export type FetchArtifact = (id: string) => Promise<{ bytes: Uint8Array } | undefined>;

/** `local`'s artifacts, then those of `kept` (the store's references) not made here. */
export class AdoptedArtifacts implements ArtifactStore {
  readonly #kept: Map<string, ArtifactRef>;

  constructor(readonly local: ArtifactStore, kept: readonly ArtifactRef[], readonly fetch: FetchArtifact) {
    this.#kept = new Map(kept.map((ref) => [ref.id, ref]));
  }

  put(content: Uint8Array | string, info?: ArtifactInfo): Promise<ArtifactRef> {
    return this.local.put(content, info);
  }

  async get(id: string): Promise<Uint8Array | undefined> {
    const here = await this.local.get(id);
    const ref = here === undefined ? this.#kept.get(id) : undefined;
    if (!ref) return here;
    const found = await this.fetch(id);
    // Bytes that do not hash to their id are no artifact of this session.
    return found && sha256Hex(found.bytes) === ref.sha256 ? found.bytes : undefined;
  }

  ref(id: string): ArtifactRef | undefined {
    return this.local.ref(id) ?? this.#kept.get(id);
  }

  list(): ArtifactRef[] {
    const here = this.local.list();
    const made = new Set(here.map((ref) => ref.id));
    return [...here, ...[...this.#kept.values()].filter((ref) => !made.has(ref.id))];
  }
}

/**
 * The artifacts one session put in `shared`, a store the server's options give
 * every session: only those are listed and read through it. The store alone
 * would list and read every session's artifacts, another tenant's too.
 */
export class OwnArtifacts implements ArtifactStore {
  readonly #own = new Map<string, ArtifactRef>();

  constructor(readonly shared: ArtifactStore) {}

  async put(content: Uint8Array | string, info: ArtifactInfo = {}): Promise<ArtifactRef> {
    const stored = await this.shared.put(content, info);
    // The store gives the reference of whoever put these bytes first, another tenant's too: its summary (the other
    // tenant's command line, `whole stdout of bash "cat plans.txt"`), its sensitivity and its provenance. What is
    // said of the bytes is this session's own.
    const isText = typeof content === "string";
    const ref: ArtifactRef = {
      ...stored,
      mediaType: info.mediaType ?? (isText ? "text/plain; charset=utf-8" : "application/octet-stream"),
      encoding: isText ? "utf-8" : "binary",
      sensitivity: info.sensitivity ?? "normal",
      summary: info.summary ?? "",
      required: info.required ?? false,
      provenanceDigest: info.provenanceDigest ?? null,
    };
    if (!this.#own.has(ref.id)) this.#own.set(ref.id, ref);
    return this.#own.get(ref.id)!;
  }

  get(id: string): Promise<Uint8Array | undefined> {
    return this.#own.has(id) ? this.shared.get(id) : Promise.resolve(undefined);
  }

  ref(id: string): ArtifactRef | undefined {
    return this.#own.get(id);
  }

  list(): ArtifactRef[] {
    return [...this.#own.values()];
  }
}
