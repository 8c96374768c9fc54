/**
 * The stdio transport of the MCP server: newline-delimited JSON-RPC on a
 * readable and a writable stream (stdin and stdout by default), built to
 * survive any input.
 *
 * - A message may be up to `maxMessageBytes` long (default
 *   {@linkcode DEFAULT_MAX_MESSAGE_BYTES}, 64 MiB). Its bytes are kept as the
 *   chunks they arrived in and joined once, so reading costs one copy of the
 *   message, never a rebuilt buffer per chunk.
 * - A longer message is not kept: its bytes stream through a small scanner
 *   that reads its top-level `id`, and the reply is a `-32600` error naming
 *   the limit (with that id when it could be read, else `null`).
 * - Every line that is not a JSON-RPC message gets the error reply the
 *   JSON-RPC 2.0 specification names: `-32700` for what is not JSON (invalid
 *   UTF-8, a NUL, a cut line), `-32600` for JSON that is not a request
 *   (a null, fractional or object id, no method, params that are not an
 *   object). Broken notifications and responses cannot be answered and are
 *   dropped, with the reason passed to `onerror`.
 * - A request whose id is still in flight is refused (`-32600`) rather than
 *   confusing the two calls' answers and cancellations.
 * - `initialize` comes once: one read while another is in flight or after
 *   one was answered with a result is refused by the server (`-32600`, or
 *   `-32602` for malformed params) and does not take the first one's place.
 * - Before an `initialize` (read, or answered with a result), any request
 *   but `initialize` and `ping` is refused (`-32000`, as the SDK's HTTP
 *   transport refuses it). Requests written right after the `initialize`,
 *   before its answer (`printf` into the server), are served in turn.
 * - A client that negotiated protocol 2025-03-26 may send a JSON-RPC batch (a
 *   line holding an array): its requests are answered in one array once all
 *   are answered (a cancelled one left out), its broken messages' error
 *   replies among them, nothing for a batch of notifications, a single
 *   `-32600` for an empty one. `initialize` comes alone. Other clients' batches
 *   are a single `-32600` (2025-06-18 took batches out again).
 * - The end of the input does not close the transport: `ended` resolves, so
 *   that the owner can let calls in flight answer (`answered()`) before it
 *   calls `close()`.
 * - Answers are written without blocking: a client that stops reading stdout
 *   holds back its answers, never the server (its calls, cancellations and
 *   signals go on). While more than 64 MiB of answers wait to be written, no
 *   further input is read; `close()` lets the client read what is left while
 *   it reads at all (some of it every 3 seconds).
 *
 * @module
 */

import { Buffer } from "node:buffer";
import fs from "node:fs";
import net from "node:net";
import type { Readable, Writable } from "node:stream";
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { IdScanner } from "./_id_scan.ts";
import {
  BATCH_PROTOCOL_VERSION,
  errorReply,
  type Frame,
  JSONRPC_ERRORS,
  type JsonRpcErrorReply,
  judgeLine,
  shownId,
} from "./_jsonrpc_frame.ts";

// The error the SDK's Streamable HTTP transport answers a request with before initialize.
const SERVER_NOT_INITIALIZED = -32000;

// Requests read in one batch (protocol 2025-03-26), answered in one array.
interface Batch {
  // The ids (as strings) of its requests not yet answered or cancelled.
  waiting: Set<string>;
  // Its answers so far, error replies to its broken messages among them.
  replies: (JSONRPCMessage | JsonRpcErrorReply)[];
  // Whether its messages are still being passed on (an answer given meanwhile must not write the array early).
  reading: boolean;
  written: boolean;
}

/** The default largest message, in bytes: 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

// Answers waiting to be written beyond this pause reading, so that a client that sends requests and never reads
// the answers cannot make the server hold them all.
const OUTPUT_HIGH_WATER = 64 * 1024 * 1024;

/** Options of {@linkcode LineTransport}. */
export interface LineTransportOptions {
  /** Where messages come from; default the process's stdin (`process.stdin`, or a socket on it: see the module notes). */
  input?: Readable;
  /** Where messages go; default `process.stdout`. */
  output?: Writable;
  /** The largest message read, in bytes (without its newline); default 64 MiB. */
  maxMessageBytes?: number;
}

