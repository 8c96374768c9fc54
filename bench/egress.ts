/**
 * The egress proxy's cost: 1 MB from a loopback server, fetched directly and
 * through the proxy (judged by the policy's DestinationJudge, loopback named
 * on the list), by an in-process HTTP client and by curl; and through the
 * sandboxed commands' path: the relay started by the very argv the sandbox
 * runs (`forwarderArgv`: the resident Perl relay, and socat's launcher), with
 * the proxy's unix socket bound where the sandbox binds it, relaying to the
 * proxy listening on that socket. The relay runs under bubblewrap with the
 * host's network (so that this process can reach its port) and a private
 * /tmp; in a command's sandbox it runs the same way in a namespace of its
 * own. Interleaved rounds of one run. Then what the relay's start adds to a
 * command with the network: `/bin/true` in the sandbox without a network and
 * with each relay.
 *
 * Run: deno run -A bench/egress.ts
 *
 * @module
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { DestinationJudge } from "../policy/egress/judge.ts";
import { startEgressProxy } from "../policy/egress/proxy.ts";
import { findForwarder, findSocat, type Forwarder, forwarderArgv, proxyMountArgs } from "../policy/egress/forwarder.ts";
import { bubblewrapPath, sandboxArgv } from "../policy/sandbox.ts";
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

const hasCurl = spawnSync("curl", ["--version"]).status === 0;
const candidates: [string, () => Promise<void>][] = [
  ["http client, direct", () => fetchOnce({ host: "127.0.0.1", port, path: "/1mb" })],
  ["http client, via proxy", () => fetchOnce({ host: "127.0.0.1", port: proxy.port, path: url })],
  ...(hasCurl
    ? [
      ["curl, direct", () => curl([])],
      ["curl, via proxy", () => curl(["-x", `http://127.0.0.1:${proxy.port}`])],
    ] as [string, () => Promise<void>][]
    : []),
];

// The relay as a command's sandbox starts it, listening on the host's loopback (bubblewrap keeps the network).
async function startRelay(forwarder: Forwarder, bwrap: string): Promise<[ChildProcess, number]> {
  const relayPort = 20_000 + Math.floor(Math.random() * 20_000);
  const sandboxProxy = { socket: join(dir, "p.sock"), port: relayPort, forwarder };
  const argv = ["--dev-bind", "/", "/", "--tmpfs", "/tmp", ...proxyMountArgs(sandboxProxy), "--die-with-parent"];
  const relay = spawn(bwrap, [...argv, "--", ...forwarderArgv(sandboxProxy, ["sleep", "100000"])], {
    stdio: "ignore",
    detached: true,
  });
  for (let i = 0; i < 300; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const probe = net.connect(relayPort, "127.0.0.1", () => resolve(true)).on("error", () => resolve(false));
      probe.once("connect", () => probe.destroy());
    });
    if (up) return [relay, relayPort];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the ${forwarder.kind} relay did not listen`);
}

const relays: ChildProcess[] = [];
const bwrap = await bubblewrapPath();
const chosen = await findForwarder();
const socat = await findSocat();
const forwarders = [chosen, ...(socat && chosen?.kind !== "socat" ? [{ kind: "socat", path: socat } as const] : [])];
const targets: Record<string, string> = { "curl, via proxy": "≤ 1.2x" };
for (const forwarder of bwrap ? forwarders : []) {
  if (forwarder === undefined) continue;
  const [relay, relayPort] = await startRelay(forwarder, bwrap!);
  relays.push(relay);
  const proxyUrl = `http://127.0.0.1:${relayPort}`;
  candidates.push([
    `http client, via ${forwarder.kind} relay + unix-socket proxy`,
    () => fetchOnce({ host: "127.0.0.1", port: relayPort, path: url }),
  ]);
  if (hasCurl) candidates.push([`curl, via ${forwarder.kind} relay + unix-socket proxy`, () => curl(["-x", proxyUrl])]);
  if (forwarder === chosen) targets[`curl, via ${forwarder.kind} relay + unix-socket proxy`] = "≤ 1.2x";
}

const rows = await comparePerCall(candidates, { rounds: Number(Deno.env.get("BENCH_ROUNDS") ?? 11), iterations: 10 });
const ms = rows.map(([name, micros]) => [name, micros / 1000] as [string, number]);
printRatios(
  "1 MB from a loopback server (median ms per download)",
  ms,
  "ms",
  hasCurl ? "curl, direct" : "http client, direct",
  targets,
);
const by = Object.fromEntries(ms);
const ratio = (name: string, peer: string) => by[name] ? ` ${name}: ${(by[name] / by[peer]).toFixed(2)}x;` : "";
console.log(
  "  against the same client direct:" +
    ratio("http client, via proxy", "http client, direct") +
    forwarders.map((f) => f && ratio(`http client, via ${f.kind} relay + unix-socket proxy`, "http client, direct"))
      .join(""),
);
for (const relay of relays) process.kill(-relay.pid!);

// What the relay's start adds to a command that has the network: `/bin/true` in the sandbox without and with it.
if (bwrap) {
  const workspace = join(await realpath(dir), "workspace");
  await mkdir(workspace);
  const releases: (() => Promise<unknown>)[] = [];
  const sandboxed = async (forwarder?: Forwarder) => {
    const command = await sandboxArgv(["/bin/true"], {
      workdir: workspace,
      writable: [workspace],
      workspace,
      mode: "required",
      ...(forwarder ? { network: { proxy: { socket: join(dir, "p.sock"), port: 3128, forwarder } } } : {}),
    });
    releases.push(command.release);
    return command.argv;
  };
  const run = (argv: string[]) => () => {
    const ran = spawnSync(argv[0], argv.slice(1));
    if (ran.status !== 0) throw new Error(`${argv.at(-1)}: ${ran.stderr}`);
  };
  const starts: [string, () => void][] = [["sandboxed `true`, no network", run(await sandboxed())]];
  for (const forwarder of forwarders) {
    if (forwarder) starts.push([`sandboxed \`true\`, ${forwarder.kind} relay`, run(await sandboxed(forwarder))]);
  }
  const startRows = await comparePerCall(starts, { rounds: 7, iterations: 5 });
  printRatios(
    "A command's start with the network (median ms per run)",
    startRows.map(([name, micros]) => [name, micros / 1000]),
    "ms",
    "sandboxed `true`, no network",
  );
  for (const release of releases) await release();
}
await proxy.close();
await socketProxy.close();
await new Promise((resolve) => server.close(resolve));
await rm(dir, { recursive: true, force: true });
