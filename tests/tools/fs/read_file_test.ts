import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fsTools } from "../../../tools/fs/mod.ts";
import { SYNC_READ_BYTES } from "../../../tools/_shared/fs_open.ts";
import { FULL_SCAN_BYTES } from "../../../tools/fs/_read_window.ts";
import { RACY_MS } from "../../../core/settled_stat.ts";
import { type Layout, makeLayout, ok } from "./_helpers.ts";

let l: Layout;
const file = (name: string) => path.join(l.workdir, name);
const read = (args: Record<string, unknown>) => l.call("read_file", args);

before(async () => {
  l = await makeLayout(fsTools());
  await fsp.writeFile(file("ten.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
});
after(() => l.cleanup());

describe("read_file windows", () => {
  test("offset is zero-based: offset 2 limit 2 gives lines 3 and 4", { timeout: 60_000 }, async () => {
    const out = ok(await read({ path: "ten.txt", offset: 2, limit: 2 }));
    assert.equal(out.content, "line 3\nline 4");
    assert.equal(out.lines, 2);
    assert.equal(out.total_lines, 10);
    assert.equal(out.more, true);
    assert.equal(out.next_offset, 4);
    assert.match(String(out.note), /offset 4/);
  });

  test(
    "the default window is 2,000 lines and the whole of a short file, without a note",
    { timeout: 60_000 },
    async () => {
      const out = ok(await read({ path: "ten.txt" }));
      assert.equal(out.lines, 10);
      assert.equal(out.more, false);
      assert.equal(out.next_offset, null);
      assert.equal(out.note, undefined);
      assert.equal(out.path, file("ten.txt"), "paths in results are absolute");
      await fsp.writeFile(file("many.txt"), Array.from({ length: 2500 }, (_, i) => `${i}`).join("\n"));
      const many = ok(await read({ path: "many.txt" }));
      assert.equal(many.lines, 2000);
      assert.equal(many.next_offset, 2000);
      const rest = ok(await read({ path: "many.txt", offset: 2000 }));
      assert.equal(rest.lines, 500);
      assert.equal(String(rest.content).split("\n").at(-1), "2499");
    },
  );

  test("line numbers are the file's own, as N<TAB>text", { timeout: 60_000 }, async () => {
    const out = ok(await read({ path: "ten.txt", offset: 7, limit: 5, line_numbers: true }));
    assert.equal(out.content, "8\tline 8\n9\tline 9\n10\tline 10");
  });

  test("an empty file, and an offset at or past the end, give empty content", { timeout: 60_000 }, async () => {
    await fsp.writeFile(file("empty.txt"), "");
    const empty = ok(await read({ path: "empty.txt" }));
    assert.equal(empty.content, "");
    assert.equal(empty.total_lines, 0);
    for (const offset of [10, 11, 1000]) {
      const out = ok(await read({ path: "ten.txt", offset }));
      assert.equal(out.content, "");
      assert.equal(out.more, false);
      assert.match(String(out.note), /past the end: the file has 10 lines/);
    }
  });

  test("negative and non-integer windows are refused", { timeout: 60_000 }, async () => {
    for (
      const args of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: -3 }, { limit: 2.5 }, { offset: "2" }]
    ) {
      const result = await read({ path: "ten.txt", ...args });
      assert.equal(result.errorCode, "invalid_arguments", JSON.stringify(args));
    }
  });

  test("long lines are cut at 2,000 characters and say so", { timeout: 60_000 }, async () => {
    await fsp.writeFile(file("long.txt"), "é".repeat(3000) + "\nshort\n");
    const out = ok(await read({ path: "long.txt", line_numbers: true }));
    const [first, second] = String(out.content).split("\n");
    assert.ok(first.startsWith("1\t" + "é".repeat(2000) + " … [line cut: 6,000 bytes long"));
    assert.equal(second, "2\tshort");
    assert.deepEqual(out.cut_lines, [1]);
    assert.match(String(out.note), /1 long line was cut/);
  });

  test("a file without a final newline has its last line", { timeout: 60_000 }, async () => {
    await fsp.writeFile(file("nofinal.txt"), "a\nb");
    const out = ok(await read({ path: "nofinal.txt" }));
    assert.equal(out.content, "a\nb");
    assert.equal(out.total_lines, 2);
  });
});

