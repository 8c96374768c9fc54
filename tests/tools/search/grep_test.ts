import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ToolBox } from "../../../toolbox.ts";
import type { ToolResult } from "../../../core/result.ts";
import type { Fence } from "../../../core/fence.ts";
import { grepTool } from "../../../tools/search/grep.ts";
import { findRipgrep } from "../../../tools/search/_ripgrep.ts";
import { searchTools } from "../../../tools/search/mod.ts";
import { type Layout, makeLayout, ok } from "../fs/_helpers.ts";
import { IS_DENO } from "../../_runtime.ts";

const rg = await findRipgrep();

let l: Layout;
const grep = (args: Record<string, unknown>) => l.call("grep", args);
type Match = { path: string; line: number; content?: string; before?: string[]; after?: string[] };
const matches = (out: Record<string, unknown>) => out.matches as Match[];

before(async () => {
  l = await makeLayout(searchTools());
  await fsp.mkdir(path.join(l.workdir, "src"));
  await fsp.writeFile(
    path.join(l.workdir, "src", "many.txt"),
    Array.from({ length: 150 }, (_, i) => `hit ${i}`).join("\n"),
  );
  await fsp.writeFile(path.join(l.workdir, "src", "flags.sh"), "run --force\nrun -e x\n");
  await fsp.writeFile(path.join(l.workdir, "src", "ctx.txt"), "one\ntwo\nTarget here\nthree\nfour\n");
});
after(() => l.cleanup());

describe("grep results", () => {
  test(
    "matches are {path, line, content}, paths relative to the root, lines 1-based",
    { timeout: 60_000 },
    async () => {
      const out = ok(await grep({ pattern: "Target", path: "src" }));
      assert.equal(out.root, path.join(l.workdir, "src"));
      assert.deepEqual(matches(out), [{ path: "ctx.txt", line: 3, content: "Target here" }]);
      const file = ok(await grep({ pattern: "Target", path: "src/ctx.txt" }));
      assert.deepEqual(matches(file), [{ path: "ctx.txt", line: 3, content: "Target here" }]);
    },
  );

  test("the total cap is 100 by default and says when it cut", { timeout: 60_000 }, async () => {
    const out = ok(await grep({ pattern: "^hit" }));
    assert.equal(matches(out).length, 100);
    assert.equal(out.truncated, true);
    assert.match(String(out.note), /first 100 matches/);
    const exact = ok(await grep({ pattern: "^hit", max_matches: 150 }));
    assert.equal(matches(exact).length, 150);
    assert.equal(exact.truncated, false, "exactly max_matches matches is not a cut");
  });

  test("context lines, case folding, and paths only", { timeout: 60_000 }, async () => {
    const out = ok(await grep({ pattern: "target", case_sensitive: false, context: 2, path: "src" }));
    assert.deepEqual(matches(out), [{
      path: "ctx.txt",
      line: 3,
      content: "Target here",
      before: ["one", "two"],
      after: ["three", "four"],
    }]);
    assert.deepEqual(matches(ok(await grep({ pattern: "target", path: "src" }))), []);
    const bare = ok(await grep({ pattern: "Target", include_content: false, context: 2 }));
    assert.deepEqual(matches(bare), [{ path: "src/ctx.txt", line: 3 }]);
  });

  test("patterns that start with - are patterns, not options", { timeout: 60_000 }, async () => {
    for (const regex of [true, false]) {
      const out = ok(await grep({ pattern: "-e", regex, path: "src" }));
      assert.deepEqual(matches(out).map((m) => m.line), [2], `regex: ${regex}`);
      assert.deepEqual(matches(ok(await grep({ pattern: "--force", regex, path: "src" }))).length, 1);
    }
  });

  test("the glob filter matches names without a slash and paths with one", { timeout: 60_000 }, async () => {
    assert.equal(matches(ok(await grep({ pattern: "run", glob: "*.sh" }))).length, 2);
    assert.equal(matches(ok(await grep({ pattern: "run", glob: "src/*.sh" }))).length, 2);
    assert.equal(matches(ok(await grep({ pattern: "run", glob: "*.txt" }))).length, 0);
    assert.equal((await grep({ pattern: "run", glob: "/abs/*.sh" })).errorCode, "invalid_glob");
    assert.equal((await grep({ pattern: "run", glob: "../*.sh" })).errorCode, "invalid_glob");
  });

  test("bad patterns and missing paths are clear errors", { timeout: 60_000 }, async () => {
    const bad = await grep({ pattern: "(?<=x)y" });
    assert.equal(bad.errorCode, "invalid_pattern");
    assert.match(bad.recoveryHint!, /regex: false/);
    assert.equal((await grep({ pattern: "x", path: "nope" })).errorCode, "not_found");
  });

  test("symlinks are not followed: nothing from outside the workspace is searched", { timeout: 60_000 }, async () => {
    const out = ok(await grep({ pattern: "secret", max_matches: 1000 }));
    assert.deepEqual(matches(out), []);
  });
});

