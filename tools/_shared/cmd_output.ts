/**
 * Command output kept in files while a command runs, within a byte limit, and
 * read back within a character cap: head and tail around a marker.
 *
 * @module
 */

import { readFileSync, statSync } from "node:fs";
import { open, readFile } from "node:fs/promises";
import type { ArtifactStore } from "@toolfence/core";
import { ToolError } from "@toolfence/core";
import { capText } from "@toolfence/core";

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

// Streams up to this size are read back synchronously: an asynchronous readFile is several trips through the
// runtime's thread pool (open, stat, read, close), about a millisecond per stream on a loaded machine for what
// is usually a few lines; a larger one asynchronously, so that other calls go on while it is read.
const READ_AT_ONCE_BYTES = 1 << 20;

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
  file: string,
  cap: number,
  artifacts: ArtifactStore,
  summary: string,
  maxBytes: number,
): Promise<CappedStream> {
  // The artifact store takes whole values, so a long stream is read once here; while the command ran it only
  // lived in the file. The capture stops at the output limit, but the command can reach the file itself (the
  // session temp dir is in its view) and append gigabytes there: never more than the limit is read.
  let content: Uint8Array;
  let bytes: number;
  try {
    bytes = statSync(file).size;
    content = bytes <= READ_AT_ONCE_BYTES
      ? readFileSync(file)
      : bytes <= maxBytes
      ? await readFile(file)
      : await readHead(file, maxBytes);
  } catch (error) {
    throw outputUnavailable(file, error);
  }
  const kept = content.subarray(0, maxBytes);
  const text = decoder.decode(kept);
  const whole = kept.byteLength === bytes;
  if (whole && text.length <= cap) return { text, bytes, truncated: false };
  const ref = await artifacts.put(text, {
    summary: `${summary}, ${bytes} bytes${whole ? "" : `, the first ${maxBytes} kept`}`,
  });
  return { text: capText(text, cap, ref).text, bytes, truncated: true };
}

async function readHead(file: string, length: number): Promise<Uint8Array> {
  const handle = await open(file, "r");
  try {
    const buffer = new Uint8Array(length);
    const { bytesRead } = await handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Reads a stream that may still be growing, without reading more than about
 * `cap` characters' worth of it: all of it when it is short, else its first
 * and last parts around a marker that names the file holding all of it.
 */
export async function peekStream(file: string, cap: number, shownPath: string): Promise<CappedStream> {
  const handle = await open(file, "r");
  try {
    const bytes = (await handle.stat()).size;
    if (bytes <= cap) {
      const buffer = new Uint8Array(bytes);
      const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
      return { text: decoder.decode(buffer.subarray(0, bytesRead)), bytes, truncated: false };
    }
    const marker = (omitted: number) =>
      `\n[... ${omitted} bytes omitted; the whole output is in ${shownPath} (page through it with read_file) ...]\n`;
    const room = Math.max(0, cap - marker(bytes).length);
    const headBytes = Math.ceil(room / 2);
    const tailBytes = room - headBytes;
    const head = new Uint8Array(headBytes);
    const tail = new Uint8Array(tailBytes);
    await handle.read(head, 0, headBytes, 0);
    await handle.read(tail, 0, tailBytes, bytes - tailBytes);
    return {
      text: decodeEdge(head, "end") + marker(bytes - headBytes - tailBytes) + decodeEdge(tail, "start"),
      bytes,
      truncated: true,
    };
  } finally {
    await handle.close();
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
 * `code`, so that no raw runtime error reaches the model.
 */
export function codedFailure(error: unknown, code: string, what: string): unknown {
  if (error instanceof ToolError || (error as Error)?.name === "AbortError") return error;
  return new ToolError(`${what}: ${(error as Error)?.message ?? String(error)}`, {
    code,
    recoverable: false,
    details: { cause: String(error), errno: (error as NodeJS.ErrnoException)?.code },
    cause: error,
  });
}
