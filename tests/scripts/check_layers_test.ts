import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { checkLayers, importsOf, type LayerProblem } from "../../scripts/check_layers.ts";
import { IS_DENO } from "../_runtime.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A small workspace shaped like the real one: core <- policy <- tools, and the umbrella. */
const CLEAN: Record<string, string> = {
  "deno.json": JSON.stringify({
    name: "@toolfence/toolfence",
    exports: { ".": "./mod.ts" },
    workspace: ["./core", "./policy", "./tools"],
    imports: { "@toolfence/core": "jsr:@toolfence/core@^0.1.0", "@toolfence/policy": "jsr:@toolfence/policy@^0.1.0" },
  }),
  "mod.ts": 'export { a } from "@toolfence/core";\nexport { p } from "@toolfence/policy";\n',
  "core/deno.json": JSON.stringify({ name: "@toolfence/core", exports: { ".": "./mod.ts" }, imports: {} }),
  "core/mod.ts": 'export { a } from "./a.ts";\n',
  "core/a.ts": 'import type { B } from "./b.ts";\nexport const a = 1;\nexport type A = B;\n',
  "core/b.ts": 'import { a } from "./a.ts";\nexport type B = typeof a;\n',
  "core/sub/_h.ts": "export const h = 1;\n",
  "core/sub/uses.ts": 'import { h } from "./_h.ts";\nexport const u = h;\n',
  "policy/deno.json": JSON.stringify({
    name: "@toolfence/policy",
    exports: { ".": "./mod.ts" },
    imports: { "@toolfence/core": "jsr:@toolfence/core@^0.1.0" },
  }),
  "policy/mod.ts": [
    "/**",
    " * ```ts",
    ' * import { t } from "@toolfence/tools";',
    " * ```",
    " */",
    'import { a } from "@toolfence/core";',
    "export const p = a;",
    "",
  ].join("\n"),
  "tools/deno.json": JSON.stringify({
    name: "@toolfence/tools",
    exports: { ".": "./mod.ts" },
    imports: { "@toolfence/core": "jsr:@toolfence/core@^0.1.0" },
  }),
  "tools/mod.ts":
    'import { a } from "@toolfence/core";\nexport const t = a;\nexport const later = () => import("./lazy.ts");\n',
  "tools/lazy.ts": 'import { t } from "./mod.ts";\nexport const l = t;\n',
};

