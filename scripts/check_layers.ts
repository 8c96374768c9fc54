/**
 * The layer check: reads the workspace (the root deno.json's `workspace`
 * members and their deno.json files) and every source file of the members and
 * of the root package, and reports
 *
 * - `upward`: an import of a member of the same or a higher layer
 *   ({@linkcode LAYERS}: core, then policy, then tools and adapters, then the
 *   umbrella);
 * - `undeclared`: an import of a member that the importer's deno.json
 *   `imports` does not list;
 * - `relative-crossing`: a relative import that leaves the importer's member
 *   (members import each other by package name);
 * - `private`: a `_` file (or anything under a `_` folder) imported from
 *   outside the folder that contains it;
 * - `cycle`: a cycle of runtime imports (type-only imports and dynamic
 *   `import()` do not count);
 * - `internal`: an import of a member that is not public API
 *   ({@linkcode INTERNAL_MEMBERS}: `@toolfence/internal`, the file mechanisms)
 *   from a package other than the ones it serves (only the policy);
 * - `spawn`: a process started by hand in a package that must start them
 *   through the policy's process door ({@linkcode DOOR_ONLY}: the tools and
 *   the adapters): an import of `node:child_process`, or `Deno.Command`,
 *   `Deno.run` or `Deno.spawn*`.
 *
 * Tests, benches and scripts are outside the layers and not checked.
 *
 * Requires `--allow-read` for the repository.
 *
 * @example
 * ```sh
 * deno run --allow-read scripts/check_layers.ts
 * ```
 *
 * @module
 */

import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The layers, lowest first; a member may import only members of lower layers. */
export const LAYERS: readonly (readonly string[])[] = [
  ["@toolfence/core"],
  ["@toolfence/internal"],
  ["@toolfence/policy"],
  ["@toolfence/tools", "@toolfence/adapters"],
  ["@toolfence/toolfence"],
];

/**
 * The members that are not public API, each with the only packages that may
 * import it: the tools, the adapters and the umbrella reach the mechanisms
 * through the policy's doors, never directly.
 */
export const INTERNAL_MEMBERS: ReadonlyMap<string, readonly string[]> = new Map([
  ["@toolfence/internal", ["@toolfence/policy"]],
]);

/**
 * The members that start processes only through the policy's process door
 * (`ctx.policy.processes`), never with `node:child_process` or `Deno.Command`.
 */
export const DOOR_ONLY: ReadonlySet<string> = new Set(["@toolfence/tools", "@toolfence/adapters"]);

// What starts a process by hand, in code without comments.
const RAW_SPAWN = /\bDeno\s*\.\s*(?:Command|run|spawn\w*)\b|\brequire\s*\(\s*["'](?:node:)?child_process["']/;
const CHILD_PROCESS = /^(?:node:)?child_process(?:\/|$)/;

/** One broken rule. */
export interface LayerProblem {
  /** Which rule. */
  rule:
    | "upward"
    | "undeclared"
    | "relative-crossing"
    | "private"
    | "cycle"
    | "unknown-member"
    | "internal"
    | "spawn";
  /** The importing file (relative to the root), or the files of a cycle joined by ` -> `. */
  file: string;
  /** What was imported. */
  specifier: string;
  /** A sentence for the person fixing it. */
  message: string;
}

interface Package {
  name: string;
  /** Folder relative to the root; "" for the root package. */
  dir: string;
  declared: Set<string>;
  /** Export subpath ("." or "./mcp") -> file relative to the root. */
  exports: Map<string, string>;
}

interface ImportRecord {
  specifier: string;
  /** Whether the import exists at run time (not `import type`, not an all-`type` list, not dynamic). */
  runtime: boolean;
}

const SKIP = new Set(["node_modules", "npm", "tests", "bench", "scripts", "docs"]);

/** Removes comments (JSDoc examples hold imports that are not the module's) and keeps strings intact. */
function stripComments(source: string): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? source.length : end + 2;
      out += " ";
    } else if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === '"' || c === "'" || c === "`") {
      const start = i++;
      while (i < source.length && source[i] !== c) i += source[i] === "\\" ? 2 : 1;
      out += source.slice(start, ++i);
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The imports of one module's source text. */
export function importsOf(source: string): ImportRecord[] {
  const code = stripComments(source);
  const found: ImportRecord[] = [];
  const statement = /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^;"'`]*?)\s*from\s*["']([^"']+)["']/g;
  for (const m of code.matchAll(statement)) {
    const typeOnly = Boolean(m[2]) || allTypeNames(m[3]);
    found.push({ specifier: m[4], runtime: !typeOnly });
  }
  for (const m of code.matchAll(/(?:^|[;\n}])\s*import\s*["']([^"']+)["']/g)) {
    found.push({ specifier: m[1], runtime: true });
  }
  for (const m of code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    found.push({ specifier: m[1], runtime: false });
  }
  return found;
}

