/**
 * The HTTP server under load against the stdio server, in one run: CLIENTS
 * concurrent clients making CALLS mixed calls each (read_file, grep and
 * edit_file on their own files, and bash), every answer checked. Over HTTP,
 * each client is its own tenant (its own token, session and workspace folder)
 * of one `serve --http` process; over stdio, the same calls run as CLIENTS
 * concurrent workers on one `serve` process (stdio serves one client), each in
 * its own folder. Calls per second, p50 and p99 latency, wrong answers.
 *
 * `deno run -A bench/http.ts [CLIENTS] [CALLS]`; default 64 x 200 (2 x 8 at
 * the tiny size). Target (issue 30): HTTP at least 0.8x of stdio's throughput.
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { tokenHash } from "../adapters/mcp/_http_tokens.ts";
import { record, sized } from "./_report.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(ROOT, "main.ts");
const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const CLIENTS = Number(args[0] ?? sized(64, 2));
// At the tiny size each client still makes every kind of call (bash is its eighth).
const CALLS = Number(args[1] ?? sized(200, 8));
const GROUPS = "fs,search,cmd,patch";
// Commands under bubblewrap on both sides: a server of several tenants refuses them without it (each tenant's
// command would see the others' folders), so the HTTP side's bash calls were all refused with the sandbox off.
const SERVE = ["--groups", GROUPS, "--auto-confirm", "--sandbox", "required"];

interface Outcome {
  latencies: number[];
  wrong: string[];
  seconds: number;
  /** CPU seconds the server process spent during the calls (Linux /proc). */
  serverCpu: number;
}

/** User + system CPU seconds of a process and its waited-for children (bash, rg) so far. */
async function cpuSeconds(pid: number | undefined | null): Promise<number> {
  if (!pid) return NaN;
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.map((c) => c.text ?? "").join("");
}

/** One client's calls on its folder `prefix` (relative to the workspace it sees). */
async function drive(client: Client, prefix: string, me: number, outcome: Outcome): Promise<void> {
  const file = `${prefix}notes.txt`;
  let value = 0;
  const call = async (name: string, args: Record<string, unknown>, check: (text: string) => boolean) => {
    const start = performance.now();
    const result = await client.callTool({ name, arguments: args });
    outcome.latencies.push(performance.now() - start);
    const text = textOf(result);
    if (result.isError || !check(text)) outcome.wrong.push(`${me} ${name}: ${text.slice(0, 160)}`);
  };
  await call("write_file", { path: file, content: `client ${me}\nvalue=${value}\n` }, () => true);
  for (let i = 1; i < CALLS; i++) {
    switch (i % 8) {
      case 2:
      case 5:
        await call(
          "edit_file",
          { path: file, old_text: `value=${value}\n`, new_text: `value=${value + 1}\n` },
          () => true,
        );
        value++;
        break;
      case 1:
      case 4:
        await call("grep", { pattern: "^value=\\d+$", path: prefix || "." }, (t) => t.includes(`value=${value}`));
        break;
      case 7:
        await call("bash", { command: `echo client-${me}-${i}` }, (t) => t.includes(`client-${me}-${i}`));
        break;
      default:
        await call(
          "read_file",
          { path: file },
          (t) => t.includes(`client ${me}`) && t.includes(`value=${value}`),
        );
    }
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function overStdio(dir: string): Promise<Outcome> {
  const client = new Client({ name: "bench-stdio", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["run", "-A", MAIN, "serve", "--workspace", dir, ...SERVE],
    cwd: ROOT,
    stderr: "ignore",
  });
  await client.connect(transport);
  const outcome: Outcome = { latencies: [], wrong: [], seconds: 0, serverCpu: 0 };
  for (let i = 0; i < CLIENTS; i++) await mkdir(join(dir, `c${i}`));
  const cpu = await cpuSeconds(transport.pid);
  const start = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => drive(client, `c${i}/`, i, outcome)));
  outcome.seconds = (performance.now() - start) / 1000;
  outcome.serverCpu = (await cpuSeconds(transport.pid)) - cpu;
  await client.close();
  return outcome;
}