describe("read_file metadata and encodings", () => {
  test("metadata: total lines, line ending, size and the file's sha256", { timeout: 60_000 }, async () => {
    const bytes = "one\r\ntwo\r\n";
    await fsp.writeFile(file("crlf.txt"), bytes);
    const out = ok(await read({ path: "crlf.txt" }));
    assert.equal(out.content, "one\ntwo");
    assert.equal(out.line_ending, "crlf");
    assert.equal(out.size, 10);
    assert.equal(out.sha256, createHash("sha256").update(bytes).digest("hex"));
    await fsp.writeFile(file("mixed.txt"), "a\r\nb\nc\n");
    assert.equal(ok(await read({ path: "mixed.txt" })).line_ending, "mixed");
    assert.equal(ok(await read({ path: "ten.txt" })).line_ending, "lf");
  });

  test("a UTF-8 byte-order mark is dropped from the text and reported", { timeout: 60_000 }, async () => {
    await fsp.writeFile(file("bom.txt"), Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from("first\nsecond\n")]));
    const out = ok(await read({ path: "bom.txt" }));
    assert.equal(out.content, "first\nsecond");
    assert.equal(out.bom, true);
    const bomOnly = path.join(l.workdir, "bomonly.txt");
    await fsp.writeFile(bomOnly, Buffer.from([0xef, 0xbb, 0xbf]));
    assert.equal(ok(await read({ path: "bomonly.txt" })).total_lines, 0);
  });

  test("other encodings are refused clearly", { timeout: 60_000 }, async () => {
    await fsp.writeFile(file("latin1.txt"), Buffer.from("caf\xe9\n", "latin1"));
    const latin = await read({ path: "latin1.txt" });
    assert.equal(latin.errorCode, "not_utf8");
    assert.match(latin.error!, /not valid UTF-8 \(byte 0xE9 on line 1\)/);
    await fsp.writeFile(file("utf16.txt"), Buffer.from("\ufeffhello", "utf16le"));
    const utf16 = await read({ path: "utf16.txt" });
    assert.equal(utf16.errorCode, "unsupported_encoding");
    assert.match(utf16.error!, /UTF-16LE/);
  });

  test("non-UTF-8 bytes inside a later window are refused too", { timeout: 60_000 }, async () => {
    // Past the 64 KiB checked up front.
    const lines = Array.from({ length: 20_000 }, (_, i) => `row ${i}`);
    const bytes = Buffer.concat([Buffer.from(lines.join("\n") + "\n"), Buffer.from([0xff, 0x0a])]);
    await fsp.writeFile(file("late.txt"), bytes);
    ok(await read({ path: "late.txt", limit: 10 }));
    const result = await read({ path: "late.txt", offset: 19_999 });
    assert.equal(result.errorCode, "not_utf8");
    assert.match(result.error!, /line 20001/);
  });

  test("binary files are refused with their size and type", { timeout: 60_000 }, async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    await fsp.writeFile(file("pic.png"), png);
    const image = await read({ path: "pic.png" });
    assert.equal(image.errorCode, "binary_file");
    assert.match(image.error!, /binary file \(PNG image, 12 bytes\)/);
    assert.match(image.recoveryHint!, /request_image/);
    await fsp.writeFile(file("blob.bin"), Buffer.from("abc\0def"));
    const blob = await read({ path: "blob.bin" });
    assert.equal(blob.errorCode, "binary_file");
    assert.match(blob.error!, /binary data, 7 bytes/);
  });

  test("directories are refused with a pointer to list_dir", { timeout: 60_000 }, async () => {
    const result = await read({ path: "sub" });
    assert.equal(result.errorCode, "is_directory");
    assert.match(result.recoveryHint!, /list_dir/);
  });

  test(
    "a FIFO is refused without opening it (no hang)",
    { timeout: 60_000, skip: process.platform === "win32" },
    async () => {
      execFileSync("mkfifo", [file("pipe")]);
      const started = performance.now();
      const result = await read({ path: "pipe" });
      assert.equal(result.errorCode, "not_regular_file");
      assert.match(result.error!, /FIFO/);
      assert.ok(performance.now() - started < 2000);
      const info = ok(await l.call("file_info", { path: "pipe" }));
      assert.equal(info.type, "fifo");
    },
  );
});

