/**
 * The egress proxy's cost: 1 MB from a loopback server, fetched directly and
 * through the proxy (judged by the policy's DestinationJudge, loopback named
 * on the list), by an in-process HTTP client and by curl; and by curl through
 * the sandboxed commands' path (socat on 127.0.0.1 relaying to the proxy's
 * unix socket), in interleaved rounds of one run.
 *
 * Run: deno run -A bench/egress.ts
 *
 * @module
 */

import { spawn, spawnSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DestinationJudge } from "../policy/egress/judge.ts";
import { startEgressProxy } from "../policy/egress/proxy.ts";
import { findSocat } from "../policy/egress/forwarder.ts";
import { comparePerCall, printRatios } from "./_measure.ts";

const MB = 1024 * 1024;
const payload = Buffer.alloc(MB, "x");
const server = http.createServer((_req, res) => res.writeHead(200, { "content-length": MB }).end(payload));
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;
const url = `http://127.0.0.1:${port}/1mb`;
const judge = new DestinationJudge({ allow: [`127.0.0.1:${port}`] }, { who: "The bench" });
const proxy = await startEgressProxy({ judge: (s, h, p) => judge.judge(s, h, p) });
const dir = await mkdtemp(join(tmpdir(), "toolfence-bench-egress-"));
const socketProxy = await startEgressProxy({
  judge: (s, h, p) => judge.judge(s, h, p),
  listen: { path: join(dir, "p.sock") },
});

function fetchOnce(options: http.RequestOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    http.get({ agent: false, ...options }, (res) => {
      let size = 0;
      res.on("data", (chunk: Buffer) => size += chunk.length);
      res.on("end", () => size === MB ? resolve() : reject(new Error(`got ${size} bytes`)));
    }).on("error", reject);
  });
}

function curl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("curl", ["-sS", "-o", "/dev/null", "-w", "%{size_download}", ...args, url]);
    let out = "";
    child.stdout.on("data", (d) => out += d);
    child.once("error", reject);
    child.once("close", () => out === String(MB) ? resolve() : reject(new Error(`curl: ${out}`)));
  });
}

const candidates: [string, () => Promise<void>][] = [
  ["http client, direct", () => fetchOnce({ host: "127.0.0.1", port, path: "/1mb" })],
  ["http client, via proxy", () => fetchOnce({ host: "127.0.0.1", port: proxy.port, path: url })],
  ["curl, direct", () => curl([])],
  ["curl, via proxy", () => curl(["-x", `http://127.0.0.1:${proxy.port}`])],
];
const socat = await findSocat();
const relays: ReturnType<typeof spawn>[] = [];
const SANDBOX_PATH = "curl, via socat + unix-socket proxy";
if (socat && spawnSync("curl", ["--version"]).status === 0) {
  // The relay as the sandbox starts it (policy/egress/forwarder.ts), and with socat's default 8 KiB buffer.
  for (const [name, buffer] of [[SANDBOX_PATH, "262144"], ["curl, via socat -b 8192 + unix-socket proxy", "8192"]]) {
    const relayPort = 20_000 + Math.floor(Math.random() * 20_000);
    relays.push(spawn(socat, [
      "-b",
      buffer,
      `TCP-LISTEN:${relayPort},bind=127.0.0.1,reuseaddr,fork`,
      `UNIX-CONNECT:${join(dir, "p.sock")}`,
    ], { stdio: "ignore" }));
    candidates.push([name, () => curl(["-x", `http://127.0.0.1:${relayPort}`])]);
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
}

const rows = await comparePerCall(candidates, { rounds: Number(Deno.env.get("BENCH_ROUNDS") ?? 11), iterations: 10 });
const ms = rows.map(([name, micros]) => [name, micros / 1000] as [string, number]);
printRatios("1 MB from a loopback server (median ms per download)", ms, "ms", "curl, direct", {
  "curl, via proxy": "≤ 1.2x",
  "curl, via socat + unix-socket proxy": "≤ 1.2x",
});
const by = Object.fromEntries(ms);
console.log(
  `  through the proxy: http client ${(by["http client, via proxy"] / by["http client, direct"]).toFixed(2)}x, ` +
    `curl ${(by["curl, via proxy"] / by["curl, direct"]).toFixed(2)}x` +
    (by[SANDBOX_PATH]
      ? `, curl through the sandbox's path ${(by[SANDBOX_PATH] / by["curl, direct"]).toFixed(2)}x`
      : ""),
);
for (const relay of relays) relay.kill();
await proxy.close();
await socketProxy.close();
await new Promise((resolve) => server.close(resolve));
await rm(dir, { recursive: true, force: true });
