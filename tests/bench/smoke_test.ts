// Every bench, run once at its tiny size through `deno task bench`'s runner, so that none rots: each must run
// to its end and report its rows into the one table. No timing is asserted (the tiny figures mean nothing), and the
// tiny run must leave BENCHMARKS.md as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const benchDir = path.join(repoRoot, "bench");
// The npm build's tree has no deno.json and no bench folder: the benches run from the source repository.
const noSource = !existsSync(path.join(repoRoot, "deno.json")) && "runs the source repository's bench/ with deno";
const benches = noSource
  ? []
  : readdirSync(benchDir).filter((f) => f.endsWith(".ts") && !f.startsWith("_") && f !== "run.ts").sort();

function runTiny(name: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["run", "-A", path.join(benchDir, "run.ts"), name, "--tiny"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => out += chunk);
    child.stderr.on("data", (chunk) => out += chunk);
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, out }));
  });
}

test("the bench folder has its benches (the list below is not empty by accident)", {
  skip: noSource,
  timeout: 60_000,
}, () => {
  assert.ok(benches.length >= 10, `found ${benches.join(", ")}`);
});

for (const file of benches) {
  const name = file.replace(/\.ts$/, "");
  test(`bench ${name} runs to its end at the tiny size and reports its rows`, {
    skip: noSource,
    timeout: 240_000,
  }, async () => {
    const doc = readFileSync(path.join(repoRoot, "BENCHMARKS.md"), "utf8");
    const { code, out } = await runTiny(name);
    assert.equal(code, 0, out.slice(-4000));
    assert.match(out, /All figures/, out.slice(-2000));
    // footprint's tiny run installs no tarball: it imports the sources only and reports no row.
    const rows = out.split("\n").filter((line) => line.startsWith(`| ${file} |`));
    if (name === "footprint") assert.match(out, /tiny run: no install, the sources imported only/, out.slice(-2000));
    else assert.ok(rows.length > 0, out.slice(-2000));
    assert.equal(readFileSync(path.join(repoRoot, "BENCHMARKS.md"), "utf8"), doc, "a tiny run wrote BENCHMARKS.md");
  });
}