const NEWLINE = 0x0a;

// How long close() waits for the client to read what is left to write, while it reads none of it.
const OUTPUT_STALL_MS = 3_000;

// The process's stdout: under Deno, a pipe or socket on it is written as Node writes one, through a `net.Socket` on
// descriptor 1 (non-blocking: what the pipe cannot take now waits in the socket, and the event loop goes on). Deno's
// `process.stdout` writes with `Deno.stdout.writeSync` until all is written: a client that stopped reading stdout (a
// full pipe) froze the whole server, its calls, cancellations and signals included. `Deno.stdout.write` does not block,
// but hands every write to a thread of its own (3,000 pipelined pings took 329-679 ms against 140-154). One socket per
// process (there is one descriptor 1), never closed: the process's end closes it. A file or terminal on stdout, and
// every stdout under Node (whose pipe writes are asynchronous already), is written through `process.stdout`.
let stdoutSocket: net.Socket | undefined;

function defaultOutput(): Writable {
  if ((globalThis as { Deno?: unknown }).Deno === undefined) return process.stdout;
  if (stdoutSocket !== undefined) return stdoutSocket;
  try {
    const stat = fs.fstatSync(1);
    if (stat.isFIFO() || stat.isSocket()) {
      stdoutSocket = new net.Socket({ fd: 1, readable: false, writable: true });
      return stdoutSocket;
    }
  } catch {
    // no stdout to look at: process.stdout says what it can
  }
  return process.stdout;
}

function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

// The process's stdin: under Deno, a pipe or socket on it is read as Node reads one, through a `net.Socket` on
// descriptor 0 (readiness from the event loop), not through Deno's `process.stdin`, which reads each chunk with
// `Deno.stdin.read`: a duplicate of the descriptor handed to a blocking thread and back, 7 system calls and two
// thread switches per message (measured here: 150 -> 73 µs of CPU per message read). A file or terminal on stdin,
// and every stdin under Node, is read through `process.stdin`.
function defaultInput(): { input: Readable; own: boolean } {
  const deno = (globalThis as { Deno?: unknown }).Deno;
  if (deno !== undefined) {
    try {
      const stat = fs.fstatSync(0);
      if (stat.isFIFO() || stat.isSocket()) {
        const socket = new net.Socket({ fd: 0, readable: true, writable: false });
        // Its errors reach the transport while it listens; one after that (the transport closed) ends nothing.
        socket.on("error", () => {});
        return { input: socket, own: true };
      }
    } catch {
      // no stdin to look at: process.stdin says what it can
    }
  }
  return { input: process.stdin, own: false };
}

