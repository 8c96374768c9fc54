import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import {
  DEFAULT_MEMORY_ARTIFACT_BYTES,
  FileArtifactStore,
  MemoryArtifactPool,
  MemoryArtifactStore,
  parseArtifactRef,
  readArtifactWindow,
  SERVER_ARTIFACT_POOL,
} from "../../core/artifacts.ts";
import { ARTIFACT_REF_SCHEMA_VERSION } from "../../core/result.ts";
import { atomicWrite } from "../../internal/atomic_write.ts";
import { ToolError } from "../../core/errors.ts";

for (
  const [label, makeStore] of [
    ["memory", () => Promise.resolve({ store: new MemoryArtifactStore(), cleanup: () => Promise.resolve() })],
    ["file", async () => {
      const dir = await mkdtemp(join(tmpdir(), "toolfence-artifacts-"));
      return {
        store: new FileArtifactStore(join(dir, "store"), atomicWrite),
        cleanup: () => rm(dir, { recursive: true, force: true }),
      };
    }],
  ] as const
) {
  describe(`${label} artifact store`, () => {
    test("content-addressed refs with the right fields; same content, same id", { timeout: 60_000 }, async () => {
      const { store, cleanup } = await makeStore();
      try {
        const text = "héllo\n".repeat(10);
        const ref = await store.put(text, { summary: "greeting" });
        const hex = createHash("sha256").update(new TextEncoder().encode(text)).digest("hex");
        assert.deepEqual(ref, {
          id: `sha256:${hex}`,
          sha256: hex,
          mediaType: "text/plain; charset=utf-8",
          byteLength: new TextEncoder().encode(text).byteLength,
          encoding: "utf-8",
          sensitivity: "normal",
          summary: "greeting",
          required: false,
          resolverKey: label,
          provenanceDigest: null,
          schemaVersion: ARTIFACT_REF_SCHEMA_VERSION,
        });
        assert.equal((await store.put(text)).id, ref.id);
        assert.equal(store.list().length, 1);
        assert.equal(new TextDecoder().decode(await store.get(ref.id)), text);
        const bin = await store.put(new Uint8Array([0, 255, 1]));
        assert.equal(bin.encoding, "binary");
        assert.deepEqual([...(await store.get(bin.id))!], [0, 255, 1]);
      } finally {
        await cleanup();
      }
    });

    test("paging windows by character; errors for unknown, binary and bad windows", { timeout: 60_000 }, async () => {
      const { store, cleanup } = await makeStore();
      try {
        const { id } = await store.put("0123456789");
        assert.deepEqual(await readArtifactWindow(store, id, { offset: 3, limit: 4 }), {
          id,
          content: "3456",
          offset: 3,
          totalChars: 10,
          nextOffset: 7,
        });
        const last = await readArtifactWindow(store, id, { offset: 7, limit: 4 });
        assert.equal(last.content, "789");
        assert.equal(last.nextOffset, undefined);
        await assert.rejects(readArtifactWindow(store, `sha256:${"0".repeat(64)}`), /No artifact/);
        await assert.rejects(readArtifactWindow(store, "nope"), /Invalid artifact id/);
        await assert.rejects(readArtifactWindow(store, id, { offset: -1 }), (e) => e instanceof ToolError);
        const bin = await store.put(new Uint8Array([1]));
        await assert.rejects(readArtifactWindow(store, bin.id), /binary/);
      } finally {
        await cleanup();
      }
    });
  });
}

