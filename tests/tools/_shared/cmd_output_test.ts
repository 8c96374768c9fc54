// Reading a finished command's output back: the whole stream when it is within the output limit, never more
// than the limit when the command appended to its capture file itself (the session temp dir is in its view).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import fs from "node:fs";
import { join } from "node:path";
import { MemoryArtifactStore } from "../../../core/artifacts.ts";
import { type OutputFile, readStreamForResult } from "../../../tools/_shared/cmd_output.ts";

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
