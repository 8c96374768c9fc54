import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import {
  contextHooks,
  DEFAULT_TIMEOUT_MS,
  fileTimeout,
  missingTimeouts,
  NODE_TEST_FLAGS,
  SLOW_FILES,
  withTimeouts,
} from "../../scripts/check_tests.ts";
import { IS_DENO } from "../_runtime.ts";

describe("the test-timeout check", () => {
  test("finds each test and it without a timeout, and --fix writes the file's default in", { timeout: 60_000 }, () => {
    const source = [
      'import { describe, it, test as check } from "node:test";',
      'check("bare", async () => {});',
      'check("with options", { skip: false }, () => {});',
      'check("stated", { timeout: 5_000 }, () => {});',
      'describe("a suite", () => {',
      '  it("inside", () => {});',
      "  for (const n of [1, 2]) it(`generated ${n}`, () => {});",
      "});",
      'const re = /x/; re.test("x");',
      "",
    ].join("\n");
    const missing = missingTimeouts("x_test.ts", source, 45_000);
    assert.deepEqual(missing.map((m) => [m.line, m.name, m.timeoutMs]), [
      [2, '"bare"', 45_000],
      [3, '"with options"', 45_000],
      [6, '"inside"', 45_000],
      [7, "`generated ${n}`", 45_000],
    ]);
    const fixed = withTimeouts(source, missing);
    assert.match(fixed, /check\("bare", \{ timeout: 45_000 \}, async \(\) => \{\}\);/);
    assert.match(fixed, /check\("with options", \{ timeout: 45_000, skip: false \}, \(\) => \{\}\);/);
    assert.match(fixed, /check\("stated", \{ timeout: 5_000 \}, \(\) => \{\}\);/);
    assert.deepEqual(missingTimeouts("x_test.ts", fixed, 45_000), []);
  });

  test("finds the hooks registered on a test's own context, which Deno's node:test never runs", {
    timeout: 60_000,
  }, () => {
    const source = [
      'import { after, describe, test } from "node:test";',
      'describe("a suite", () => {',
      "  after(() => {});",
      '  test("one", { timeout: 1_000 }, async (t) => {',
      "    t.after(async () => {});",
      "    t.diagnostic('x');",
      "  });",
      '  test("two", { timeout: 1_000 }, function (ctx) { ctx.beforeEach(() => {}); });',
      "});",
      "const other = { after: (f: () => void) => f() };",
      "other.after(() => {});",
    ].join("\n");
    assert.deepEqual(contextHooks("z_test.ts", source).map((h) => [h.line, h.call]), [
      [5, "t.after"],
      [8, "ctx.beforeEach"],
    ]);
  });

  test("Deno's node:test runs no hook on the context of a test inside a describe", {
    timeout: 60_000,
    skip: !IS_DENO && "what Deno's node:test does",
  }, async () => {
    // What contextHooks guards against, checked on the runtime itself: when this starts to fail, Deno runs them.
    const dir = await mkdtemp(path.join(tmpdir(), "toolfence-context-hook-"));
    try {
      const file = path.join(dir, "hook_test.ts");
      await writeFile(
        file,
        'import { describe, test } from "node:test";\n' +
          'describe("d", () => { test("t", (t) => { t.after(() => console.log("HOOK-RAN")); }); });\n',
      );
      const run = spawnSync(process.execPath, ["test", "--no-check", "-A", file], {
        encoding: "utf8",
        timeout: 50_000,
      });
      assert.equal(run.status, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /HOOK-RAN/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test(
    "a describe's own timeout is given to its tests, which Deno would otherwise run unbounded",
    { timeout: 60_000 },
    () => {
      const source = [
        'import { describe, test } from "node:test";',
        'describe("slow", { timeout: 600_000 }, () => {',
        '  test("a", () => {});',
        '  describe("inner", () => { test("b", () => {}); });',
        "});",
        'test("c", () => {});',
      ].join("\n");
      assert.deepEqual(missingTimeouts("y_test.ts", source, 60_000).map((m) => [m.name, m.timeoutMs]), [
        ['"a"', 600_000],
        ['"b"', 600_000],
        ['"c"', 60_000],
      ]);
    },
  );

  test("a test whose options are not an object literal is reported, not rewritten", { timeout: 60_000 }, () => {
    const source =
      'import { test } from "node:test";\nconst options = { skip: true };\ntest("t", options, () => {});\n';
    const [missing] = missingTimeouts("z_test.ts", source, 60_000);
    assert.equal(missing.edit.at, -1);
    assert.equal(withTimeouts(source, [missing]), source);
  });

  test("only calls of node:test's own functions count", { timeout: 60_000 }, () => {
    const source = 'import { test } from "./my_runner.ts";\ntest("t", () => {});\n';
    assert.deepEqual(missingTimeouts("w_test.ts", source, 60_000), []);
  });

  test("slow files get their own default", { timeout: 60_000 }, () => {
    const [slow, value] = Object.entries(SLOW_FILES)[0];
    assert.equal(fileTimeout(slow), value);
    assert.ok(value > DEFAULT_TIMEOUT_MS);
    assert.equal(fileTimeout("tests/core/tool_test.ts"), DEFAULT_TIMEOUT_MS);
  });
});

/**
 * A test file that hangs the way the file-history race did: it waits for the
 * exit of a child that never exits (the child keeps the event loop alive too),
 * inside a describe, as most of the suite's tests are.
 */
const HANGING = `
import { describe, test } from "node:test";
import { spawn } from "node:child_process";
describe("a suite", () => {
  test("waits for a child that never exits", { timeout: 1_500 }, async () => {
    const child = spawn("sleep", ["600"], { stdio: "ignore" });
    console.log("child pid " + child.pid);
    await new Promise((resolve) => child.once("exit", resolve));
  });
  test("the next test still runs", { timeout: 1_500 }, () => {});
});
`;

/** Runs a test runner on the fixture; resolves with its exit code, output and time, killing the fixture's child. */
function runHanging(program: string, args: string[]): Promise<{ code: number | null; output: string; ms: number }> {
  const started = performance.now();
  // NODE_TEST_CONTEXT would make the inner node --test report to this run's runner instead of running the file.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...env, NO_COLOR: "1" } });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  // Created at the start: the runner may end before anything else is awaited.
  return new Promise((resolve) => {
    child.once("close", (code) => {
      for (const pid of output.matchAll(/child pid (\d+)/g)) {
        try {
          process.kill(Number(pid[1]), "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      resolve({ code, output, ms: performance.now() - started });
    });
  });
}

/** Whether this Node has `--test-force-exit` (20.14 and later); false where there is no Node. */
function hasForceExit(program: string): boolean {
  const version = /^v(\d+)\.(\d+)/.exec(spawnSync(program, ["--version"], { encoding: "utf8" }).stdout ?? "");
  return version !== null && Number(version[1]) * 100 + Number(version[2]) >= 2014;
}

describe("a hanging test ends and fails", () => {
  const deno = IS_DENO ? process.execPath : "deno";
  const node = IS_DENO ? "node" : process.execPath;
  const hasDeno = spawnSync(deno, ["--version"]).status === 0;

  test("under deno test", { timeout: 120_000, skip: !hasDeno && "no deno" }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "toolfence-hang-"));
    try {
      await writeFile(path.join(dir, "hang_test.mjs"), HANGING);
      const run = await runHanging(deno, ["test", "-A", path.join(dir, "hang_test.mjs")]);
      assert.notEqual(run.code, 0, run.output);
      assert.match(run.output, /waits for a child that never exits \.\.\. FAILED/, run.output);
      assert.match(run.output, /timed out after 1500ms/, run.output);
      assert.match(run.output, /the next test still runs \.\.\. ok/, run.output);
      assert.ok(run.ms < 60_000, `deno test took ${run.ms} ms`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("under node --test with the CI's flags", {
    timeout: 120_000,
    skip: !hasForceExit(node) && "needs Node 20.14 or later (--test-force-exit)",
  }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "toolfence-hang-"));
    try {
      await writeFile(path.join(dir, "hang_test.mjs"), HANGING);
      const run = await runHanging(node, [
        "--test",
        "--test-reporter=tap",
        ...NODE_TEST_FLAGS,
        path.join(dir, "hang_test.mjs"),
      ]);
      assert.notEqual(run.code, 0, run.output);
      assert.match(run.output, /not ok \d+ - waits for a child that never exits/, run.output);
      assert.match(run.output, /timed out after 1500ms/, run.output);
      assert.match(run.output, /\bok \d+ - the next test still runs/, run.output);
      assert.ok(run.ms < 60_000, `node --test took ${run.ms} ms`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
