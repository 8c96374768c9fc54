// Large content over the real stdio server, with the default 64 MiB limit:
// write_file of 20 MB and 50 MB and an edit_file whose old and new texts are
// 10 MB each succeed and change exactly what they say, a message over the
// limit is answered with its id and the server goes on, and the server's
// peak memory stays a small multiple of the content (printed, for
// BENCHMARKS.md).

import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { callOutput, type RawServer, startRawServer } from "./_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const MB = 1_000_000;
let workspace: string;
let server: RawServer;
let baseline = 0;

describe("main.ts serve: large messages", { skip: DENO_PROCESS_ONLY }, () => {
  // Each test gets its own server, so that its peak memory is its own.
  beforeEach(async () => {
    // --auto-confirm: edit_file of a file the session did not write asks first, and this client cannot answer.
    server = await startRawServer(workspace, { groups: "fs,patch", args: ["--auto-confirm"] });
    baseline = server.peakRss();
  });
  afterEach(async () => {
    assert.equal(await server.close(), 0, server.stderr());
    assert.deepEqual(server.junk, []);
  });
  before(async () => {
    workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-large-")));
    await fsp.writeFile(path.join(workspace, "hello.txt"), "hello\n");
  });
  after(async () => {
    await fsp.rm(workspace, { recursive: true, force: true });
  });

  function sha256(data: string | Uint8Array): string {
    return createHash("sha256").update(data).digest("hex");
  }

  // Text with every line different, so that nothing compresses into a shortcut.
  function content(bytes: number, seed: string): string {
    const line = (i: number) => `${seed} line ${i} ${"lorem ipsum dolor sit amet ".repeat(2)}\n`;
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < bytes; i++) {
      const l = line(i);
      lines.push(l);
      size += l.length;
    }
    return lines.join("").slice(0, bytes);
  }

  function report(what: string, contentBytes: number): void {
    const peak = server.peakRss();
    console.log(
      `${what}: content ${(contentBytes / MB).toFixed(0)} MB, server peak RSS ${(peak / MB).toFixed(0)} MB ` +
        `(${(peak / contentBytes).toFixed(1)}× the content; ${((peak - baseline) / contentBytes).toFixed(1)}× above ` +
        `the idle ${(baseline / MB).toFixed(0)} MB)`,
    );
  }

  describe("large content over MCP, up to the message limit", () => {
    for (const size of [20 * MB, 50 * MB]) {
      test(
        `write_file with ${size / MB} MB of content succeeds and writes exactly it`,
        { timeout: 60_000 },
        async () => {
          const text = content(size, `w${size}`);
          const reply = await server.request("tools/call", {
            name: "write_file",
            arguments: { path: `big-${size}.txt`, content: text },
          }, 120_000);
          assert.equal(reply.result?.isError, undefined, JSON.stringify(callOutput(reply)).slice(0, 500));
          const written = await fsp.readFile(path.join(workspace, `big-${size}.txt`));
          assert.equal(written.length, size);
          assert.equal(sha256(written), sha256(text));
          report(`write_file ${size / MB} MB`, size);
          assert.deepEqual((await server.request("ping")).result, {});
        },
      );
    }

    test(
      "edit_file replacing 10 MB with another 10 MB succeeds and changes exactly that",
      { timeout: 60_000 },
      async () => {
        const head = content(5 * MB, "head");
        const old = content(10 * MB, "old");
        const replacement = content(10 * MB, "new");
        await fsp.writeFile(path.join(workspace, "edit.txt"), head + old);
        const reply = await server.request("tools/call", {
          name: "edit_file",
          arguments: { path: "edit.txt", old_text: old, new_text: replacement },
        }, 120_000);
        assert.equal(reply.result?.isError, undefined, JSON.stringify(callOutput(reply)).slice(0, 500));
        const after = await fsp.readFile(path.join(workspace, "edit.txt"), "utf8");
        assert.equal(after.length, head.length + replacement.length);
        assert.equal(sha256(after), sha256(head + replacement));
        report("edit_file 10 MB → 10 MB in a 15 MB file", 20 * MB);
      },
    );

    test("a message over 64 MiB is answered with its id and the server goes on", { timeout: 60_000 }, async () => {
      const text = "y".repeat(70 * 1024 * 1024);
      const reply = await (async () => {
        await server.write(
          `{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"write_file",` +
            `"arguments":{"path":"huge.txt","content":"${text}"}}}\n`,
        );
        return await server.reply("huge", 120_000);
      })();
      assert.equal(reply.error?.code, -32600);
      assert.match(reply.error!.message, /above the limit of 64 MiB/);
      await assert.rejects(fsp.stat(path.join(workspace, "huge.txt")));
      const read = await server.request("tools/call", { name: "read_file", arguments: { path: "hello.txt" } });
      assert.match(JSON.stringify(callOutput(read)), /hello/);
      report("a refused 70 MiB message", 70 * 1024 * 1024);
    });
  });
});
