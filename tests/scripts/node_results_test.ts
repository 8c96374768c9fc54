// Which results of each test file reached node --test's runner (scripts/_node_results.ts): per-file completeness
// from the results reporter's events, the corrected counts, a generated stream with frames lost at random, and a real
// node run of a file that loses some of its results.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  countLines,
  describeTopLevel,
  fileResults,
  fileSeconds,
  isComplete,
  type NodeCounts,
  type NodeEvent,
  parseEvents,
  totalCounts,
  zeroCounts,
} from "../../scripts/_node_results.ts";
import { exited } from "../_exited.ts";
import { IS_DENO } from "../_runtime.ts";
import { seededRandom } from "../_seeded_random.ts";

const cwd = "/build";
const FILE = "tests/a_test.js";
const ABS = path.resolve(cwd, FILE);

/** A leaf's outcome. */
type Outcome = "pass" | "fail" | "skip" | "todo" | "cancel";

/** A test (its subtests, if any, in `children`) or a suite. */
interface Node {
  name: string;
  kind: "test" | "suite";
  outcome: Outcome;
  children: Node[];
}

/** The event a result sends, as the reporter writes it. */
function result(node: Node, nesting: number, failed: boolean): NodeEvent {
  const outcome = node.kind === "suite" ? (failed ? "fail" : "pass") : node.outcome;
  return {
    type: outcome === "fail" || outcome === "cancel" ? "test:fail" : "test:pass",
    file: ABS,
    name: node.name,
    nesting,
    kind: node.kind,
    skip: outcome === "skip" || undefined,
    todo: outcome === "todo" || undefined,
    failureType: outcome === "cancel" ? "testTimeoutFailure" : outcome === "fail" ? "testCodeFailure" : undefined,
  };
}

/**
 * The child's events for `tops`, in node's order (every top-level test enqueued first, each test's subtests' results
 * before its own), its closing counts, then the runner's end of the file; and the counts, tallied here by hand.
 */
function stream(tops: Node[]): { child: NodeEvent[]; runner: NodeEvent[]; truth: NodeCounts } {
  const truth = zeroCounts();
  const child: NodeEvent[] = tops.map((t) => ({ type: "test:enqueue", file: ABS, name: t.name, nesting: 0 }));
  const visit = (node: Node, nesting: number): boolean => {
    let failed = false;
    for (const c of node.children) failed = visit(c, nesting + 1) || failed;
    if (nesting === 0) {
      truth.topLevel++;
      child.push({ type: "test:complete", file: ABS, name: node.name, nesting: 0, kind: node.kind });
    }
    child.push(result(node, nesting, failed));
    if (node.kind === "suite") truth.suites++;
    else {
      truth.tests++;
      const key = ({ pass: "passed", fail: "failed", skip: "skipped", todo: "todo", cancel: "cancelled" } as const)[
        node.outcome
      ];
      truth[key]++;
    }
    return node.kind === "suite" ? failed : node.outcome === "fail" || node.outcome === "cancel";
  };
  for (const t of tops) visit(t, 0);
  child.push({ type: "test:summary", file: ABS, counts: { ...truth } });
  const runner: NodeEvent[] = [{ type: "test:complete", file: ABS, name: FILE, nesting: 0, kind: "test" }];
  return { child, runner, truth };
}

const leaf = (name: string, outcome: Outcome = "pass"): Node => ({ name, kind: "test", outcome, children: [] });
const suite = (name: string, children: Node[]): Node => ({ name, kind: "suite", outcome: "pass", children });

function generate(next: () => number, depth = 0, prefix = "t"): Node[] {
  const outcomes: Outcome[] = ["pass", "pass", "pass", "fail", "skip", "todo", "cancel"];
  return Array.from({ length: 1 + Math.floor(next() * (depth === 0 ? 6 : 3)) }, (_, i) => {
    const name = `${prefix}${i}`;
    const r = next();
    if (depth < 3 && r < 0.3) return suite(name, generate(next, depth + 1, `${name}.`));
    if (depth < 3 && r < 0.4) return { ...leaf(name), children: generate(next, depth + 1, `${name}.`) };
    return leaf(name, outcomes[Math.floor(next() * outcomes.length)]);
  });
}