// Before: every artifact stayed for the life of the session, and a loop of commands printing 48 MiB each held
// 512 MiB in the server after 8 calls, and more with every call (no command limit counts the server's memory).
test("memory store: bounded, the oldest dropped first, never the newest; a dropped one is unknown", {
  timeout: 60_000,
}, async () => {
  const KiB = 1024;
  const store = new MemoryArtifactStore({ maxBytes: 64 * KiB });
  const refs = [];
  for (let i = 0; i < 10; i++) refs.push(await store.put(new Uint8Array(10 * KiB).fill(i)));
  assert.ok(store.heldBytes <= 64 * KiB, `held ${store.heldBytes}`);
  const kept = store.list().map((ref) => ref.id);
  assert.deepEqual(kept, refs.slice(refs.length - kept.length).map((ref) => ref.id), "the newest are kept");
  assert.ok(kept.length >= 5 && kept.length < 10, `kept ${kept.length}`);
  assert.equal(await store.get(refs[0].id), undefined);
  assert.equal(store.ref(refs[0].id), undefined);
  await assert.rejects(
    readArtifactWindow(store, refs[0].id),
    (e) => e instanceof ToolError && e.code === "unknown_artifact",
  );
  assert.equal((await store.get(refs[9].id))?.[0], 9);
  // One larger than the whole store is still kept, alone.
  const big = await store.put(new Uint8Array(100 * KiB).fill(7));
  assert.deepEqual(store.list().map((ref) => ref.id), [big.id]);
  assert.equal((await store.get(big.id))?.byteLength, 100 * KiB);
  // Tiny ones are bounded too: each counts for its reference as well.
  const tiny = new MemoryArtifactStore({ maxBytes: 64 * KiB });
  for (let i = 0; i < 1000; i++) await tiny.put(String(i));
  assert.ok(tiny.list().length < 100, `kept ${tiny.list().length} tiny artifacts`);
  assert.throws(() => new MemoryArtifactStore({ maxBytes: 0 }), TypeError);
});

test("memory store: by default at most DEFAULT_MEMORY_ARTIFACT_BYTES", { timeout: 120_000 }, async () => {
  const store = new MemoryArtifactStore();
  const part = new Uint8Array(Math.ceil(DEFAULT_MEMORY_ARTIFACT_BYTES / 2.5));
  const refs = [];
  for (let i = 0; i < 3; i++) refs.push(await store.put(part.fill(i)));
  assert.ok(store.heldBytes <= DEFAULT_MEMORY_ARTIFACT_BYTES, `held ${store.heldBytes}`);
  assert.equal(await store.get(refs[0].id), undefined);
  assert.equal((await store.get(refs[2].id))?.[0], 2);
});

// Before: each session's store was bounded alone (512 MiB), and the server's sessions together were not: an HTTP
// tenant may hold 32 sessions, 16 GiB of outputs (three sessions of three 200 MiB bash outputs each held 1.5 GB).
test("memory stores share a pool: past it, the store that holds the most gives up its oldest", {
  timeout: 60_000,
}, async () => {
  const KiB = 1024;
  const pool = new MemoryArtifactPool(100 * KiB);
  const sessions = [0, 1, 2].map(() => new MemoryArtifactStore({ maxBytes: 64 * KiB, pool }));
  const refs = [];
  for (let round = 0; round < 3; round++) {
    for (const [i, store] of sessions.entries()) {
      refs.push(await store.put(new Uint8Array(20 * KiB).fill(10 * i + round)));
    }
  }
  assert.ok(pool.heldBytes <= 100 * KiB, `the pool holds ${pool.heldBytes}`);
  assert.equal(pool.heldBytes, sessions.reduce((sum, store) => sum + store.heldBytes, 0));
  // Four of the nine (20 KiB and its overhead each) fit; each store keeps at least its newest.
  for (const store of sessions) assert.ok(store.list().length >= 1);
  assert.equal(sessions.reduce((sum, store) => sum + store.list().length, 0), 4);
  assert.equal((await sessions[2].get(refs[8].id))?.[0], 22);
  // One larger than the pool is still kept, alone in the pool.
  const big = await sessions[1].put(new Uint8Array(150 * KiB).fill(9));
  assert.deepEqual(sessions.flatMap((store) => store.list().map((ref) => ref.id)), [big.id]);
  assert.equal(pool.heldBytes, sessions[1].heldBytes);
  assert.throws(() => new MemoryArtifactPool(0), TypeError);
  // By default every store shares the server's pool.
  const before = SERVER_ARTIFACT_POOL.heldBytes;
  const shared = new MemoryArtifactStore();
  await shared.put(new Uint8Array(KiB));
  assert.equal(SERVER_ARTIFACT_POOL.heldBytes - before, shared.heldBytes);
});

