// The streaming half of read_file: sniffing a file once per version, scanning
// small files whole (line count, sha256, checkpoints), and reading a window of
// lines with memory bounded by the window, never by the file.

import { createHash } from "node:crypto";
import { binaryFile, notUtf8 } from "../_shared/fs_errors.ts";
import { afterNthNewline, CHUNK_BYTES, type NewlineCounter } from "./_newlines.ts";
import { chunkStart, type LineIndex, recordChunk, stampOf, startingChunk } from "./_line_index.ts";
import type { ReadableFile } from "../_shared/fs_open.ts";
import { binaryKind, describeByteAt, detectBom, invalidUtf8At } from "../_shared/fs_sniff.ts";

/** Files up to this size are scanned whole on first read: exact line count and sha256. */
export const FULL_SCAN_BYTES = 64 << 20;

/** Lines longer than this many characters are cut. */
export const MAX_LINE_CHARS = 2000;

// Enough bytes for MAX_LINE_CHARS characters of any width.
const MAX_LINE_BYTES = MAX_LINE_CHARS * 4;

// The leading bytes checked for valid UTF-8 before any window is read.
const UTF8_SNIFF_BYTES = 64 << 10;

const decoder = new TextDecoder("utf-8");

// What a buffer holds of an open file: its bytes from `position` on. Keyed by
// the open file, not the buffer: counters (and so buffers) are reused by the
// next read, of any file in any session.
const held = new WeakMap<ReadableFile, { buffer: Uint8Array; position: number; length: number }>();

/**
 * Puts `length` bytes of the file from `position` at the start of the
 * counter's buffer, from the buffer itself when it already holds them (a
 * small file is read from disk once, though sniffing, scanning and the
 * window each look at it).
 */
async function load(
  file: ReadableFile,
  counter: NewlineCounter,
  length: number,
  position: number,
): Promise<number> {
  const buffer = counter.buffer;
  const h = held.get(file);
  if (h && h.buffer === buffer && position >= h.position && position + length <= h.position + h.length) {
    const shift = position - h.position;
    if (shift > 0) buffer.copyWithin(0, shift, h.length);
    held.set(file, { buffer, position, length: h.length - shift });
    return length;
  }
  const n = await file.read(buffer, length, position);
  held.set(file, { buffer, position, length: n });
  return n;
}

/**
 * Sniffs a file (byte-order mark, binary content, UTF-8 validity of its start)
 * and builds its index; files up to {@linkcode FULL_SCAN_BYTES} are scanned
 * whole. Throws `binary_file`, `unsupported_encoding` or `not_utf8`.
 */
export async function indexFile(
  file: ReadableFile,
  counter: NewlineCounter,
  shown: string,
  real: string,
): Promise<LineIndex> {
  const stat = file.stat;
  const buffer = counter.buffer;
  const headLength = await load(file, counter, Math.min(stat.size, CHUNK_BYTES), 0);
  const head = buffer.subarray(0, headLength);
  const bom = detectBom(head);
  if (bom && bom.encoding !== "UTF-8") throw notUtf8(shown, real, "byte-order mark", bom.encoding);
  const kind = binaryKind(head);
  if (kind) {
    const hint = kind.endsWith("image") ? "To look at an image, use request_image if you have it." : undefined;
    throw binaryFile(shown, real, stat.size, kind, hint);
  }
  const bomLength = bom?.length ?? 0;
  const checked = Math.min(headLength, UTF8_SNIFF_BYTES);
  const bad = invalidUtf8At(head, bomLength, checked, checked < stat.size);
  if (bad !== -1) throw notUtf8(shown, real, describeByteAt(head, bad));
  const index: LineIndex = {
    stamp: stampOf(stat),
    bomLength,
    lineEnding: lineEndingOf(head),
    newlinesBefore: [0],
  };
  if (stat.size <= FULL_SCAN_BYTES) await fullScan(file, stat.size, counter, index);
  return index;
}

