/**
 * Writes the umbrella's exports (`mod.ts`, `mcp.ts`) from the members' own
 * public lists, so that no name is listed by hand twice.
 *
 * Each member's entry point (`core/mod.ts`, `policy/mod.ts`, ...) is its one
 * curated public list. The names above its {@linkcode APPLICATION_MARKER} line
 * are the ones an application needs; the umbrella re-exports exactly those,
 * plus what the umbrella itself defines (its `ToolBox`, which replaces the
 * core's). The names below the marker are for the other packages and for
 * writers of tools, and stay in the member.
 *
 * The names an umbrella file exports reference other types of the members
 * (`openFence(): Fence`, `Session extends SessionBase`, ...). So that each
 * file is complete under `deno doc --lint` on its own, the script also writes,
 * below the {@linkcode REFERENCED_TYPES_MARKER} line, a type-only
 * `export type { ... }` per package of every type the names above it reference,
 * directly or through another such type, that the file does not export: it
 * reads them with `deno doc --json` on the members' entry points
 * ({@linkcode referencedTypes}). A type whose name the umbrella already gives
 * to another symbol (the core's `ToolBox`, which the umbrella's own replaces)
 * is exported under its package's prefix (`CoreToolBox`).
 *
 * `--check` exits 1 when a generated file differs from what it would write
 * (`deno task test` runs it); `--write` rewrites them. A generated file keeps
 * the text before its first `export` (its module documentation).
 *
 * Requires `--allow-read`, `--allow-run=deno` (and `--allow-write` with
 * `--write`).
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-run=deno --allow-write=mod.ts,mcp.ts scripts/surface.ts --write
 * ```
 *
 * @module
 */

import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { declaredSurface, entryPoints, ROOT } from "./public_api.ts";

/** The line in a member's entry point below which names are the member's alone. */
export const APPLICATION_MARKER = "// The umbrella re-exports the names above this line (scripts/surface.ts).";

/**
 * The line in a generated file below which it exports, type-only, the types its names reference and it does not
 * export itself (generated too).
 */
export const REFERENCED_TYPES_MARKER =
  "// The types the names above reference, type-only, so that the docs are complete (deno doc --lint):";

/** One file the script writes: the member lists it re-exports, and the umbrella's own modules. */
export interface GeneratedSurface {
  /** The file written, relative to the repository root. */
  file: string;
  /** Package specifier -> the member's entry point, relative to the root, in the order written. */
  members: [string, string][];
  /** The umbrella's own modules (specifier as written in the file): their names win over a member's. */
  own: string[];
}

/** The umbrella's generated entry points. */
export const GENERATED: GeneratedSurface[] = [
  {
    file: "mod.ts",
    members: [
      ["@toolfence/core", "core/mod.ts"],
      ["@toolfence/policy", "policy/mod.ts"],
      ["@toolfence/tools", "tools/mod.ts"],
      ["@toolfence/adapters", "adapters/mod.ts"],
    ],
    own: ["./toolbox.ts"],
  },
  { file: "mcp.ts", members: [["@toolfence/adapters/mcp", "adapters/mcp/mod.ts"]], own: [] },
];

/** The names of a member's entry point that the umbrella re-exports: those above the marker. */
export function applicationNames(source: string, file = "the entry point"): string[] {
  const at = source.indexOf(APPLICATION_MARKER);
  if (at < 0) throw new Error(`${file} has no line "${APPLICATION_MARKER}"`);
  return declaredSurface(source.slice(0, at));
}

/**
 * One `export { ... } from "..."` statement (`export type { ... }` when `typeOnly`), laid out as `deno fmt` lays it
 * out (line width 120). A name may be `Name as Alias`.
 */
export function exportStatement(names: string[], from: string, typeOnly = false): string {
  // deno fmt's order: by the exported symbol's own name, case-insensitive, capitals first on a tie.
  const key = (name: string) => name.replace(/^type /, "").split(" as ")[0];
  names = [...names].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x.toLowerCase() < y.toLowerCase() ? -1 : x.toLowerCase() > y.toLowerCase() ? 1 : x < y ? -1 : x > y ? 1 : 0;
  });
  const keyword = typeOnly ? "export type" : "export";
  const line = `${keyword} { ${names.join(", ")} } from "${from}";`;
  if (line.length <= 120) return line;
  return `${keyword} {\n${names.map((n) => `  ${n},\n`).join("")}} from "${from}";`;
}

