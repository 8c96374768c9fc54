// Reading a finished command's output back: the whole stream when it is within the output limit, never more
// than the limit when the command appended to its capture file itself (the session temp dir is in its view); big
// reads of all the process's commands share one byte budget.

import { test } from "node:test";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import fs from "node:fs";
import { join } from "node:path";
import { MemoryArtifactStore } from "../../../core/artifacts.ts";
import { OUTPUT_READ_BUDGET_BYTES, type OutputFile, readStreamForResult } from "../../../tools/_shared/cmd_output.ts";
import type { ArtifactInfo } from "../../../core/artifacts.ts";
import type { ArtifactRef } from "../../../core/result.ts";

// The file at `path`, opened as the process door opens a command's output (here by its path: nothing races it).
const outputFile = (path: string): OutputFile => ({ path, open: () => fs.openSync(path, "r") });

test("a stream within the limit is read whole; one past it, only up to the limit", { timeout: 60_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-cmd-output-"));
  try {
    const artifacts = new MemoryArtifactStore();
    const small = join(dir, "small.stdout");
    await writeFile(small, "hello\n");
    assert.deepEqual(await readStreamForResult(outputFile(small), 100, artifacts, "s", 1 << 20), {
      text: "hello\n",
      bytes: 6,
      truncated: false,
    });
    // 3 MB written past a 1 MiB limit, over the size read at once and under it.
    for (const size of [3_000_000, 900_000]) {
      const big = join(dir, `big-${size}.stdout`);
      await writeFile(big, "a".repeat(size));
      const limit = size > 1 << 20 ? 1 << 20 : 500_000;
      const read = await readStreamForResult(outputFile(big), 1000, artifacts, "s", limit);
      assert.equal(read.bytes, size);
      assert.equal(read.truncated, true);
      const id = /sha256:[0-9a-f]{64}/.exec(read.text)?.[0];
      assert.ok(id, read.text.slice(0, 300));
      assert.equal((await artifacts.get(id!))!.byteLength, limit, "the stored text is the limit's worth");
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// The real store, watched: how many texts of big reads are being stored at once, at most (each put takes a while, as
// the store's encoding and hashing of a big text do).
class WatchedStore extends MemoryArtifactStore {
  inFlight = 0;
  most = 0;
  override async put(content: Uint8Array | string, info?: ArtifactInfo): Promise<ArtifactRef> {
    if (content.length < 1 << 20) return super.put(content, info);
    this.most = Math.max(this.most, ++this.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return await super.put(content, info);
    } finally {
      this.inFlight--;
    }
  }
}

test("big reads share the process's byte budget: past it, one waits for the other", { timeout: 60_000 }, async () => {
  // Each read costs several times its bytes (its text, the text's UTF-8 for the store, the store's copy). Before,
  // every command of every session read at once: 3 commands of 300 MB took the server to 3.1 GB (1.39 GB for one).
  const dir = await mkdtemp(join(tmpdir(), "toolfence-cmd-output-"));
  try {
    const store = new WatchedStore({ maxBytes: 4 * OUTPUT_READ_BUDGET_BYTES });
    // Each just over half the budget: two never fit at once. A small one besides never waits.
    const size = OUTPUT_READ_BUDGET_BYTES / 2 + 1024;
    const files = await Promise.all([0, 1, 2].map(async (i) => {
      const file = join(dir, `big-${i}.stdout`);
      await writeFile(file, Buffer.alloc(size, 97 + i));
      return file;
    }));
    const reads = files.map((file) => readStreamForResult(outputFile(file), 1000, store, "s", size));
    const small = join(dir, "small.stdout");
    await writeFile(small, "b".repeat(5000));
    const smallRead = await readStreamForResult(outputFile(small), 1000, store, "s", size);
    assert.equal(smallRead.truncated, true);
    for (const read of await Promise.all(reads)) {
      assert.equal(read.bytes, size);
      assert.equal(read.truncated, true);
    }
    assert.equal(store.list().length, 4, "each read is stored whole");
    assert.equal(store.most, 1, "the big reads were stored one after another");
    // A read past the whole budget takes all of it, and runs (alone).
    const huge = join(dir, "huge.stdout");
    await writeFile(huge, Buffer.alloc(OUTPUT_READ_BUDGET_BYTES + 1024, 120));
    const read = await readStreamForResult(outputFile(huge), 1000, store, "s", OUTPUT_READ_BUDGET_BYTES + 1024);
    assert.equal(read.bytes, OUTPUT_READ_BUDGET_BYTES + 1024);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