async function overHttp(dir: string): Promise<Outcome> {
  const tokens = Array.from({ length: CLIENTS }, (_, i) => `bench-token-${i}-${crypto.randomUUID()}`);
  const tokenFile = join(dir, "tokens.json");
  await writeFile(
    tokenFile,
    JSON.stringify({ tokens: tokens.map((t, i) => ({ sha256: tokenHash(t), tenant: `c${i}` })) }),
  );
  await mkdir(join(dir, "tenants"));
  const server = spawn(
    process.execPath,
    [
      "run",
      "-A",
      MAIN,
      "serve",
      "--http",
      "127.0.0.1:0",
      "--token-file",
      tokenFile,
      "--tenant-root",
      join(dir, "tenants"),
      "--workspace",
      dir,
      "--calls-per-minute",
      "1000000",
      ...SERVE,
    ],
    { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  try {
    const url = await new Promise<URL>((resolve, reject) => {
      let stderr = "";
      server.stderr!.on("data", (chunk) => {
        stderr += chunk;
        const found = /serving MCP on (\S+)/.exec(stderr);
        if (found) resolve(new URL(found[1]));
      });
      server.on("close", () => reject(new Error(stderr)));
    });
    const clients = await Promise.all(tokens.map(async (token) => {
      const client = new Client({ name: "bench-http", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      return client;
    }));
    const outcome: Outcome = { latencies: [], wrong: [], seconds: 0, serverCpu: 0 };
    const cpu = await cpuSeconds(server.pid);
    const start = performance.now();
    await Promise.all(clients.map((client, i) => drive(client, "", i, outcome)));
    outcome.seconds = (performance.now() - start) / 1000;
    outcome.serverCpu = (await cpuSeconds(server.pid)) - cpu;
    await Promise.all(clients.map((c) => c.close()));
    return outcome;
  } finally {
    server.kill("SIGTERM");
    await new Promise((done) => server.once("close", done));
  }
}

const dir = await realpath(await mkdtemp(join(os.tmpdir(), "toolfence-bench-http-")));
try {
  await mkdir(join(dir, "stdio"));
  await mkdir(join(dir, "http"));
  console.log(`${CLIENTS} clients x ${CALLS} calls (1/8 bash, 2/8 edit_file, 2/8 grep, 3/8 read_file)`);
  const stdio = await overStdio(join(dir, "stdio"));
  const http = await overHttp(join(dir, "http"));
  const rows = [["stdio (one client, 64 workers)", stdio], ["Streamable HTTP (64 tenants)", http]] as const;
  const lines = [
    "| transport | calls | calls/s | p50 ms | p99 ms | server CPU ms/call | wrong answers |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(([name, o]) =>
      `| ${name.replace("64", String(CLIENTS))} | ${o.latencies.length} | ${
        (o.latencies.length / o.seconds).toFixed(0)
      } | ${percentile(o.latencies, 0.5).toFixed(1)} | ${percentile(o.latencies, 0.99).toFixed(1)} | ${
        (o.serverCpu * 1000 / o.latencies.length).toFixed(2)
      } | ${o.wrong.length} |`
    ),
  ];
  const ratio = (http.latencies.length / http.seconds) / (stdio.latencies.length / stdio.seconds);
  lines.push("", `HTTP throughput / stdio throughput: ${ratio.toFixed(2)}`);
  console.log(lines.join("\n"));
  for (const wrong of [...stdio.wrong, ...http.wrong].slice(0, 10)) console.log("wrong:", wrong);
  const stdioRate = stdio.latencies.length / stdio.seconds;
  record([
    {
      group: `MCP throughput, ${CLIENTS} clients x ${CALLS} mixed calls`,
      name: "stdio",
      value: stdioRate,
      unit: "calls/s",
      peer: "stdio",
      ratio: 1,
    },
    {
      group: `MCP throughput, ${CLIENTS} clients x ${CALLS} mixed calls`,
      name: "Streamable HTTP",
      value: stdioRate * ratio,
      unit: "calls/s",
      peer: "stdio",
      ratio,
      target: "≥ 0.8x",
      met: ratio >= 0.8,
    },
  ]);
  if (stdio.wrong.length + http.wrong.length > 0) process.exitCode = 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
