// Whole-file reads size their buffer by the file (tools/_shared/fs_open.ts readBufferFor, and the one buffer of the
// synchronous snapshot reads in internal/file_state.ts): on either side of each size where the number of reads
// changes, the hashes and the bytes must still be the whole file's.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { fsTools } from "../../../tools/fs/mod.ts";
import { patchTools } from "../../../tools/patch/mod.ts";
import { READ_CHUNK, readBufferFor } from "../../../tools/_shared/fs_open.ts";
import { type Layout, makeLayout, ok } from "./_helpers.ts";

const SMALLEST = 16 << 10;
const SIZES = [
  0,
  1,
  SMALLEST - 2,
  SMALLEST - 1,
  SMALLEST,
  READ_CHUNK - 1,
  READ_CHUNK,
  READ_CHUNK + 1,
  3 * READ_CHUNK + 7,
];

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

// Text of exactly `size` bytes that ends in a marker an edit can replace (when there is room for it).
function textOf(size: number, seed: string): string {
  const marker = "END\n";
  if (size < marker.length) return seed[0].repeat(size);
  const line = `${seed} ${"x".repeat(90)}\n`;
  const body = line.repeat(Math.ceil(size / line.length)).slice(0, size - marker.length);
  return body + marker;
}

let layout: Layout;
before(async () => {
  layout = await makeLayout([...fsTools(), ...patchTools()]);
});
after(() => layout.cleanup());

describe("whole-file reads on either side of their buffer sizes", () => {
  test("readBufferFor: the size and one byte more, within its bounds", { timeout: 60_000 }, () => {
    assert.equal(readBufferFor(0).length, SMALLEST);
    assert.equal(readBufferFor(SMALLEST - 1).length, SMALLEST);
    assert.equal(readBufferFor(SMALLEST).length, SMALLEST + 1);
    assert.equal(readBufferFor(READ_CHUNK - 1).length, READ_CHUNK);
    assert.equal(readBufferFor(READ_CHUNK).length, READ_CHUNK);
    assert.equal(readBufferFor(10 * READ_CHUNK).length, READ_CHUNK);
  });

  for (const size of SIZES) {
    test(`${size} bytes: file_info's hash, write_file's expected hash, edit_file's bytes`, {
      timeout: 60_000,
    }, async () => {
      const name = `sized-${size}.txt`;
      const text = textOf(size, `s${size}`);
      assert.equal(Buffer.byteLength(text), size);
      await fsp.writeFile(path.join(layout.workdir, name), text);

      assert.equal(ok(await layout.call("file_info", { path: name })).sha256, sha256(text));
      // The write goes ahead only when the file's hash, read whole, is the one given.
      ok(await layout.call("write_file", { path: name, content: text, expected_sha256: sha256(text) }));
      const stale = await layout.call("write_file", { path: name, content: "no", expected_sha256: sha256("other") });
      assert.equal(stale.errorCode, "hash_conflict");

      if (size < 4) return;
      // edit_file reads the whole file, and its change report hashes it before and after (the snapshot's reads).
      const edited = await layout.call("edit_file", { path: name, old_text: "END\n", new_text: "DONE\n" });
      assert.equal(edited.status, "success", JSON.stringify(edited.error));
      const expected = text.slice(0, -4) + "DONE\n";
      assert.equal(await fsp.readFile(path.join(layout.workdir, name), "utf8"), expected);
      const change = edited.filesystemChanges.find((c) => c.path === name);
      assert.ok(change, JSON.stringify(edited.filesystemChanges));
      assert.equal(change.before?.sha256, sha256(text));
      assert.equal(change.after?.sha256, sha256(expected));
    });
  }
});