async function workspaceWith(changes: Record<string, string>): Promise<LayerProblem[]> {
  const dir = await mkdtemp(path.join(tmpdir(), "toolfence-layers-"));
  try {
    for (const [file, text] of Object.entries({ ...CLEAN, ...changes })) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text);
    }
    return await checkLayers(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function rules(problems: LayerProblem[]): string[] {
  return [...new Set(problems.map((p) => p.rule))].sort();
}

describe("scripts/check_layers.ts", () => {
  test("the repository's own layers hold", {
    timeout: 60_000,
    skip: !IS_DENO ? "reads the source repository" : false,
  }, async () => {
    assert.deepEqual(await checkLayers(repoRoot), []);
  });

  test(
    "a clean workspace passes: type-only cycles, dynamic imports, imports in JSDoc and a folder's own _ files are fine",
    { timeout: 60_000 },
    async () => {
      assert.deepEqual(await workspaceWith({}), []);
    },
  );

  test("an upward import fails", { timeout: 60_000 }, async () => {
    const problems = await workspaceWith({
      "core/a.ts": 'import { p } from "@toolfence/policy";\nexport const a = p;\n',
    });
    assert.ok(rules(problems).includes("upward"), JSON.stringify(problems));
    assert.match(
      problems.find((p) => p.rule === "upward")!.message,
      /@toolfence\/core \(layer 0\) may not import @toolfence\/policy/,
    );
  });

  test("an import of a member of the same layer fails", { timeout: 60_000 }, async () => {
    const problems = await workspaceWith({
      "deno.json": JSON.stringify({
        name: "@toolfence/toolfence",
        workspace: ["./core", "./policy", "./tools", "./adapters"],
        imports: {},
      }),
      "adapters/deno.json": JSON.stringify({
        name: "@toolfence/adapters",
        exports: { ".": "./mod.ts" },
        imports: { "@toolfence/tools": "jsr:@toolfence/tools@^0.1.0" },
      }),
      "adapters/mod.ts": 'export { t } from "@toolfence/tools";\n',
    });
    assert.deepEqual(problems.filter((p) => p.file === "adapters/mod.ts").map((p) => p.rule), ["upward"]);
  });

  test("an undeclared member import fails, even downward", { timeout: 60_000 }, async () => {
    const problems = await workspaceWith({
      "tools/mod.ts": 'import { p } from "@toolfence/policy";\nexport const t = p;\n',
    });
    assert.deepEqual(rules(problems), ["undeclared"]);
    assert.equal(problems[0].file, "tools/mod.ts");
  });

  test(
    "a _ file imported from outside its folder fails; a _ folder is private to its parent",
    { timeout: 60_000 },
    async () => {
      const sibling = await workspaceWith({ "core/b.ts": 'import { h } from "./sub/_h.ts";\nexport const b = h;\n' });
      assert.deepEqual(rules(sibling), ["private"]);
      const underFolder = await workspaceWith({
        "tools/_shared/helper.ts": "export const s = 1;\n",
        "tools/mod.ts": 'import { s } from "./_shared/helper.ts";\nexport const t = s;\n',
      });
      assert.deepEqual(underFolder, [], "a _ folder is private to its parent, and tools/mod.ts is inside tools/");
      const outsideFolder = await workspaceWith({
        "tools/_shared/helper.ts": "export const s = 1;\n",
        "tools/deeper/_shared/x.ts": "export const x = 1;\n",
        "tools/mod.ts": 'import { x } from "./deeper/_shared/x.ts";\nexport const t = x;\n',
      });
      assert.deepEqual(rules(outsideFolder), ["private"]);
    },
  );

  test(
    "a relative import into another member fails, as does the root reaching into a member",
    { timeout: 60_000 },
    async () => {
      const fromMember = await workspaceWith({
        "tools/mod.ts": 'import { a } from "../core/a.ts";\nexport const t = a;\n',
      });
      assert.deepEqual(rules(fromMember), ["relative-crossing"]);
      const fromRoot = await workspaceWith({ "mod.ts": 'export { a } from "./core/a.ts";\n' });
      assert.deepEqual(rules(fromRoot), ["relative-crossing"]);
    },
  );

  test("a runtime cycle fails, and so does a module importing itself", { timeout: 60_000 }, async () => {
    const local = await workspaceWith({
      "core/a.ts": 'import { b } from "./b.ts";\nexport const a = 1;\nexport const c = b;\n',
      "core/b.ts": 'import { a } from "./a.ts";\nexport const b = a;\n',
    });
    assert.deepEqual(rules(local), ["cycle"]);
    assert.match(local[0].message, /core\/a\.ts -> core\/b\.ts/);
    const selfByName = await workspaceWith({ "core/a.ts": 'import * as me from "./a.ts";\nexport const a = me;\n' });
    assert.deepEqual(rules(selfByName), ["cycle"]);
  });

  test(
    "@toolfence/internal is for the policy only: the tools importing it fail, even declared",
    { timeout: 60_000 },
    async () => {
      const internal = {
        "deno.json": JSON.stringify({
          name: "@toolfence/toolfence",
          exports: { ".": "./mod.ts" },
          workspace: ["./core", "./internal", "./policy", "./tools"],
          imports: {
            "@toolfence/core": "jsr:@toolfence/core@^0.1.0",
            "@toolfence/internal": "jsr:@toolfence/internal@^0.1.0",
            "@toolfence/policy": "jsr:@toolfence/policy@^0.1.0",
          },
        }),
        "internal/deno.json": JSON.stringify({
          name: "@toolfence/internal",
          exports: { ".": "./mod.ts" },
          imports: {},
        }),
        "internal/mod.ts": "export const m = 1;\n",
        "policy/deno.json": JSON.stringify({
          name: "@toolfence/policy",
          exports: { ".": "./mod.ts" },
          imports: { "@toolfence/internal": "jsr:@toolfence/internal@^0.1.0" },
        }),
        "policy/mod.ts": 'import { m } from "@toolfence/internal";\nexport const p = m;\n',
      };
      assert.deepEqual(await workspaceWith(internal), []);
      const fromTools = await workspaceWith({
        ...internal,
        "tools/deno.json": JSON.stringify({
          name: "@toolfence/tools",
          exports: { ".": "./mod.ts" },
          imports: { "@toolfence/internal": "jsr:@toolfence/internal@^0.1.0" },
        }),
        "tools/mod.ts": 'import { m } from "@toolfence/internal";\nexport const t = m;\n',
      });
      assert.deepEqual(fromTools.map((p) => [p.rule, p.file]), [["internal", "tools/mod.ts"]]);
      const fromUmbrella = await workspaceWith({ ...internal, "mod.ts": 'export { m } from "@toolfence/internal";\n' });
      assert.ok(rules(fromUmbrella).includes("internal"), JSON.stringify(fromUmbrella));
    },
  );

  test(
    "the tools and adapters start no process by hand: node:child_process and Deno.Command fail, the policy may",
    { timeout: 60_000 },
    async () => {
      const spawns = [
        'import { spawn } from "node:child_process";\nexport const t = spawn;\n',
        'import cp from "child_process";\nexport const t = cp;\n',
        'export const t = () => import("node:child_process");\n',
        "export const t = () => new Deno.Command('rg').output();\n",
        "export const t = () => Deno . run({ cmd: ['rg'] });\n",
        'export const t = () => require("node:child_process");\n',
      ];
      for (const text of spawns) {
        const problems = await workspaceWith({ "tools/mod.ts": text });
        assert.deepEqual(problems.map((p) => [p.rule, p.file]), [["spawn", "tools/mod.ts"]], text);
      }
      // Named in a comment or a string only, and in the policy (which implements the door): no problem.
      assert.deepEqual(
        await workspaceWith({
          "tools/mod.ts": '// Deno.Command is not used here\nexport const t = "node:child_process";\n',
          "policy/mod.ts": 'import { spawn } from "node:child_process";\nexport const p = spawn;\n',
        }),
        [],
      );
    },
  );

  test("a member missing from the layer table fails", { timeout: 60_000 }, async () => {
    const problems = await workspaceWith({
      "deno.json": JSON.stringify({ name: "@toolfence/toolfence", workspace: ["./core", "./extra"], imports: {} }),
      "extra/deno.json": JSON.stringify({ name: "@toolfence/extra", exports: { ".": "./mod.ts" }, imports: {} }),
      "extra/mod.ts": "export const x = 1;\n",
    });
    assert.ok(rules(problems).includes("unknown-member"));
  });

  test(
    "importsOf: type-only lists do not count at run time; comments and strings hold no imports",
    { timeout: 60_000 },
    () => {
      const found = importsOf([
        'import type { A } from "./a.ts";',
        'import { type B, type C } from "./b.ts";',
        'import { type D, e } from "./d.ts";',
        'export { f } from "./f.ts";',
        'export type { G } from "./g.ts";',
        '// import { h } from "./h.ts";',
        "const s = \"import { i } from './i.ts'\";",
        'import "./side.ts";',
        'const lazy = () => import("./lazy.ts");',
      ].join("\n"));
      assert.deepEqual(found, [
        { specifier: "./a.ts", runtime: false },
        { specifier: "./b.ts", runtime: false },
        { specifier: "./d.ts", runtime: true },
        { specifier: "./f.ts", runtime: true },
        { specifier: "./g.ts", runtime: false },
        { specifier: "./side.ts", runtime: true },
        { specifier: "./lazy.ts", runtime: false },
      ]);
    },
  );

  test("generated graphs: every planted upward or undeclared import is found, and none is invented", {
    timeout: 60_000,
  }, async () => {
    // A deterministic generator (LCG) over the three members: each member's file imports a random
    // subset of the others; the expected problems follow from the layer order and the declarations.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const members = ["core", "policy", "tools"];
    for (let round = 0; round < 12; round++) {
      const changes: Record<string, string> = {};
      const expected: string[] = [];
      for (const [i, from] of members.entries()) {
        const declared: Record<string, string> = {};
        const lines: string[] = [];
        for (const [j, to] of members.entries()) {
          if (i === j) continue;
          const declares = next() < 0.5;
          if (declares) declared[`@toolfence/${to}`] = `jsr:@toolfence/${to}@^0.1.0`;
          if (next() < 0.5) {
            lines.push(`import type { X${j} } from "@toolfence/${to}";`);
            if (!declares) expected.push(`undeclared ${from} ${to}`);
            if (j >= i) expected.push(`upward ${from} ${to}`);
          }
        }
        changes[`${from}/deno.json`] = JSON.stringify({
          name: `@toolfence/${from}`,
          exports: { ".": "./mod.ts" },
          imports: declared,
        });
        changes[`${from}/mod.ts`] = lines.join("\n") + "\nexport const x = 1;\n";
      }
      changes["mod.ts"] = "export const root = 1;\n";
      const problems = await workspaceWith(changes);
      const seen = problems.map((p) => `${p.rule} ${p.file.split("/")[0]} ${p.specifier.replace("@toolfence/", "")}`);
      assert.deepEqual(seen.sort(), expected.sort(), `round ${round}`);
    }
  });
});
