// read_file takes a window in the last chunk of a file in one pass (one UTF-8 check, one decode, one JSON length)
// instead of line by line. The one pass must give what the line-by-line reading gives, or leave the window to it:
// generated files of lines with CRLFs, lone CRs, U+FEFFs, NULs, broken UTF-8, characters of every width, JSON
// escapes and long lines, read at generated offsets, limits, budgets and with or without line numbers, give the
// same window (or the same error) both ways, through the real file door.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fsp from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { ToolError } from "../../../core/errors.ts";
import { openForReading } from "../../../tools/_shared/fs_open.ts";
import { newlineCounter } from "../../../tools/fs/_newlines.ts";
import { indexFile, readWindow, type WindowOptions } from "../../../tools/fs/_read_window.ts";
import { type Layout, makeLayout } from "./_helpers.ts";

let l: Layout;
before(async () => {
  l = await makeLayout([]);
});
after(() => l.cleanup());

const encoder = new TextEncoder();
// Pieces of a line's bytes: plain text, JSON escapes, characters of 2, 3 and 4 bytes, a U+FEFF, a CR, a tab and a
// control character; now and then a NUL or bytes that break UTF-8 (a lone continuation, a lead byte cut short, 0xFF).
const clean = fc.constantFrom(
  ...["a", "quick brown fox", '"', "\\", "é", "€", "😀", "\uFEFF", "\r", "\t", "\x01"].map((s) => encoder.encode(s)),
);
const broken = fc.constantFrom(
  new Uint8Array([0]),
  new Uint8Array([0x80]),
  new Uint8Array([0xc3]),
  new Uint8Array([0xff]),
  new Uint8Array([0xef, 0xbb]),
);
const piece = fc.oneof({ weight: 60, arbitrary: clean }, { weight: 1, arbitrary: broken });
// A line: a few pieces, or now and then one long enough to be cut (2,000 characters) or near that length.
const line = fc.oneof(
  { weight: 8, arbitrary: fc.array(piece, { maxLength: 6 }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1990, max: 2010 }).map((n) => [encoder.encode("x".repeat(n))]),
  },
);
const fileBytes = fc.tuple(
  fc.array(fc.tuple(line, fc.constantFrom("\n", "\r\n")), { maxLength: 12 }),
  fc.boolean(),
).map(([lines, endsWithNewline]) => {
  const parts: Uint8Array[] = [];
  lines.forEach(([pieces, ending], i) => {
    parts.push(...pieces);
    if (i < lines.length - 1 || endsWithNewline) parts.push(encoder.encode(ending));
  });
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return bytes;
});

// 80 KB of plain lines: more than read_file sniffs before reading a window.
const PADDING_LINES = 2_000;
const PADDING = Buffer.from("padding line of plain text, forty bytes\n".repeat(PADDING_LINES));

// The window of `options` (with the one pass or without), or the error it throws, as plain data to compare.
async function windowOf(name: string, options: Omit<WindowOptions, "signal">): Promise<unknown> {
  const target = await l.session.policy.files.resolve(name);
  const file = await openForReading(l.session.policy.files, target, name, "");
  const counter = newlineCounter(file.stat.size);
  try {
    const index = await indexFile(file, counter, name, target.path);
    const window = await readWindow(
      file,
      counter,
      index,
      { ...options, signal: new AbortController().signal },
      name,
      target.path,
    );
    return { window, totalLines: index.totalLines };
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return { code: error.code, message: error.message };
  } finally {
    counter.release();
    file.close();
  }
}

describe("read_file's one-pass window", () => {
  test("gives what the line-by-line reading gives, on generated files and windows", { timeout: 120_000 }, async () => {
    let windows = 0;
    let errors = 0;
    await fc.assert(
      fc.asyncProperty(
        fileBytes,
        fc.nat({ max: 8 }),
        fc.integer({ min: 1, max: 14 }),
        fc.boolean(),
        fc.oneof(fc.integer({ min: 1, max: 120 }), fc.constant(36_000)),
        fc.boolean(),
        async (bytes, offset, limit, lineNumbers, budgetChars, padded) => {
          const name = "generated.txt";
          // Padded, the generated lines lie past the start that read_file sniffs for binary data and UTF-8, so that
          // their NULs and broken bytes reach the window itself.
          await fsp.writeFile(path.join(l.workdir, name), padded ? Buffer.concat([PADDING, bytes]) : bytes);
          const options = { offset: offset + (padded ? PADDING_LINES : 0), limit, lineNumbers, budgetChars };
          const lineByLine = await windowOf(name, { ...options, onePass: false });
          assert.deepEqual(await windowOf(name, options), lineByLine, JSON.stringify({ bytes: [...bytes], options }));
          if (((lineByLine as { window?: { lines: number } }).window?.lines ?? 0) > 0) windows++;
          else if ("code" in (lineByLine as object)) errors++;
        },
      ),
      { numRuns: 1500, seed: 20261205 },
    );
    // The generated files must have given windows of lines and errors, or the comparison proved little.
    assert.ok(windows > 500 && errors > 100, `${windows} windows and ${errors} errors compared`);
  });
});
