/**
 * The cost of a scratch copy: `createScratch` (its default `auto` copy, which
 * clones where the file system can, and its `cp` copy) on a workspace of 10,000 files
 * and 200 MB (100 folders; 9,950 files of 1-19 KiB and 50 of about 2 MiB),
 * against `cp -a` and `cp -a --reflink=auto` of the same tree in the same run,
 * in interleaved rounds. Reports the median time and the disk the copy takes
 * (`du -sk`; a reflinked copy shares its blocks and takes almost none).
 *
 * ```sh
 * deno run -A bench/scratch.ts
 * ```
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createScratch } from "../policy/scratch/scratch.ts";
import { median, printRatios } from "./_measure.ts";
import { sized } from "./_report.ts";

const ROUNDS = sized(3, 1);
const here = path.dirname(fileURLToPath(import.meta.url));
const data = path.join(here, ".data", "scratch");
const workdir = path.join(data, "workspace");
const copies = path.join(data, "copies");

async function makeWorkspace(): Promise<{ files: number; bytes: number }> {
  await fsp.rm(data, { recursive: true, force: true });
  await fsp.mkdir(copies, { recursive: true });
  const pool = new Uint8Array(4 * 1024 * 1024);
  for (let i = 0; i < pool.length; i += 65536) crypto.getRandomValues(pool.subarray(i, i + 65536));
  let files = 0;
  let bytes = 0;
  for (let d = 0; d < Number(Deno.env.get("SCRATCH_BENCH_FOLDERS") ?? sized(100, 2)); d++) {
    const folder = path.join(workdir, `pkg${d}`, "src");
    await fsp.mkdir(folder, { recursive: true });
    for (let f = 0; f < sized(100, 10); f++) {
      const large = files % 200 === 0;
      const size = large ? 2_000_000 + (files % 7) * 1000 : 1024 + ((files * 7919) % (18 * 1024));
      const offset = (files * 104729) % (pool.length - size);
      await fsp.writeFile(path.join(folder, `file${f}.txt`), pool.subarray(offset, offset + size));
      files++;
      bytes += size;
    }
  }
  return { files, bytes };
}

function du(dir: string): number {
  return Number(execFileSync("du", ["-sk", dir], { encoding: "utf8" }).split("\t")[0]) * 1024;
}

function filesystemOf(dir: string): string {
  return execFileSync("df", ["--output=fstype", dir], { encoding: "utf8" }).trim().split("\n").at(-1)!;
}

function reflinkWorks(): boolean {
  const a = path.join(data, "probe-a");
  const b = path.join(copies, "probe-b");
  execFileSync("sh", ["-c", `head -c 65536 /dev/urandom > '${a}'`]);
  try {
    execFileSync("cp", ["--reflink=always", a, b], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    execFileSync("rm", ["-f", a, b]);
  }
}

const { files, bytes } = await makeWorkspace();
console.log(
  `workspace: ${files} files, ${(bytes / 1e6).toFixed(0)} MB, on ${filesystemOf(workdir)}; ` +
    `reflink ${reflinkWorks() ? "available" : "not available"} there`,
);
execFileSync("sync");
const samples: Record<string, { ms: number[]; disk: number[] }> = {};
const sample = (name: string, ms: number, disk: number) => {
  samples[name] ??= { ms: [], disk: [] };
  samples[name].ms.push(ms);
  samples[name].disk.push(disk);
};
for (let round = 0; round < ROUNDS; round++) {
  // createScratch: its copy lies in the session temp dir under `copies`.
  for (const copy of ["auto", "cp"] as const) {
    const { Workspace } = await import("../policy/workspace.ts");
    const host = new Workspace(workdir, { tempParent: copies });
    const start = performance.now();
    const scratch = await createScratch(host, { copy });
    const ms = performance.now() - start;
    sample(`createScratch, copy: "${copy}" (${scratch.cloned} by cp)`, ms, du(scratch.root));
    await scratch.dispose();
    await host.dispose();
  }
  for (const [name, args] of [["cp -a", ["-a"]], ["cp -a --reflink=auto", ["-a", "--reflink=auto"]]] as const) {
    const target = path.join(copies, `cp-${round}`);
    const start = performance.now();
    execFileSync("cp", [...args, workdir, target]);
    const ms = performance.now() - start;
    sample(name, ms, du(target));
    await fsp.rm(target, { recursive: true, force: true });
  }
  {
    // What the digest alone costs: sha256 of every file, no copy.
    const start = performance.now();
    execFileSync("sh", ["-c", `cd '${workdir}' && find . -type f -print0 | xargs -0 sha256sum > /dev/null`]);
    sample("find | sha256sum (hashing alone)", performance.now() - start, 0);
  }
}
console.log(`disk the copies take (median of ${ROUNDS} rounds):`);
for (const [name, { disk }] of Object.entries(samples)) {
  console.log(`  ${name.padEnd(40)} ${(median(disk) / 1e6).toFixed(0).padStart(4)} MB`);
}
printRatios(
  `scratch copy of ${files} files, ${(bytes / 1e6).toFixed(0)} MB (median ms of ${ROUNDS} rounds, page cache warm)`,
  Object.entries(samples).map(([name, { ms }]) => [name, median(ms)]),
  "ms",
  "cp -a",
);
await fsp.rm(data, { recursive: true, force: true });
