/**
 * Install footprint and cold import time of the npm packages, from the packed
 * tarballs `deno task build:npm` leaves in `npm/tarballs/`:
 *
 * - for `@toolfence/core` alone and for the umbrella `toolfence`, a fresh
 *   folder, `npm install valibot <tarballs>` (npm installs the peers and
 *   dependencies a user would get), and the bytes of every file under
 *   `node_modules` (apparent sizes, so the number does not depend on the file
 *   system's block size);
 * - the cold import: a fresh Node process per run imports the package and
 *   reports `performance.now()` around the `import()`; the median of the runs.
 *   Deno runs the same, importing the source of the checkout (what a Deno user
 *   loads) with the transpile cache warmed by one run first.
 *
 * Limits checked: the core installs in at most 5 MB, the umbrella (without
 * the MCP server stack, an optional peer) in at most 15 MB, the umbrella with
 * the MCP SDK and jose added in at most 45 MB (exit 1 otherwise).
 *
 * Requires --allow-read, --allow-write (a temp folder), --allow-run=npm,npx,node,deno, --allow-env.
 *
 * @example
 * ```sh
 * deno task build:npm --no-tests && deno run -A bench/footprint.ts --node 22 --runs 7
 * ```
 *
 * @module
 */

import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { record, sized, TINY } from "./_report.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tarballs = path.join(root, "npm", "tarballs");
const MB = 1_000_000;

interface Target {
  /** What is measured. */
  title: string;
  /** The package imported. */
  specifier: string;
  /** Tarball file names (in npm/tarballs) installed. */
  install: string[];
  /** The source entry Deno imports. */
  denoSource: string;
  /** The most it may install, in bytes. */
  limit: number;
  /** Packages from the registry installed beside the tarballs (optional peers a user adds). */
  registry?: string[];
}

async function bytesUnder(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = await bytesUnder(full);
      bytes += inner.bytes;
      files += inner.files;
    } else if (entry.isFile()) {
      bytes += (await stat(full)).size;
      files++;
    }
  }
  return { bytes, files };
}

async function largest(dir: string, top = 5): Promise<string[]> {
  const sizes: [string, number][] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.name.startsWith("@")) {
      for (const inner of await readdir(full, { withFileTypes: true })) {
        if (inner.isDirectory()) {
          sizes.push([`${entry.name}/${inner.name}`, (await bytesUnder(path.join(full, inner.name))).bytes]);
        }
      }
    } else sizes.push([entry.name, (await bytesUnder(full)).bytes]);
  }
  return sizes.sort((a, b) => b[1] - a[1]).slice(0, top).map(([n, b]) => `${n} ${(b / MB).toFixed(1)} MB`);
}

