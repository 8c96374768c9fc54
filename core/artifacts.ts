/**
 * Content-addressed artifacts: whole outputs that were cut, images, files a
 * tool produced. A memory store and a file store.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { ToolError } from "./errors.ts";
import { ARTIFACT_REF_SCHEMA_VERSION, type ArtifactRef } from "./result.ts";

/** What a caller says about content it stores. */
export interface ArtifactInfo {
  /** Media type; default `text/plain; charset=utf-8` for strings, `application/octet-stream` for bytes. */
  mediaType?: string;
  /** One line describing the content. */
  summary?: string;
  /** `sensitive` content is never listed to clients. Default `normal`. */
  sensitivity?: "normal" | "sensitive";
  /** Whether the model needs it to make sense of a result. Default false. */
  required?: boolean;
  /** Hex SHA-256 of what produced it, when known. Default null. */
  provenanceDigest?: string | null;
}

/** Where artifacts live. */
export interface ArtifactStore {
  /** Stores content (idempotent: the same bytes give the same id). */
  put(content: Uint8Array | string, info?: ArtifactInfo): Promise<ArtifactRef>;
  /** The bytes of an artifact, verified against its hash; undefined when unknown. */
  get(id: string): Promise<Uint8Array | undefined>;
  /** The reference of a stored artifact. */
  ref(id: string): ArtifactRef | undefined;
  /** Every stored artifact's reference, in insertion order. */
  list(): ArtifactRef[];
}

const encoder = new TextEncoder();

/** Hex SHA-256 of bytes. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function makeRef(bytes: Uint8Array, isText: boolean, info: ArtifactInfo, resolverKey: string): ArtifactRef {
  const sha256 = sha256Hex(bytes);
  return {
    id: `sha256:${sha256}`,
    sha256,
    mediaType: info.mediaType ?? (isText ? "text/plain; charset=utf-8" : "application/octet-stream"),
    byteLength: bytes.byteLength,
    encoding: isText ? "utf-8" : "binary",
    sensitivity: info.sensitivity ?? "normal",
    summary: info.summary ?? "",
    required: info.required ?? false,
    resolverKey,
    provenanceDigest: info.provenanceDigest ?? null,
    schemaVersion: ARTIFACT_REF_SCHEMA_VERSION,
  };
}

function toBytes(content: Uint8Array | string): Uint8Array {
  return typeof content === "string" ? encoder.encode(content) : content;
}

function hexOf(id: string): string {
  const match = /^sha256:([0-9a-f]{64})$/.exec(id);
  if (!match) {
    throw new ToolError(`Invalid artifact id ${JSON.stringify(id)}: expected "sha256:" and 64 hex digits`, {
      code: "invalid_artifact_id",
      kind: "semantic",
    });
  }
  return match[1];
}

const ARTIFACT_URI = /^artifact:\/\/sha256\/([0-9a-f]{64})$/;

/**
 * The artifact id that `idOrUri` names: an id (`sha256:<hex>`) as is, or the
 * MCP resource URI clients are shown (`artifact://sha256/<hex>`) as its id.
 * Anything else is an `invalid_artifact_id` error.
 *
 * @example
 * ```ts
 * import { artifactIdOf } from "@toolfence/core";
 * console.log(artifactIdOf(`artifact://sha256/${"ab".repeat(32)}`)); // sha256:abab...
 * ```
 */
export function artifactIdOf(idOrUri: string): string {
  const uri = ARTIFACT_URI.exec(idOrUri);
  if (uri) return `sha256:${uri[1]}`;
  if (typeof idOrUri !== "string" || !/^sha256:[0-9a-f]{64}$/.test(idOrUri)) {
    throw new ToolError(
      `Invalid artifact id ${
        JSON.stringify(idOrUri)
      }: expected "sha256:" and 64 hex digits, or the URI artifact://sha256/<64 hex digits>`,
      { code: "invalid_artifact_id", kind: "semantic" },
    );
  }
  return idOrUri;
}

