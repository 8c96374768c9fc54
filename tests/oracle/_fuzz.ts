/**
 * The grammar-based differential fuzzer: lines from `_grammar.ts` are judged
 * by `checkCommand` (default options), every allowed one runs for real in the
 * oracle's sandbox (`_oracle.ts`), and any allowed line that started a
 * program, wrote or removed a file, connected a socket, or read a file
 * outside the workspace that the checker's findings did not account for is a
 * disagreement.
 *
 * Two passes. The first generates `runs` lines from the seed (fast-check's
 * `sample`, which draws exactly the values `check` would for the same seed)
 * and judges them `concurrency` sandboxes at a time. The second shrinks: for
 * the first line of each class of disagreement it replays that run with
 * fast-check (`seed` and `path`) and lets fast-check shrink it, judging every
 * candidate in the sandbox, so that the report shows the smallest line that
 * still disagrees. Everything is reproducible from the seed.
 *
 * @module
 */
import path from "node:path";
import fc from "fast-check";
import type { ExecTracer } from "./_exec_trace.ts";
import { type Bypass, type CaseOutcome, judgeCommand } from "./_oracle.ts";
import { bashLine } from "./_grammar.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../policy/shell/allowlist.ts";

/** One class of disagreement: its first line, and that line shrunk. */
export interface Disagreement {
  /** What kind of thing ran or changed, e.g. `ran rm` or `openat by the shell`. */
  kind: string;
  /** How many generated lines fell in this class. */
  count: number;
  /** The run index of the first one (fast-check's `path`). */
  index: number;
  /** The first line of the class, as generated. */
  line: string;
  /** What it did that the checker did not account for. */
  bypasses: Bypass[];
  /** The smallest line fast-check found that still disagrees, when shrinking ran. */
  shrunk?: { line: string; bypasses: Bypass[]; steps: number };
}

/** What a fuzzing pass found. */
export interface FuzzReport {
  seed: number;
  runs: number;
  /** Lines the checker allowed (each ran in the sandbox). */
  allowed: number;
  /** Generated lines that disagreed. */
  disagreeing: number;
  /** Lines the sandbox's deadline cut off. */
  timedOut: number;
  /** One entry per class of disagreement. */
  classes: Disagreement[];
  /** Wall time of the whole pass, in milliseconds. */
  ms: number;
}

/** Options of {@linkcode fuzz}. */
export interface FuzzOptions {
  seed: number;
  runs: number;
  /** Sandboxes at a time in the first pass; defaults to 4. */
  concurrency?: number;
  /** How many classes to shrink (the first ones found); defaults to all. */
  shrinkClasses?: number;
  /** Stop shrinking one class after this long (the best line so far is kept); defaults to 60 s. */
  shrinkMs?: number;
  /** The sandbox's deadline for one line; defaults to 5 s (npm alone takes one under load). */
  timeoutMs?: number;
  /**
   * Stop taking new lines after this many milliseconds (the lines judged are
   * still runs 0..k-1 of the seed, so the pass stays reproducible).
   */
  budgetMs?: number;
  /** Judge only this run index (a replay of one reported disagreement). */
  only?: number;
  /** Called after each judged line of the first pass. */
  onCase?: (outcome: CaseOutcome, done: number) => void;
}

/** A class name for one bypass: the program that ran, or the kind of change and who made it. */
export function kindOf(bypass: Bypass): string {
  if (bypass.ran.startsWith("builtin: ")) return `builtin ${bypass.ran.slice(9).replace(/^\++ /, "").split(" ")[0]}`;
  if (bypass.ran.startsWith("workspace ")) return "workspace changed";
  if (bypass.ran.startsWith("read ")) return `read ${/\(by (.+)\)$/.exec(bypass.ran)?.[1] ?? ""}: ${bypass.why}`;
  const effect = /^(\w+) .*\(by (.+)\)$/.exec(bypass.ran);
  if (effect && !bypass.ran.startsWith("/")) return `${effect[1] === "connect" ? "connect" : "write"} by ${effect[2]}`;
  return `ran ${path.basename(bypass.ran.split(" ")[0])}: ${bypass.why.replace(/^ran, but /, "")}`;
}

function disagrees(outcome: CaseOutcome): boolean {
  return outcome.check.verdict === "allow" && outcome.bypasses.length > 0;
}

/**
 * Runs a fuzzing pass: generate, judge, run the allowed lines, shrink each
 * class of disagreement.
 *
 * Needs Linux with bubblewrap and strace, and `--allow-run --allow-read
 * --allow-write --allow-env` (the sandbox and its temp folder).
 *
 * @example
 * ```ts
 * import { ExecTracer } from "./_exec_trace.ts";
 * import { formatFuzzReport, fuzz } from "./_fuzz.ts";
 * const tracer = await ExecTracer.create();
 * const report = await fuzz(tracer, { seed: 1, runs: 100 });
 * console.log(formatFuzzReport(report)); // "fuzz: seed 1, 100 generated lines, ..."
 * await tracer.dispose();
 * ```
 */