test("a pool's busy store pushes out its own outputs, not a quiet store's older one", { timeout: 60_000 }, async () => {
  // One tenant's session storing output after output must not take the pool from another tenant's session that
  // stored one earlier: oldest-first across stores would drop the quiet one's first.
  const KiB = 1024;
  const pool = new MemoryArtifactPool(100 * KiB);
  const quiet = new MemoryArtifactStore({ pool });
  const busy = new MemoryArtifactStore({ pool });
  const kept = await quiet.put(new Uint8Array(10 * KiB).fill(1));
  for (let i = 0; i < 10; i++) await busy.put(new Uint8Array(20 * KiB).fill(2 + i));
  assert.equal((await quiet.get(kept.id))?.[0], 1, "the quiet store's artifact is kept");
  assert.ok(pool.heldBytes <= 100 * KiB, `the pool holds ${pool.heldBytes}`);
  assert.ok(busy.list().length >= 3, `the busy store keeps its newest (${busy.list().length})`);
});

test("a pool's stores of one owner count together: many small ones push out their own, not another's larger one", {
  timeout: 60_000,
}, async () => {
  // A tenant's 32 sessions each holding a little less than another tenant's one session took all of that one's
  // outputs when the pool weighed stores alone.
  const KiB = 1024;
  const pool = new MemoryArtifactPool(100 * KiB);
  const bob = new MemoryArtifactStore({ pool, owner: "bob" });
  const kept = await bob.put(new Uint8Array(30 * KiB).fill(1));
  const alice = [];
  for (let i = 0; i < 8; i++) {
    const store = new MemoryArtifactStore({ pool, owner: "alice" });
    alice.push(store);
    await store.put(new Uint8Array(25 * KiB).fill(2 + i));
  }
  assert.equal((await bob.get(kept.id))?.[0], 1, "bob's artifact is kept");
  assert.ok(pool.heldBytes <= 100 * KiB, `the pool holds ${pool.heldBytes}`);
  assert.equal(alice.at(-1)!.list().length, 1, "the one just stored is kept");
  assert.ok(alice.filter((store) => store.list().length === 0).length >= 5);
  // Stores without an owner are each their own: the largest one gives up first, as before.
  const lone = new MemoryArtifactStore({ pool });
  const big = await lone.put(new Uint8Array(40 * KiB).fill(9));
  await new MemoryArtifactStore({ pool }).put(new Uint8Array(35 * KiB).fill(8));
  assert.equal(await lone.get(big.id), undefined);
});