/** A type a generated file exports type-only because its names reference it. */
export interface ReferencedType {
  /** The package it is exported from (the lowest of the umbrella's members that exports it). */
  from: string;
  /** Its name there. */
  name: string;
  /** The name the umbrella gives it: `name`, or the package's prefix and `name` when the umbrella gives `name` to another symbol. */
  as: string;
}

// `deno doc --json` output, as far as this script reads it.
interface DocLocation {
  filename: string;
  line: number;
  col: number;
}
interface DocDeclaration {
  location: DocLocation;
  kind: string;
  def?: { target?: DocLocation } & Record<string, unknown>;
}
interface DocSymbol {
  name: string;
  declarations: DocDeclaration[];
}
interface DocJson {
  nodes: Record<string, { symbols?: DocSymbol[] }>;
}

/** A symbol of `deno doc --json`: where it is declared (`file:line:col`), and its full declarations if here. */
interface Declared {
  id: string;
  /** The entry point (file URL) whose documentation holds its declarations; undefined for a reference. */
  entry?: string;
  symbol: DocSymbol;
}

const idOf = (location: DocLocation): string => `${location.filename}:${location.line}:${location.col}`;

function declared(entry: string, symbol: DocSymbol): Declared {
  const first = symbol.declarations[0];
  // A type another package declares is a reference to where it is declared.
  if (first.kind === "reference" && first.def?.target) return { id: idOf(first.def.target), symbol };
  return { id: idOf(first.location), entry, symbol };
}

// What an entry's documentation needs to resolve a type's references.
interface Documented {
  /** Entry point file URL -> exported name -> its symbol. */
  exports: Map<string, Map<string, Declared>>;
  /** Symbol -> its full declarations (from the entry of the package that declares it). */
  full: Map<string, Declared>;
  /** Package specifier (`@toolfence/core`, `@toolfence/adapters/mcp`) -> entry point file URL. */
  entryOf: Map<string, string>;
}

let documented: Promise<Documented> | undefined;

// The part of Deno's API `denoDocJson` uses (the script is also compiled for Node with the tests, without Deno's types).
interface DenoCommands {
  Command: new (command: string, options: { args: string[]; cwd: string; stdin: "null" }) => {
    output(): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array }>;
  };
}

// `deno doc --json` on `files`: by Deno.Command under Deno (its node:child_process would need --allow-env as well).
async function denoDocJson(files: string[]): Promise<string> {
  const args = ["doc", "--json", ...files];
  const deno = (globalThis as unknown as { Deno?: DenoCommands }).Deno;
  if (deno === undefined) return (await promisify(execFile)("deno", args, { cwd: ROOT, maxBuffer: 1 << 30 })).stdout;
  const out = await new deno.Command("deno", { args, cwd: ROOT, stdin: "null" }).output();
  const decoder = new TextDecoder();
  if (out.code !== 0) throw new Error(`deno doc --json ${files.join(" ")} failed:\n${decoder.decode(out.stderr)}`);
  return decoder.decode(out.stdout);
}

/**
 * `deno doc --json` on the workspace members' main entry points, the entry points the generated files re-export, and
 * the umbrella's own modules; read once per process.
 */
function documentation(): Promise<Documented> {
  return documented ??= (async () => {
    const entryOf = new Map<string, string>();
    const rootConfig = JSON.parse(await readFile(path.join(ROOT, "deno.json"), "utf8"));
    const files = new Set<string>();
    for (const [specifier, file] of await entryPoints()) {
      entryOf.set(specifier, pathToFileURL(path.join(ROOT, file)).href);
      const main = (rootConfig.workspace as string[]).some((dir) => path.join(dir, "mod.ts") === path.normalize(file));
      if (main) files.add(file);
    }
    for (const surface of GENERATED) {
      for (const [, file] of surface.members) files.add(file);
      for (const own of surface.own) files.add(path.join(path.dirname(surface.file), own));
    }
    const json = JSON.parse(await denoDocJson([...files])) as DocJson;
    const exports = new Map<string, Map<string, Declared>>();
    const full = new Map<string, Declared>();
    for (const [entry, node] of Object.entries(json.nodes)) {
      const names = new Map<string, Declared>();
      for (const symbol of node.symbols ?? []) {
        const one = declared(entry, symbol);
        names.set(symbol.name, one);
        if (one.entry !== undefined && !full.has(one.id)) full.set(one.id, one);
      }
      exports.set(entry, names);
    }
    return { exports, full, entryOf };
  })();
}

