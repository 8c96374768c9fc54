// Protocol fuzzing of the real `main.ts serve` process: random and mutated
// JSON-RPC frames (wrong types in every field, huge and deeply nested values,
// invalid UTF-8, NULs, cut lines, random bytes) go down its stdin in small
// batches. After each batch the server must still answer `ping` and a real
// tool call correctly within a deadline; every frame that carries a usable
// request id must get exactly one answer with that id; nothing but JSON may
// appear on stdout; and the process must still be alive at the end. Bounded in
// frames and time (FUZZ_FRAMES, FUZZ_SECONDS); the seed is printed and can be
// replayed with FUZZ_SEED.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import fc from "fast-check";
import { callOutput, type RawServer, startRawServer } from "./_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const FRAMES = Number(process.env.FUZZ_FRAMES ?? 600);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const BATCH = 8;
const DEADLINE_MS = 5_000;

// Seeded numbers from fast-check, drawn once and cycled: every choice below replays from the seed. Without
// noBias, fast-check leans on edge values, which would pick the same mutation over and over.
const NUMBERS = fc.sample(fc.noBias(fc.integer({ min: 0, max: 2 ** 31 - 1 })), { seed: SEED, numRuns: 50_000 })
  .map((n) => n / 2 ** 31);
let drawn = 0;
const random = () => NUMBERS[drawn++ % NUMBERS.length];
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)];

const encoder = new TextEncoder();

function deep(depth: number, open: string, close: string, inner = "1"): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

// Values of every JSON type, including the awkward ones.
function oddValue(): unknown {
  return pick<() => unknown>([
    () => null,
    () => true,
    () => 0,
    () => -1,
    () => 1.5,
    () => 2 ** 53 + 2,
    () => 1e308,
    () => "",
    () => "x".repeat(int(5) === 0 ? 1_000_000 : 100),
    () => "\u0000\u001f\u2028\ufffd😀",
    () => [],
    () => [1, "a", null],
    () => ({}),
    () => ({ nested: { a: [1, { b: 2 }] } }),
    () => JSON.parse(deep(2_000, "[", "]")),
    () => Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i])),
  ])();
}

const METHODS = [
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "initialize",
  "logging/setLevel",
  "notifications/cancelled",
  "notifications/progress",
  "no/such/method",
  "",
];
const TOOLS = ["read_file", "write_file", "list_dir", "grep", "glob", "edit_file", "file_info", "sleep", "nope"];

interface Frame {
  bytes: Uint8Array;
  /** A usable id the frame was sent with, when the whole frame is valid JSON with a string or integer id. */
  id?: string | number;
}

let counter = 0;

function baseMessage(): Record<string, unknown> {
  const method = pick(METHODS);
  const message: Record<string, unknown> = { jsonrpc: "2.0", id: `f${counter++}`, method };
  if (method === "tools/call") {
    const name = pick(TOOLS);
    const args: Record<string, unknown> = {};
    for (const key of ["path", "pattern", "content", "old_text", "new_text", "seconds", "max_results"]) {
      if (random() < 0.4) {
        args[key] = random() < 0.5 ? pick(["f.txt", "*", "a*a*c", ".", "../x", "/etc/passwd"]) : oddValue();
      }
    }
    if (name === "sleep") args.seconds = 0.01;
    message.params = { name, arguments: args };
  } else if (random() < 0.7) message.params = random() < 0.8 ? { _meta: random() < 0.5 ? {} : oddValue() } : oddValue();
  return message;
}

function mutateFields(message: Record<string, unknown>): Record<string, unknown> {
  const out = { ...message };
  for (let n = int(3); n >= 0; n--) {
    const key = pick(["jsonrpc", "id", "method", "params", "result", "error", "extra"]);
    if (random() < 0.3) delete out[key];
    else out[key] = oddValue();
  }
  return out;
}

function bytesOf(text: string): Uint8Array {
  return encoder.encode(text);
}

function mutateBytes(line: Uint8Array): Uint8Array {
  const bytes = Uint8Array.from(line);
  const kind = int(6);
  if (kind === 0) return bytes.subarray(0, int(bytes.length)); // cut
  if (kind === 1) {
    for (let n = 1 + int(4); n > 0; n--) bytes[int(bytes.length)] = int(256); // flip bytes
    return bytes;
  }
  const at = int(bytes.length + 1);
  const insert = kind === 2 ? [0] : kind === 3 ? [0xff] : kind === 4 ? [0xc3, 0x28] : [0xed, 0xa0, 0x80]; // an encoded surrogate: not UTF-8
  return new Uint8Array([...bytes.subarray(0, at), ...insert, ...bytes.subarray(at)]);
}

function usableId(value: unknown): value is string | number {
  return typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));
}

