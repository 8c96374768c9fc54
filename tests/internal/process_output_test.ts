// captureOutput: a process's two pipes copied into two files within a byte limit, and the ready marker a sandbox's
// first process writes to stderr taken out wherever the chunks of the pipe cut it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { captureOutput } from "../../internal/process_output.ts";

const MARKER = "\0toolfence:sandbox-ready\0";
let dir: string;

before(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-process-output-"));
});

after(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

// Copies the chunks given (strings) through captureOutput; what reached the files, whether the limit was hit, and
// the ready outcome.
async function captured(
  stdout: string[],
  stderr: string[],
  options: { limit?: number; marker?: string } = {},
) {
  const name = path.join(dir, randomUUID());
  const files = { stdout: { fd: fs.openSync(`${name}.out`, "w") }, stderr: { fd: fs.openSync(`${name}.err`, "w") } };
  let limited = false;
  const streams = {
    stdout: Readable.from(stdout.map((text) => Buffer.from(text))),
    stderr: Readable.from(stderr.map((text) => Buffer.from(text))),
  };
  const output = captureOutput(streams, files, options.limit ?? 1 << 20, () => limited = true, options.marker);
  await output.finished(Promise.resolve());
  const ready = await output.ready;
  fs.closeSync(files.stdout.fd);
  fs.closeSync(files.stderr.fd);
  return {
    stdout: await fsp.readFile(`${name}.out`, "utf8"),
    stderr: await fsp.readFile(`${name}.err`, "utf8"),
    limited,
    kept: output.kept,
    ready,
  };
}

describe("captureOutput", () => {
  test("both pipes reach their files; past the limit the rest is dropped and the limit called once", {
    timeout: 60_000,
  }, async () => {
    const all = await captured(["one ", "two"], ["err"]);
    assert.equal(all.stdout, "one two");
    assert.equal(all.stderr, "err");
    assert.equal(all.limited, false);
    assert.deepEqual(all.ready, { ready: true, before: "" }, "without a marker it is ready at once");
    const cut = await captured(["0123456789", "abcdef"], [], { limit: 12 });
    assert.equal(cut.stdout, "0123456789ab");
    assert.equal(cut.limited, true);
    assert.deepEqual(cut.kept, { stdout: 12, stderr: 0 });
  });

  test(
    "the marker is taken out of stderr wherever the chunks cut it, and nothing else is",
    { timeout: 60_000 },
    async () => {
      const text = `bwrap: warning\n${MARKER}after\n${MARKER}`;
      for (let cuts = 0; cuts < 200; cuts++) {
        // Random cuts of the text into chunks, some empty.
        const chunks: string[] = [];
        let at = 0;
        while (at < text.length) {
          const size = Math.floor(Math.random() * 6);
          chunks.push(text.slice(at, at + size));
          at += size;
        }
        const out = await captured(["x"], chunks, { marker: MARKER });
        assert.deepEqual(out.ready, { ready: true, before: "bwrap: warning\n" }, JSON.stringify(chunks));
        // Only the first is the sandbox's: a later one is the command's own output.
        assert.equal(out.stderr, `bwrap: warning\nafter\n${MARKER}`, JSON.stringify(chunks));
        assert.equal(out.kept.stderr, Buffer.byteLength(out.stderr));
      }
    },
  );

  test(
    "a stderr that ends without the marker is not ready, and keeps all it brought",
    { timeout: 60_000 },
    async () => {
      const failed = await captured([], ["bwrap: Can't mkdir /etc/x", ": Read-only file system\n"], { marker: MARKER });
      assert.deepEqual(failed.ready, { ready: false, before: "bwrap: Can't mkdir /etc/x: Read-only file system\n" });
      assert.equal(failed.stderr, "bwrap: Can't mkdir /etc/x: Read-only file system\n");
      const empty = await captured(["out"], [], { marker: MARKER });
      assert.deepEqual(empty.ready, { ready: false, before: "" });
      assert.equal(empty.stdout, "out");
    },
  );

  test("past 64 KiB without the marker it is no longer awaited, and the output within the limit is kept", {
    timeout: 60_000,
  }, async () => {
    const big = "e".repeat(70 * 1024);
    const out = await captured([], [big, MARKER, "tail"], { marker: MARKER, limit: 80 * 1024 });
    assert.equal(out.ready.ready, false);
    assert.equal(out.stderr, (big + MARKER + "tail").slice(0, 80 * 1024));
  });
});
