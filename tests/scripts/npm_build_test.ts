// The rules of the npm build that need no build: which npm package a bare
// specifier is, how the dependencies are split, the package.json, the import
// rewriting, and reading node's TAP.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { importedSpecifiers, rewriteRelativeSpecifier } from "../../scripts/_npm_compile.ts";
import {
  dependencyVersion,
  isBareSpecifier,
  packageJson,
  packageNameOf,
  packedManifest,
  parseNpmSpecifier,
  planDependencies,
  resolveBare,
  subpathExports,
} from "../../scripts/_npm_package.ts";
import { failureDetails, isHeadline, skipped, tapCounts } from "../../scripts/_tap.ts";

const imports = {
  valibot: "npm:valibot@1.5.0",
  "@modelcontextprotocol/sdk": "npm:@modelcontextprotocol/sdk@1.32.2",
  "@modelcontextprotocol/sdk/": "npm:/@modelcontextprotocol/sdk@1.32.2/",
  "ai/": "npm:/ai@7.0.173/",
  "ai/rsc/": "npm:/ai@7.0.0/rsc/",
  "@types/node": "npm:@types/node@20.19.43",
  aliased: "npm:real-name@2.0.0",
  unversioned: "npm:left-open",
  jsrOnly: "jsr:@std/path@1",
};

