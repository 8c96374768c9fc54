/**
 * Which results of each test file reached `node --test`'s runner, from the
 * events scripts/node_results_reporter.mjs writes: per file, the counts that
 * arrived, whether they are all that the file's process reported, and the
 * totals the build prints for `.ci/run`.
 *
 * With process isolation each file runs in a child process that sends its
 * events to the runner over its stdout, and frames lost on the way take their
 * tests with them without a failure (nodejs/node#48103-like): a suite that
 * shows some subtests and never ends, a file's later suites missing. The
 * child's own closing counts (its `test:summary`, the last frame it sends) are
 * the independent measure: a file is complete when they arrived and the
 * results that arrived match them, every enqueued top-level test ended, and
 * the runner saw the file end.
 *
 * @module
 */
import path from "node:path";

/** One line of the reporter's output. */
export interface NodeEvent {
  type: string;
  /** The test file, absolute. */
  file?: string;
  name?: string;
  nesting?: number;
  /** `test` or `suite` (`details.type`), on results. */
  kind?: string;
  skip?: boolean;
  todo?: boolean;
  failureType?: string;
  /** On a `test:summary`: the child's closing counts. */
  counts?: Partial<NodeCounts>;
  /** On a `test:summary`: how long the child ran its file, in milliseconds. */
  durationMs?: number;
}

/** Counts as node keeps them (`countCompletedTest`); `tests` leaves suites out, `topLevel` does not. */
export interface NodeCounts {
  tests: number;
  passed: number;
  failed: number;
  cancelled: number;
  skipped: number;
  todo: number;
  suites: number;
  topLevel: number;
}

/** What arrived of one test file. */
export interface FileResult {
  /** The file as given to node (relative to its working folder). */
  file: string;
  /** The results that arrived, the file's own (a crash, a non-zero exit) included. */
  counts: NodeCounts;
  /** The top-level results that arrived from the file's process. */
  reportedTopLevel: number;
  /** The top-level tests the file's process counted, when its closing counts arrived. */
  expectedTopLevel?: number;
  /** Why the file's results are incomplete; empty when they are complete. */
  problems: string[];
}

/** Failure types node counts as cancelled, not failed. */
const CANCELLED = new Set(["cancelledByParent", "testAborted", "testTimeoutFailure"]);

const KEYS: (keyof NodeCounts)[] = ["tests", "passed", "failed", "cancelled", "skipped", "todo", "suites", "topLevel"];

/** All zero. */
export function zeroCounts(): NodeCounts {
  return { tests: 0, passed: 0, failed: 0, cancelled: 0, skipped: 0, todo: 0, suites: 0, topLevel: 0 };
}

/** The reporter's lines; a line that is not whole JSON (a run ended mid-write) is left out. */
export function parseEvents(jsonl: string): NodeEvent[] {
  const events: NodeEvent[] = [];
  for (const line of jsonl.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line);
      if (value !== null && typeof value === "object" && typeof value.type === "string") events.push(value);
    } catch {
      // A partial line.
    }
  }
  return events;
}

/**
 * The seconds each of `files` (paths relative to `cwd`, as given to node) ran
 * for, from its child's closing `test:summary`; a file whose summary was lost
 * is left out.
 */
export function fileSeconds(events: readonly NodeEvent[], files: readonly string[], cwd: string): Map<string, number> {
  const byPath = new Map(files.map((f) => [path.resolve(cwd, f), f]));
  const seconds = new Map<string, number>();
  for (const event of events) {
    const file = event.file === undefined ? undefined : byPath.get(event.file);
    if (event.type === "test:summary" && file !== undefined && typeof event.durationMs === "number") {
      seconds.set(file, event.durationMs / 1000);
    }
  }
  return seconds;
}

/** Adds one result to `counts` as node's `countCompletedTest` does. */
function count(counts: NodeCounts, event: NodeEvent): void {
  if (event.nesting === 0) counts.topLevel++;
  if (event.kind === "suite") {
    counts.suites++;
    return;
  }
  if (event.skip) counts.skipped++;
  else if (event.todo) counts.todo++;
  else if (event.failureType !== undefined && CANCELLED.has(event.failureType)) counts.cancelled++;
  else if (event.type === "test:fail") counts.failed++;
  else counts.passed++;
  counts.tests++;
}

/**
 * Each file's results from the reporter's events of one run of `files` (as
 * given to node, relative to `cwd`). Events of a file not in `files` (a test
 * declared in a helper, under Node 22, which names the declaring file) go to
 * a result of their own, so that the totals still hold them.
 */