const HEX64 = /^[0-9a-f]{64}$/;
const CAMEL_OF: Readonly<Record<string, keyof ArtifactRef>> = {
  artifact_id: "id",
  media_type: "mediaType",
  byte_length: "byteLength",
  model_summary: "summary",
  resolver_key: "resolverKey",
  provenance_digest: "provenanceDigest",
  schema_version: "schemaVersion",
};

/**
 * Reads an {@linkcode ArtifactRef} from plain data (qitos's
 * `ArtifactRef.from_dict`): camelCase or the seed's snake_case keys. `id`
 * (or `sha256`), `mediaType`, `byteLength` and `resolverKey` are required;
 * the rest default as in the seed (`encoding` `binary`, `required` true,
 * `provenanceDigest` null), except `sensitivity`, whose values here are
 * `normal` and `sensitive` (the seed's `internal` is read as `normal`). Every
 * field is checked; a wrong one is an `invalid_artifact_ref` error naming it.
 *
 * @example
 * ```ts
 * import { parseArtifactRef } from "@toolfence/core";
 * const ref = parseArtifactRef({
 *   artifact_id: `sha256:${"0".repeat(64)}`,
 *   resolver_key: "memory",
 *   media_type: "text/plain",
 *   byte_length: 0,
 * });
 * console.log(ref.encoding, ref.required); // binary true
 * ```
 */
export function parseArtifactRef(value: unknown): ArtifactRef {
  const bad = (field: string, why: string): never => {
    throw new ToolError(`Invalid artifact reference: ${field} ${why}`, {
      code: "invalid_artifact_ref",
      details: { field },
    });
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) bad("(the value)", "is not an object");
  const raw: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    raw[Object.hasOwn(CAMEL_OF, key) ? CAMEL_OF[key] : key] = field;
  }
  const text = (field: string, optional = false): string | undefined => {
    const v = raw[field];
    if (v === undefined && optional) return undefined;
    if (typeof v !== "string" || (!optional && v === "")) bad(field, "must be a non-empty string");
    return v as string;
  };
  let sha256 = text("sha256", true);
  const id = text("id", true) ?? (sha256 !== undefined ? `sha256:${sha256}` : bad("id", "is missing"));
  if (!/^sha256:[0-9a-f]{64}$/.test(id)) bad("id", 'must be "sha256:" and 64 lowercase hex digits');
  sha256 ??= id.slice("sha256:".length);
  if (!HEX64.test(sha256)) bad("sha256", "must be 64 lowercase hex digits");
  if (id !== `sha256:${sha256}`) bad("sha256", "does not match id");
  const byteLength = raw.byteLength;
  if (typeof byteLength !== "number" || !Number.isSafeInteger(byteLength) || byteLength < 0) {
    bad("byteLength", "must be a non-negative integer");
  }
  const encoding = raw.encoding ?? "binary";
  if (encoding !== "utf-8" && encoding !== "binary") bad("encoding", 'must be "utf-8" or "binary"');
  const sensitivity = raw.sensitivity === "internal" ? "normal" : raw.sensitivity ?? "normal";
  if (sensitivity !== "normal" && sensitivity !== "sensitive") bad("sensitivity", 'must be "normal" or "sensitive"');
  const required = raw.required ?? true;
  if (typeof required !== "boolean") bad("required", "must be a boolean");
  const provenanceDigest = raw.provenanceDigest ?? null;
  if (provenanceDigest !== null && (typeof provenanceDigest !== "string" || !HEX64.test(provenanceDigest))) {
    bad("provenanceDigest", "must be null or 64 lowercase hex digits");
  }
  const schemaVersion = raw.schemaVersion ?? ARTIFACT_REF_SCHEMA_VERSION;
  if (typeof schemaVersion !== "number" && typeof schemaVersion !== "string") bad("schemaVersion", "must be a number");
  const version = Number(schemaVersion);
  if (!Number.isInteger(version) || version < 1 || version > ARTIFACT_REF_SCHEMA_VERSION) {
    bad("schemaVersion", `must be an integer from 1 to ${ARTIFACT_REF_SCHEMA_VERSION}`);
  }
  return {
    id,
    sha256,
    mediaType: text("mediaType")!,
    byteLength: byteLength as number,
    encoding: encoding as ArtifactRef["encoding"],
    sensitivity: sensitivity as ArtifactRef["sensitivity"],
    summary: text("summary", true) ?? "",
    required: required as boolean,
    resolverKey: text("resolverKey")!,
    provenanceDigest: provenanceDigest as string | null,
    schemaVersion: version,
  };
}