describe("bare specifiers and the import map", () => {
  test("what is bare: not relative, absolute, a URL or a Node built-in", { timeout: 60_000 }, () => {
    assert.deepEqual(
      ["valibot", "@a/b/c.js", "./x.ts", "../x.ts", "/abs", "node:fs", "fs", "fs/promises", "npm:x@1", "https://x"]
        .map(isBareSpecifier),
      [true, true, false, false, false, false, false, false, false, false],
    );
    assert.equal(packageNameOf("@modelcontextprotocol/sdk/server/mcp.js"), "@modelcontextprotocol/sdk");
    assert.equal(packageNameOf("ai/rsc"), "ai");
  });

  test("npm: entries, plain and prefix forms; an unversioned entry is not accepted", { timeout: 60_000 }, () => {
    assert.deepEqual(parseNpmSpecifier("npm:@scope/pkg@1.2.3/sub/path.js"), { name: "@scope/pkg", version: "1.2.3" });
    assert.deepEqual(parseNpmSpecifier("npm:/ai@7.0.173/"), { name: "ai", version: "7.0.173" });
    assert.equal(parseNpmSpecifier("npm:left-open"), undefined);
    assert.equal(parseNpmSpecifier("jsr:@std/path@1"), undefined);
  });

  test("an exact key first, then the longest prefix key", { timeout: 60_000 }, () => {
    assert.deepEqual(resolveBare("@modelcontextprotocol/sdk", imports).target.version, "1.32.2");
    assert.deepEqual(resolveBare("@modelcontextprotocol/sdk/client/index.js", imports), {
      importName: "@modelcontextprotocol/sdk",
      target: { name: "@modelcontextprotocol/sdk", version: "1.32.2" },
    });
    assert.equal(resolveBare("ai/rsc/x.js", imports).target.version, "7.0.0");
    assert.equal(resolveBare("ai/other.js", imports).target.version, "7.0.173");
  });

  test("what Node could not resolve from package.json is an error naming the specifier", { timeout: 60_000 }, () => {
    assert.throws(() => resolveBare("missing", imports), /"missing" is not in deno.json's import map/);
    assert.throws(() => resolveBare("unversioned", imports), /only depend on versioned npm: packages/);
    assert.throws(() => resolveBare("jsrOnly", imports), /maps to jsr:@std\/path@1/);
  });

  test("an entry whose key differs from the package becomes an npm alias", { timeout: 60_000 }, () => {
    const { importName, target } = resolveBare("aliased", imports);
    assert.equal(dependencyVersion(importName, target), "npm:real-name@2.0.0");
    assert.equal(dependencyVersion("valibot", { name: "valibot", version: "1.5.0" }), "1.5.0");
  });
});

describe("dependency sections", () => {
  test("run time: dependencies; declarations only: optional peers; tests only and @types/node: dev", {
    timeout: 60_000,
  }, () => {
    const plan = planDependencies({
      runtime: ["valibot", "@modelcontextprotocol/sdk/server/index.js"],
      types: ["valibot", "ai/x.js"],
      tests: ["@modelcontextprotocol/sdk/client/index.js", "aliased"],
    }, imports);
    assert.deepEqual(plan.dependencies, { "@modelcontextprotocol/sdk": "1.32.2", valibot: "1.5.0" });
    assert.deepEqual(plan.peerDependencies, { ai: "7.0.173" });
    assert.deepEqual(plan.peerDependenciesMeta, { ai: { optional: true } });
    assert.deepEqual(plan.devDependencies, {
      "@types/node": "20.19.43",
      ai: "7.0.173",
      aliased: "npm:real-name@2.0.0",
    });
  });
});

describe("dependency rules", () => {
  test("a workspace package is depended on at the workspace's range, valibot is a peer, the AI SDK an optional one", {
    timeout: 60_000,
  }, () => {
    const plan = planDependencies(
      {
        runtime: ["valibot", "@toolfence/core", "ai/x.js", "@modelcontextprotocol/sdk/server/index.js"],
        types: ["valibot", "@toolfence/core"],
        tests: ["@toolfence/core", "aliased"],
      },
      imports,
      {
        workspace: { "@toolfence/core": "^0.3.1" },
        peers: { valibot: "^1" },
        optionalPeers: new Set(["ai"]),
      },
    );
    assert.deepEqual(plan.dependencies, { "@modelcontextprotocol/sdk": "1.32.2", "@toolfence/core": "^0.3.1" });
    assert.deepEqual(plan.peerDependencies, { ai: "7.0.173", valibot: "^1" });
    assert.deepEqual(plan.peerDependenciesMeta, { ai: { optional: true } });
    assert.deepEqual(plan.devDependencies, {
      "@types/node": "20.19.43",
      ai: "7.0.173",
      aliased: "npm:real-name@2.0.0",
      valibot: "1.5.0",
    });
  });
});

describe("package.json", () => {
  const plan = planDependencies({ runtime: ["valibot"], types: [], tests: [] }, imports);
  const config = { version: "0.3.1", license: "MIT", exports: { ".": "./mod.ts", "./core": "./core/mod.ts" } };

  test(
    "exports with types conditions, ./mcp added when the module exists, bin, engines, files",
    { timeout: 60_000 },
    () => {
      const exports = subpathExports(config, "./adapters/mcp/mod.ts");
      const manifest = packageJson({
        config,
        exports,
        bin: "bin/toolfence.js",
        files: ["mod.js", "core/**/*.js"],
        plan,
        description: "Tools.",
      });
      assert.equal(manifest.name, "toolfence");
      assert.equal(manifest.version, "0.3.1");
      assert.equal(manifest.type, "module");
      assert.deepEqual(manifest.exports, {
        ".": { types: "./mod.d.ts", default: "./mod.js" },
        "./core": { types: "./core/mod.d.ts", default: "./core/mod.js" },
        "./mcp": { types: "./adapters/mcp/mod.d.ts", default: "./adapters/mcp/mod.js" },
        "./package.json": "./package.json",
      });
      assert.equal(manifest.types, "./mod.d.ts");
      assert.deepEqual(manifest.bin, { toolfence: "bin/toolfence.js" });
      assert.deepEqual(manifest.engines, { node: ">=22" });
      assert.deepEqual(manifest.files, ["core/**/*.js", "mod.js"]);
      assert.deepEqual(manifest.dependencies, { valibot: "1.5.0" });
      assert.equal("peerDependencies" in manifest, false);
    },
  );

  test("the packed manifest leaves out the build's devDependencies and workspaces", { timeout: 60_000 }, () => {
    const withDev = planDependencies({ runtime: ["valibot"], types: ["@types/x"], tests: ["fast-check"] }, {
      ...imports,
      "@types/x": "npm:@types/x@1.0.0",
      "fast-check": "npm:fast-check@4.0.0",
    });
    const manifest = packageJson({
      config,
      exports: subpathExports(config, undefined),
      files: ["mod.js"],
      plan: withDev,
      description: "Tools.",
      workspaces: ["core"],
    });
    assert.ok("devDependencies" in manifest && "workspaces" in manifest, "the build's own manifest has both");
    const packed = packedManifest(manifest);
    assert.equal("devDependencies" in packed, false);
    assert.equal("workspaces" in packed, false);
    assert.deepEqual(packed.dependencies, { valibot: "1.5.0" });
    // A type the declarations need is an optional peer, never a dependency.
    assert.deepEqual(packed.peerDependencies, { "@types/x": "1.0.0" });
    assert.deepEqual(packed.peerDependenciesMeta, { "@types/x": { optional: true } });
  });

  test("deno.json's own ./mcp wins, and a missing version is an error", { timeout: 60_000 }, () => {
    assert.equal(subpathExports({ exports: { "./mcp": "./x.ts" } }, "./adapters/mcp/mod.ts")["./mcp"], "./x.ts");
    assert.deepEqual(subpathExports({ exports: "./mod.ts" }, undefined), { ".": "./mod.ts" });
    assert.throws(
      () => packageJson({ config: {}, exports: {}, files: [], plan, description: "" }),
      /deno.json has no version/,
    );
  });
});

describe("import rewriting", () => {
  test("relative TypeScript specifiers become JavaScript ones; the rest stay", { timeout: 60_000 }, () => {
    assert.deepEqual(
      ["./a.ts", "../b/c.mts", "./d.cts", "./e.tsx", "./types.d.ts", "valibot", "./data.json", "./f.js", "node:fs"]
        .map(rewriteRelativeSpecifier),
      ["./a.js", "../b/c.mjs", "./d.cjs", "./e.js", "./types.d.ts", "valibot", "./data.json", "./f.js", "node:fs"],
    );
  });

  test("every kind of import is found: static, re-export, dynamic, import types", { timeout: 60_000 }, () => {
    const text = `import a from "pkg-a";
import type { B } from "pkg-b/sub";
export * from "./local.js";
export { c } from "pkg-c";
const d = await import("pkg-d");
const notLiteral = await import(someVariable);
export declare const e: import("pkg-e").E;`;
    assert.deepEqual(importedSpecifiers("x.d.ts", text), [
      "pkg-a",
      "pkg-b/sub",
      "./local.js",
      "pkg-c",
      "pkg-d",
      "pkg-e",
    ]);
  });
});

describe("node --test's TAP", () => {
  const tap = `TAP version 13
# Subtest: suite
    # Subtest: passes
    ok 1 - passes
      ---
      duration_ms: 1
      ...
    # Subtest: fails
    not ok 2 - fails
      ---
      duration_ms: 2
      failureType: 'testCodeFailure'
      error: 'boom'
      ...
    # Subtest: skipped
    ok 3 - skipped # SKIP needs Deno: spawns deno
      ---
      duration_ms: 0
      ...
    1..3
not ok 1 - suite
  ---
  duration_ms: 3
  type: 'suite'
  failureType: 'subtestsFailed'
  ...
1..1
# tests 3
# suites 1
# pass 1
# fail 1
# cancelled 0
# skipped 1
# todo 0
# duration_ms 5`;

  test(
    "the counts, the failing test (not its suite) with its error, and the lines shown live",
    { timeout: 60_000 },
    () => {
      assert.deepEqual(tapCounts(tap), { tests: 3, pass: 1, fail: 1, skipped: 1, todo: 0, cancelled: 0 });
      assert.deepEqual(skipped(tap), ["ok 3 - skipped # SKIP needs Deno: spawns deno"]);
      const failures = failureDetails(tap);
      assert.equal(failures.length, 1);
      assert.match(failures[0], /not ok 2 - fails[\s\S]*error: 'boom'/);
      assert.deepEqual(tap.split("\n").filter(isHeadline), [
        "    ok 3 - skipped # SKIP needs Deno: spawns deno",
        "not ok 1 - suite",
        "# tests 3",
        "# suites 1",
        "# pass 1",
        "# fail 1",
        "# cancelled 0",
        "# skipped 1",
        "# todo 0",
        "# duration_ms 5",
      ]);
    },
  );
});
