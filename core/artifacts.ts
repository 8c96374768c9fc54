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
import type { ArtifactRef } from "./result.ts";

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

function makeRef(bytes: Uint8Array, isText: boolean, info: ArtifactInfo): ArtifactRef {
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

/**
 * Keeps artifacts in memory for the life of the session.
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
  #items = new Map<string, { ref: ArtifactRef; bytes: Uint8Array }>();

  /** Stores content. */
  put(content: Uint8Array | string, info: ArtifactInfo = {}): Promise<ArtifactRef> {
    const bytes = toBytes(content).slice();
    const ref = makeRef(bytes, typeof content === "string", info);
    if (!this.#items.has(ref.id)) this.#items.set(ref.id, { ref, bytes });
    return Promise.resolve(this.#items.get(ref.id)!.ref);
  }

  /** The bytes of an artifact. */
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
 * import { atomicWrite } from "@toolfence/policy";
 * const dir = await Deno.makeTempDir();
 * const store = new FileArtifactStore(dir, atomicWrite);
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
    const ref = makeRef(bytes, typeof content === "string", info);
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
 * output that was cut. Unknown ids and binary artifacts are clear errors.
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
      recoveryHint: "Use an artifact id from an earlier result of this session.",
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