describe("read_file on either side of the synchronous-read size", () => {
  // Lines of 1 to 79 characters, some multi-byte, as many as fit in `bytes` (padded with one last line).
  const text = (bytes: number) => {
    let out = "";
    let length = 0;
    for (let i = 0; length < bytes - 200; i++) {
      const line = `${i} ${"é".repeat(i % 7)}${"x".repeat((i * 37) % 70)}\n`;
      out += line;
      length += Buffer.byteLength(line);
    }
    return out + "y".repeat(bytes - length - 1) + "\n";
  };

  test("a file read with synchronous calls and one read through the thread pool give the same windows", {
    timeout: 60_000,
  }, async () => {
    for (const size of [SYNC_READ_BYTES, SYNC_READ_BYTES + 1]) {
      const bytes = Buffer.from(text(size));
      assert.equal(bytes.length, size);
      await fsp.writeFile(file(`sized-${size}.txt`), bytes);
      const lines = bytes.toString("utf8").split("\n").slice(0, -1);
      const whole = ok(await read({ path: `sized-${size}.txt`, limit: 1_000_000 }));
      assert.equal(whole.size, size);
      assert.equal(whole.total_lines, lines.length);
      assert.equal(whole.sha256, createHash("sha256").update(bytes).digest("hex"));
      let content = String(whole.content);
      for (let next = whole.next_offset as number | null; next !== null;) {
        const more = ok(await read({ path: `sized-${size}.txt`, offset: next, limit: 1_000_000 }));
        content += "\n" + more.content;
        next = more.next_offset as number | null;
      }
      assert.equal(content, lines.join("\n"));
      const middle = ok(await read({ path: `sized-${size}.txt`, offset: 1000, limit: 3, line_numbers: true }));
      assert.equal(middle.content, lines.slice(1000, 1003).map((line, i) => `${1001 + i}\t${line}`).join("\n"));
    }
  });
});

describe("read_file read buffers", () => {
  test(
    "files read one after the other, in one session or two, each give their own bytes",
    { timeout: 60_000 },
    async () => {
      // Large enough for the pooled 1 MiB read buffers, which the next read of any file reuses.
      const a = ("A".repeat(99) + "\n").repeat(4000);
      const b = ("B".repeat(99) + "\n").repeat(3000);
      await fsp.writeFile(file("pool-a.txt"), a);
      await fsp.writeFile(file("pool-b.txt"), b);
      const other = await makeLayout(fsTools());
      const readsOwnBytes = async (call: typeof read, name: string, bytes: string) => {
        const out = ok(await call({ path: name, limit: 2 }));
        assert.equal(out.content, bytes.slice(0, 199), name);
        assert.equal(out.sha256, createHash("sha256").update(bytes).digest("hex"), name);
      };
      try {
        await fsp.writeFile(path.join(other.workdir, "pool-b.txt"), b);
        await readsOwnBytes(read, "pool-a.txt", a);
        await readsOwnBytes(read, "pool-b.txt", b);
        await readsOwnBytes((args) => other.call("read_file", args), "pool-b.txt", b);
      } finally {
        await other.cleanup();
      }
    },
  );

  test("a line longer than a 1 MiB chunk is cut with its own first characters", { timeout: 60_000 }, async () => {
    // The window reads it in two chunks into the same buffer; the start it keeps must survive the second.
    const long = "a".repeat(1 << 20) + "b".repeat(1 << 19);
    await fsp.writeFile(file("across.txt"), `${long}\nnext\n`);
    const out = ok(await read({ path: "across.txt", limit: 2 }));
    const [first, second] = String(out.content).split("\n");
    assert.equal(
      first,
      "a".repeat(2000) + ` … [line cut: ${long.length.toLocaleString("en-US")} bytes long; ` +
        "the first 2000 characters are shown]",
    );
    assert.equal(second, "next");
  });
});

// Bytes this process has read through read(2) so far (Linux).
function bytesRead(): number | undefined {
  try {
    return Number(/rchar: (\d+)/.exec(fs.readFileSync("/proc/self/io", "utf8"))![1]);
  } catch {
    return undefined;
  }
}