function frame(): Frame {
  const kind = int(10);
  if (kind <= 2) {
    // A whole, well-formed JSON text with wrong or odd fields.
    const base = baseMessage();
    const message = kind === 0 ? base : mutateFields(base);
    const text = JSON.stringify(message);
    // Only the frame's own unique id is followed: a mutation may set an id (0, "") that other frames share.
    const id = message.id === base.id && usableId(message.id) && typeof message.method === "string"
      ? message.id
      : undefined;
    return { bytes: bytesOf(text), id };
  }
  if (kind <= 5) return { bytes: mutateBytes(bytesOf(JSON.stringify(baseMessage()))) };
  if (kind === 6) return { bytes: Uint8Array.from({ length: 1 + int(300) }, () => int(256)).filter((b) => b !== 10) };
  if (kind === 7) {
    // Deep nesting, in the params or on its own.
    const depth = pick([1_000, 10_000, 100_000]);
    const inner = random() < 0.5 ? deep(depth, "[", "]") : deep(depth, '{"a":', "}");
    const id = `deep${counter++}`;
    return { bytes: bytesOf(`{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"x":${inner}}}`), id };
  }
  if (kind === 8) {
    // A large string value in a real call.
    const id = `big${counter++}`;
    const content = "z".repeat(pick([100_000, 2_000_000, 8_000_000]));
    return {
      bytes: bytesOf(JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "grep", arguments: { pattern: content.slice(0, 50_000), path: "." } },
      })),
      id,
    };
  }
  // Escapes JSON allows but text cannot hold: lone surrogates, in keys and values.
  const id = `sur${counter++}`;
  return {
    bytes: bytesOf(
      `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"write_file",` +
        `"arguments":{"path":"s\\ud800.txt","content":"\\udc00","\\udfff":1}}}`,
    ),
    id,
  };
}

let workspace: string;
let server: RawServer;

describe("main.ts serve: protocol fuzzing", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-fuzz-")));
    await fsp.writeFile(path.join(workspace, "f.txt"), "fuzz target\n");
    server = await startRawServer(workspace);
  });
  after(async () => {
    await server?.close();
    await fsp.rm(workspace, { recursive: true, force: true });
  });

  describe("protocol fuzzing of the stdio server", () => {
    test(`random and mutated frames never stop it from answering (seed ${SEED})`, { timeout: 120_000 }, async () => {
      console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
      const started = performance.now();
      const expected = new Map<string | number, string>();
      let sent = 0;
      while (sent < FRAMES && performance.now() - started < SECONDS * 1000) {
        for (let i = 0; i < BATCH; i++, sent++) {
          const f = frame();
          if (f.id !== undefined) expected.set(f.id, new TextDecoder().decode(f.bytes.subarray(0, 200)));
          await server.write(f.bytes);
          await server.write("\n");
        }
        const ping = await server.request("ping", undefined, DEADLINE_MS);
        assert.deepEqual(ping.result, {}, `after ${sent} frames (seed ${SEED})`);
        const read = await server.request(
          "tools/call",
          { name: "read_file", arguments: { path: "f.txt" } },
          DEADLINE_MS,
        );
        assert.match(JSON.stringify(callOutput(read)), /fuzz target/, `after ${sent} frames (seed ${SEED})`);
        assert.equal(server.child.exitCode, null, `the server exited after ${sent} frames: ${server.stderr()}`);
      }
      // Every request with a usable id got exactly one answer (calls still running get a moment).
      for (const [id, head] of expected) {
        await server.reply(id, 30_000).catch(() => assert.fail(`no answer to ${id}: ${head} (seed ${SEED})`));
        const answers = server.replies.filter((r) => r.id === id && r.method === undefined);
        assert.equal(answers.length, 1, `${answers.length} answers to ${id}: ${head} (seed ${SEED})`);
      }
      assert.deepEqual(server.junk, [], "nothing but JSON on stdout");
      for (const r of server.replies) {
        if (!r.error) continue;
        assert.ok(
          [-32700, -32600, -32601, -32602, -32603, -32002].includes(r.error.code),
          JSON.stringify(r).slice(0, 300),
        );
        assert.ok(r.error.message.length < 400, `a short message: ${r.error.message.slice(0, 400)}`);
      }
      const internal = server.replies.filter((r) => r.error?.code === -32603);
      assert.deepEqual(internal.map((r) => r.error?.message), [], "no internal errors");
      assert.equal((await fsp.readdir(workspace)).some((n) => n.startsWith("s")), false, "no surrogate was rewritten");
      console.log(
        `${sent} frames in ${Math.round((performance.now() - started) / 1000)} s, ${expected.size} requests answered`,
      );
    });
  });
});
