// A whole-file read (edit_file, apply_patch, browser_upload) reads the bytes the file had when it was opened, the
// size its caller checked against its limit, and no more: a file another process grows meanwhile (a background job
// of the session, with a sparse truncate) is refused as changed. Before, the read went on to the end of the file:
// edit_file read 17 MB of a file whose stat said 12 bytes, past its own 64 MiB check by as much as the writer liked.

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../../../core/errors.ts";
import { Session } from "../../../policy/session.ts";
import { openRegularFile } from "../../../tools/_shared/fs_open.ts";
import { tempFolder } from "../fs/_helpers.ts";

test("a file grown between its open and its whole read is refused; one as opened is read whole", {
  timeout: 60_000,
}, async () => {
  const dir = await tempFolder();
  const session = new Session({ workspace: dir });
  try {
    const file = path.join(dir, "f.txt");
    const files = session.policy.files;
    // Sizes around the read's buffers (16 KiB at least, 1 MiB at most), grown by a byte and by a sparse GiB.
    for (const size of [0, 12, 16 * 1024 - 1, 16 * 1024, (1 << 20) + 5]) {
      for (const growth of [1, 1 << 30]) {
        await fsp.writeFile(file, "x".repeat(size));
        const opened = await openRegularFile(files, await files.resolve(file), "f.txt", "");
        try {
          assert.equal(opened.stat.size, size);
          fs.truncateSync(file, size + growth);
          await assert.rejects(opened.handle.readFile(), (error: unknown) => {
            assert.ok(error instanceof ToolError, String(error));
            assert.equal(error.code, "hash_conflict");
            assert.match(error.message, new RegExp(`f\\.txt grew while it was read \\(it had ${size} bytes`));
            return true;
          }, `${size} + ${growth}`);
        } finally {
          await opened.handle.close();
        }
        await fsp.writeFile(file, "y".repeat(size));
        const same = await openRegularFile(files, await files.resolve(file), "f.txt", "");
        try {
          assert.equal((await same.handle.readFile()).byteLength, size);
        } finally {
          await same.handle.close();
        }
      }
    }
  } finally {
    await session.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
});