function lineEndingOf(bytes: Uint8Array): LineIndex["lineEnding"] {
  let lf = 0;
  let crlf = 0;
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) {
    if (i > 0 && bytes[i - 1] === 13) crlf++;
    else lf++;
  }
  if (lf === 0 && crlf === 0) return "none";
  return crlf === 0 ? "lf" : lf === 0 ? "crlf" : "mixed";
}

async function fullScan(file: ReadableFile, size: number, counter: NewlineCounter, index: LineIndex) {
  const hash = createHash("sha256");
  const buffer = counter.buffer;
  let newlines = 0;
  let last = -1;
  for (let chunk = 0; chunkStart(chunk) < size; chunk++) {
    const n = await load(file, counter, Math.min(CHUNK_BYTES, size - chunkStart(chunk)), chunkStart(chunk));
    if (n === 0) break;
    hash.update(buffer.subarray(0, n));
    const c = counter.count(0, n);
    if (n === CHUNK_BYTES) recordChunk(index, chunk, c);
    newlines += c;
    last = buffer[n - 1];
  }
  const content = size - index.bomLength;
  index.totalLines = newlines + (content > 0 && last !== 10 ? 1 : 0);
  index.sha256 = hash.digest("hex");
}

/** Options of {@linkcode readWindow}. */
export interface WindowOptions {
  /** Zero-based first line. */
  offset: number;
  /** Most lines. */
  limit: number;
  /** Prefix each line with its 1-based number and a tab. */
  lineNumbers: boolean;
  /** Stop adding lines once the JSON-escaped content would exceed this many characters (at least one line is kept). */
  budgetChars: number;
  /** Checked between chunks. */
  signal: AbortSignal;
  /**
   * Whether a window in the last chunk may be taken in one pass (see wholeWindow); default true. False reads it
   * line by line, the reading the one pass must agree with (its test compares the two).
   */
  onePass?: boolean;
}

/** A window of lines. */
export interface Window {
  /** The lines, joined with `\n`. */
  content: string;
  /** How many lines the window holds. */
  lines: number;
  /** Whether any lines follow the window. */
  more: boolean;
  /** Whether the window stopped early because of the output budget. */
  budgetReached: boolean;
  /** 1-based numbers of the lines that were cut. */
  cutLines: number[];
}

/** Finds the byte offset where line `line` starts, or -1 when the file has fewer lines. */
async function lineStart(
  file: ReadableFile,
  size: number,
  counter: NewlineCounter,
  index: LineIndex,
  line: number,
  signal: AbortSignal,
): Promise<number> {
  if (line === 0) return index.bomLength < size ? index.bomLength : -1;
  if (index.totalLines !== undefined && line >= index.totalLines) return -1;
  const buffer = counter.buffer;
  let chunk = startingChunk(index, line);
  let need = line - index.newlinesBefore[chunk];
  while (chunkStart(chunk) < size) {
    signal.throwIfAborted();
    const n = await load(file, counter, Math.min(CHUNK_BYTES, size - chunkStart(chunk)), chunkStart(chunk));
    if (n === 0) break;
    const c = counter.count(0, n);
    if (n === CHUNK_BYTES) recordChunk(index, chunk, c);
    if (c >= need) {
      const start = chunkStart(chunk) + afterNthNewline(buffer, 0, n, need);
      return start < size ? start : -1;
    }
    need -= c;
    chunk++;
  }
  return -1;
}

/**
 * Reads the window `[offset, offset + limit)` of lines, starting from the
 * nearest checkpoint of `index` and holding at most one chunk plus the window
 * in memory. Throws `not_utf8` or `binary_file` when the window holds bytes
 * that are not UTF-8 text.
 */
