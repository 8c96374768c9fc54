/**
 * Reading `node --test`'s TAP output: which lines to show as the run goes, the
 * details of what failed, and the closing counts.
 *
 * @module
 */

/** The counts node prints at the end, e.g. `# pass 12`. */
export interface TapCounts {
  tests: number;
  pass: number;
  fail: number;
  skipped: number;
  todo: number;
  cancelled: number;
}

/**
 * Whether a line is worth showing live: a top-level result (one per file's
 * suite or test), any skipped test or suite with its reason, and the counts.
 */
export function isHeadline(line: string): boolean {
  return /^(not )?ok \d+ - /.test(line) || /^\s*(not )?ok \d+ - .*# SKIP/.test(line) ||
    /^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(line);
}

/** The closing counts; 0 for any node did not print. */
export function tapCounts(tap: string): TapCounts {
  const count = (name: string) => {
    const all = [...tap.matchAll(new RegExp(`^# ${name} (\\d+)$`, "gm"))];
    return all.length > 0 ? Number(all[all.length - 1][1]) : 0;
  };
  return {
    tests: count("tests"),
    pass: count("pass"),
    fail: count("fail"),
    skipped: count("skipped"),
    todo: count("todo"),
    cancelled: count("cancelled"),
  };
}

/**
 * The skipped tests and suites with their reasons. Node's `# skipped` count
 * leaves out the tests of a skipped suite, so the lines are counted here.
 */
export function skipped(tap: string): string[] {
  return tap.split("\n").filter((line) => /^\s*ok \d+ - .*# SKIP/.test(line)).map((line) => line.trim());
}

/**
 * Every failed test (the innermost `not ok` lines, not the suites that fail
 * because of them) with its YAML block: the error, the expected and actual
 * values and the stack.
 */
export function failureDetails(tap: string): string[] {
  const lines = tap.split("\n");
  const failures: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const head = /^(\s*)not ok \d+ - /.exec(lines[i]);
    if (!head) continue;
    const indent = head[1];
    const block = [lines[i]];
    let j = i + 1;
    if (lines[j]?.trim() === "---") {
      for (; j < lines.length && lines[j].trim() !== "..."; j++) block.push(lines[j]);
      block.push(lines[j] ?? "");
    }
    // A suite failing only because of its subtests adds nothing to their own reports.
    if (!block.some((l) => l.startsWith(`${indent}  failureType: 'subtestsFailed'`))) {
      failures.push(block.join("\n"));
    }
  }
  return failures;
}
