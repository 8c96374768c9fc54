/**
 * Small measuring helpers shared by the benches: medians of repeated timed
 * rounds, and a table of ratios against a baseline in the same run.
 *
 * @module
 */

import process from "node:process";
import { type BenchRow, meets, record, TINY } from "./_report.ts";

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Median of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Times `rounds` rounds of `iterations` calls of `fn` and returns the median
 * time per call in microseconds (one round of one call at the tiny size).
 */
export async function perCallMicros(
  fn: () => unknown,
  { rounds = 15, iterations = 2_000 }: { rounds?: number; iterations?: number } = {},
): Promise<number> {
  if (TINY) [rounds, iterations] = [1, 1];
  // No warm-up at the tiny size: the one timed call runs the same code, and the figures mean nothing there.
  for (let i = 0; i < (TINY ? 0 : iterations); i++) await fn(); // warm-up
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) await fn();
    samples.push(((performance.now() - start) * 1000) / iterations);
  }
  return median(samples);
}

/**
 * Times several candidates in interleaved rounds (so drift on a shared machine
 * hits all of them alike) and returns each one's median µs per call (one
 * round of one call each at the tiny size).
 */
export async function comparePerCall(
  candidates: readonly [string, () => unknown][],
  { rounds = 21, iterations = 2_000, clock = "wall" }: {
    rounds?: number;
    iterations?: number;
    /**
     * `cpu` times by this process's CPU time (user + system) instead of the
     * wall clock: for work that stays in the process, it does not count the
     * time other processes of a loaded machine take the cores.
     */
    clock?: "wall" | "cpu";
  } = {},
): Promise<[string, number][]> {
  if (TINY) [rounds, iterations] = [1, 1];
  const now = clock === "cpu" ? cpuMicros : () => performance.now() * 1000;
  const samples = candidates.map(() => [] as number[]);
  // No warm-up at the tiny size (see perCallMicros).
  for (const [, fn] of candidates) for (let i = 0; i < (TINY ? 0 : iterations * 2); i++) await fn(); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let c = 0; c < candidates.length; c++) {
      const fn = candidates[c][1];
      const start = now();
      for (let i = 0; i < iterations; i++) await fn();
      samples[c].push((now() - start) / iterations);
    }
  }
  return candidates.map(([name], c) => [name, median(samples[c])]);
}

/**
 * Prints rows of `name  value unit  ratio-to-baseline` and records them for
 * `bench/run.ts`'s table; `targets` names the rows the issue sets a target for
 * (e.g. `{ "toolbox.call": "≤ 3x" }`), and each such row says whether it is met.
 */
export function printRatios(
  title: string,
  rows: readonly [string, number][],
  unit: string,
  baseline: string,
  targets: Readonly<Record<string, string>> = {},
): void {
  const base = rows.find(([name]) => name === baseline) ?? rows[0];
  console.log(`\n${title}`);
  const width = Math.max(...rows.map(([name]) => name.length));
  const recorded: Omit<BenchRow, "bench">[] = [];
  for (const [name, value] of rows) {
    const ratio = value / base[1];
    const target = targets[name];
    const met = target === undefined ? undefined : meets(ratio, target);
    const verdict = target === undefined ? "" : `  (target ${target}: ${met ? "met" : "MISSED"})`;
    console.log(`  ${name.padEnd(width)}  ${value.toFixed(2).padStart(10)} ${unit}  ${ratio.toFixed(2)}x${verdict}`);
    recorded.push({ group: title, name, value, unit, peer: base[0], ratio, target, met });
  }
  record(recorded);
}