describe("read_file on a large file", () => {
  const skip = bytesRead() === undefined ? "needs /proc/self/io to count the bytes read" : false;
  test(
    "streams, skips sha256 above the full-scan size, and reuses the line index",
    { timeout: 60_000, skip },
    async () => {
      const line = "0123456789".repeat(9) + "\n"; // 91 bytes
      const count = Math.ceil((FULL_SCAN_BYTES + (8 << 20)) / line.length);
      const handle = await fsp.open(file("big.log"), "w");
      const block = line.repeat(10_000);
      for (let i = 0; i < count; i += 10_000) await handle.write(block);
      await handle.close();
      const total = Math.ceil(count / 10_000) * 10_000;
      // The index is kept once the file's stat names its content (isSettled): a file as old as a session's usually is.
      await new Promise((settle) => setTimeout(settle, RACY_MS));

      let start = bytesRead()!;
      const first = ok(await read({ path: "big.log", offset: total - 50, limit: 10, line_numbers: true }));
      const firstBytes = bytesRead()! - start;
      assert.equal(String(first.content).split("\n")[0], `${total - 49}\t${line.trimEnd()}`);
      assert.equal(first.sha256, null);
      assert.match(String(first.sha256_skipped), /larger than 64 MiB/);
      assert.ok(firstBytes > FULL_SCAN_BYTES, `the first read scans up to the window (${firstBytes} bytes)`);

      start = bytesRead()!;
      const second = ok(await read({ path: "big.log", offset: total - 100, limit: 10 }));
      const secondBytes = bytesRead()! - start;
      assert.equal(second.lines, 10);
      assert.ok(secondBytes < 4 << 20, `the second read starts at a checkpoint (${secondBytes} bytes)`);

      const end = ok(await read({ path: "big.log", offset: total - 5 }));
      assert.equal(end.total_lines, total, "the line count is known once a window reaches the end");
      assert.equal(end.more, false);
    },
  );
});

describe("read_file on a file that is being written", () => {
  test("reads it, and says it changed instead of giving a sha256 of a moving target", { timeout: 60_000 }, async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `entry ${i}`).join("\n") + "\n";
    await fsp.writeFile(file("growing.log"), lines);
    const writer = spawn("sh", ["-c", `while :; do echo appended >> '${file("growing.log")}'; done`]);
    try {
      // Wait until the writer is appending, then read until a read overlaps an append: on a loaded
      // machine the writer may be starved for a while, so the bound is time, not a count of reads.
      const deadline = Date.now() + 20_000;
      while ((await fsp.stat(file("growing.log"))).size === lines.length && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      let out: Record<string, unknown> | undefined;
      while (Date.now() < deadline && out?.sha256 !== null) out = ok(await read({ path: "growing.log", limit: 3 }));
      assert.equal(out!.content, "entry 0\nentry 1\nentry 2");
      assert.equal(out!.sha256, null);
      assert.match(String(out!.note), /changed while it was read/);
    } finally {
      writer.kill("SIGKILL");
    }
  });
});

describe("read_file on a file rewritten within one tick of the file clock", () => {
  test("gives the sha256 and lines of the bytes it read, not those of the version before", {
    timeout: 60_000,
  }, async () => {
    // A same-size rewrite within the clock's tick (and the millisecond Deno's stat gives) keeps size, inode and
    // times: a line index kept by that stat would be taken for the new bytes.
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
    let keptStat = 0;
    // 40 rounds, and on until one kept the stat (a loaded machine may let the millisecond pass between the writes).
    const deadline = Date.now() + 20_000;
    for (let round = 0; round < 40 || (keptStat === 0 && "Deno" in globalThis && Date.now() < deadline); round++) {
      const [first, second] = [`a${round % 10}\nb\n`, `c${round % 10}\nd\n`];
      fs.writeFileSync(file("tick.txt"), first);
      const was = fs.statSync(file("tick.txt"));
      assert.equal(ok(await read({ path: "tick.txt" })).sha256, sha256(first), `round ${round}`);
      fs.writeFileSync(file("tick.txt"), second);
      const now = fs.statSync(file("tick.txt"));
      if (now.ctimeMs === was.ctimeMs && now.ino === was.ino) keptStat++;
      const out = ok(await read({ path: "tick.txt" }));
      assert.deepEqual([out.content, out.sha256], [second.trimEnd(), sha256(second)], `round ${round}`);
    }
    // What the rounds try happened, where the runtime's stat gives whole milliseconds (Deno; Node's nanoseconds
    // tell the two writes apart on a kernel with fine-grained timestamps).
    if ("Deno" in globalThis) assert.ok(keptStat > 0, "no rewrite kept the file's stat in 20 s of rounds");
  });
});
