/**
 * Command output kept in files while a command runs, within a byte limit, and
 * read back within a character cap: head and tail around a marker.
 *
 * @module
 */

import fs from "node:fs";
import type { ArtifactStore } from "@toolfence/core";
import { ToolError } from "@toolfence/core";
import { capText } from "@toolfence/core";
import { ByteBudget } from "./byte_budget.ts";

/** The default byte limit of a command's output (stdout and stderr together): 64 MiB. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024;

/** A failure to read back a command's output, as a coded error instead of a raw one. */
export function outputUnavailable(file: string, error: unknown): ToolError {
  return new ToolError(`The command's output could not be read back: ${(error as Error)?.message ?? error}`, {
    code: "output_unavailable",
    recoverable: false,
    recoveryHint: "Run the command again with less output (e.g. pipe it through head).",
    details: { file, cause: String(error) },
    cause: error,
  });
}

const decoder = new TextDecoder();

/**
 * A command's output file: where it lies (to name it) and how to open it for reading (the process door's
 * `openOutput`, which never follows a link: the command can write the folder it lies in).
 */
export interface OutputFile {
  /** Its path, for messages. */
  path: string;
  /** A descriptor of the very file the door made; the caller closes it. */
  open(): number;
}

// Reads up to `length` bytes at `position` into `buffer` from its start; fewer only at the end of the file.
async function readAt(fd: number, buffer: Uint8Array, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const n = await new Promise<number>((resolve, reject) =>
      fs.read(fd, buffer, done, length - done, position + done, (error, read) => error ? reject(error) : resolve(read))
    );
    if (n === 0) break;
    done += n;
  }
  return done;
}