test("file store: written atomically by hash, verified on read", { timeout: 60_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-artifacts-"));
  try {
    const store = new FileArtifactStore(dir, atomicWrite);
    const ref = await store.put("original content");
    assert.deepEqual(await readdir(dir), [ref.sha256]);
    await writeFile(join(dir, ref.sha256), "tampered content");
    await assert.rejects(store.get(ref.id), /corrupted/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test(
  "file store: a folder given through a symlink works (writes go to its real path)",
  { timeout: 60_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-artifacts-"));
    try {
      const { symlink } = await import("node:fs/promises");
      await symlink(dir, `${dir}-link`);
      const store = new FileArtifactStore(`${dir}-link/store`, atomicWrite);
      const ref = await store.put("through a link");
      assert.equal(new TextDecoder().decode(await store.get(ref.id)), "through a link");
      assert.deepEqual(await readdir(join(dir, "store")), [ref.sha256]);
    } finally {
      await rm(`${dir}-link`, { force: true });
      await rm(dir, { recursive: true, force: true });
    }
  },
);

describe("ArtifactRef fields and parseArtifactRef", () => {
  const hex = "ab".repeat(32);
  const minimal = { artifact_id: `sha256:${hex}`, resolver_key: "memory", media_type: "text/plain", byte_length: 3 };

  test("stores fill resolverKey, provenanceDigest and schemaVersion", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-artifacts-"));
    try {
      const memory = await new MemoryArtifactStore().put("abc", { provenanceDigest: hex });
      assert.deepEqual([memory.resolverKey, memory.provenanceDigest, memory.schemaVersion], ["memory", hex, 1]);
      const file = await new FileArtifactStore(dir, atomicWrite).put("abc");
      assert.deepEqual([file.resolverKey, file.provenanceDigest, file.schemaVersion], ["file", null, 1]);
      // A stored ref reads back as itself.
      assert.deepEqual(parseArtifactRef(JSON.parse(JSON.stringify(file))), file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("reads the seed's snake_case form with its defaults", { timeout: 60_000 }, () => {
    assert.deepEqual(parseArtifactRef(minimal), {
      id: `sha256:${hex}`,
      sha256: hex,
      mediaType: "text/plain",
      byteLength: 3,
      encoding: "binary",
      sensitivity: "normal",
      summary: "",
      required: true,
      resolverKey: "memory",
      provenanceDigest: null,
      schemaVersion: ARTIFACT_REF_SCHEMA_VERSION,
    });
    const full = parseArtifactRef({
      ...minimal,
      sha256: hex,
      encoding: "utf-8",
      sensitivity: "internal",
      model_summary: "three bytes",
      required: false,
      provenance_digest: "cd".repeat(32),
      schema_version: "1",
    });
    assert.deepEqual(
      [full.encoding, full.sensitivity, full.summary, full.required, full.provenanceDigest, full.schemaVersion],
      ["utf-8", "normal", "three bytes", false, "cd".repeat(32), 1],
    );
    // The id may be given as sha256 alone.
    const { artifact_id: _id, ...bySha } = minimal;
    assert.equal(parseArtifactRef({ ...bySha, sha256: hex }).id, `sha256:${hex}`);
  });

  test("refuses every malformed field with invalid_artifact_ref, naming it", { timeout: 60_000 }, () => {
    const cases: [unknown, string][] = [
      [null, "(the value)"],
      [[minimal], "(the value)"],
      ["sha256:x", "(the value)"],
      [{ ...minimal, artifact_id: undefined }, "id"],
      [{ ...minimal, artifact_id: `sha256:${hex.toUpperCase()}` }, "id"],
      [{ ...minimal, artifact_id: `md5:${hex}` }, "id"],
      [{ ...minimal, artifact_id: `sha256:${hex}`, sha256: "cd".repeat(32) }, "sha256"],
      [{ ...minimal, sha256: 5 }, "sha256"],
      [{ ...minimal, byte_length: -1 }, "byteLength"],
      [{ ...minimal, byte_length: 1.5 }, "byteLength"],
      [{ ...minimal, byte_length: "3" }, "byteLength"],
      [{ ...minimal, media_type: "" }, "mediaType"],
      [{ ...minimal, media_type: undefined }, "mediaType"],
      [{ ...minimal, resolver_key: undefined }, "resolverKey"],
      [{ ...minimal, resolver_key: 7 }, "resolverKey"],
      [{ ...minimal, encoding: "utf8" }, "encoding"],
      [{ ...minimal, sensitivity: "secret" }, "sensitivity"],
      [{ ...minimal, required: "yes" }, "required"],
      [{ ...minimal, provenance_digest: "abc" }, "provenanceDigest"],
      [{ ...minimal, schema_version: 2 }, "schemaVersion"],
      [{ ...minimal, schema_version: "one" }, "schemaVersion"],
      [{ ...minimal, model_summary: 3 }, "summary"],
    ];
    for (const [value, field] of cases) {
      assert.throws(
        () => parseArtifactRef(value),
        (e: unknown) =>
          e instanceof ToolError && e.code === "invalid_artifact_ref" && e.details?.field === field &&
          e.message.includes(field),
        `${JSON.stringify(value)} should be refused for ${field}`,
      );
    }
  });
});