/**
 * The default of {@linkcode MemoryArtifactStoreOptions.maxBytes}: 512 MiB, two whole outputs of a command at the
 * session's largest output limit (256 MiB).
 */
export const DEFAULT_MEMORY_ARTIFACT_BYTES = 512 * 1024 * 1024;

// What an entry costs beside its bytes (its reference, its summary, the map's slot), counted against the budget
// so that a flood of tiny artifacts is bounded too.
const ENTRY_OVERHEAD_BYTES = 1024;

/** Options of {@linkcode MemoryArtifactStore}. */
export interface MemoryArtifactStoreOptions {
  /**
   * Most bytes the store holds (each artifact's bytes plus about a kilobyte for its reference); past it the
   * oldest artifacts are dropped, never the one just stored. Default {@linkcode DEFAULT_MEMORY_ARTIFACT_BYTES}.
   */
  maxBytes?: number;
  /**
   * The budget this store shares with others (default {@linkcode SERVER_ARTIFACT_POOL}, shared by every memory
   * store of this process): past it, the oldest artifact of the owner that holds the most goes first (see `owner`).
   */
  pool?: MemoryArtifactPool;
  /**
   * Whose bytes the store holds (a tenant's name): past its pool, the owner that holds the most in it gives up
   * first, then within that owner the store that holds the most. Stores of one owner count together, so that an
   * owner's many stores (a tenant's 32 sessions) cannot push out another owner's one larger store. Default: the
   * store is an owner of its own.
   */
  owner?: string;
}

/**
 * The default of {@linkcode SERVER_ARTIFACT_POOL}: 2 GiB, four sessions' whole stores.
 */
export const DEFAULT_ARTIFACT_POOL_BYTES = 2 * 1024 * 1024 * 1024;

// Every artifact's place in the order of all the stores of a pool: the lowest goes first.
let artifactOrder = 0;

/**
 * The memory several {@linkcode MemoryArtifactStore}s share, the server's sessions' by default
 * ({@linkcode SERVER_ARTIFACT_POOL}): each store is bounded by its own `maxBytes`, and all of them together by the
 * pool's; past it the oldest artifact of the largest store of the owner that holds the most (stores given the same
 * `owner`, a tenant's sessions, count together) goes first (never the one just stored), so that a tenant filling the
 * pool pushes out its own outputs before another's. Before 2026-12-05 only
 * each session's store was bounded (512 MiB): an HTTP tenant may hold 32 sessions, 16 GiB of command outputs held by
 * the server (three sessions of three 200 MiB outputs each held 1.5 GB here). A store that is no longer
 * reachable (its session gone) leaves the pool's count once it is collected.
 *
 * @example
 * ```ts
 * import { MemoryArtifactPool, MemoryArtifactStore } from "@toolfence/core";
 * const pool = new MemoryArtifactPool(64 * 1024);
 * const a = new MemoryArtifactStore({ pool });
 * const b = new MemoryArtifactStore({ pool });
 * await a.put(new Uint8Array(40 * 1024));
 * await b.put(new Uint8Array(40 * 1024));
 * console.log(a.list().length, b.list().length, pool.heldBytes <= 64 * 1024); // 0 1 true
 * ```
 */
