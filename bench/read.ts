/**
 * `read_file` of 100 lines at line 5,000,000 of a 1 GB file, against
 * `sed -n` in one run (interleaved rounds, medians), and the peak memory of a
 * process doing that read. Targets (issue 5): faster than `sed -n`, peak
 * memory under 64 MB, and a second read of the same unchanged file that does
 * not scan it again.
 *
 * Run: `deno run -A bench/read.ts` (not part of `deno task test`).
 *
 * @module
 */

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Session } from "../policy/session.ts";
import { ToolBox } from "../toolbox.ts";
import { readFileTool } from "../tools/fs/read_file.ts";
import { median, printRatios } from "./_measure.ts";
import { bigFileFolder } from "./_fixtures.ts";
import { record, sized } from "./_report.ts";

const OFFSET = sized(5_000_000, 10_000);
const LIMIT = 100;
const ROUNDS = sized(7, 1);

function status(field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync("/proc/self/status", "utf8"));
  return Number(match?.[1] ?? NaN) / 1024;
}

function bytesRead(): number {
  return Number(/rchar: (\d+)/.exec(fs.readFileSync("/proc/self/io", "utf8"))?.[1] ?? NaN);
}

// `--child read|baseline <folder>`: one process, one read (or none), then its peak memory.
if (Deno.args[0] === "--child") {
  const session = new Session({ workspace: Deno.args[2] });
  const box = new ToolBox().register(readFileTool);
  if (Deno.args[1] === "read") {
    const result = await box.call(session, "read_file", { path: "big.log", offset: OFFSET, limit: LIMIT });
    if (result.status !== "success") throw new Error(result.error);
  } else {
    await box.call(session, "read_file", { path: "small.txt" });
  }
  await session.close();
  console.log(JSON.stringify({ peakMiB: status("VmHWM") }));
  Deno.exit(0);
}

function timeSed(script: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("sed", ["-n", script, file], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", () => resolve(performance.now() - started));
  });
}

const folder = await bigFileFolder();
const file = path.join(folder, "big.log");
fs.writeFileSync(path.join(folder, "small.txt"), "one line\n");
const size = fs.statSync(file).size;
const sedScript = `${OFFSET + 1},${OFFSET + LIMIT}p`;
const samples: Record<string, number[]> = {
  [`sed -n '${sedScript}'`]: [],
  [`sed -n '${sedScript};${OFFSET + LIMIT}q'`]: [],
  "read_file, first read (new session)": [],
  "read_file, second read (same session)": [],
};
const scanned: number[] = [];
const rescanned: number[] = [];
const box = new ToolBox().register(readFileTool);
let first = "";
for (let round = 0; round <= ROUNDS; round++) {
  const sedMs = await timeSed(sedScript, file);
  const sedQuitMs = await timeSed(`${sedScript};${OFFSET + LIMIT}q`, file);
  const session = new Session({ workspace: folder });
  let before = bytesRead();
  let started = performance.now();
  const a = await box.call(session, "read_file", { path: "big.log", offset: OFFSET, limit: LIMIT });
  const firstMs = performance.now() - started;
  scanned.push(bytesRead() - before);
  before = bytesRead();
  started = performance.now();
  const b = await box.call(session, "read_file", { path: "big.log", offset: OFFSET + 10, limit: LIMIT });
  const secondMs = performance.now() - started;
  rescanned.push(bytesRead() - before);
  await session.close();
  if (a.status !== "success" || b.status !== "success") throw new Error(a.error ?? b.error);
  if (round === 0) {
    first = (a.output as { content: string }).content.split("\n")[0];
    continue;
  }
  samples[`sed -n '${sedScript}'`].push(sedMs);
  samples[`sed -n '${sedScript};${OFFSET + LIMIT}q'`].push(sedQuitMs);
  samples["read_file, first read (new session)"].push(firstMs);
  samples["read_file, second read (same session)"].push(secondMs);
}
console.log(`${(size / 1e9).toFixed(2)} GB file; window starts with: ${first.slice(0, 40)}...`);
printRatios(
  `${LIMIT} lines at line ${OFFSET.toLocaleString("en-US")}: median ms of ${ROUNDS} rounds`,
  Object.entries(samples).map(([name, values]) => [name, median(values)]),
  "ms",
  `sed -n '${sedScript}'`,
  { "read_file, first read (new session)": "≤ 1x" },
);
console.log(
  `\nbytes read by the process: first read ${(median(scanned) / 1e6).toFixed(1)} MB, ` +
    `second read ${(median(rescanned) / 1e6).toFixed(2)} MB`,
);

const self = fileURLToPath(import.meta.url);
const peak = (mode: string) =>
  JSON.parse(execFileSync(Deno.execPath(), ["run", "-A", self, "--child", mode, folder], { encoding: "utf8" })).peakMiB;
const reads = [peak("read"), peak("read"), peak("read")];
const baselines = [peak("baseline"), peak("baseline"), peak("baseline")];
record([{
  group: "peak memory (VmHWM) of a process reading the window once",
  name: "read_file",
  value: median(reads),
  unit: "MiB",
  peer: "64 MiB",
  ratio: median(reads) / 64,
  target: "≤ 1x",
  met: median(reads) <= 64,
}]);
console.log(
  `peak memory (VmHWM) of a process that reads that window once: ${median(reads).toFixed(1)} MiB; ` +
    `the same process reading a one-line file instead: ${median(baselines).toFixed(1)} MiB ` +
    `(difference ${(median(reads) - median(baselines)).toFixed(1)} MiB)`,
);
