import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import {
  fileSeconds,
  formatSummary,
  isTestFileName,
  parseSummary,
  planBatches,
  splitByWeight,
} from "../../scripts/run_tests.ts";
import { exited } from "../_exited.ts";
import { IS_DENO } from "../_runtime.ts";

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../scripts/run_tests.ts");

test("the summary line reads back what deno test printed, steps and ignored included", { timeout: 60_000 }, () => {
  assert.deepEqual(parseSummary("x\nok | 378 passed (1673 steps) | 0 failed | 2 ignored (19m12s)\n"), {
    passed: 378,
    passedSteps: 1673,
    failed: 0,
    failedSteps: 0,
    ignored: 2,
  });
  assert.deepEqual(parseSummary("FAILED | 11 passed | 1 failed (3 steps) (2s)"), {
    passed: 11,
    passedSteps: 0,
    failed: 1,
    failedSteps: 3,
    ignored: 0,
  });
  assert.equal(parseSummary("error: Module not found"), undefined);
  const counts = { passed: 5, passedSteps: 7, failed: 1, failedSteps: 1, ignored: 0 };
  assert.equal(formatSummary(counts, 75), "FAILED | 5 passed (7 steps) | 1 failed (1 step) (1m15s)");
  assert.deepEqual(parseSummary(formatSummary(counts, 75)), counts);
});

test("test files are named as deno test finds them", { timeout: 60_000 }, () => {
  for (const name of ["a_test.ts", "a.test.mjs", "test.ts", "x_y_test.tsx"]) assert.ok(isTestFileName(name), name);
  for (const name of ["_helpers.ts", "latest.ts", "a_test.json", "contest.ts"]) assert.ok(!isTestFileName(name), name);
});

test("each file's seconds are summed from its test lines", { timeout: 60_000 }, () => {
  const output = [
    "running 2 tests from ./tests/a_test.ts",
    "one ... ok (2s)",
    "two ... FAILED (1m3s)",
    "running 1 test from ./tests/b_test.ts",
    "three ... ok (250ms)",
  ].join("\n");
  assert.deepEqual(fileSeconds(output), { "tests/a_test.ts": 65, "tests/b_test.ts": 0.25 });
});

test("batches take every file once, longest first, and shrink to single files", { timeout: 60_000 }, () => {
  const weights: Record<string, number> = { a: 60, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1, h: 1, i: 30, j: 1 };
  const batches = planBatches(Object.keys(weights), (f) => weights[f], 2);
  assert.deepEqual(batches.flat().sort(), Object.keys(weights).sort());
  assert.deepEqual(batches[0], ["a"]);
  assert.deepEqual(batches[1], ["i"]);
  assert.equal(batches.at(-1)!.length, 1);
});

test("a split by weight gives every file once, heaviest first in each list, and lists of about equal weight", {
  timeout: 60_000,
}, () => {
  const weights: Record<string, number> = { a: 90, b: 60, c: 50, d: 40, e: 10, f: 5, g: 5, h: 1 };
  const weight = (f: string) => weights[f];
  const [one, two] = splitByWeight(Object.keys(weights), weight, 2);
  assert.deepEqual([...one, ...two].sort(), Object.keys(weights).sort());
  for (const list of [one, two]) assert.deepEqual(list, list.toSorted((x, y) => weight(y) - weight(x)));
  const sum = (list: string[]) => list.reduce((total, f) => total + weight(f), 0);
  assert.ok(Math.abs(sum(one) - sum(two)) <= 5, `${sum(one)} against ${sum(two)}`);
  // Random weights: no list is ever heavier than an even share plus the heaviest file.
  for (let run = 0; run < 200; run++) {
    const random: Record<string, number> = {};
    for (let i = 0; i < 1 + (run % 40); i++) random[`f${i}`] = Math.floor(Math.random() * 100);
    const parts = 1 + (run % 4);
    const lists = splitByWeight(Object.keys(random), (f) => random[f], parts);
    assert.equal(lists.length, parts);
    assert.deepEqual(lists.flat().sort(), Object.keys(random).sort());
    const total = Object.values(random).reduce((a, b) => a + b, 0);
    const heaviest = Math.max(...Object.values(random));
    for (const list of lists) assert.ok(list.reduce((t, f) => t + random[f], 0) <= total / parts + heaviest);
  }
});

test("a real run: the queues' counts add up and a failing file fails the run", {
  skip: !IS_DENO && "runs deno test",
  timeout: 120_000,
}, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "toolfence-run-tests-"));
  try {
    const body = (ok: boolean) =>
      `import { test } from "node:test";\nimport assert from "node:assert/strict";\n` +
      `test("passes", { timeout: 5000 }, () => assert.ok(true));\n` +
      `test("${ok ? "passes too" : "fails"}", { timeout: 5000 }, () => assert.ok(${ok}));\n`;
    await writeFile(path.join(dir, "one_test.ts"), body(true));
    await writeFile(path.join(dir, "two_test.ts"), body(true));
    await writeFile(path.join(dir, "three_test.ts"), body(false));
    await writeFile(path.join(dir, "helper.ts"), "export const x = 1;\n");
    // Two checks beside the queues: one passes and one fails, each counted as one test.
    const beside = ["--beside", "echo checked", "--beside", "echo broken >&2; exit 3"];
    const child = spawn(process.execPath, ["run", "-A", script, "--jobs", "2", ...beside, dir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const done = exited(child);
    let output = "";
    child.stdout!.setEncoding("utf8").on("data", (t: string) => output += t);
    child.stderr!.setEncoding("utf8").on("data", (t: string) => output += t);
    const { code } = await done;
    assert.equal(code, 1, output);
    assert.deepEqual(parseSummary(output), { passed: 6, passedSteps: 0, failed: 2, failedSteps: 0, ignored: 0 });
    assert.match(output, /Failures are in the output of: .*three_test\.ts/);
    assert.match(output, /^checked\necho checked \.\.\. ok \(\d+s\)$/m);
    assert.match(output, /^broken\necho broken >&2; exit 3 \.\.\. FAILED \(exit 3\) \(\d+s\)$/m);
    assert.match(output, /Failures are in the output of: .*echo broken/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