export class MemoryArtifactPool {
  /** Most bytes the stores that share the pool hold together. */
  readonly maxBytes: number;
  #held = 0;
  readonly #stores = new Set<WeakRef<MemoryArtifactStore>>();
  // A collected store's bytes leave the count (its `held` cell, read when it is collected).
  readonly #collected = new FinalizationRegistry<{ ref: WeakRef<MemoryArtifactStore>; held: { bytes: number } }>(
    ({ ref, held }) => {
      this.#stores.delete(ref);
      this.#held -= held.bytes;
    },
  );

  /** A pool of at most `maxBytes`. */
  constructor(maxBytes: number) {
    if (!(maxBytes > 0)) throw new TypeError(`maxBytes must be positive, not ${maxBytes}`);
    this.maxBytes = maxBytes;
  }

  /** The bytes the stores of the pool hold together now. */
  get heldBytes(): number {
    return this.#held;
  }

  /** @internal Counts a new store in, with the cell that holds its bytes. */
  join(store: MemoryArtifactStore, held: { bytes: number }): void {
    const ref = new WeakRef(store);
    this.#stores.add(ref);
    this.#collected.register(store, { ref, held });
  }

  /** @internal Bytes a store took (positive) or gave back (negative). */
  count(bytes: number): void {
    this.#held += bytes;
  }

  /**
   * @internal Drops artifacts until `cost` more bytes fit (or none is left): the oldest of the largest store of the
   * owner that holds the most, so that one owner (a tenant) filling the pool pushes out its own outputs before
   * another's. By store alone, a tenant's 32 sessions each holding a little less than another tenant's one session
   * pushed out all of that session's (a 100 MB output of bob's went while alice's sessions held 32 of 99 MB).
   */
  makeRoom(cost: number): void {
    while (this.#held + cost > this.maxBytes) {
      const owners = new Map<unknown, { bytes: number; largest: MemoryArtifactStore }>();
      for (const ref of this.#stores) {
        const store = ref.deref();
        if (store === undefined || store[OLDEST]() === undefined) continue;
        const key = store[OWNER] ?? store;
        const owner = owners.get(key);
        if (owner === undefined) owners.set(key, { bytes: store.heldBytes, largest: store });
        else {
          owner.bytes += store.heldBytes;
          if (store.heldBytes > owner.largest.heldBytes) owner.largest = store;
        }
      }
      let most: { bytes: number; largest: MemoryArtifactStore } | undefined;
      for (const owner of owners.values()) if (most === undefined || owner.bytes > most.bytes) most = owner;
      if (most === undefined) return;
      most.largest[DROP_OLDEST]();
    }
  }
}

/** The pool every memory store of this process shares unless it is given its own. */
export const SERVER_ARTIFACT_POOL: MemoryArtifactPool = new MemoryArtifactPool(DEFAULT_ARTIFACT_POOL_BYTES);

const OLDEST = Symbol("oldest");
const OWNER = Symbol("owner");
const DROP_OLDEST = Symbol("dropOldest");

/**
 * Keeps artifacts in memory for the life of the session, at most `maxBytes`
 * of them (default 512 MiB): past it the oldest go first, and reading one
 * that went is `unknown_artifact`. Each command's output is bounded, but the
 * whole of every long one became an artifact: a loop of calls printing 48
 * MiB each held 512 MiB in the server after 8 calls, and more with every call.
 *
 * @example
 * ```ts
 * import { MemoryArtifactStore } from "@toolfence/core";
 * const store = new MemoryArtifactStore();
 * const ref = await store.put("hello");
 * console.log(ref.id, new TextDecoder().decode(await store.get(ref.id)));
 * ```
 */
export class MemoryArtifactStore implements ArtifactStore {
  // In the order they were first stored: the first is the first to go.
  #items = new Map<string, { ref: ArtifactRef; bytes: Uint8Array; order: number }>();
  // The bytes held, in a cell the pool reads once this store is collected.
  readonly #held = { bytes: 0 };
  readonly #maxBytes: number;
  readonly #pool: MemoryArtifactPool;
  /** @internal Whose bytes these are, for the pool (see {@linkcode MemoryArtifactStoreOptions.owner}). */
  readonly [OWNER]: string | undefined;