function readAtOnce(fd: number, buffer: Uint8Array, length: number): number {
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buffer, done, length - done, done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

// Streams up to this size are read back synchronously: an asynchronous readFile is several trips through the
// runtime's thread pool (open, stat, read, close), about a millisecond per stream on a loaded machine for what
// is usually a few lines; a larger one asynchronously, so that other calls go on while it is read.
const READ_AT_ONCE_BYTES = 1 << 20;

/**
 * The most bytes of command output that all of this process's commands read back into memory at once, for their
 * results and artifacts: 64 MiB, the default output limit of one command; a bigger read (`max_output_bytes` up to
 * the session maximum, 256 MiB by default) takes the whole budget and runs alone. A read costs several times its
 * bytes on the way (the bytes, the decoded text, its UTF-8 again for the artifact store, the store's copy): 300 MB of
 * random bytes, whose every byte decodes to U+FFFD, took the server to 1.39 GB. Before 2026-12-05 every command of
 * every session read at once: three such commands took it to 3.1 GB, and one session may run 16. Past the budget a
 * read waits, first come first served, for those before it.
 */
export const OUTPUT_READ_BUDGET_BYTES: number = DEFAULT_OUTPUT_LIMIT_BYTES;

// Reads up to this size take no part in the budget: a few lines, read at once, never wait behind a big one.
const UNBUDGETED_BYTES = READ_AT_ONCE_BYTES;

const readBudget = new ByteBudget(OUTPUT_READ_BUDGET_BYTES);

/** One output stream, read back within a cap. */
export interface CappedStream {
  /** The text, or its head and tail around a marker. */
  text: string;
  /** Size of the whole stream in bytes. */
  bytes: number;
  /** Whether `text` is only part of the stream. */
  truncated: boolean;
}

/**
 * Reads a finished stream: at most its first `maxBytes` (the command's output
 * limit). When it is longer than `cap` characters, the text read is stored as
 * an artifact and the head and tail are kept around a marker naming it (the
 * core's {@linkcode capText}).
 */
export async function readStreamForResult(
  file: OutputFile,
  cap: number,
  artifacts: ArtifactStore,
  summary: string,
  maxBytes: number,
): Promise<CappedStream> {
  // The artifact store takes whole values, so a long stream is read once here; while the command ran it only
  // lived in the file. The capture stops at the output limit, but the command can reach the file itself (the
  // session temp dir is in its view) and append gigabytes there: never more than the limit is read. It is read by
  // the descriptor the door opens, never by its path, which the command may have made a link.
  // A big read waits for its share of the process's read budget, held until its text is cut and stored.
  let release = () => {};
  try {
    let content: Uint8Array;
    let bytes: number;
    try {
      const fd = file.open();
      try {
        bytes = fs.fstatSync(fd).size;
        const length = Math.min(bytes, maxBytes);
        if (length > UNBUDGETED_BYTES) release = await readBudget.take(length);
        const buffer = new Uint8Array(length);
        const read = length <= READ_AT_ONCE_BYTES
          ? readAtOnce(fd, buffer, length)
          : await readAt(fd, buffer, length, 0);
        content = buffer.subarray(0, read);
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      if (error instanceof ToolError) throw error;
      throw outputUnavailable(file.path, error);
    }
    const kept = content.subarray(0, maxBytes);
    const text = decoder.decode(kept);
    const whole = kept.byteLength === bytes;
    if (whole && text.length <= cap) return { text, bytes, truncated: false };
    const ref = await artifacts.put(text, {
      summary: `${summary}, ${bytes} bytes${whole ? "" : `, the first ${maxBytes} kept`}`,
    });
    return { text: capText(text, cap, ref).text, bytes, truncated: true };
  } finally {
    release();
  }
}

/**
 * Reads a stream that may still be growing, without reading more than about
 * `cap` characters' worth of it: all of it when it is short, else its first
 * and last parts around a marker that names the file holding all of it.
 */
export async function peekStream(file: OutputFile, cap: number, shownPath: string): Promise<CappedStream> {
  const fd = file.open();
  try {
    const bytes = fs.fstatSync(fd).size;
    if (bytes <= cap) {
      const buffer = new Uint8Array(bytes);
      const read = await readAt(fd, buffer, bytes, 0);
      return { text: decoder.decode(buffer.subarray(0, read)), bytes, truncated: false };
    }
    const marker = (omitted: number) =>
      `\n[... ${omitted} bytes omitted; the whole output is in ${shownPath} (page through it with read_file) ...]\n`;
    const room = Math.max(0, cap - marker(bytes).length);
    const headBytes = Math.ceil(room / 2);
    const tailBytes = room - headBytes;
    const head = new Uint8Array(headBytes);
    const tail = new Uint8Array(tailBytes);
    await readAt(fd, head, headBytes, 0);
    await readAt(fd, tail, tailBytes, bytes - tailBytes);
    return {
      text: decodeEdge(head, "end") + marker(bytes - headBytes - tailBytes) + decodeEdge(tail, "start"),
      bytes,
      truncated: true,
    };
  } finally {
    fs.closeSync(fd);
  }
}

// Drops the bytes of a UTF-8 character cut in two at the given edge, so that a
// window never shows a replacement character that is not in the output.
function decodeEdge(bytes: Uint8Array, cutAt: "start" | "end"): string {
  let start = 0;
  let end = bytes.length;
  if (cutAt === "start") {
    while (start < end && start < 3 && (bytes[start] & 0xc0) === 0x80) start++;
  } else {
    let i = end - 1;
    while (i >= 0 && end - i <= 4 && (bytes[i] & 0xc0) === 0x80) i--;
    if (i >= 0) {
      const lead = bytes[i];
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (end - i < need) end = i;
    }
  }
  return decoder.decode(bytes.subarray(start, end));
}

/**
 * `error` as a coded ToolError: ToolErrors and aborts pass through, anything
 * else (a runtime error from the file system or the process API) becomes
 * `code`, so that no raw runtime error reaches the model. The call's `signal`
 * tells its own abort reason apart, whatever it is (an MCP cancellation's is a
 * plain string): a call stopped while it waited on a question is a cancel,
 * not a start that failed.
 */
export function codedFailure(error: unknown, code: string, what: string, signal?: AbortSignal): unknown {
  if (error instanceof ToolError || (error as Error)?.name === "AbortError") return error;
  if (signal?.aborted && error === signal.reason) return error;
  return new ToolError(`${what}: ${(error as Error)?.message ?? String(error)}`, {
    code,
    recoverable: false,
    details: { cause: String(error), errno: (error as NodeJS.ErrnoException)?.code },
    cause: error,
  });
}
