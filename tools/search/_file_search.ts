// Searching one file for matching lines, streamed in chunks. Both grep engines
// end here, so that they agree on lines, context and what counts as binary:
// a file is text as ripgrep decodes it (a UTF-8 byte-order mark is dropped,
// UTF-16 with a byte-order mark is transcoded), and binary when a NUL byte
// appears before the search stops.

import fs from "node:fs";
import { setImmediate } from "node:timers";
import type { CompiledPattern } from "./_pattern.ts";

/** One matching line of a file. */
export interface LineHit {
  /** 1-based line number. */
  line: number;
  /** The line (cut around the match when long); absent without content. */
  content?: string;
  /** Up to `context` lines before it. */
  before?: string[];
  /** Up to `context` lines after it. */
  after?: string[];
}

/** What one file gave. */
export interface FileHits {
  hits: LineHit[];
  /** The file has more matching lines than the limit. */
  more: boolean;
}

/** Options of {@linkcode searchFile}. */
export interface FileSearchOptions {
  pattern: CompiledPattern;
  /** Lines of context before and after each match. */
  context: number;
  /** Include the text of lines. */
  includeContent: boolean;
  /** Most matching lines to return. */
  limit: number;
  signal: AbortSignal;
  /** A buffer of {@linkcode CHUNK_BYTES} to read into, reused across files. */
  buffer: Uint8Array;
  /** Called between chunks of a long file; see {@linkcode yieldEvery}. */
  pause: () => Promise<void> | undefined;
}

/** Lines are shown up to this many characters, around the match. */
export const MAX_CONTENT_CHARS = 400;

/**
 * The size of the read buffer each concurrent search needs. The automaton
 * matches a chunk in one synchronous call, at 5 to 50 MB/s depending on the
 * pattern, so a chunk of 128 KiB keeps each turn of the event loop short.
 */
export const CHUNK_BYTES = 128 << 10;

const oneShotDecoders = new Map<string, TextDecoder>();

function oneShot(encoding: string): TextDecoder {
  let decoder = oneShotDecoders.get(encoding);
  if (!decoder) oneShotDecoders.set(encoding, decoder = new TextDecoder(encoding));
  return decoder;
}

function encodingOf(head: Uint8Array): string {
  if (head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
  if (head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
  return "utf-8";
}

function cutAround(line: string, at: number): string {
  if (line.length <= MAX_CONTENT_CHARS) return line;
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_CONTENT_CHARS));
  return (start > 0 ? "…" : "") + line.slice(start, start + MAX_CONTENT_CHARS) +
    (start + MAX_CONTENT_CHARS < line.length ? "…" : "");
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Searches the file that `open` opens (the file door's `openFound`, which
 * re-checks the path and opens it in its pinned folder, non-blocking and
 * following no link, so a file or a folder above it swapped for a FIFO or a
 * link after the walk saw it fails at once). Returns `"binary"` for binary
 * files and `{ unreadable }` with the error when the file cannot be opened or
 * read.
 *
 * The reads are synchronous: per file, three synchronous calls cost about
 * half of their asynchronous forms, and a search is thousands of small files. The
 * event loop gets a turn between chunks of a long file (`pause`), and callers
 * give it one between files (see {@linkcode yieldEvery}).
 */
export async function searchFile(
  open: () => number,
  options: FileSearchOptions,
): Promise<FileHits | "binary" | { unreadable: unknown }> {
  let fd: number;
  try {
    fd = open();
  } catch (error) {
    return { unreadable: error };
  }
  try {
    return await searchFd(fd, options);
  } catch (error) {
    if (options.signal.aborted) throw error;
    return { unreadable: error };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A function to call between units of synchronous work: every `ms`
 * milliseconds it yields to the event loop (so that timers, I/O and other
 * calls proceed) and checks the abort signal.
 */
export function yieldEvery(ms: number, signal: AbortSignal): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < ms) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      signal.throwIfAborted();
      since = performance.now();
    });
  };
}

async function searchFd(fd: number, options: FileSearchOptions): Promise<FileHits | "binary"> {
  const { pattern, context, includeContent, limit } = options;
  const withContext = includeContent && context > 0;
  const buffer = options.buffer;
  const hits: LineHit[] = [];
  const waiting: LineHit[] = []; // hits whose after-context is not complete yet
  const recent: string[] = []; // the last `context` lines, for before-context
  let decoder: TextDecoder | undefined;
  let carry = "";
  let lineNo = 0;
  let more = false;
  for (let position = 0;;) {
    if (position > 0) await options.pause();
    options.signal.throwIfAborted();
    const bytesRead = fs.readSync(fd, buffer, 0, CHUNK_BYTES, position);
    // A short read of a regular file is its end: most files take one read.
    const final = bytesRead < CHUNK_BYTES;
    if (!decoder) {
      if (bytesRead === 0) return { hits, more };
      const encoding = encodingOf(buffer);
      // A file read whole decodes in one call, with a shared decoder; longer ones stream through their own.
      decoder = final ? oneShot(encoding) : new TextDecoder(encoding);
    }
    position += bytesRead;
    const fresh = decoder.decode(buffer.subarray(0, bytesRead), { stream: !final });
    // Only the new text is looked at, so that a line of many chunks costs linear time, not quadratic.
    if (fresh.includes("\0")) return "binary";
    let body: string;
    if (final) {
      body = carry + fresh;
      carry = "";
    } else {
      const cut = fresh.lastIndexOf("\n") + 1;
      body = cut === 0 ? "" : carry + fresh.slice(0, cut);
      carry = cut === 0 ? carry + fresh : fresh.slice(cut);
    }
    if (body === "") {
      if (final) return { hits, more };
      continue;
    }
    if (!withContext && !pattern.text.test(body)) {
      if (!final) lineNo += countNewlines(body);
    } else {
      const lines = body.split("\n");
      if (lines.at(-1) === "") lines.pop();
      for (let line of lines) {
        const paused = options.pause();
        if (paused) await paused;
        lineNo++;
        if (line.endsWith("\r")) line = line.slice(0, -1);
        for (const hit of waiting) hit.after!.push(cutAround(line, 0));
        while (waiting.length > 0 && waiting[0].after!.length >= context) waiting.shift();
        if (!more) {
          const at = pattern.line.locate(line);
          if (at !== -1) {
            if (hits.length === limit) more = true;
            else {
              const hit: LineHit = { line: lineNo };
              if (includeContent) hit.content = cutAround(line, at);
              if (withContext) {
                hit.before = recent.slice();
                hit.after = [];
                waiting.push(hit);
              }
              hits.push(hit);
            }
          }
        }
        if (more && waiting.length === 0) return { hits, more };
        if (withContext) {
          recent.push(cutAround(line, 0));
          if (recent.length > context) recent.shift();
        }
      }
    }
    if (final) return { hits, more };
  }
}