function allTypeNames(clause: string): boolean {
  const list = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!list) return false;
  const names = list[1].split(",").map((n) => n.trim()).filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith("type "));
}

async function readJson(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(file, "utf8"));
}

async function packageAt(root: string, dir: string): Promise<Package> {
  const config = await readJson(path.join(root, dir, "deno.json"));
  const exportsField = config.exports;
  const exports = new Map<string, string>();
  if (typeof exportsField === "string") exports.set(".", path.join(dir, exportsField));
  else {
    for (const [sub, file] of Object.entries((exportsField ?? {}) as Record<string, string>)) {
      exports.set(sub, path.join(dir, file));
    }
  }
  const declared = new Set(
    Object.keys((config.imports ?? {}) as Record<string, string>).map((k) => k.replace(/\/$/, "")),
  );
  return { name: String(config.name), dir, declared, exports };
}

async function sourceFiles(root: string, dir: string, memberDirs: ReadonlySet<string>): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (SKIP.has(entry.name) || entry.name.startsWith(".")) continue;
      // The root package does not own its members' folders.
      if (dir === "" && memberDirs.has(rel)) continue;
      out.push(...await sourceFiles(root, rel, memberDirs));
    } else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      out.push(rel);
    }
  }
  return out;
}

function packageName(specifier: string): string | undefined {
  const m = /^(?:jsr:)?(@toolfence\/[^/@]+)/.exec(specifier);
  return m?.[1];
}

function layerOf(name: string): number {
  return LAYERS.findIndex((layer) => layer.includes(name));
}

/** The first `_` segment of `file`'s path, as the folder that may import it, or undefined. */
function privateScope(file: string): string | undefined {
  const parts = file.split("/");
  const index = parts.findIndex((p) => p.startsWith("_"));
  return index < 0 ? undefined : parts.slice(0, index).join("/");
}

function within(file: string, folder: string): boolean {
  return folder === "" || file === folder || file.startsWith(folder + "/");
}

/**
 * Checks the workspace at `root`; returns the problems found (empty when the
 * layers hold).
 *
 * @example
 * ```ts ignore
 * import { checkLayers } from "./check_layers.ts";
 * console.log(await checkLayers(Deno.cwd())); // []
 * ```
 */