export async function readWindow(
  file: ReadableFile,
  counter: NewlineCounter,
  index: LineIndex,
  options: WindowOptions,
  shown: string,
  real: string,
): Promise<Window> {
  const size = file.stat.size;
  const window: Window = { content: "", lines: 0, more: false, budgetReached: false, cutLines: [] };
  const start = await lineStart(file, size, counter, index, options.offset, options.signal);
  if (start === -1) {
    if (index.totalLines === undefined) index.totalLines = await countToEnd(file, size, counter, index);
    return window;
  }
  const buffer = counter.buffer;
  if (size - start <= CHUNK_BYTES && options.onePass !== false) {
    // The rest of the file fits one read: the window may be taken whole (see wholeWindow); when it cannot, the
    // loop below reads the same bytes again from the buffer, not from the file.
    options.signal.throwIfAborted();
    const n = await load(file, counter, size - start, start);
    const whole = n === size - start ? wholeWindow(buffer, n, options) : undefined;
    if (whole !== undefined) {
      if (!whole.more && index.totalLines === undefined) index.totalLines = options.offset + whole.lines;
      return whole;
    }
  }
  const texts: string[] = [];
  let used = 0;
  // The line being collected: its first bytes (up to MAX_LINE_BYTES), and its full length.
  let kept: Uint8Array[] = [];
  let keptBytes = 0;
  let lineBytes = 0;
  let lastByte = -1;
  let position = start;

  const finishLine = () => {
    const lineNo = options.offset + texts.length + 1;
    const bytes = concat(kept, keptBytes);
    let end = bytes.length;
    const whole = lineBytes === keptBytes;
    if (whole && lastByte === 13) end--; // CR of a CRLF ending
    if (!whole) end = charBoundary(bytes, end);
    const bad = invalidUtf8At(bytes, 0, end);
    if (bad !== -1) throw notUtf8(shown, real, describeByteAt(bytes, bad, lineNo));
    const nul = bytes.indexOf(0);
    if (nul !== -1 && nul < end) throw binaryFile(shown, real, size, `NUL bytes on line ${lineNo}`);
    let text = decoder.decode(end === bytes.length ? bytes : bytes.subarray(0, end));
    if (!whole || text.length > MAX_LINE_CHARS) {
      text = cutText(text) +
        ` … [line cut: ${
          lineBytes.toLocaleString("en-US")
        } bytes long; the first ${MAX_LINE_CHARS} characters are shown]`;
      window.cutLines.push(lineNo);
    }
    if (options.lineNumbers) text = `${lineNo}\t${text}`;
    const cost = JSON.stringify(text).length;
    if (texts.length > 0 && used + cost > options.budgetChars) {
      window.budgetReached = true;
      if (window.cutLines.at(-1) === lineNo) window.cutLines.pop();
      return false;
    }
    used += cost;
    texts.push(text);
    kept = [];
    keptBytes = 0;
    lineBytes = 0;
    return true;
  };

  let stoppedAt = -1; // byte offset of the first line not taken, when the loop stops early
  outer: while (position < size) {
    options.signal.throwIfAborted();
    const n = await load(file, counter, Math.min(CHUNK_BYTES, size - position), position);
    if (n === 0) break;
    let j = 0;
    while (j < n) {
      const nl = buffer.indexOf(10, j);
      const end = nl === -1 || nl >= n ? n : nl;
      if (end > j) {
        if (keptBytes < MAX_LINE_BYTES) {
          const take = Math.min(end - j, MAX_LINE_BYTES - keptBytes);
          kept.push(buffer.subarray(j, j + take));
          keptBytes += take;
        }
        lineBytes += end - j;
        lastByte = buffer[end - 1];
      }
      if (end === n) {
        // The line goes on in the next chunk, which is read into the same buffer: keep a copy of its start.
        const last = kept.length - 1;
        if (last >= 0 && kept[last].buffer === buffer.buffer) kept[last] = kept[last].slice();
        j = n;
        break;
      }
      const lineBegan = position + end - lineBytes;
      if (!finishLine()) {
        stoppedAt = lineBegan;
        break outer;
      }
      lastByte = -1;
      j = end + 1;
      if (texts.length >= options.limit) {
        stoppedAt = position + j;
        break outer;
      }
    }
    position += n;
  }
  if (stoppedAt === -1 && lineBytes > 0) {
    // The last line has no newline after it.
    const lineBegan = size - lineBytes;
    if (!finishLine()) stoppedAt = lineBegan;
  }
  window.content = texts.join("\n");
  window.lines = texts.length;
  window.more = stoppedAt !== -1 && stoppedAt < size;
  if (!window.more && index.totalLines === undefined) index.totalLines = options.offset + texts.length;
  return window;
}

