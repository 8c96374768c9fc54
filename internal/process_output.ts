/**
 * Copying a process's output from its pipes into two files, one chunk at a
 * time, within a byte limit: disk use is at most the limit, memory one chunk
 * per stream however much the process prints.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { writeSync } from "node:fs";
import type { Readable } from "node:stream";
import type { BoundedOutput } from "@toolfence/core";

/** How long output still in a pipe may take to arrive once the process group is gone. */
const DRAIN_MS = 1_000;

/** Output being copied from a command's pipes into its files. */
export interface OutputCapture extends BoundedOutput {
  /**
   * Settles once both pipes are drained into their files, or `DRAIN_MS` after
   * `groupGone` (a process that left the group may hold a pipe open forever).
   */
  finished(groupGone: Promise<unknown>): Promise<void>;
  /**
   * With a `readyMarker`: settles once stderr brought it, or ended (or held
   * `READY_HELD_BYTES`) without it. Without one: at once, as ready.
   */
  ready: Promise<ReadyOutcome>;
}

/** Whether a process's stderr brought its ready marker (see {@linkcode captureOutput}). */
export interface ReadyOutcome {
  /** Whether the marker came. */
  ready: boolean;
  /** What stderr brought before it; where it never came, all that stderr brought while it was awaited. */
  before: string;
}

/** Past this many bytes of stderr without the ready marker, it is no longer awaited. */
const READY_HELD_BYTES = 64 * 1024;

/**
 * Copies `stdout` and `stderr` into their files, one chunk at a time (memory
 * stays at one chunk per stream, however much the command prints), until
 * together they reach `limitBytes`; then calls `onLimit` (which stops the
 * command) and drops the rest. Disk use is at most the limit. With
 * `readyMarker`, its first appearance on stderr is taken out of the output and
 * settles `ready` (a sandbox's first process writes it before the command
 * starts: see the policy's `SANDBOX_READY`).
 */
export function captureOutput(
  streams: { stdout: Readable; stderr: Readable },
  files: { stdout: { fd: number }; stderr: { fd: number } },
  limitBytes: number,
  onLimit: () => void,
  readyMarker?: string,
): OutputCapture {
  let used = 0;
  let limitReached = false;
  const kept = { stdout: 0, stderr: 0 };
  const reach = () => {
    if (limitReached) return;
    limitReached = true;
    onLimit();
  };
  const keep = (name: "stdout" | "stderr", chunk: Uint8Array) => {
    if (limitReached) return;
    const room = limitBytes - used;
    const part = chunk.byteLength > room ? chunk.subarray(0, Math.max(0, room)) : chunk;
    if (part.byteLength > 0) {
      used += part.byteLength;
      kept[name] += part.byteLength;
      // Synchronously: a regular file takes it from the page cache at once, and one
      // thread-pool round trip per 64 KiB chunk would make a flood slower than the command.
      writeAll(files[name].fd, part);
    }
    if (part.byteLength < chunk.byteLength) reach();
  };
  const marker = readyMarker === undefined ? undefined : Buffer.from(readyMarker);
  // stderr while the marker is awaited: kept back, so that the marker is found across chunks and taken out.
  let held: Buffer | undefined = marker === undefined ? undefined : Buffer.alloc(0);
  let settleReady!: (outcome: ReadyOutcome) => void;
  const ready = new Promise<ReadyOutcome>((settle) => (settleReady = settle));
  if (marker === undefined) settleReady({ ready: true, before: "" });
  const stopAwaiting = (found: boolean, before: Buffer, rest: Buffer) => {
    held = undefined;
    settleReady({ ready: found, before: before.toString("utf8") });
    keep("stderr", before);
    keep("stderr", rest);
  };
  const awaitReady = (chunk: Uint8Array) => {
    const all: Buffer = Buffer.concat([held!, chunk]);
    const at = all.indexOf(marker!);
    if (at >= 0) stopAwaiting(true, all.subarray(0, at), all.subarray(at + marker!.byteLength));
    else if (all.byteLength > READY_HELD_BYTES) stopAwaiting(false, all, Buffer.alloc(0));
    else held = all;
  };
  const pump = async (name: "stdout" | "stderr") => {
    const stream = streams[name];
    try {
      for await (const chunk of stream as AsyncIterable<Uint8Array>) {
        // Past the limit the rest is read and dropped until the command is gone (the pipe ends, or `finished`
        // destroys it): never a `break`, whose return from the stream's iterator destroyed the pipe with an
        // AbortError that no one awaited, an unhandled rejection that ended the whole server (or left its calls
        // unanswered), one flood in two.
        if (name === "stderr" && held !== undefined) awaitReady(chunk);
        else keep(name, chunk);
      }
    } catch {
      // The pipe broke (the process was killed); what arrived is kept.
    } finally {
      if (name === "stderr" && held !== undefined) stopAwaiting(false, held, Buffer.alloc(0));
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
    ready,
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