// The names a symbol's declarations use as types: type references (with how deno doc resolved them), `typeof` queries,
// and a class's `extends`.
function usedNames(symbol: DocSymbol): { name: string; from?: string; importedAs?: string }[] {
  const out: { name: string; from?: string; importedAs?: string }[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (value === null || typeof value !== "object") return;
    const node = value as Record<string, unknown>;
    // A private member is not documented, nor held to name public types.
    if (node.accessibility === "private") return;
    if (node.kind === "typeRef" && typeof node.value === "object" && node.value !== null) {
      const ref = node.value as { typeName: string; resolution?: { kind: string; specifier?: string; name?: string } };
      const resolution = ref.resolution;
      if (resolution?.kind === "import") {
        out.push({ name: ref.typeName, from: resolution.specifier, importedAs: resolution.name });
      } else if (resolution?.kind !== "typeParam") out.push({ name: ref.typeName });
    } else if (node.kind === "typeQuery" && typeof node.value === "string") {
      out.push({ name: node.value });
    }
    for (const child of Object.values(node)) visit(child);
  };
  for (const declaration of symbol.declarations) {
    if (declaration.kind === "class" && typeof declaration.def?.extends === "string") {
      out.push({ name: declaration.def.extends });
    }
    visit(declaration.def);
  }
  return out;
}

