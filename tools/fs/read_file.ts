/**
 * `read_file`: a window of lines of a UTF-8 text file, streamed.
 *
 * @module
 */

import * as v from "valibot";
import type { FileTarget, ToolContext } from "@toolfence/core";
import { isSettled, type Tool, tool } from "@toolfence/core";
import { cachedIndex, forgetIndex, storeIndex } from "./_line_index.ts";
import { newlineCounter } from "./_newlines.ts";
import { openForReading } from "../_shared/fs_open.ts";
import { FULL_SCAN_BYTES, indexFile, MAX_LINE_CHARS, readWindow } from "./_read_window.ts";
import { READ_FILE_OUTPUT } from "./_outputs.ts";

/** Default number of lines in a window. */
export const DEFAULT_READ_LIMIT = 2000;

/**
 * Characters of (JSON-escaped) content one call returns at most, so that the
 * result fits the toolbox's default 40,000-character cap with its metadata; a
 * window that would be longer stops early and says where to continue.
 */
export const READ_BUDGET_CHARS = 36_000;

/** The arguments of `read_file`, defaults applied. */
export interface ReadFileArgs {
  /** File to read, relative to the workspace or absolute inside it. */
  path: string;
  /** Zero-based index of the first line to return. */
  offset: number;
  /** How many lines to return at most. */
  limit: number;
  /** Prefix each line with its 1-based line number and a tab. */
  line_numbers: boolean;
}

const input = v.object({
  path: v.pipe(v.string(), v.description("File to read, relative to the workspace or absolute inside it")),
  offset: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description("Zero-based index of the first line to return (offset 2 starts at the third line). Default 0"),
    ),
    0,
  ),
  limit: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description(`How many lines to return at most. Default ${DEFAULT_READ_LIMIT}`),
    ),
    DEFAULT_READ_LIMIT,
  ),
  line_numbers: v.optional(
    v.pipe(v.boolean(), v.description("Prefix each line with its 1-based line number and a tab. Default false")),
    false,
  ),
});

/**
 * Reads a window of lines of a UTF-8 text file. Memory is bounded by the window,
 * not the file: the file is streamed in 1 MiB chunks, newlines are counted with
 * a small WebAssembly SIMD routine, and a per-session index of checkpoints
 * (one per chunk, keyed by real path, inode, size, mtime and ctime) lets the
 * next window of the same unchanged file start near its offset instead of
 * scanning from the top.
 *
 * The sha256 and the exact line count: files up to 64 MiB are scanned whole on
 * their first read, which yields both (cached with the index). Larger files are
 * read only as far as the window needs; their sha256 is `null` with a reason
 * (hashing would mean reading all of it), and `total_lines` is `null` until a
 * window reaches the end. `line_ending` describes the first MiB.
 *
 * Refused: directories, FIFOs, sockets and devices (checked with stat before
 * opening; the open is non-blocking), binary files (with their size and type),
 * UTF-16/32 and other non-UTF-8 text.
 *
 * Stat, open and close are synchronous calls, and so are the reads of a file
 * up to 256 KiB: each takes a few µs, less than a round trip through the
 * thread pool would. Larger files are read asynchronously, chunk by chunk.
 *
 * Requires `--allow-read` for the file.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { readFileTool } from "@toolfence/tools";
 * const box = new ToolBox().register(readFileTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await box.call(session, "read_file", { path: "README.md", offset: 0, limit: 20 });
 * console.log(result.output);
 * await session.close();
 * ```
 */
