/**
 * `deno task bench [NAME...] [--tiny] [--no-write]`: runs every bench in this
 * folder (or the named ones), one process each so that one bench's garbage
 * does not weigh on the next, prints one table of the ratios they recorded,
 * and rewrites the figures between the markers in BENCHMARKS.md (rows of
 * benches not run this time stay as they were; the prose around the markers is
 * left alone).
 *
 * `--tiny` runs each bench at its smallest size (the smoke run CI makes, see
 * tests/bench/smoke_test.ts): the figures are printed but never written.
 *
 * @module
 */

import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchRow } from "./_report.ts";

const here = fileURLToPath(new URL(".", import.meta.url));
const DOC = join(here, "..", "BENCHMARKS.md");
const BEGIN = "<!-- bench:figures (written by deno task bench) -->";
const END = "<!-- /bench:figures -->";
const flags = new Set(Deno.args.filter((a) => a.startsWith("--")));
const only = new Set(Deno.args.filter((a) => !a.startsWith("--")));
const tiny = flags.has("--tiny");
const benches = (await readdir(here))
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_") && f !== "run.ts")
  .filter((f) => only.size === 0 || only.has(f.replace(/\.ts$/, "")))
  .sort();

const load = () => loadavg()[0].toFixed(1);
const started = new Date();
const loadBefore = load();
console.log(
  `Machine: ${Deno.build.target}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}, ` +
    `load average ${loadBefore}${tiny ? " (tiny sizes: a smoke run, the figures mean nothing)" : ""}`,
);
const rowsFile = join(tmpdir(), `toolfence-bench-rows-${Deno.pid}.jsonl`);
await writeFile(rowsFile, "");
const failed: string[] = [];
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const run = spawnSync(Deno.execPath(), ["run", "-A", `${here}${file}`], {
    stdio: "inherit",
    env: { ...Deno.env.toObject(), TOOLFENCE_BENCH_ROWS: rowsFile, ...(tiny ? { TOOLFENCE_BENCH_SIZE: "tiny" } : {}) },
  });
  if (run.status !== 0) failed.push(file);
}
// A bench that failed (a wrong answer, a crash) reports no figures: its rows are not measurements of the code.
const rows: BenchRow[] = (await readFile(rowsFile, "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l))
  .filter((row: BenchRow) => !failed.includes(row.bench));
await rm(rowsFile, { force: true });

const when = `${started.toISOString().slice(0, 16).replace("T", " ")} UTC, load ${loadBefore}-${load()}`;
const table = figuresTable(rows, when);
console.log(`\nAll figures (ratios against the peer of the same run; ${when}):\n\n${table.join("\n")}`);
const missed = rows.filter((r) => r.met === false);
if (missed.length) console.log(`\n${missed.length} target(s) missed: ${missed.map((r) => r.name).join("; ")}`);

if (!tiny && !flags.has("--no-write") && rows.length) {
  await writeFigures(rows, when);
  console.log(`\nWrote the figures of ${new Set(rows.map((r) => r.bench)).size} bench(es) into ${DOC}`);
}
if (failed.length) {
  console.error(`${failed.length} bench(es) failed: ${failed.join(", ")}`);
  Deno.exit(1);
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

function figuresTable(rows: readonly BenchRow[], runAt: string): string[] {
  return [
    "| bench | measured | candidate | value | peer | ratio | target | run |",
    "| --- | --- | --- | ---: | --- | ---: | --- | --- |",
    ...rows.map((r) =>
      `| ${r.bench} | ${cell(r.group)} | ${cell(r.name)} | ${r.value.toFixed(2)} ${r.unit} | ${cell(r.peer)} | ` +
      `${r.ratio.toFixed(2)}x | ${r.target ? `${r.target}: ${r.met ? "met" : "**missed**"}` : ""} | ${runAt} |`
    ),
  ];
}

/** Replaces the rows of the benches that ran between the markers; the others' rows stay. */
async function writeFigures(rows: readonly BenchRow[], runAt: string): Promise<void> {
  const doc = await readFile(DOC, "utf8");
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${DOC} has no ${BEGIN} ... ${END} markers`);
  const ran = new Set(rows.map((r) => r.bench));
  const kept = doc.slice(begin + BEGIN.length, end).split("\n")
    .filter((line) => /^\| [\w-]+\.ts /.test(line) && !ran.has(line.slice(2, line.indexOf(" ", 2))));
  const [header, rule, ...fresh] = figuresTable(rows, runAt);
  const byBench = [...kept, ...fresh].sort((a, b) =>
    a.slice(2, a.indexOf(" ", 2)).localeCompare(b.slice(2, b.indexOf(" ", 2)))
  );
  const section = `${BEGIN}\n\n${[header, rule, ...byBench].join("\n")}\n\n${END}`;
  await writeFile(DOC, doc.slice(0, begin) + section + doc.slice(end + END.length));
  spawnSync(Deno.execPath(), ["fmt", DOC], { stdio: "ignore" });
}