export async function checkLayers(root: string): Promise<LayerProblem[]> {
  const rootConfig = await readJson(path.join(root, "deno.json"));
  const memberDirs = ((rootConfig.workspace ?? []) as string[]).map((d) => path.normalize(d).replace(/\/$/, ""));
  const packages = [await packageAt(root, ""), ...await Promise.all(memberDirs.map((d) => packageAt(root, d)))];
  const byName = new Map(packages.map((p) => [p.name, p]));
  const memberSet = new Set(memberDirs);
  const problems: LayerProblem[] = [];
  const edges = new Map<string, string[]>();

  for (const pkg of packages) {
    if (layerOf(pkg.name) < 0) {
      problems.push({
        rule: "unknown-member",
        file: path.join(pkg.dir, "deno.json"),
        specifier: pkg.name,
        message: `${pkg.name} is in no layer of scripts/check_layers.ts; add it to LAYERS`,
      });
    }
    for (const file of await sourceFiles(root, pkg.dir, memberSet)) {
      const runtimeTargets: string[] = [];
      const source = await readFile(path.join(root, file), "utf8");
      const doorOnly = DOOR_ONLY.has(pkg.name);
      const raw = doorOnly ? RAW_SPAWN.exec(stripComments(source)) : null;
      if (raw) problems.push(spawnProblem(file, raw[0]));
      for (const { specifier, runtime } of importsOf(source)) {
        if (doorOnly && CHILD_PROCESS.test(specifier)) problems.push(spawnProblem(file, specifier));
        let target: string | undefined;
        if (specifier.startsWith(".")) {
          target = path.normalize(path.join(path.dirname(file), specifier));
          if (!within(target, pkg.dir) || (pkg.dir === "" && memberDirs.some((d) => within(target!, d)))) {
            problems.push({
              rule: "relative-crossing",
              file,
              specifier,
              message: `${file} reaches into another package with a relative path; import it by its package name`,
            });
          }
          const scope = privateScope(target);
          if (scope !== undefined && !within(file, scope)) {
            problems.push({
              rule: "private",
              file,
              specifier,
              message: `${target} is private to ${scope || "the root"}/ and ${file} lies outside it`,
            });
          }
        } else {
          const name = packageName(specifier);
          if (!name) continue;
          const other = byName.get(name);
          if (!other) continue;
          if (!pkg.declared.has(name)) {
            problems.push({
              rule: "undeclared",
              file,
              specifier,
              message: `${pkg.name} imports ${name} without declaring it in ${
                path.join(pkg.dir, "deno.json")
              } "imports"`,
            });
          }
          if (layerOf(name) >= layerOf(pkg.name)) {
            problems.push({
              rule: "upward",
              file,
              specifier,
              message: `${pkg.name} (layer ${layerOf(pkg.name)}) may not import ${name} (layer ${layerOf(name)})`,
            });
          }
          const importers = INTERNAL_MEMBERS.get(name);
          if (importers !== undefined && !importers.includes(pkg.name)) {
            problems.push({
              rule: "internal",
              file,
              specifier,
              message: `${name} is not public API: only ${importers.join(", ")} may import it, not ${pkg.name}`,
            });
          }
          const sub = specifier.replace(/^(?:jsr:)?@toolfence\/[^/]+(?:@[^/]+)?/, ".") || ".";
          target = other.exports.get(sub === "." ? "." : sub);
        }
        if (runtime && target) runtimeTargets.push(target);
      }
      edges.set(file, runtimeTargets);
    }
  }
  for (const cycle of cyclesOf(edges)) {
    problems.push({
      rule: "cycle",
      file: cycle.join(" -> "),
      specifier: cycle[0],
      message: `runtime import cycle: ${cycle.join(" -> ")} -> ${cycle[0]}`,
    });
  }
  return problems;
}

function spawnProblem(file: string, specifier: string): LayerProblem {
  return {
    rule: "spawn",
    file,
    specifier,
    message: `${file} starts a process by hand; start it through the policy's process door (ctx.policy.processes)`,
  };
}

/** Strongly connected components of more than one file (or a file importing itself), by Tarjan's algorithm. */
function cyclesOf(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        if (!edges.has(w)) continue;
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(component.reverse());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

if (import.meta.main) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const problems = await checkLayers(root);
  for (const p of problems) console.error(`${p.rule}: ${p.message} (${p.file}: "${p.specifier}")`);
  if (problems.length > 0) {
    console.error(`layer check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log("layer check: ok");
}
