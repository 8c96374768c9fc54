// A before-image is kept only of the bytes the file had when it was looked at: a file that another process grows
// while it is read (a background job of the session, with a sparse truncate) has no image, and what was read past
// its size is not held. Before, every chunk to the end was kept until the end: a 16 MiB file grown to 1 GiB while
// read held up to 1 GiB in the server for one call.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileEntryConfined, IMAGE_FILE_LIMIT } from "../../internal/file_state.ts";
import { exited } from "../_exited.ts";

const MiB = 1024 * 1024;

test("a file grown while its before-image is read holds no more than its size in memory", {
  timeout: 120_000,
}, async () => {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-file-state-")));
  const file = path.join(dir, "f.bin");
  await fsp.writeFile(file, Buffer.alloc(IMAGE_FILE_LIMIT, 1));
  // The writer: the file back at its size for a moment, then a sparse 512 MiB for a while, over and over (each read of
  // it grown hashes it all: two such reads are enough, as each held all of it before).
  const racer = spawn("python3", [
    "-c",
    `import os, sys, time
f = sys.argv[1]
while os.path.exists(f):
    for i in range(50):
        os.truncate(f, ${IMAGE_FILE_LIMIT}); os.truncate(f, 512 << 20)
    time.sleep(0.2)`,
    file,
  ], { stdio: "ignore" });
  try {
    const before = process.resourceUsage().maxRSS * 1024;
    let grown = 0;
    for (let i = 0; i < 200 && grown < 2; i++) {
      const entry = fileEntryConfined(file, 64 * MiB);
      assert.ok(entry);
      if (entry.state.type === "file" && entry.state.size! > IMAGE_FILE_LIMIT) grown++;
      // An image is the file as it was looked at, never more.
      if (entry.image) assert.equal(entry.image.byteLength, IMAGE_FILE_LIMIT);
    }
    const peak = process.resourceUsage().maxRSS * 1024 - before;
    assert.ok(grown > 0, "the writer grew the file during some read");
    assert.ok(peak < 256 * MiB, `peak memory grew by ${Math.round(peak / MiB)} MiB`);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
    racer.kill("SIGKILL");
    await exited(racer);
  }
});
