/**
 * The MCP server against `@modelcontextprotocol/server-filesystem`, in one
 * run: `tools/call` per second over stdio, through the official SDK client,
 * for a small file: our `read_file` (toolfence served by `deno run` with the
 * narrow flags of `main.ts flags`) against its `read_text_file` (run with
 * node from node_modules), and our `bash_list`, which does next to nothing,
 * for the cost of the server and transport themselves. Calls one at a time (latency-bound) and eight in
 * flight (throughput-bound), in interleaved rounds, medians; ratios against
 * the reference server.
 *
 * `deno run -A bench/mcp.ts`. Target (issue 30): read_file at least 1.5x the
 * reference's calls per second, with 1 and 8 in flight.
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { median } from "./_measure.ts";
import { record, sized, TINY } from "./_report.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(ROOT, "main.ts");
const REFERENCE = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const ROUNDS = sized(7, 1);
const CALLS_PER_ROUND = sized(400, 8);
const IN_FLIGHT = 8;

interface Candidate {
  name: string;
  client: Client;
  call: () => Promise<string>;
}

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "toolfence-bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, cwd: ROOT, stderr: "ignore" }));
  return client;
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content.map((c) => c.text ?? "").join("");
}

/** Calls per second for `total` calls with `inFlight` outstanding at a time. */
async function rate(call: () => Promise<string>, total: number, inFlight: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next++ < total) await call();
  }));
  return total / ((performance.now() - start) / 1000);
}

const dir = await realpath(await mkdtemp(join(os.tmpdir(), "toolfence-bench-mcp-")));
const content = Array.from({ length: 20 }, (_, i) => `line ${i + 1}: the quick brown fox`).join("\n") + "\n";
await writeFile(join(dir, "small.txt"), content);

const GROUPS = "fs,cmd";
const flags = execFileSync(process.execPath, ["run", "-A", MAIN, "flags", "--workspace", dir, "--groups", GROUPS], {
  cwd: ROOT,
  encoding: "utf8",
}).trim().split(/\s+/);
const ours = await connect(process.execPath, [
  "run",
  ...flags,
  MAIN,
  "serve",
  "--workspace",
  dir,
  "--groups",
  GROUPS,
]);
const reference = await connect("node", [REFERENCE, dir]);
const candidates: Candidate[] = [
  {
    name: "server-filesystem read_text_file (node)",
    client: reference,
    call: async () =>
      textOf(await reference.callTool({ name: "read_text_file", arguments: { path: join(dir, "small.txt") } })),
  },
  {
    name: "toolfence read_file (deno, narrow flags)",
    client: ours,
    call: async () => textOf(await ours.callTool({ name: "read_file", arguments: { path: "small.txt" } })),
  },
  {
    // The same server and transport with a tool that does almost nothing (lists no background jobs):
    // what the server and the transport cost, without the file access.
    name: "toolfence bash_list (no file access)",
    client: ours,
    call: async () => textOf(await ours.callTool({ name: "bash_list", arguments: {} })),
  },
];

try {
  // Both must really read the file: our result is JSON with the content, theirs the text itself.
  for (const c of candidates.slice(0, 2)) {
    const text = await c.call();
    if (!text.includes("line 20: the quick brown fox")) throw new Error(`${c.name} returned ${text.slice(0, 200)}`);
  }
  const results = new Map<string, { serial: number[]; parallel: number[] }>(
    candidates.map((c) => [c.name, { serial: [], parallel: [] }]),
  );
  // A warm-up round, none at the tiny size: the round below calls each candidate the same way.
  if (!TINY) { for (const c of candidates) await rate(c.call, CALLS_PER_ROUND, IN_FLIGHT); }
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of candidates) {
      results.get(c.name)!.serial.push(await rate(c.call, CALLS_PER_ROUND, 1));
      results.get(c.name)!.parallel.push(await rate(c.call, CALLS_PER_ROUND, IN_FLIGHT));
    }
  }
  const rows = candidates.map((c) => {
    const r = results.get(c.name)!;
    return { name: c.name, serial: median(r.serial), parallel: median(r.parallel) };
  });
  const base = rows[0];
  for (const [inFlight, key] of [[1, "serial"], [IN_FLIGHT, "parallel"]] as const) {
    record(rows.map((r) => {
      const ratio = r[key] / base[key];
      const target = r.name.includes("read_file") ? "≥ 1.5x" : undefined;
      return {
        group: `MCP tools/call over stdio, ${inFlight} in flight (${content.length}-byte file)`,
        name: r.name,
        value: r[key],
        unit: "calls/s",
        peer: base.name,
        ratio,
        target,
        met: target ? ratio >= 1.5 : undefined,
      };
    }));
  }
  console.log(
    rows.map((r) =>
      `${r.name}: ${r.serial.toFixed(0)} calls/s 1 in flight (${(r.serial / base.serial).toFixed(2)}x), ` +
      `${r.parallel.toFixed(0)} calls/s ${IN_FLIGHT} in flight (${(r.parallel / base.parallel).toFixed(2)}x)`
    ).join("\n"),
  );
} finally {
  await Promise.all(candidates.map((c) => c.client.close()));
  await rm(dir, { recursive: true, force: true });
}