describe("per-file completeness", () => {
  const tops = [suite("s", [leaf("a"), leaf("b", "skip"), suite("inner", [leaf("c")])]), leaf("t"), leaf("u", "todo")];

  test("a whole stream is complete, with node's counts", { timeout: 60_000 }, () => {
    const { child, runner, truth } = stream(tops);
    const [r] = fileResults([...child, ...runner], [FILE], cwd);
    assert.deepEqual(r.problems, []);
    assert.ok(isComplete(r));
    assert.deepEqual(r.counts, truth);
    assert.deepEqual(truth, {
      tests: 5,
      passed: 3,
      failed: 0,
      cancelled: 0,
      skipped: 1,
      todo: 1,
      suites: 2,
      topLevel: 3,
    });
    assert.equal(describeTopLevel(r), "3 of 3 top-level results");
  });

  test("lost results: short of the child's counts, and a top-level test that never ended", { timeout: 60_000 }, () => {
    const { child, runner } = stream(tops);
    // The suite's last results and the suite itself are lost, as in CI's "checkCommand: redirections".
    const lost = child.filter((e) =>
      !(e.type === "test:pass" && (e.name === "c" || e.name === "inner" || e.name === "s"))
    );
    const [r] = fileResults([...lost, ...runner], [FILE], cwd);
    assert.ok(!isComplete(r));
    assert.equal(describeTopLevel(r), "2 of 3 top-level results");
    assert.match(r.problems.join("\n"), /short of its process's counts: tests 4 of 5, passed 2 of 3, suites 0 of 2/);
    assert.match(r.problems.join("\n"), /never ended: "s"/);
  });

  test("a lost closing summary or a file the runner never ended is incomplete", { timeout: 60_000 }, () => {
    const { child, runner } = stream(tops);
    const [noSummary] = fileResults([...child.filter((e) => e.type !== "test:summary"), ...runner], [FILE], cwd);
    assert.deepEqual(noSummary.problems, ["the closing counts of its process never arrived"]);
    assert.equal(describeTopLevel(noSummary), "3 of ? top-level results");
    const [unended] = fileResults(child, [FILE], cwd);
    assert.deepEqual(unended.problems, ["the runner never saw it end"]);
    const [nothing, other] = fileResults([...child, ...runner], [FILE, "tests/b_test.js"], cwd);
    assert.ok(isComplete(nothing));
    assert.equal(other.file, "tests/b_test.js");
    assert.equal(other.problems.length, 2);
  });

  test("a crashed file: the runner's own failure counts, and no second one is added", { timeout: 60_000 }, () => {
    const events: NodeEvent[] = [
      { type: "test:fail", file: ABS, name: FILE, nesting: 0, kind: "test", failureType: "testCodeFailure" },
      { type: "test:complete", file: ABS, name: FILE, nesting: 0, kind: "test" },
    ];
    const [r] = fileResults(events, [FILE], cwd);
    assert.ok(!isComplete(r));
    assert.deepEqual(totalCounts([r]), { ...zeroCounts(), tests: 1, failed: 1, topLevel: 1 });
    // Incomplete without a failure of its own: one failure is added, so the run is never green.
    const [quiet] = fileResults(stream(tops).child.filter((e) => e.type !== "test:summary"), [FILE], cwd);
    assert.equal(totalCounts([quiet]).failed, 1);
    assert.equal(totalCounts([quiet]).passed, 3);
  });

  test("events of a file not run are counted and flagged", { timeout: 60_000 }, () => {
    const { child, runner } = stream([leaf("t")]);
    const helper: NodeEvent = { ...child[2], file: path.resolve(cwd, "tests/_helper.js"), name: "h" };
    const results = fileResults([...child, helper, ...runner], [FILE], cwd);
    assert.deepEqual(results.map((r) => [r.file, isComplete(r)]), [[FILE, true], ["tests/_helper.js", false]]);
    assert.equal(totalCounts(results).passed, 2);
  });

  test(
    "a file's seconds come from its child's closing summary, and only for the files run",
    { timeout: 60_000 },
    () => {
      const other = "tests/b_test.js";
      const summary = (file: string, durationMs?: number): NodeEvent => ({
        type: "test:summary",
        file: path.resolve(cwd, file),
        counts: { tests: 1, passed: 1 },
        durationMs,
      });
      const events = [summary(FILE, 2_500), summary(other), summary("tests/_helper.js", 10)];
      assert.deepEqual([...fileSeconds(events, [FILE, other], cwd)], [[FILE, 2.5]]);
    },
  );

  test("the reporter's lines: a partial last line is left out", { timeout: 60_000 }, () => {
    const lines = `${JSON.stringify({ type: "test:pass", name: "a" })}\n\n{"type":"test:fa`;
    assert.deepEqual(parseEvents(lines), [{ type: "test:pass", name: "a" }]);
    assert.deepEqual(parseEvents("null\n[1]\n{}\n"), []);
  });

  test("the totals' lines are node's, which .ci/run adds up", { timeout: 60_000 }, () => {
    const lines = countLines({
      tests: 9,
      passed: 6,
      failed: 1,
      cancelled: 1,
      skipped: 1,
      todo: 0,
      suites: 2,
      topLevel: 4,
    });
    assert.deepEqual(lines.filter((l) => /^# (pass|fail|cancelled) \d+$/.test(l)), [
      "# pass 6",
      "# fail 1",
      "# cancelled 1",
    ]);
  });
});

describe("frames lost at random", () => {
  test("counts never exceed what ran, every loss of a result is flagged, and unflagged means exact", {
    timeout: 60_000,
  }, () => {
    const keys = Object.keys(zeroCounts()) as (keyof NodeCounts)[];
    for (let seed = 1; seed <= 2000; seed++) {
      const next = seededRandom(seed);
      const { child, runner, truth } = stream(generate(next));
      const share = next() * 0.5;
      // Either frames lost here and there, or the stream cut off (the rest of the file swallowed).
      const cut = next() < 0.3 ? Math.floor(next() * child.length) : child.length;
      const kept = child.filter((_, i) => i < cut && next() >= share);
      const lostResult = child.some((e) =>
        !kept.includes(e) && (e.type === "test:pass" || e.type === "test:fail" || e.type === "test:summary")
      );
      const results = fileResults([...kept, ...runner], [FILE], cwd);
      assert.equal(results.length, 1, `seed ${seed}`);
      const [r] = results;
      for (const key of keys) assert.ok(r.counts[key] <= truth[key], `seed ${seed}: ${key} ${r.counts[key]}`);
      if (lostResult) assert.ok(!isComplete(r), `seed ${seed}: a lost result went unflagged`);
      if (isComplete(r)) assert.deepEqual(r.counts, truth, `seed ${seed}`);
      const total = totalCounts(results);
      assert.ok(total.passed <= truth.passed, `seed ${seed}`);
      if (!isComplete(r)) assert.ok(total.failed + total.cancelled > 0, `seed ${seed}: an incomplete file reads green`);
    }
  });
});

const here = path.dirname(fileURLToPath(import.meta.url));

/** A Node that has the reporter's events (22 or later): this one under Node, `node` on the PATH under Deno. */
function nodeProgram(): string | undefined {
  if (!IS_DENO) return process.execPath;
  try {
    const version = execFileSync("node", ["--version"], { encoding: "utf8" });
    return Number(/^v(\d+)/.exec(version)?.[1]) >= 22 ? "node" : undefined;
  } catch {
    return undefined;
  }
}

const node = nodeProgram();

test("node --test with the reporter: a file that loses results is found", {
  timeout: 60_000,
  skip: node === undefined ? "needs node 22 or later on the PATH" : false,
}, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "toolfence-node-results-"));
  try {
    const events = path.join(dir, "events.jsonl");
    const files = ["fixtures/lossy_node_file.mjs"];
    // This test may itself run in a node --test child: the run it starts must not take itself for one.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(node!, [
      "--test",
      "--test-reporter=tap",
      "--test-reporter-destination=stdout",
      `--test-reporter=${path.resolve(here, "../../scripts/node_results_reporter.mjs")}`,
      `--test-reporter-destination=${events}`,
      ...files,
    ], { cwd: here, env, stdio: ["ignore", "pipe", "inherit"] });
    const ended = exited(child);
    let tap = "";
    child.stdout.on("data", (chunk) => tap += chunk);
    const { code } = await ended;
    // Node itself sees nothing wrong: 3 passed of 3.
    assert.equal(code, 0, tap);
    assert.match(tap, /^# pass 3$/m);
    const parsed = parseEvents(await readFile(events, "utf8"));
    const [r] = fileResults(parsed, files, here);
    assert.ok(!isComplete(r));
    // The file's closing summary arrived (its results did not all): it says how long the file ran.
    const seconds = fileSeconds(parsed, files, here).get(files[0]);
    assert.ok(seconds !== undefined && seconds > 0 && seconds < 60, `ran for ${seconds} s`);
    assert.equal(describeTopLevel(r), "3 of 5 top-level results");
    assert.equal(r.counts.passed, 3);
    assert.equal(totalCounts([r]).failed, 1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