export async function fuzz(tracer: ExecTracer, options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const { seed, runs } = options;
  const allowlist = DEFAULT_COMMAND_ALLOWLIST;
  const judged = new Map<string, CaseOutcome>();
  const judge = async (line: string) => {
    const known = judged.get(line);
    if (known) return known;
    const outcome = await judgeCommand(tracer, line, allowlist, options.timeoutMs ?? 5000);
    judged.set(line, outcome);
    return outcome;
  };
  const lines = fc.sample(bashLine, { seed, numRuns: options.only === undefined ? runs : options.only + 1 });
  const report: FuzzReport = { seed, runs, allowed: 0, disagreeing: 0, timedOut: 0, classes: [], ms: 0 };
  const byKind = new Map<string, Disagreement>();
  let next = options.only ?? 0;
  let done = 0;
  const stopAt = options.budgetMs === undefined ? Infinity : started + options.budgetMs;
  const worker = async () => {
    while (next < lines.length && performance.now() < stopAt) {
      const index = next++;
      const outcome = await judge(lines[index]);
      if (outcome.check.verdict === "allow") report.allowed++;
      if (outcome.timedOut) report.timedOut++;
      if (disagrees(outcome)) {
        report.disagreeing++;
        for (const kind of new Set(outcome.bypasses.map(kindOf))) {
          const known = byKind.get(kind);
          if (known === undefined || index < known.index) {
            byKind.set(kind, {
              kind,
              count: (known?.count ?? 0) + 1,
              index,
              line: lines[index],
              bypasses: outcome.bypasses,
            });
          } else known.count++;
        }
      }
      options.onCase?.(outcome, ++done);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  report.runs = options.only === undefined ? next : 1;
  report.classes = [...byKind.values()].sort((a, b) => a.index - b.index);
  for (const disagreement of report.classes.slice(0, options.shrinkClasses ?? report.classes.length)) {
    disagreement.shrunk = await shrink(disagreement, seed, runs, judge, options.shrinkMs ?? 60_000);
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}

/**
 * Replays run `index` of the seed with fast-check and shrinks it. A candidate
 * counts as failing only when it disagrees in the same class, so that the
 * shrunk line shows the same problem; past the deadline no new candidate is
 * judged (fast-check then keeps the smallest failing line found so far).
 */
async function shrink(
  disagreement: Disagreement,
  seed: number,
  runs: number,
  judge: (line: string) => Promise<CaseOutcome>,
  budgetMs: number,
): Promise<Disagreement["shrunk"]> {
  const deadline = performance.now() + budgetMs;
  let smallest = { line: disagreement.line, bypasses: disagreement.bypasses };
  const result = await fc.check(
    fc.asyncProperty(bashLine, async (line) => {
      if (line !== disagreement.line && performance.now() > deadline) return true;
      const outcome = await judge(line);
      const same = disagrees(outcome) && outcome.bypasses.some((bypass) => kindOf(bypass) === disagreement.kind);
      if (same && line.length <= smallest.line.length) smallest = { line, bypasses: outcome.bypasses };
      return !same;
    }),
    { seed, numRuns: runs, path: String(disagreement.index), endOnFailure: false },
  );
  return { ...smallest, steps: result.numShrinks };
}

/**
 * The report as the test run and the long pass print it: a summary line, then
 * per class the shrunk line, what it did and the seed and path that replay it.
 */
export function formatFuzzReport(report: FuzzReport): string {
  const lines = [
    `fuzz: seed ${report.seed}, ${report.runs} generated lines, ${report.allowed} allowed and run, ` +
    `${report.disagreeing} disagreeing in ${report.classes.length} classes, ${report.timedOut} timeouts, ` +
    `${Math.round(report.ms / 1000)} s`,
  ];
  for (const c of report.classes) {
    lines.push(
      `DISAGREEMENT [${c.kind}] x${c.count} (run ${c.index}; replay: --seed ${report.seed} --path ${c.index})`,
    );
    const shown = c.shrunk ?? c;
    lines.push(`  line${c.shrunk ? ` (shrunk in ${c.shrunk.steps} steps)` : ""}: ${JSON.stringify(shown.line)}`);
    if (c.shrunk) lines.push(`  as generated: ${JSON.stringify(c.line)}`);
    for (const bypass of shown.bypasses) lines.push(`  ran: ${bypass.ran}\n    ${bypass.why}`);
    lines.push(`  checker: allow, finding ${JSON.stringify(shown.bypasses[0]?.found ?? [])}`);
  }
  return lines.join("\n");
}