export const readFileTool: Tool<ReadFileArgs> = tool({
  name: "read_file",
  description: "Read lines of a UTF-8 text file.\n" +
    `Returns up to \`limit\` lines (default ${DEFAULT_READ_LIMIT}) starting at the zero-based \`offset\`; ` +
    "offset 2 with limit 2 gives the file's lines 3 and 4. An offset at or past the end gives empty content. " +
    `Lines longer than ${MAX_LINE_CHARS} characters are cut and marked. With line_numbers, each line reads ` +
    "`N<TAB>text` with the file's own 1-based line number. The result gives total_lines, whether more lines " +
    "follow and next_offset to continue from, the line ending, and the file's sha256 (pass it as expected_sha256 " +
    "to edit_file or write_file to make sure nobody changed the file meanwhile). Binary files, special files and " +
    "text in encodings other than UTF-8 are refused.",
  input,
  output: READ_FILE_OUTPUT,
  destructive: false,
  idempotent: true,
  needs: { read: ["workspace"] },
  async run(args, ctx) {
    const target = await ctx.policy.files.resolve(args.path);
    const first = await readOnce(ctx, target, args);
    if (!first.changed) return first.output;
    // Changed under the read (a file being written): once more, then report what was read.
    const second = await readOnce(ctx, target, args);
    if (!second.changed) return second.output;
    return {
      ...second.output,
      note: [second.output.note, "The file changed while it was read (is something writing to it?)."]
        .filter(Boolean).join(" "),
      sha256: null,
      sha256_skipped: "the file changed while it was read",
    };
  },
});

async function readOnce(
  ctx: ToolContext,
  target: FileTarget,
  { path, offset, limit, line_numbers }: ReadFileArgs,
): Promise<{ output: Record<string, unknown>; changed: boolean }> {
  const real = target.path;
  const openedAt = Date.now();
  const file = await openForReading(ctx.policy.files, target, path, "Use list_dir to see what the directory holds.");
  const stat = file.stat;
  const counter = newlineCounter(stat.size);
  try {
    let index = cachedIndex(ctx.session, real, stat);
    if (!index) {
      index = await indexFile(file, counter, path, real);
      // Kept only when the file's stat names its content: a same-size rewrite within the clock's tick would find it.
      if (isSettled(stat.ctimeMs, openedAt)) storeIndex(ctx.session, real, index);
    }
    const window = await readWindow(
      file,
      counter,
      index,
      {
        offset,
        limit,
        lineNumbers: line_numbers,
        budgetChars: READ_BUDGET_CHARS,
        signal: ctx.signal,
      },
      path,
      real,
    );
    const changed = !file.unchanged();
    if (changed) forgetIndex(ctx.session, real);
    const total = index.totalLines ?? null;
    const nextOffset = window.more ? offset + window.lines : null;
    const output = {
      path: real,
      content: window.content,
      ...noteFor(offset, window.lines, total, nextOffset, window.budgetReached, window.cutLines.length),
      offset,
      lines: window.lines,
      total_lines: total,
      more: window.more,
      next_offset: nextOffset,
      line_ending: index.lineEnding,
      bom: index.bomLength > 0,
      size: stat.size,
      sha256: index.sha256 ?? null,
      ...(index.sha256 === undefined
        ? { sha256_skipped: `the file is larger than ${FULL_SCAN_BYTES >> 20} MiB; hashing it means reading all of it` }
        : {}),
      ...(window.cutLines.length ? { cut_lines: window.cutLines } : {}),
    };
    return { output, changed };
  } finally {
    counter.release();
    file.close();
  }
}

function noteFor(
  offset: number,
  lines: number,
  total: number | null,
  nextOffset: number | null,
  budgetReached: boolean,
  cut: number,
): { note?: string } {
  const parts: string[] = [];
  if (lines === 0) {
    if (total !== null && total > 0) parts.push(`Offset ${offset} is at or past the end: the file has ${total} lines.`);
  } else if (nextOffset !== null) {
    const shown = `Showing lines ${offset + 1}-${offset + lines}${total !== null ? ` of ${total}` : ""}`;
    const why = budgetReached ? " (the output size limit was reached)" : "";
    parts.push(`${shown}${why}; more lines follow: call read_file with offset ${nextOffset} to continue.`);
  }
  if (cut > 0) parts.push(`${cut} long line${cut === 1 ? " was" : "s were"} cut at ${MAX_LINE_CHARS} characters.`);
  return parts.length ? { note: parts.join(" ") } : {};
}