async function run(program: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(program, { args, cwd, stdin: "null", stderr: "piped", stdout: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(`${program} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
  }
  return text;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const IMPORT_PROBE = (specifier: string) =>
  `const t0 = performance.now(); await import(${
    JSON.stringify(specifier)
  }); console.log((performance.now() - t0).toFixed(1));`;

async function main(args: string[]): Promise<number> {
  const nodeFlag = args.indexOf("--node");
  const nodeVersion = nodeFlag >= 0 ? args[nodeFlag + 1] : undefined;
  const runsFlag = args.indexOf("--runs");
  const runs = sized(runsFlag >= 0 ? Number(args[runsFlag + 1]) : 5, 1);
  const [nodeProgram, nodePrefix] = nodeVersion ? ["npx", ["-y", `node@${nodeVersion}`]] : ["node", []];
  if (TINY) {
    // The smoke run installs nothing, whether or not a local build left tarballs (an install is 40 CPU-s and the
    // registry's time): it imports the sources once, as the Deno half of the bench does.
    console.log("tiny run: no install, the sources imported only");
    for (const source of ["core/mod.ts", "mod.ts"]) console.log(source, await denoColdImport(source, 1), "ms");
    return 0;
  }
  if (!existsSync(tarballs)) {
    console.error("no npm/tarballs; run deno task build:npm --no-tests first");
    return 1;
  }
  const names = await readdir(tarballs);
  const find = (prefix: string) => {
    // `toolfence-` then the version: not `toolfence-core-...`.
    const hit = names.find((n) => n.startsWith(prefix) && /^\d/.test(n.slice(prefix.length)));
    if (!hit) throw new Error(`no tarball ${prefix}* in ${tarballs}`);
    return hit;
  };
  const core = find("toolfence-core-");
  const all = [
    find("toolfence-"),
    core,
    find("toolfence-internal-"),
    find("toolfence-policy-"),
    find("toolfence-tools-"),
    find("toolfence-adapters-"),
  ];
  const targets: Target[] = [
    {
      title: "@toolfence/core",
      specifier: "@toolfence/core",
      install: [core],
      denoSource: "core/mod.ts",
      limit: 5 * MB,
    },
    { title: "toolfence (umbrella)", specifier: "toolfence", install: all, denoSource: "mod.ts", limit: 15 * MB },
    {
      title: "toolfence + the MCP server stack",
      specifier: "toolfence/mcp",
      install: all,
      registry: ["@modelcontextprotocol/sdk", "jose"],
      denoSource: "mcp.ts",
      limit: 45 * MB,
    },
  ];
  const nodeVersionText = (await run(nodeProgram, [...nodePrefix, "--version"], root)).trim();
  const denoVersionText = (await run("deno", ["--version"], root)).split("\n")[0];
  let failed = false;
  console.log(
    `footprint: npm ${(await run("npm", ["--version"], root)).trim()}, node ${nodeVersionText}, ${denoVersionText}`,
  );
  for (const target of targets) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-footprint-"));
    try {
      await writeFile(
        path.join(dir, "package.json"),
        JSON.stringify({ name: "footprint", private: true, type: "module" }),
      );
      await run(
        "npm",
        [
          "install",
          "--no-audit",
          "--no-fund",
          "--loglevel=error",
          "valibot",
          ...(target.registry ?? []),
          ...target.install.map((t) => path.join(tarballs, t)),
        ],
        dir,
      );
      const { bytes, files } = await bytesUnder(path.join(dir, "node_modules"));
      const ok = bytes <= target.limit;
      failed ||= !ok;
      const nodeTimes: number[] = [];
      for (let i = 0; i < runs; i++) {
        const out = await run(
          nodeProgram,
          [...nodePrefix, "--input-type=module", "-e", IMPORT_PROBE(target.specifier)],
          dir,
        );
        nodeTimes.push(Number(out.trim().split("\n").pop()));
      }
      const deno = await denoColdImport(target.denoSource, runs);
      const node = median(nodeTimes);
      console.log(
        `${target.title}: ${(bytes / MB).toFixed(2)} MB in ${files} files (limit ${target.limit / MB} MB: ${
          ok ? "ok" : "OVER"
        }); cold import: node ${node.toFixed(0)} ms, deno ${deno.toFixed(0)} ms (median of ${runs}); largest: ${
          (await largest(path.join(dir, "node_modules"))).join(", ")
        }`,
      );
      record([
        {
          group: "npm install footprint",
          name: target.title,
          value: bytes / MB,
          unit: "MB",
          peer: "its limit",
          ratio: bytes / target.limit,
          target: "≤ 1x",
          met: ok,
        },
        { group: "cold import", name: `${target.title}, Node`, value: node, unit: "ms", peer: "Node", ratio: 1 },
        {
          group: "cold import",
          name: `${target.title}, Deno`,
          value: deno,
          unit: "ms",
          peer: "Node",
          ratio: deno / node,
        },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return failed ? 1 : 0;
}

/** Median ms of `runs` fresh Deno processes importing `source` of the checkout, transpile cache warm. */
async function denoColdImport(source: string, runs: number): Promise<number> {
  // Inside the repository, so that the workspace resolves the members' names.
  await mkdir(path.join(root, "bench", ".data"), { recursive: true });
  const probe = path.join(root, "bench", ".data", "footprint_probe.ts");
  await writeFile(probe, IMPORT_PROBE(pathToFile(path.join(root, source))));
  const denoArgs = ["run", "--no-check", "--allow-read", "--allow-env", "--no-prompt", probe];
  await run("deno", denoArgs, root); // warms the transpile cache: "cold" is a new process, not a new machine
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(Number((await run("deno", denoArgs, root)).trim().split("\n").pop()));
  return median(times);
}

function pathToFile(file: string): string {
  return new URL(`file://${file}`).href;
}

if (import.meta.main) process.exit(await main(Deno.args));