/**
 * A newline-delimited JSON-RPC transport for the MCP SDK's `Server`.
 *
 * Requires no permissions beyond the streams it is given.
 *
 * @example
 * ```ts ignore
 * import { Server } from "@modelcontextprotocol/sdk/server/index.js";
 * import { LineTransport } from "@toolfence/adapters/mcp";
 * const server = new Server({ name: "demo", version: "1.0.0" }, { capabilities: {} });
 * const transport = new LineTransport({ maxMessageBytes: 128 * 1024 * 1024 });
 * await server.connect(transport);
 * await transport.ended; // stdin closed
 * await server.close();
 * ```
 */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** The largest message read, in bytes. */
  readonly maxMessageBytes: number;
  /** Resolves when the input has ended (the client closed it) or failed. */
  readonly ended: Promise<void>;
  #input!: Readable;
  // Whether the input is this transport's own socket on stdin (see defaultInput).
  #ownInput = false;
  readonly #givenInput: Readable | undefined;
  readonly #output: Writable;
  #pieces: Uint8Array[] = [];
  #length = 0;
  #oversize: { scanner: IdScanner; bytes: number } | undefined;
  // By id as a string: `1` and `"1"` are one id here, since the call ids made of them would be; each with the id as
  // the request spelled it, which the SDK keys its cancellations by.
  #inFlight = new Map<string, RequestId>();
  // The id of the `initialize` request, and the protocol version the server answered it with: a client of
  // BATCH_PROTOCOL_VERSION may send batches.
  #initializeId: string | undefined;
  #protocolVersion: string | undefined;
  // Whether an initialize has been answered with a result: until then only initialize and ping are served.
  #initialized = false;
  // The batch each request read in one is part of, by id as a string.
  #batchOf = new Map<string, Batch>();
  #allAnswered: (() => void)[] = [];
  #started = false;
  #closed = false;
  #outputBroken = false;
  #throttled = false;
  // Writes not yet flushed, and who waits for one to be (close(), see #drained).
  #unflushed = 0;
  #progress: (() => void)[] = [];
  #endInput!: () => void;
  #onData = (chunk: Uint8Array | string) => this.#read(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  #onEnd = () => this.#finishInput();
  #onOutputError = (error: Error) => {
    this.#outputBroken = true;
    this.onerror?.(error);
    // Nobody can read answers any more: the session is over.
    this.#endInput();
  };

  /** Creates the transport; `start()` (called by `Server.connect`) begins reading. */
  constructor(options: LineTransportOptions = {}) {
    const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1024) {
      throw new RangeError(`maxMessageBytes must be an integer of at least 1024, not ${max}`);
    }
    this.maxMessageBytes = max;
    this.#givenInput = options.input;
    this.#output = options.output ?? defaultOutput();
    this.ended = new Promise<void>((resolve) => (this.#endInput = resolve));
  }

  /** Begins reading the input. */
  start(): Promise<void> {
    if (this.#started) throw new Error("LineTransport already started");
    this.#started = true;
    // Made here, not in the constructor: a socket starts reading once made.
    if (this.#givenInput) this.#input = this.#givenInput;
    else ({ input: this.#input, own: this.#ownInput } = defaultInput());
    this.#input.on("data", this.#onData);
    this.#input.on("end", this.#onEnd);
    this.#input.on("close", this.#onEnd);
    this.#input.on("error", this.#onEnd);
    this.#output.on("error", this.#onOutputError);
    this.#input.resume();
    return Promise.resolve();
  }

  /** Writes one message as a line; resolves once the stream took it. */
  send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && message.id !== undefined && ("result" in message || "error" in message)) {
      const key = String(message.id);
      if (key === this.#initializeId) {
        // Once: a later request may take the id again.
        this.#initializeId = undefined;
        if ("result" in message) {
          this.#protocolVersion = (message.result as { protocolVersion?: string }).protocolVersion;
          this.#initialized = true;
        }
      }
      const batch = this.#batchOf.get(key);
      // A request read in a batch is answered in the batch's one array, once all of its requests are.
      if (batch !== undefined) batch.replies.push(message);
      const flushed = this.#settled(message.id);
      if (batch !== undefined) return flushed ?? Promise.resolve();
    }
    return this.#write(message);
  }

  /**
   * Resolves once every request read so far has been answered or cancelled:
   * what the owner waits for after `ended`, since a request read just before
   * the input ended may not have reached its handler yet.
   */
  answered(): Promise<void> {
    if (this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#allAnswered.push(resolve));
  }

  // The request `id` is answered or cancelled: no longer in flight, and no longer awaited by its batch (whose
  // array is written, and returned, once it awaits nothing).
  #settled(id: RequestId): Promise<void> | undefined {
    const key = String(id);
    this.#inFlight.delete(key);
    const batch = this.#batchOf.get(key);
    let flushed: Promise<void> | undefined;
    if (batch !== undefined) {
      this.#batchOf.delete(key);
      batch.waiting.delete(key);
      flushed = this.#flush(batch);
    }
    if (this.#inFlight.size === 0) { for (const resolve of this.#allAnswered.splice(0)) resolve(); }
    return flushed;
  }

  // Writes a batch's answers as one array once it is read whole and awaits no answer; nothing for a batch of
  // notifications and responses only, as JSON-RPC 2.0 says.
  #flush(batch: Batch): Promise<void> | undefined {
    if (batch.reading || batch.waiting.size > 0 || batch.written) return undefined;
    batch.written = true;
    return batch.replies.length > 0 ? this.#write(batch.replies) : undefined;
  }

  /**
   * Stops reading, lets the client read what is still to be written (while
   * it reads some of it at least every 3 seconds), then tells the protocol
   * layer the connection is closed.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#detach();
    this.#endInput();
    await this.#drained();
    this.onclose?.();
  }

  // Resolves once every write is flushed, or once the client has read nothing for OUTPUT_STALL_MS.
  async #drained(): Promise<void> {
    while (this.#unflushed > 0 && !this.#outputBroken) {
      const before = this.#output.writableLength;
      const flushed = this.#unflushed;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, OUTPUT_STALL_MS);
        this.#progress.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (this.#unflushed === flushed && this.#output.writableLength === before) return;
    }
  }

  #detach(): void {
    if (!this.#started) return;
    this.#input.off("data", this.#onData);
    this.#input.off("end", this.#onEnd);
    this.#input.off("close", this.#onEnd);
    this.#input.off("error", this.#onEnd);
    this.#input.pause();
    // As Deno's process.stdin does when paused: a stdin nobody reads keeps no process alive.
    if (this.#ownInput) (this.#input as net.Socket).unref();
  }

  #write(message: unknown): Promise<void> {
    if (this.#outputBroken || this.#output.destroyed || this.#output.writableEnded) return Promise.resolve();
    const line = JSON.stringify(message) + "\n";
    this.#unflushed++;
    return new Promise<void>((resolve) => {
      this.#output.write(line, (error) => {
        this.#unflushed--;
        for (const wake of this.#progress.splice(0)) wake();
        if (error) this.#onOutputError(error);
        resolve();
      });
      if (this.#output.writableLength > OUTPUT_HIGH_WATER && !this.#throttled) {
        this.#throttled = true;
        this.#input.pause();
        this.#output.once("drain", () => {
          this.#throttled = false;
          if (!this.#closed) this.#input.resume();
        });
      }
    });
  }

  #read(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.#take(chunk.subarray(start, end));
      if (newline === -1) break;
      this.#lineDone();
      start = newline + 1;
    }
  }

  // Bytes of the current line: kept while it fits, scanned for its id once it does not.
  #take(bytes: Uint8Array): void {
    if (this.#oversize) {
      this.#oversize.scanner.push(bytes);
      this.#oversize.bytes += bytes.length;
      return;
    }
    if (this.#length + bytes.length > this.maxMessageBytes) {
      const scanner = new IdScanner();
      for (const piece of this.#pieces) scanner.push(piece);
      scanner.push(bytes);
      this.#oversize = { scanner, bytes: this.#length + bytes.length };
      this.#pieces = [];
      this.#length = 0;
      return;
    }
    // The chunk's memory is shared with the stream's buffer; keep a view, not a copy.
    this.#pieces.push(bytes);
    this.#length += bytes.length;
  }

  #lineDone(): void {
    if (this.#oversize) {
      const { scanner, bytes } = this.#oversize;
      this.#oversize = undefined;
      const id = scanner.id ?? null;
      void this.#write(errorReply(
        id,
        JSONRPC_ERRORS.invalidRequest,
        `Invalid request: the message is ${mib(bytes)}, above the limit of ${mib(this.maxMessageBytes)} ` +
          "(send less, e.g. write a large file in parts)",
        { size: bytes, limit: this.maxMessageBytes },
      ));
      return;
    }
    const pieces = this.#pieces;
    const length = this.#length;
    this.#pieces = [];
    this.#length = 0;
    let line = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, length);
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    // Blank lines between messages are tolerated, as JSON text may be padded with whitespace.
    if (isBlank(line)) return;
    this.#dispatch(line);
  }

  #dispatch(line: Uint8Array): void {
    const frames = this.#protocolVersion === BATCH_PROTOCOL_VERSION ? judgeLine(line, true) : judgeLine(line);
    if (frames.kind !== "batch") {
      this.#pass(frames);
      return;
    }
    const batch: Batch = { waiting: new Set(), replies: [], reading: true, written: false };
    for (const frame of frames.frames) this.#pass(frame, batch);
    batch.reading = false;
    void this.#flush(batch);
  }

  // One message read, alone or in `batch`: its error reply, or the message passed on to the server.
  #pass(frame: Frame, batch?: Batch): void {
    const reply = (answer: JsonRpcErrorReply) => {
      if (batch !== undefined) batch.replies.push(answer);
      else void this.#write(answer);
    };
    if (frame.kind === "reply") {
      reply(frame.reply);
      return;
    }
    if (frame.kind === "drop") {
      this.onerror?.(new Error(`Dropped ${frame.reason}`));
      return;
    }
    let message = frame.message;
    if ("method" in message && "id" in message) {
      const key = String(message.id);
      if (this.#inFlight.has(key)) {
        reply(errorReply(
          message.id,
          JSONRPC_ERRORS.invalidRequest,
          `Invalid request: the id ${shownId(message.id)} belongs to a request still in flight; use a new id`,
        ));
        return;
      }
      // As over HTTP: a request before any initialize is not served. A tool called then ran with no protocol
      // version or client capabilities agreed. One read after an initialize still in flight is served after it.
      if (
        !this.#initialized && this.#initializeId === undefined && message.method !== "initialize" &&
        message.method !== "ping"
      ) {
        reply(errorReply(
          message.id,
          SERVER_NOT_INITIALIZED,
          `Server not initialized: send initialize (and wait for its answer) before ${message.method}`,
        ));
        return;
      }
      if (message.method === "initialize") {
        if (batch !== undefined) {
          reply(errorReply(message.id, JSONRPC_ERRORS.invalidRequest, "Invalid request: initialize comes alone"));
          return;
        }
        // The connection's one initialize: the server refuses any other (-32602 for malformed params, else -32600),
        // which therefore does not take its place here (one read while the first was in flight did, and the first
        // one's answer then initialized nothing).
        if (!this.#initialized && this.#initializeId === undefined) this.#initializeId = key;
      }
      this.#inFlight.set(key, message.id);
      if (batch !== undefined) {
        batch.waiting.add(key);
        this.#batchOf.set(key, batch);
      }
    } else if ("method" in message && message.method === "notifications/cancelled") {
      // A cancelled request gets no answer, so its id is free again. It is cancelled by the id it was sent with: the
      // SDK finds the call to stop by the exact id, and a cancellation of `"1"` for the request `1` freed the id while
      // the call ran on to the end (a command finishing what its client had stopped) and a new request took the id.
      const params = message.params as { requestId?: unknown } | undefined;
      // Only an id names a request: `[11]` or `{"id": 11}` spelled 11 as a string and cancelled the call 11.
      const cancelled = typeof params?.requestId === "string" || typeof params?.requestId === "number"
        ? params.requestId
        : undefined;
      // "The initialize request MUST NOT be cancelled": one that was would go unanswered and initialize nothing,
      // while it still counts as the connection's one initialize.
      if (cancelled !== undefined && String(cancelled) === this.#initializeId) {
        this.onerror?.(new Error("Dropped a cancellation of initialize, which is never cancelled"));
        return;
      }
      const sent = cancelled === undefined ? undefined : this.#inFlight.get(String(cancelled));
      if (sent !== undefined && sent !== cancelled) {
        message = { ...message, params: { ...params, requestId: sent } } as JSONRPCMessage;
      }
      if (cancelled !== undefined) void this.#settled(cancelled);
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error as Error);
      if ("method" in message && "id" in message) {
        const answer = errorReply(message.id, JSONRPC_ERRORS.internalError, "Internal error");
        if (batch !== undefined) batch.replies.push(answer);
        void this.#settled(message.id);
        if (batch === undefined) void this.#write(answer);
      }
    }
  }

  #finishInput(): void {
    // A last line without its newline is judged like any other: whole JSON is served, a cut one is a parse error.
    if (this.#oversize || this.#length > 0) this.#lineDone();
    this.#detach();
    this.#endInput();
  }
}

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}