const PATH_CASES: [string, (l: Layout) => string, string][] = [
  ["../../etc", () => "../../etc", "outside_workspace"],
  ["/etc", () => "/etc", "outside_workspace"],
  ["sibling W-secrets", () => "../W-secrets", "outside_workspace"],
  ["sibling W-secrets (absolute)", (l) => l.sibling, "outside_workspace"],
  ["symlink to a file outside", () => "link-out", "outside_workspace"],
  ["symlinked folder outside", () => "dir-out", "outside_workspace"],
  ["file under a symlinked folder outside", () => "dir-out/s.txt", "outside_workspace"],
  ["dangling symlink outside", () => "dangling", "outside_workspace"],
  ["the temp dir's place before it exists", () => path.join(os.tmpdir(), "toolfence-not-yet"), "outside_workspace"],
  ["NUL byte", () => "src\0/../..", "invalid_path"],
  ["symlink loop", () => "loop-a", "symlink_loop"],
];

describe("grep and glob refuse every path case of the policy issue", () => {
  for (const [name, p, code] of PATH_CASES) {
    for (const tool of ["grep", "glob"]) {
      test(`${tool}: ${name}`, { timeout: 60_000 }, async () => {
        const args = tool === "grep" ? { pattern: "secret", path: p(l) } : { pattern: "**", path: p(l) };
        const result: ToolResult = await l.call(tool, args);
        assert.equal(result.errorCode, code, result.error);
        assert.doesNotMatch(JSON.stringify(result), /outside secret|sibling secret|outside dir secret/);
      });
    }
  }
});

describe("engine choice", () => {
  const noRun: Fence = {
    query: (permission) => permission === "run" ? { allowed: false, flag: "--allow-run" } : { allowed: true },
    closedEntirely: (permission) => permission === "run",
  };

  test(
    "without permission to run programs, grep uses the built-in engine and stays listed",
    { timeout: 60_000 },
    async () => {
      const fenced = await makeLayout(searchTools(), { fence: noRun });
      try {
        await fsp.writeFile(path.join(fenced.workdir, "a.txt"), "findme\n");
        const out = ok(await fenced.call("grep", { pattern: "findme" }));
        assert.equal(out.engine, "builtin");
        assert.deepEqual(matches(out), [{ path: "a.txt", line: 1, content: "findme" }]);
        assert.ok(fenced.box.list({ fence: noRun }).some((t) => t.name === "grep"));
        const forced = new ToolBox().register(grepTool({ engine: "ripgrep" }));
        const refused = await forced.call(fenced.session, "grep", { pattern: "findme" });
        assert.ok(["engine_unavailable", "fence_denied"].includes(refused.errorCode!), refused.errorCode);
      } finally {
        await fenced.cleanup();
      }
    },
  );

  test(
    "a real `deno run` with only --allow-read falls back to the built-in engine with the same matches",
    { timeout: 60_000, skip: !IS_DENO || rg === undefined ? "needs deno and a ripgrep" : false },
    async () => {
      await fsp.writeFile(path.join(l.workdir, "src", "probe.txt"), "alpha needle\nbeta\nneedle gamma\n");
      const args = { pattern: "needle", max_matches: 10 };
      const probe = fileURLToPath(new URL("./_grep_probe.ts", import.meta.url));
      const run = (flags: string[]) =>
        new Promise<{ listed: string[]; result: ToolResult }>((resolve, reject) => {
          execFile(
            "deno",
            ["run", "--no-prompt", ...flags, probe, JSON.stringify({ workdir: l.workdir, args })],
            { timeout: 60_000 },
            (error, stdout, stderr) => error ? reject(new Error(stderr)) : resolve(JSON.parse(stdout)),
          );
        });
      const narrow = await run([`--allow-read=${l.workdir}`]);
      // ripgrep runs through the process door: bubblewrap, the limits and the session temp dir.
      const wide = await run(["--allow-read", "--allow-run", "--allow-write", "--allow-env", "--allow-sys"]);
      assert.deepEqual(narrow.listed, ["glob", "grep"]);
      const { engine: narrowEngine, ...narrowOut } = narrow.result.output as Record<string, unknown>;
      const { engine: wideEngine, ...wideOut } = wide.result.output as Record<string, unknown>;
      assert.equal(narrowEngine, "builtin");
      assert.equal(wideEngine, "ripgrep");
      assert.deepEqual(narrowOut, wideOut);
      assert.equal((narrowOut.matches as Match[]).length, 2);
    },
  );
});