export function fileResults(events: readonly NodeEvent[], files: readonly string[], cwd: string): FileResult[] {
  const byPath = new Map(files.map((f) => [path.resolve(cwd, f), f]));
  interface State {
    counts: NodeCounts;
    fromChild: NodeCounts;
    summary?: Partial<NodeCounts>;
    open: Map<string, number>;
    ended: boolean;
  }
  const states = new Map<string, State>();
  const state = (file: string) => {
    let s = states.get(file);
    if (s === undefined) {
      s = { counts: zeroCounts(), fromChild: zeroCounts(), open: new Map(), ended: false };
      states.set(file, s);
    }
    return s;
  };
  for (const file of files) state(file);
  for (const event of events) {
    if (event.file === undefined) continue;
    const file = byPath.get(event.file) ?? path.relative(cwd, event.file);
    const s = state(file);
    // The runner's own test for the file is named by the file as given; it ends when the child has exited.
    const isFileTest = event.nesting === 0 && event.name === file && byPath.has(event.file);
    const isResult = event.type === "test:pass" || event.type === "test:fail";
    if (isFileTest) {
      if (event.type === "test:complete") s.ended = true;
      if (isResult) count(s.counts, event);
      continue;
    }
    if (event.type === "test:summary") s.summary = event.counts;
    else if (event.type === "test:enqueue" && event.nesting === 0 && event.name !== undefined) {
      s.open.set(event.name, (s.open.get(event.name) ?? 0) + 1);
    } else if (isResult) {
      count(s.counts, event);
      count(s.fromChild, event);
      if (event.nesting === 0 && event.name !== undefined && (s.open.get(event.name) ?? 0) > 0) {
        s.open.set(event.name, s.open.get(event.name)! - 1);
      }
    }
  }
  return [...states].map(([file, s]) => {
    const problems: string[] = [];
    const summary = s.summary;
    if (!files.includes(file)) {
      problems.push("results of a file not run (Node 22 names the file that declared a test: a helper's tests?)");
    } else if (summary === undefined) {
      problems.push("the closing counts of its process never arrived");
    } else {
      const differ = KEYS.filter((k) => (summary[k] ?? 0) !== s.fromChild[k])
        .map((k) => `${k} ${s.fromChild[k]} of ${summary[k] ?? 0}`);
      if (differ.length > 0) problems.push(`results arrived short of its process's counts: ${differ.join(", ")}`);
    }
    const unfinished = [...s.open].filter(([, n]) => n > 0).map(([name]) => name);
    if (unfinished.length > 0) {
      problems.push(`top-level tests started but never ended: ${unfinished.map((n) => JSON.stringify(n)).join(", ")}`);
    }
    if (!s.ended && files.includes(file)) problems.push("the runner never saw it end");
    return {
      file,
      counts: s.counts,
      reportedTopLevel: s.fromChild.topLevel,
      expectedTopLevel: summary?.topLevel,
      problems,
    };
  });
}

/** Whether all of a file's results arrived. */
export function isComplete(result: FileResult): boolean {
  return result.problems.length === 0;
}

/**
 * The counts the build prints for one Node version: each file's results
 * (its re-run's for a file re-run), plus one failure for each file still
 * incomplete that does not show a failure of its own, so that no lost result
 * passes for a green run.
 */
export function totalCounts(results: readonly FileResult[]): NodeCounts {
  const total = zeroCounts();
  for (const result of results) {
    for (const key of KEYS) total[key] += result.counts[key];
    if (!isComplete(result) && result.counts.failed + result.counts.cancelled === 0) {
      total.failed++;
      total.tests++;
    }
  }
  return total;
}

/** The lines `.ci/run` adds up (`# pass N`, `# fail N`, `# cancelled N`), with the rest for the reader. */
export function countLines(counts: NodeCounts): string[] {
  return [
    `# tests ${counts.tests}`,
    `# suites ${counts.suites}`,
    `# pass ${counts.passed}`,
    `# fail ${counts.failed}`,
    `# cancelled ${counts.cancelled}`,
    `# skipped ${counts.skipped}`,
    `# todo ${counts.todo}`,
  ];
}

/** How a file's results read in the build's log: `7 of 10 top-level results`. */
export function describeTopLevel(result: FileResult): string {
  return `${result.reportedTopLevel} of ${result.expectedTopLevel ?? "?"} top-level results`;
}
