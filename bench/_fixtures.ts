/**
 * Deterministic data for the file benches, generated into `bench/.data/` (git
 * ignored) on first use: a source tree of a little over 100 MB, and a 1 GB log
 * file. A marker file records a finished generation, so an interrupted one is
 * redone.
 *
 * @module
 */

import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sized } from "./_report.ts";
import { seededRandom } from "../tests/_seeded_random.ts";

const DATA = fileURLToPath(new URL("./.data/", import.meta.url));

/** The rare token grep benches look for: it occurs on a few dozen lines of the tree. */
export const RARE_TOKEN = "TOOLFENCE_NEEDLE";

const WORDS = (
  "value result index count buffer stream reader writer handle config option record entry table cache " +
  "session policy workspace fence request response error status message payload header token parser " +
  "schema field item list map set node tree path file folder chunk offset limit window line text"
).split(" ");

function identifier(next: () => number): string {
  const a = WORDS[Math.floor(next() * WORDS.length)];
  const b = WORDS[Math.floor(next() * WORDS.length)];
  return a + b[0].toUpperCase() + b.slice(1);
}

function sourceFile(next: () => number, ext: string, needle: boolean): string {
  const lines: string[] = [];
  const functions = 8 + Math.floor(next() * 24);
  for (let f = 0; f < functions; f++) {
    const name = identifier(next);
    if (ext === "md") {
      lines.push(
        `## ${name}`,
        "",
        `The ${name} step reads the ${identifier(next)} and writes a ${identifier(next)}.`,
        "",
      );
      continue;
    }
    lines.push(`/** Computes the ${identifier(next)} for a ${identifier(next)}. */`);
    lines.push(`export function ${name}(${identifier(next)}: number, ${identifier(next)}: string): number {`);
    const body = 3 + Math.floor(next() * 10);
    for (let b = 0; b < body; b++) {
      const v = identifier(next);
      lines.push(`  const ${v} = ${identifier(next)}(${Math.floor(next() * 10000)}, "${identifier(next)}");`);
    }
    lines.push(`  return ${identifier(next)}.length + ${Math.floor(next() * 100)};`, "}", "");
  }
  if (needle) lines.splice(Math.floor(next() * lines.length), 0, `// ${RARE_TOKEN}: look here`);
  return lines.join("\n") + "\n";
}

async function complete(dir: string, version: string, build: (dir: string) => Promise<void>): Promise<string> {
  const marker = path.join(dir, ".complete");
  if (fs.existsSync(marker) && fs.readFileSync(marker, "utf8") === version) return dir;
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.mkdir(dir, { recursive: true });
  console.error(`generating ${dir} (first run only) ...`);
  await build(dir);
  await fsp.writeFile(marker, version);
  return dir;
}

/**
 * The source tree: 24 packages x 25 modules x 20 files of TypeScript,
 * JavaScript, Markdown and JSON (about 12,000 files, a little over 100 MB),
 * plus a `.gitignore` that excludes each package's small `dist/` folder
 * (2 x 2 x 5 files at the tiny size). Returns its path.
 */
export function sourceTree(): Promise<string> {
  const [packages, modules, files] = sized([24, 25, 20], [2, 2, 5]);
  return complete(path.join(DATA, sized("tree", "tree-tiny")), "tree-v1", async (dir) => {
    const next = seededRandom(42);
    await fsp.writeFile(path.join(dir, ".gitignore"), "dist/\n*.tmp\n");
    for (let p = 0; p < packages; p++) {
      for (let m = 0; m < modules; m++) {
        const folder = path.join(dir, `pkg${p}`, "src", `mod${m}`);
        await fsp.mkdir(folder, { recursive: true });
        for (let f = 0; f < files; f++) {
          const ext = ["ts", "ts", "ts", "ts", "js", "md", "json"][Math.floor(next() * 7)];
          const needle = next() < 0.004;
          const text = ext === "json"
            ? JSON.stringify(
              { name: identifier(next), items: Array.from({ length: 200 }, () => identifier(next)) },
              null,
              2,
            )
            : sourceFile(next, ext, needle);
          await fsp.writeFile(path.join(folder, `file${f}.${ext}`), text);
        }
      }
      const dist = path.join(dir, `pkg${p}`, "dist");
      await fsp.mkdir(dist, { recursive: true });
      await fsp.writeFile(path.join(dist, "bundle.js"), sourceFile(next, "js", true));
    }
  });
}

/** Lines in the big file (20,000 at the tiny size). */
export const BIG_FILE_LINES: number = sized(11_000_000, 20_000);

/**
 * A 1 GB text file of 11,000,000 numbered lines (about 100 bytes each, line
 * N reads `N <text>`). Returns its folder; the file is `big.log` in it.
 */
export function bigFileFolder(): Promise<string> {
  return complete(path.join(DATA, sized("big", "big-tiny")), "big-v2", async (dir) => {
    const next = seededRandom(7);
    const handle = await fsp.open(path.join(dir, "big.log"), "w");
    const batch: string[] = [];
    for (let i = 1; i <= BIG_FILE_LINES; i++) {
      const pad = "x".repeat(40 + Math.floor(next() * 40));
      batch.push(`${i} ${identifier(next)} ${pad} ${identifier(next)}`);
      if (batch.length === 100_000) {
        await handle.write(batch.join("\n") + "\n");
        batch.length = 0;
      }
    }
    if (batch.length) await handle.write(batch.join("\n") + "\n");
    await handle.close();
  });
}

/** Total size in bytes and number of files under `dir`. */
export async function treeSize(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += (await fsp.stat(path.join(entry.parentPath, entry.name))).size;
  }
  return { bytes, files };
}
