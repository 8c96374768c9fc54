// The real `main.ts serve` process, spoken to in raw bytes: what a hostile or
// careless client sends (cut lines, invalid UTF-8, huge or deep values) goes
// down the pipe exactly as written, and every line that comes back is parsed
// and kept. Started with the narrow flags `main.ts flags` prints, never -A.

import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { DENO } from "../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = join(ROOT, "main.ts");
const run = promisify(execFile);

/** One message the server wrote. */
export interface Reply {
  jsonrpc?: string;
  id?: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  method?: string;
  params?: unknown;
}

/** A running server. */
export interface RawServer {
  readonly child: ChildProcess;
  /** Every message received so far, in order. */
  readonly replies: Reply[];
  /** Whatever the server wrote to stderr. */
  stderr(): string;
  /** Lines on stdout that were not JSON (must stay empty). */
  readonly junk: string[];
  /** Writes bytes as they are. */
  write(bytes: string | Uint8Array): Promise<void>;
  /** Sends a request and waits for the reply with its id. */
  request(method: string, params?: unknown, timeoutMs?: number): Promise<Reply & { ms: number }>;
  /** Waits for the reply with `id`. */
  reply(id: string | number, timeoutMs?: number): Promise<Reply>;
  /** Waits until `count` replies with id null have arrived since `from`. */
  nullReplies(from: number, count: number, timeoutMs?: number): Promise<Reply[]>;
  /** Waits until `count` batch answers (JSON arrays) have arrived since `from`. */
  batchReplies(from: number, count: number, timeoutMs?: number): Promise<Reply[][]>;
  /** Peak resident memory of the server so far, in bytes (Linux). */
  peakRss(): number;
  /** Closes stdin and waits for the exit; kills after `timeoutMs`. */
  close(timeoutMs?: number): Promise<number | null>;
}

let nextId = 1_000_000;

/** The narrowest `deno run` flags for serving `workspace` with `groups`, as `main.ts flags` prints them. */
export async function narrowFlags(workspace: string, groups: string, extra: string[] = []): Promise<string[]> {
  const args = ["run", "-A", MAIN, "flags", "--workspace", workspace, "--groups", groups, ...extra];
  const { stdout } = await run(DENO, args, { cwd: ROOT });
  const flags = stdout.trim().split(/\s+/);
  assert.ok(!flags.includes("-A") && !flags.includes("--allow-all"), "never -A");
  return flags;
}

/**
 * Starts `main.ts serve` on `workspace` with the given groups and extra arguments, and initializes the connection
 * (`initialize: false` leaves that to the test).
 */
export async function startRawServer(
  workspace: string,
  options: { groups?: string; args?: string[]; tempDir?: string; protocolVersion?: string; initialize?: boolean } = {},
): Promise<RawServer> {
  const groups = options.groups ?? "fs,search,patch,system";
  const tempArgs = options.tempDir ? ["--temp-dir", options.tempDir] : [];
  const flags = await narrowFlags(workspace, groups, tempArgs);
  const child = spawn(
    DENO,
    [
      "run",
      ...flags,
      MAIN,
      "serve",
      "--workspace",
      workspace,
      "--groups",
      groups,
      ...tempArgs,
      ...(options.args ?? []),
    ],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] },
  );
  const replies: Reply[] = [];
  const junk: string[] = [];
  const waiters = new Set<() => void>();
  let err = "";
  const chunks: Buffer[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      chunks.push(chunk.subarray(start, nl));
      const line = Buffer.concat(chunks).toString("utf8");
      chunks.length = 0;
      start = nl + 1;
      try {
        replies.push(JSON.parse(line));
      } catch {
        junk.push(line.slice(0, 200));
      }
    }
    if (start < chunk.length) chunks.push(chunk.subarray(start));
    for (const wake of [...waiters]) wake();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    if (err.length < 100_000) err += chunk.toString();
  });
  child.stdin!.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

  const until = <T>(find: () => T | undefined, timeoutMs: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${what} within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  const write = (bytes: string | Uint8Array) =>
    new Promise<void>((resolve, reject) => child.stdin!.write(bytes, (error) => (error ? reject(error) : resolve())));
  const reply = (id: string | number, timeoutMs = 10_000) =>
    until(() => replies.find((r) => r.id === id && r.method === undefined), timeoutMs, `reply to ${id}`);
  const server: RawServer = {
    child,
    replies,
    junk,
    stderr: () => err,
    write,
    reply,
    async request(method, params, timeoutMs = 10_000) {
      const id = nextId++;
      const started = performance.now();
      await write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) + "\n");
      const got = await reply(id, timeoutMs);
      return { ...got, ms: performance.now() - started };
    },
    nullReplies(from, count, timeoutMs = 10_000) {
      return until(
        () => {
          const found = replies.slice(from).filter((r) => r.id === null);
          return found.length >= count ? found : undefined;
        },
        timeoutMs,
        `${count} replies with id null`,
      );
    },
    batchReplies(from, count, timeoutMs = 10_000) {
      return until(
        () => {
          const found = replies.slice(from).filter((r): r is Reply & Reply[] => Array.isArray(r)) as Reply[][];
          return found.length >= count ? found : undefined;
        },
        timeoutMs,
        `${count} batch answers`,
      );
    },
    peakRss() {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024;
    },
    async close(timeoutMs = 20_000) {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  if (options.initialize === false) return server;
  const init = await server.request("initialize", {
    protocolVersion: options.protocolVersion ?? "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-test", version: "1.0.0" },
  }, 30_000);
  assert.ok(init.result, JSON.stringify(init));
  await write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  return server;
}

/** The text of a tools/call result, parsed when it is JSON. */
export function callOutput(reply: Reply): unknown {
  const content = (reply.result?.content as { type: string; text: string }[] | undefined) ?? [];
  const text = content.find((c) => c.type === "text")?.text ?? "";
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
