/**
 * `deno task bench`: runs every bench in this folder, one process each, so
 * that one bench's garbage does not weigh on the next.
 *
 * @module
 */

import { readdir } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const only = new Set(Deno.args);
const benches = (await readdir(here))
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_") && f !== "run.ts")
  .filter((f) => only.size === 0 || only.has(f.replace(/\.ts$/, "")))
  .sort();
console.log(`Machine: ${Deno.build.target}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}`);
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const run = spawnSync(Deno.execPath(), ["run", "-A", `${here}${file}`], { stdio: "inherit" });
  if (run.status !== 0) failed++;
}
if (failed) {
  console.error(`${failed} bench(es) failed`);
  Deno.exit(1);
}
