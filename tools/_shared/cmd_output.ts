/**
 * Command output kept in files while a command runs, within a byte limit, and
 * read back within a character cap: head and tail around a marker.
 *
 * @module
 */

import { writeSync } from "node:fs";
import { type FileHandle, open, readFile } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { ArtifactStore } from "@toolfence/core";
import { ToolError } from "@toolfence/core";
import { capText } from "@toolfence/core";

/** The default byte limit of a command's output (stdout and stderr together): 64 MiB. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024;

/** How long output still in a pipe may take to arrive once the process group is gone. */
const DRAIN_MS = 1_000;

/** Output being copied from a command's pipes into its files. */
export interface OutputCapture {
  /** The byte limit of stdout and stderr together. */
  readonly limitBytes: number;
  /** Whether the output passed the limit (the rest was dropped, the command stopped). */
  readonly limitReached: boolean;
  /** Bytes kept so far, per stream. */
  readonly kept: { stdout: number; stderr: number };
  /**
   * Settles once both pipes are drained into their files, or `DRAIN_MS` after
   * `groupGone` (a process that left the group may hold a pipe open forever).
   */
  finished(groupGone: Promise<unknown>): Promise<void>;
}

/**
 * Copies `stdout` and `stderr` into their files, one chunk at a time (memory
 * stays at one chunk per stream, however much the command prints), until
 * together they reach `limitBytes`; then calls `onLimit` (which stops the
 * command) and drops the rest. Disk use is at most the limit.
 */
export function captureOutput(
  streams: { stdout: Readable; stderr: Readable },
  files: { stdout: FileHandle; stderr: FileHandle },
  limitBytes: number,
  onLimit: () => void,
): OutputCapture {
  let used = 0;
  let limitReached = false;
  const kept = { stdout: 0, stderr: 0 };
  const reach = () => {
    if (limitReached) return;
    limitReached = true;
    onLimit();
  };
  const pump = async (name: "stdout" | "stderr") => {
    const stream = streams[name];
    try {
      for await (const chunk of stream as AsyncIterable<Uint8Array>) {
        const room = limitBytes - used;
        const part = chunk.byteLength > room ? chunk.subarray(0, Math.max(0, room)) : chunk;
        if (part.byteLength > 0) {
          used += part.byteLength;
          kept[name] += part.byteLength;
          // Synchronously: a regular file takes it from the page cache at once, and one
          // thread-pool round trip per 64 KiB chunk would make a flood slower than the command.
          writeAll(files[name].fd, part);
        }
        if (part.byteLength < chunk.byteLength) {
          reach();
          break;
        }
      }
    } catch {
      // The pipe broke (the process was killed); what arrived is kept.
    } finally {
      stream.destroy();
    }
  };
  const pumps = Promise.all([pump("stdout"), pump("stderr")]);
  return {
    limitBytes,
    get limitReached() {
      return limitReached;
    },
    kept,
    async finished(groupGone) {
      await groupGone;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_MS)));
      await Promise.race([pumps, late]);
      clearTimeout(timer);
      streams.stdout.destroy();
      streams.stderr.destroy();
      await pumps;
    },
  };
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done);
}

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
 * Reads a finished stream. When it is longer than `cap` characters, the whole
 * text is stored as an artifact and the head and tail are kept around a
 * marker naming it (the core's {@linkcode capText}).
 */
export async function readStreamForResult(
  file: string,
  cap: number,
  artifacts: ArtifactStore,
  summary: string,
): Promise<CappedStream> {
  // The artifact store takes whole values, so a long stream is read once here
  // (at most the output limit); while the command ran it only lived in the file.
  let content: Uint8Array;
  try {
    content = await readFile(file);
  } catch (error) {
    throw outputUnavailable(file, error);
  }
  const bytes = content.byteLength;
  const text = decoder.decode(content);
  if (text.length <= cap) return { text, bytes, truncated: false };
  const ref = await artifacts.put(text, { summary: `${summary}, ${bytes} bytes` });
  return { text: capText(text, cap, ref).text, bytes, truncated: true };
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
