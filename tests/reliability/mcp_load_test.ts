// Load: 1,000 calls through `main.ts serve` from several concurrent MCP SDK
// clients over stdio (one server process per client, as stdio MCP works, all
// on one workspace), a mix of read_file, grep and small edit_file calls with
// several calls in flight per client. Every response is checked, every edit
// must be there at the end (each client edits its own marker lines, so a lost
// edit shows), and each server's resident memory is read from /proc at the
// start, after a warm-up share of its calls (V8 grows its heap and compiles
// the tools' code during the first couple of hundred calls; measured here, RSS
// then stays level over thousands of calls), and at the end; the slowest call
// is reported.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const CLIENTS = 4;
const CALLS_PER_CLIENT = 250;
const IN_FLIGHT = 8;
const DATA_FILES = 12;
const LINES_PER_FILE = 400;
const MARKERS = 20;
const WARM_UP_CALLS = 100;
/** Growth allowed after the warm-up: the plateau itself moves by up to about 30 MiB as V8 collects. */
const FLAT_KIB = 64 * 1024;
const GROUPS = "fs,search,patch";
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = path.join(ROOT, "main.ts");
// deno itself, also when the npm build runs this file under Node (process.execPath is node there).
const run = promisify(execFile);

let workspace: string;
describe("main.ts serve under load", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-load-")));
    await fsp.mkdir(path.join(workspace, "data"));
    for (let j = 0; j < DATA_FILES; j++) {
      const lines = Array.from({ length: LINES_PER_FILE }, (_, n) => `line ${n + 1} of file-${j}`);
      lines[(j * 37) % LINES_PER_FILE] += ` needle-${j}`;
      await fsp.writeFile(path.join(workspace, "data", `file-${j}.txt`), lines.join("\n") + "\n");
    }
    for (let i = 0; i < CLIENTS; i++) {
      const lines = Array.from({ length: MARKERS }, (_, k) => `marker ${i}-${k} v0`);
      await fsp.writeFile(
        path.join(workspace, `client-${i}.txt`),
        `header of client ${i}\n${lines.join("\n")}\nfooter\n`,
      );
    }
  });
  after(() => fsp.rm(workspace, { recursive: true, force: true }));

  function rssKiB(pid: number): Promise<number> {
    return fsp.readFile(`/proc/${pid}/status`, "utf8").then((status) => Number(/VmRSS:\s+(\d+)/.exec(status)![1]));
  }

  function text(result: CallToolResult): string {
    return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  }

  interface Planned {
    tool: string;
    args: Record<string, unknown>;
    /** Says what is wrong with the response, or undefined when it is right. */
    check(result: CallToolResult): string | undefined;
  }

  /** The i-th client's calls: reads, greps and edits of its own marker lines, in a fixed mix. */
  function plan(client: number): Planned[] {
    const calls: Planned[] = [];
    let edits = 0;
    for (let n = 0; n < CALLS_PER_CLIENT; n++) {
      const j = (n * 7 + client) % DATA_FILES;
      const kind = n % 10;
      if (kind < 4) {
        const offset = (n * 13 + client * 29) % (LINES_PER_FILE - 5);
        calls.push({
          tool: "read_file",
          args: { path: `data/file-${j}.txt`, offset, limit: 3 },
          check: (result) => {
            const out = text(result);
            if (result.isError) return `error: ${out}`;
            for (let line = offset + 1; line <= offset + 3; line++) {
              if (!out.includes(`line ${line} of file-${j}`)) return `line ${line} missing: ${out.slice(0, 200)}`;
            }
            if (out.includes(`line ${offset + 4} of file-${j}\n`)) return "read past the limit";
          },
        });
      } else if (kind < 7) {
        calls.push({
          tool: "grep",
          args: { pattern: `needle-${j}\\b`, path: "data" },
          check: (result) => {
            const out = text(result);
            if (result.isError) return `error: ${out}`;
            if (!out.includes(`file-${j}.txt`)) return `file-${j}.txt not found: ${out.slice(0, 200)}`;
            const others = [...out.matchAll(/file-(\d+)\.txt/g)].filter((m) => Number(m[1]) !== j);
            if (others.length > 0) return `unexpected matches in ${others.map((m) => m[0])}`;
          },
        });
      } else {
        const marker = edits % MARKERS;
        const version = Math.floor(edits / MARKERS);
        edits++;
        calls.push({
          tool: "edit_file",
          args: {
            path: `client-${client}.txt`,
            old_text: `marker ${client}-${marker} v${version}\n`,
            new_text: `marker ${client}-${marker} v${version + 1}\n`,
          },
          check: (result) => result.isError ? `error: ${text(result)}` : undefined,
        });
      }
    }
    return calls;
  }

  /** The content each client's file must have once all its edits are applied. */
  function expectedFile(client: number): string {
    const editCount = plan(client).filter((c) => c.tool === "edit_file").length;
    const lines = Array.from({ length: MARKERS }, (_, k) => {
      const version = Math.floor(editCount / MARKERS) + (k < editCount % MARKERS ? 1 : 0);
      return `marker ${client}-${k} v${version}`;
    });
    return `header of client ${client}\n${lines.join("\n")}\nfooter\n`;
  }

  interface ClientRun {
    wrong: string[];
    latencies: { ms: number; tool: string }[];
    rssStart: number;
    rssWarm: number;
    rssEnd: number;
  }

  async function runClient(client: number, flags: string[]): Promise<ClientRun> {
    const transport = new StdioClientTransport({
      command: DENO,
      args: ["run", ...flags, MAIN, "serve", "--workspace", workspace, "--groups", GROUPS, "--auto-confirm"],
      cwd: ROOT,
      stderr: "pipe",
    });
    const mcp = new Client({ name: `load-${client}`, version: "1.0.0" });
    await mcp.connect(transport);
    try {
      const pid = transport.pid!;
      const calls = plan(client);
      const wrong: string[] = [];
      const latencies: { ms: number; tool: string }[] = [];
      const rssStart = await rssKiB(pid);
      let next = 0;
      const lane = (until: number) => async () => {
        while (next < until) {
          const planned = calls[next++];
          const started = performance.now();
          const result = await mcp.callTool({ name: planned.tool, arguments: planned.args }) as CallToolResult;
          latencies.push({ ms: performance.now() - started, tool: planned.tool });
          const problem = planned.check(result);
          if (problem !== undefined) {
            wrong.push(`client ${client} ${planned.tool} ${JSON.stringify(planned.args)}: ${problem}`);
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane(WARM_UP_CALLS)));
      const rssWarm = await rssKiB(pid);
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane(calls.length)));
      const rssEnd = await rssKiB(pid);
      return { wrong, latencies, rssStart, rssWarm, rssEnd };
    } finally {
      await mcp.close();
    }
  }

  describe("MCP server under load", () => {
    test(`${CLIENTS * CALLS_PER_CLIENT} calls from ${CLIENTS} stdio clients: all correct, no lost edit, memory flat`, {
      timeout: 90_000,
    }, async (t) => {
      if (process.platform !== "linux") return t.skip("reads server memory from /proc");
      const { stdout } = await run(
        DENO,
        ["run", "-A", MAIN, "flags", "--workspace", workspace, "--groups", GROUPS],
        { cwd: ROOT },
      );
      const flags = stdout.trim().split(/\s+/);
      const started = performance.now();
      const runs = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => runClient(i, flags)));
      const seconds = (performance.now() - started) / 1000;
      const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a.ms - b.ms);
      const slowest = latencies[latencies.length - 1];
      const p50 = latencies[Math.floor(latencies.length / 2)].ms;
      const p99 = latencies[Math.floor(latencies.length * 0.99)].ms;
      const mib = (kib: number) => Math.round(kib / 1024);
      const rss = runs.map((r) => `${mib(r.rssStart)}/${mib(r.rssWarm)}/${mib(r.rssEnd)}`).join(", ");
      console.log(
        `mcp load: ${latencies.length} calls from ${CLIENTS} clients in ${seconds.toFixed(1)} s, ` +
          `${runs.flatMap((r) => r.wrong).length} wrong, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
          `slowest ${
            slowest.ms.toFixed(1)
          } ms (${slowest.tool}), server RSS MiB start/after ${WARM_UP_CALLS} calls/end: ${rss}`,
      );
      assert.equal(latencies.length, CLIENTS * CALLS_PER_CLIENT);
      assert.deepEqual(runs.flatMap((r) => r.wrong).slice(0, 10), []);
      for (let i = 0; i < CLIENTS; i++) {
        assert.equal(
          await fsp.readFile(path.join(workspace, `client-${i}.txt`), "utf8"),
          expectedFile(i),
          `client ${i}`,
        );
      }
      for (const r of runs) {
        assert.ok(
          r.rssEnd - r.rssWarm < FLAT_KIB,
          `server RSS grew from ${r.rssWarm} to ${r.rssEnd} KiB after warming up`,
        );
      }
    });
  });
});