  /** Creates an empty store holding at most `options.maxBytes`, within its pool's. */
  constructor(options: MemoryArtifactStoreOptions = {}) {
    const max = options.maxBytes ?? DEFAULT_MEMORY_ARTIFACT_BYTES;
    if (!(max > 0)) throw new TypeError(`maxBytes must be positive, not ${max}`);
    this.#maxBytes = max;
    this.#pool = options.pool ?? SERVER_ARTIFACT_POOL;
    this[OWNER] = options.owner;
    this.#pool.join(this, this.#held);
  }

  /** The bytes the store holds now, each artifact's plus its overhead (at most `maxBytes`, or the newest alone). */
  get heldBytes(): number {
    return this.#held.bytes;
  }

  /**
   * Stores content; drops the oldest artifacts while the store would hold more than its maximum, and the oldest of
   * any store of its pool while the pool would.
   */
  put(content: Uint8Array | string, info: ArtifactInfo = {}): Promise<ArtifactRef> {
    // A string's encoding is already a copy of its own; only bytes the caller keeps are copied (a second copy of
    // a 475 MB output was a quarter of the server's peak memory for that call).
    const bytes = typeof content === "string" ? toBytes(content) : content.slice();
    const ref = makeRef(bytes, typeof content === "string", info, "memory");
    const existing = this.#items.get(ref.id);
    if (existing) return Promise.resolve(existing.ref);
    const cost = bytes.byteLength + ENTRY_OVERHEAD_BYTES;
    while (this.#items.size > 0 && this.#held.bytes + cost > this.#maxBytes) this[DROP_OLDEST]();
    this.#pool.makeRoom(cost);
    this.#items.set(ref.id, { ref, bytes, order: ++artifactOrder });
    this.#held.bytes += cost;
    this.#pool.count(cost);
    return Promise.resolve(ref);
  }

  /** @internal The order of the oldest artifact held, if any. */
  [OLDEST](): number | undefined {
    for (const item of this.#items.values()) return item.order;
    return undefined;
  }

  /** @internal Drops the oldest artifact held. */
  [DROP_OLDEST](): void {
    for (const [id, item] of this.#items) {
      this.#items.delete(id);
      const cost = item.bytes.byteLength + ENTRY_OVERHEAD_BYTES;
      this.#held.bytes -= cost;
      this.#pool.count(-cost);
      return;
    }
  }

  /** The bytes of an artifact; undefined when unknown or dropped. */
  get(id: string): Promise<Uint8Array | undefined> {
    hexOf(id);
    return Promise.resolve(this.#items.get(id)?.bytes.slice());
  }

  /** The reference of a stored artifact. */
  ref(id: string): ArtifactRef | undefined {
    return this.#items.get(id)?.ref;
  }

  /** Every stored artifact's reference. */
  list(): ArtifactRef[] {
    return [...this.#items.values()].map((item) => item.ref);
  }
}

/**
 * Replaces the file at `realPath` (a real path) with `bytes` atomically:
 * readers see the old content or the new, never part of it.
 * `@toolfence/policy`'s `atomicWrite` is one that no racing symlink swap can
 * redirect.
 */
export type AtomicFileWriter = (realPath: string, bytes: Uint8Array) => Promise<void>;

/**
 * Keeps artifacts as files named by their hash in a folder, written atomically
 * by the writer it is given and verified by hash when read back. Requires
 * `--allow-read` and `--allow-write` for the folder.
 *
 * @example
 * ```ts
 * import { FileArtifactStore } from "@toolfence/core";
 * import { writeFile } from "node:fs/promises";
 * const dir = await Deno.makeTempDir();
 * // A session's store writes through an atomic writer; a plain one does for the example.
 * const store = new FileArtifactStore(dir, (file, bytes) => writeFile(file, bytes));
 * const ref = await store.put(new Uint8Array([1, 2, 3]));
 * console.log((await store.get(ref.id))?.length); // 3
 * ```
 */
export class FileArtifactStore implements ArtifactStore {
  /** The folder holding the artifacts. */
  readonly dir: string;
  #refs = new Map<string, ArtifactRef>();
  #realDir?: Promise<string>;
  readonly #write: AtomicFileWriter;

  /** Creates a store in `dir` (created on first write) that writes each artifact with `write`. */
  constructor(dir: string, write: AtomicFileWriter) {
    this.dir = dir;
    this.#write = write;
  }

  /** Stores content. */
  async put(content: Uint8Array | string, info: ArtifactInfo = {}): Promise<ArtifactRef> {
    const bytes = toBytes(content);
    const ref = makeRef(bytes, typeof content === "string", info, "file");
    const existing = this.#refs.get(ref.id);
    if (existing) return existing;
    // The writer is given a real path (a confined one refuses a folder swapped for a symlink).
    this.#realDir ??= mkdir(this.dir, { recursive: true }).then(() => realpath(this.dir));
    await this.#write(join(await this.#realDir, ref.sha256), bytes);
    this.#refs.set(ref.id, ref);
    return ref;
  }

  /** The bytes of an artifact; throws when the file no longer matches its hash. */
  async get(id: string): Promise<Uint8Array | undefined> {
    const hex = hexOf(id);
    if (!this.#refs.has(id)) return undefined;
    const bytes = new Uint8Array(await readFile(join(this.dir, hex)));
    if (sha256Hex(bytes) !== hex) {
      throw new ToolError(`Artifact ${id} is corrupted on disk (its content no longer matches its hash)`, {
        code: "artifact_corrupted",
        recoverable: false,
      });
    }
    return bytes;
  }

  /** The reference of a stored artifact. */
  ref(id: string): ArtifactRef | undefined {
    return this.#refs.get(id);
  }

  /** Every stored artifact's reference. */
  list(): ArtifactRef[] {
    return [...this.#refs.values()];
  }
}

/** One window of a text artifact. */
export interface ArtifactWindow {
  /** The artifact's id. */
  id: string;
  /** The characters in the window. */
  content: string;
  /** Zero-based character offset of the window. */
  offset: number;
  /** Length of the whole text, in characters. */
  totalChars: number;
  /** Where the next window starts; absent at the end. */
  nextOffset?: number;
}

/**
 * Reads `limit` characters of a text artifact from `offset`, for paging through
 * output that was cut. `id` may also be the artifact's MCP URI
 * (`artifact://sha256/<hex>`). Unknown ids and binary artifacts are clear errors.
 *
 * @example
 * ```ts
 * import { MemoryArtifactStore, readArtifactWindow } from "@toolfence/core";
 * const store = new MemoryArtifactStore();
 * const { id } = await store.put("abcdef");
 * console.log((await readArtifactWindow(store, id, { offset: 2, limit: 2 })).content); // "cd"
 * ```
 */
export async function readArtifactWindow(
  store: ArtifactStore,
  id: string,
  window: { offset?: number; limit?: number } = {},
): Promise<ArtifactWindow> {
  id = artifactIdOf(id);
  const offset = window.offset ?? 0;
  const limit = window.limit ?? 20_000;
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(limit) || limit <= 0) {
    throw new ToolError("offset must be a non-negative integer and limit a positive integer", {
      code: "invalid_window",
      kind: "semantic",
    });
  }
  const ref = store.ref(id);
  const bytes = await store.get(id);
  if (!ref || !bytes) {
    throw new ToolError(`No artifact ${id} in this session`, {
      code: "unknown_artifact",
      kind: "semantic",
      recoveryHint: "Use an artifact id from an earlier result of this session. A session keeps a bounded " +
        "amount of artifacts, the oldest going first: run the command again for output that is gone.",
    });
  }
  if (ref.encoding !== "utf-8") {
    throw new ToolError(
      `Artifact ${id} is binary (${ref.mediaType}, ${ref.byteLength} bytes) and cannot be read as text`,
      {
        code: "binary_artifact",
        kind: "semantic",
      },
    );
  }
  const text = new TextDecoder().decode(bytes);
  const end = Math.min(text.length, offset + limit);
  return {
    id,
    content: text.slice(offset, end),
    offset,
    totalChars: text.length,
    ...(end < text.length ? { nextOffset: end } : {}),
  };
}
