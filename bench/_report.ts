/**
 * What every bench reports to `bench/run.ts`: rows of figures, each a value
 * and its ratio against a peer measured in the same run, and the size a bench
 * runs at. `deno task bench` sets `TOOLFENCE_BENCH_ROWS` to a file that
 * collects the rows (one JSON object a line) and prints them as one table;
 * `TOOLFENCE_BENCH_SIZE=tiny` (the smoke run CI makes through
 * tests/bench/smoke_test.ts) asks each bench for its smallest size, so that
 * every bench still runs end to end without the cost of a measurement.
 *
 * @module
 */

import { appendFileSync } from "node:fs";
import { basename } from "node:path";

/** One figure of a bench, with its ratio against the peer of the same run. */
export interface BenchRow {
  /** The bench file, e.g. `call_overhead.ts`. */
  bench: string;
  /** What was measured (the table the row belongs to). */
  group: string;
  /** The candidate. */
  name: string;
  /** Its figure, in `unit`. */
  value: number;
  unit: string;
  /** The peer the ratio is taken against. */
  peer: string;
  /** value / the peer's value (for rates: the peer's time over this one's, so that below 1 is slower). */
  ratio: number;
  /** The target for this ratio, e.g. `≤ 3x`, when there is one. */
  target?: string;
  /** Whether the target is met; absent without a target. */
  met?: boolean;
}

/** True in the smoke run: each bench runs at its tiny size and its figures mean nothing. */
export const TINY: boolean = process.env.TOOLFENCE_BENCH_SIZE === "tiny";

/** `full` in a measuring run, `tiny` in the smoke run. */
export function sized<T>(full: T, tiny: T): T {
  return TINY ? tiny : full;
}

const BENCH = basename(process.argv[1] ?? "bench.ts");

/** Records rows for `bench/run.ts` (and nothing when the bench runs alone). */
export function record(rows: readonly Omit<BenchRow, "bench">[]): void {
  const out = process.env.TOOLFENCE_BENCH_ROWS;
  if (!out) return;
  appendFileSync(out, rows.map((row) => JSON.stringify({ bench: BENCH, ...row }) + "\n").join(""));
}

/** A target of the form `≤ Nx` (lower is better) or `≥ Nx` (higher is better), checked against `ratio`. */
export function meets(ratio: number, target: string): boolean {
  const match = /^([≤≥])\s*([\d.]+)x$/.exec(target);
  if (!match) throw new Error(`target ${target} is not of the form ≤ Nx or ≥ Nx`);
  return match[1] === "≤" ? ratio <= Number(match[2]) : ratio >= Number(match[2]);
}