// The `import { a as b } from "..."` lists of a file: local name -> [specifier, imported name].
async function importsOf(file: string): Promise<Map<string, [string, string]>> {
  const source = (await readFile(new URL(file), "utf8")).replace(/\/\*[\s\S]*?\*\//g, "");
  const out = new Map<string, [string, string]>();
  for (const m of source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    for (const part of m[1].split(",").map((p) => p.trim().replace(/^type\s+/, "")).filter(Boolean)) {
      const [imported, local = imported] = part.split(/\s+as\s+/);
      out.set(local.trim(), [m[2], imported.trim()]);
    }
  }
  return out;
}

/**
 * The types the names a generated file exports reference, directly or through another such type, that the file does
 * not export: each from the first of the umbrella's members (in {@linkcode GENERATED}'s order, lowest layer first)
 * that exports it. Names are resolved as `deno doc --json` resolves them in the entry point of the package that
 * declares the referencing type, which `deno doc --lint` keeps complete (scripts/check_jsr.ts). Types of npm
 * dependencies are not ours to export and are left out.
 *
 * Requires `--allow-read` and `--allow-run=deno`.
 */
export async function referencedTypes(surface: GeneratedSurface): Promise<ReferencedType[]> {
  const { exports, full, entryOf } = await documentation();
  const lookup = (specifier: string, name: string): Declared | undefined => {
    const entry = entryOf.get(specifier);
    return entry === undefined ? undefined : exports.get(entry)?.get(name);
  };
  // The symbols a name of the umbrella stands for, and the names taken (by any generated file: one umbrella).
  const taken = new Map<string, string>();
  const exported = new Map<string, Set<string>>();
  for (const generated of GENERATED) {
    const ids = new Set<string>();
    exported.set(generated.file, ids);
    const ownNames = new Set<string>();
    for (const own of generated.own) {
      const entry = pathToFileURL(path.join(ROOT, path.dirname(generated.file), own)).href;
      for (const [name, symbol] of exports.get(entry) ?? []) {
        ids.add(symbol.id);
        ownNames.add(name);
        taken.set(name, symbol.id);
      }
    }
    for (const [specifier, file] of generated.members) {
      for (const name of applicationNames(await readFile(path.join(ROOT, file), "utf8"), file)) {
        const bare = name.replace(/^type /, "");
        if (ownNames.has(bare)) continue;
        const symbol = lookup(specifier, bare);
        if (symbol === undefined) throw new Error(`deno doc does not list ${bare} among the exports of ${specifier}`);
        ids.add(symbol.id);
        if (!taken.has(bare)) taken.set(bare, symbol.id);
      }
    }
  }
  const sources = [...new Set(GENERATED.flatMap((generated) => generated.members.map(([specifier]) => specifier)))];
  const imports = new Map<string, Map<string, [string, string]>>();
  // The symbol a name used in `from`'s declarations stands for.
  const resolve = async (
    from: Declared,
    used: { name: string; from?: string; importedAs?: string },
  ): Promise<Declared | undefined> => {
    if (used.from !== undefined && !used.from.startsWith(".")) {
      // Another package's: ours by its entry point; an npm dependency's is not ours to export.
      return used.from.startsWith("@toolfence/") ? lookup(used.from, used.importedAs ?? used.name) : undefined;
    }
    // A name of the same package: its entry point exports it (deno doc --lint holds it to that).
    const here = exports.get(from.entry!)?.get(used.importedAs ?? used.name);
    if (here !== undefined) return here;
    // A name the umbrella's own module imports under another name (`ToolBox as CoreToolBox`).
    const file = from.symbol.declarations[0].location.filename;
    if (!imports.has(file)) imports.set(file, await importsOf(file));
    const [specifier, name] = imports.get(file)!.get(used.name) ?? [];
    return specifier?.startsWith("@toolfence/") ? lookup(specifier, name!) : undefined;
  };
  const ids = exported.get(surface.file)!;
  const seen = new Set(ids);
  const missing: string[] = [];
  const queue = [...ids];
  while (queue.length > 0) {
    const id = queue.shift()!;
    const symbol = full.get(id);
    if (symbol === undefined) throw new Error(`deno doc --json gave no declaration for ${id}`);
    for (const used of usedNames(symbol.symbol)) {
      const target = await resolve(symbol, used);
      if (target === undefined || seen.has(target.id)) continue;
      seen.add(target.id);
      queue.push(target.id);
      if (!ids.has(target.id)) missing.push(target.id);
    }
  }
  const out: ReferencedType[] = [];
  for (const id of missing) {
    const found = sources.map((specifier) => {
      const names = exports.get(entryOf.get(specifier)!)!;
      const name = [...names].find(([, symbol]) => symbol.id === id)?.[0];
      return name === undefined ? undefined : { from: specifier, name };
    }).find((source) => source !== undefined);
    if (found === undefined) {
      throw new Error(`${surface.file} references ${id}, which none of ${sources.join(", ")} exports`);
    }
    let as = found.name;
    if (taken.has(as) && taken.get(as) !== id) {
      const prefix = found.from.replace(/^@toolfence\//, "").split(/[/-]/).map((p) => p[0].toUpperCase() + p.slice(1));
      as = prefix.join("") + found.name;
      if (taken.has(as) && taken.get(as) !== id) throw new Error(`${surface.file}: no free name for ${id}`);
    }
    taken.set(as, id);
    out.push({ ...found, as });
  }
  return out;
}

/** The text the script writes for one generated file, given the file's current text. */
export async function generate(surface: GeneratedSurface, current: string): Promise<string> {
  const first = current.search(/^export\b/m);
  const header = (first < 0 ? current : current.slice(0, first)).replace(/\n*(\/\/ Generated[^\n]*\n)*$/, "\n");
  const bare = (name: string) => name.replace(/^type /, "");
  const own = new Map<string, string[]>();
  for (const specifier of surface.own) {
    own.set(specifier, declaredSurface(await readFile(path.join(ROOT, path.dirname(surface.file), specifier), "utf8")));
  }
  const replaced = new Set([...own.values()].flat().map(bare));
  const taken = new Map<string, string>();
  const blocks: string[] = [];
  for (const [specifier, file] of surface.members) {
    // The umbrella's own module replaces a member's name (its ToolBox knows the built-in groups).
    const names = applicationNames(await readFile(path.join(ROOT, file), "utf8"), file)
      .filter((name) => !replaced.has(bare(name)));
    for (const name of names) {
      const before = taken.get(bare(name));
      if (before !== undefined) {
        throw new Error(`${bare(name)} is in the application lists of ${before} and ${specifier}`);
      }
      taken.set(bare(name), specifier);
    }
    if (names.length > 0) blocks.push(exportStatement(names, specifier));
  }
  for (const [specifier, names] of own) blocks.push(exportStatement(names, specifier));
  const referenced = await referencedTypes(surface);
  if (referenced.length > 0) {
    blocks.push(REFERENCED_TYPES_MARKER);
    const order = [...new Set(GENERATED.flatMap((generated) => generated.members.map(([specifier]) => specifier)))];
    for (const from of order.filter((specifier) => referenced.some((type) => type.from === specifier))) {
      const names = referenced.filter((type) => type.from === from)
        .map((type) => type.as === type.name ? type.name : `${type.name} as ${type.as}`);
      blocks.push(exportStatement(names, from, true));
    }
  }
  return `${header}\n// Generated by scripts/surface.ts from the members' lists: edit those, then run deno task surface.\n${
    blocks.join("\n")
  }\n`;
}

if (import.meta.main) {
  const write = process.argv.includes("--write");
  let stale = 0;
  for (const surface of GENERATED) {
    const target = path.join(ROOT, surface.file);
    const current = await readFile(target, "utf8");
    const next = await generate(surface, current);
    if (next === current) continue;
    if (write) {
      await writeFile(target, next);
      console.log(`wrote ${surface.file}`);
    } else {
      stale++;
      console.error(`${surface.file} is not what scripts/surface.ts writes: run deno task surface`);
    }
  }
  if (stale > 0) process.exit(1);
}