/**
 * The window of `buffer[0, n)`, the rest of a file from the window's first
 * line, in one pass: one UTF-8 check, one decode and one JSON length for all
 * its lines instead of a TextDecoder call, a check and a JSON.stringify per
 * line (most of a small read's own time). Undefined wherever the line-by-line
 * reading could answer otherwise, which then answers: a line longer than
 * {@linkcode MAX_LINE_CHARS} bytes (it may need cutting), bytes that are not
 * UTF-8 or hold a NUL (its error names the line), a U+FEFF (the decode of
 * each line drops one at the line's start) or a window over the output budget.
 */
function wholeWindow(buffer: Uint8Array, n: number, options: WindowOptions): Window | undefined {
  let lines = 0;
  let end = 0; // where the window's text ends (before the newline of its last line)
  let next = 0; // where the line after the window starts
  while (next < n && lines < options.limit) {
    let newline = buffer.indexOf(10, next);
    if (newline === -1 || newline >= n) newline = n;
    if (newline - next > MAX_LINE_CHARS) return undefined;
    lines++;
    end = newline;
    next = newline === n ? n : newline + 1;
  }
  const bytes = buffer.subarray(0, end);
  if (invalidUtf8At(bytes, 0, end) !== -1 || bytes.includes(0)) return undefined;
  let text = decoder.decode(bytes);
  if (text.includes("\uFEFF")) return undefined;
  if (text.includes("\r") || options.lineNumbers) {
    // A CR that ends a line is the CR of its CRLF (or of a last line's CR), as the line-by-line reading drops it.
    const parts = text.split("\n");
    for (let i = 0; i < parts.length; i++) {
      let part = parts[i];
      if (part.endsWith("\r")) part = part.slice(0, -1);
      parts[i] = options.lineNumbers ? `${options.offset + i + 1}\t${part}` : part;
    }
    text = parts.join("\n");
  }
  // The JSON length of the lines joined by newlines is the sum of each line's (a newline escapes to the two
  // characters its line's quotes would take): within the budget, every line is within it.
  if (JSON.stringify(text).length > options.budgetChars) return undefined;
  return { content: text, lines, more: next < n, budgetReached: false, cutLines: [] };
}

async function countToEnd(
  file: ReadableFile,
  size: number,
  counter: NewlineCounter,
  index: LineIndex,
): Promise<number> {
  const buffer = counter.buffer;
  let chunk = index.newlinesBefore.length - 1;
  let newlines = index.newlinesBefore[chunk];
  let last = -1;
  for (; chunkStart(chunk) < size; chunk++) {
    const n = await load(file, counter, Math.min(CHUNK_BYTES, size - chunkStart(chunk)), chunkStart(chunk));
    if (n === 0) break;
    const c = counter.count(0, n);
    if (n === CHUNK_BYTES) recordChunk(index, chunk, c);
    newlines += c;
    last = buffer[n - 1];
  }
  return newlines + (size - index.bomLength > 0 && last !== 10 && last !== -1 ? 1 : 0);
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

// Backs off from `end` so that a multi-byte character cut by the line limit is dropped whole.
function charBoundary(bytes: Uint8Array, end: number): number {
  let i = end;
  while (i > 0 && i > end - 4 && (bytes[i - 1] & 0xc0) === 0x80) i--;
  if (i > 0 && bytes[i - 1] >= 0xc0) {
    const need = bytes[i - 1] >= 0xf0 ? 4 : bytes[i - 1] >= 0xe0 ? 3 : 2;
    if (end - (i - 1) < need) return i - 1;
  }
  return end;
}

// The first MAX_LINE_CHARS characters, without splitting a surrogate pair.
function cutText(text: string): string {
  let cut = Math.min(text.length, MAX_LINE_CHARS);
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return text.slice(0, cut);
}
