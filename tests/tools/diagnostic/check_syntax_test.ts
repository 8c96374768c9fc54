import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";
import path from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import type { Fence } from "../../../core/fence.ts";
import { type CheckSyntaxResult, diagnosticTools } from "../../../tools/diagnostic/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...diagnosticTools());

async function syntax(session: Parameters<typeof box.call>[0], args: Record<string, unknown>) {
  const result = await box.call(session, "check_syntax", args);
  assert.equal(result.status, "success", `${result.errorCode}: ${result.error}`);
  return result.output as CheckSyntaxResult;
}

describe("check_syntax", () => {
  test("JSON: valid, and the error's line and column", { timeout: 90_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "ok.json"), '{"a": [1, 2]}');
      assert.deepEqual(await syntax(session, { path: "ok.json" }), {
        path: path.join(session.workspace.workdir, "ok.json"),
        language: "json",
        valid: true,
        errors: [],
        checker: "JSON.parse",
      });
      await writeFile(path.join(dir, "bad.json"), '{\n  "a": 1,\n  "b": \n}\n');
      const bad = await syntax(session, { path: "bad.json" });
      assert.equal(bad.valid, false);
      assert.deepEqual(bad.errors, [{ line: 4, column: 1, message: `Unexpected "}" (expected a value)` }]);
      await writeFile(path.join(dir, "more.json"), '{"a": 1}\n{"b": 2}');
      assert.deepEqual((await syntax(session, { path: "more.json" })).errors, [
        { line: 2, column: 1, message: `Unexpected "{" after the end of the JSON value` },
      ]);
      await writeFile(path.join(dir, "quote.json"), "{'a': 1}");
      assert.match((await syntax(session, { path: "quote.json" })).errors[0].message, /property name in double quotes/);
      await writeFile(path.join(dir, "cut.json"), '{"a": [1, 2');
      const cut = await syntax(session, { path: "cut.json" });
      assert.deepEqual([cut.errors[0].line, cut.errors[0].column], [1, 12]);
    });
  });

  test(
    "TypeScript, TSX and JavaScript through the TypeScript parser, every error located",
    { timeout: 90_000 },
    async () => {
      await withSession(async (session, dir) => {
        await writeFile(path.join(dir, "a.ts"), "const x: number = ;\nlet y: = 2;\nexport {};\n");
        const ts = await syntax(session, { path: "a.ts" });
        assert.equal(ts.language, "typescript");
        assert.deepEqual(ts.errors.map((e) => [e.line, e.column, e.message]), [
          [1, 19, "Expression expected."],
          [2, 8, "Type expected."],
        ]);
        await writeFile(path.join(dir, "view.tsx"), "export const v = <div className='x'>{1}</div>;\n");
        assert.equal((await syntax(session, { path: "view.tsx" })).valid, true);
        assert.equal((await syntax(session, { path: "view.tsx", language: "typescript" })).valid, false);
        await writeFile(path.join(dir, "a.mjs"), "export function f() {\n  return 1;\n");
        const js = await syntax(session, { path: "a.mjs" });
        assert.equal(js.language, "javascript");
        assert.equal(js.errors[0].line, 3);
      });
    },
  );

  test("bash through bash -n, which does not run the script", { timeout: 90_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "ok.sh"), `touch ${path.join(dir, "ran")}\nif true; then echo y; fi\n`);
      const ok = await syntax(session, { path: "ok.sh" });
      assert.deepEqual([ok.valid, ok.checker], [true, "bash -n"]);
      await assert.rejects(import("node:fs/promises").then((fs) => fs.stat(path.join(dir, "ran"))));
      await writeFile(path.join(dir, "bad.sh"), "echo ok\nif [ -f x ]; then\n  echo y\nfi )\n");
      const bad = await syntax(session, { path: "bad.sh" });
      assert.equal(bad.valid, false);
      assert.deepEqual([bad.errors[0].line, bad.errors[0].column], [4, 4]);
      assert.match(bad.errors[0].message, /unexpected token `\)'/);
      await writeFile(path.join(dir, "script"), "#!/usr/bin/env bash\nif true; then\n  echo\n");
      const open = await syntax(session, { path: "script" });
      assert.equal(open.language, "bash");
      assert.equal(open.errors[0].line, 4);
      assert.match(open.errors[0].message, /unexpected end of file/);
    });
  });

  test("without permission to run bash, tree-sitter-bash locates the error", { timeout: 90_000 }, async () => {
    const noRun: Fence = {
      query: (permission) => ({ allowed: permission !== "run" }),
      closedEntirely: (permission) => permission === "run",
    };
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "bad.sh"), "echo ok\nif [ -f x ]; then\n  echo y\n");
      const bad = await syntax(session, { path: "bad.sh" });
      assert.equal(bad.checker, "tree-sitter-bash");
      assert.equal(bad.valid, false);
      assert.ok(bad.errors[0].line >= 2, JSON.stringify(bad.errors));
      await writeFile(path.join(dir, "ok.sh"), 'for f in *; do echo "$f"; done\n');
      assert.equal((await syntax(session, { path: "ok.sh" })).valid, true);
    }, { fence: noRun });
  });

  // What runs bash -n can fail before bash does (bubblewrap exits 1 when it cannot set the sandbox up): before, its
  // words came back as the file's syntax error at line 1. Played by a stand-in bash that fails as bubblewrap does.
  test(
    "a checker that fails to start is no syntax error: the embedded parser judges",
    { timeout: 90_000 },
    async () => {
      const saved = process.env.PATH;
      await withSession(async (session, dir) => {
        const bin = await mkdtemp(path.join(tmpdir(), "toolfence-standin-bash-"));
        try {
          await writeFile(
            path.join(bin, "bash"),
            "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2\nexit 1\n",
            { mode: 0o755 },
          );
          process.env.PATH = `${bin}:${saved}`;
          await writeFile(path.join(dir, "ok.sh"), 'for f in *; do echo "$f"; done\n');
          const ok = await syntax(session, { path: "ok.sh" });
          assert.deepEqual([ok.valid, ok.checker, ok.errors], [true, "tree-sitter-bash", []]);
        } finally {
          process.env.PATH = saved;
          await rm(bin, { recursive: true, force: true });
        }
      });
    },
  );

  test("unknown languages, binary files and paths outside are clear errors", { timeout: 90_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "notes.txt"), "hello");
      assert.equal((await box.call(session, "check_syntax", { path: "notes.txt" })).errorCode, "unknown_language");
      await writeFile(path.join(dir, "blob.json"), new Uint8Array([123, 0, 125]));
      assert.equal((await box.call(session, "check_syntax", { path: "blob.json" })).errorCode, "binary_file");
      assert.equal((await box.call(session, "check_syntax", { path: "/etc/hostname" })).errorCode, "outside_workspace");
    });
  });
});
