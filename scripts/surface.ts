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
 * reads them with `deno doc --json` on the members' files
 * ({@linkcode referencedTypes}). A type whose name the umbrella already gives
 * to another symbol (the core's `ToolBox`, which the umbrella's own replaces)
 * is exported under its package's prefix (`CoreToolBox`).
 *
 * The members' entry points need the same for their own docs: the names
 * above their {@linkcode MEMBER_REFERENCED_TYPES_MARKER} line (the member's
 * curated list, its application names and its own) reference types of lower
 * packages and of files of the member that the entry point does not export.
 * The script writes that block too ({@linkcode memberReferencedTypes}), from
 * the packages the member may import (its deno.json `imports`, lowest layer
 * first, as scripts/check_layers.ts holds them) and, for a type of the
 * member's own, the file of the member that declares it.
 *
 * `--check` exits 1 when a generated file or block differs from what it would
 * write (`deno task test` runs it); `--write` rewrites them. A generated
 * umbrella file keeps the text before its first `export` (its module
 * documentation); a member's entry point keeps the text above its marker.
 *
 * Requires `--allow-read`, `--allow-run=deno` (and `--allow-write` with
 * `--write`).
 *
 * @example
 * ```sh
 * deno task surface
 * deno run --allow-read --allow-run=deno scripts/surface.ts --check
 * ```
 *
 * @module
 */

import { execFile } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { LAYERS } from "./check_layers.ts";
import { declaredSurface, entryPoints, ROOT } from "./public_api.ts";

/** The line in a member's entry point below which names are the member's alone. */
export const APPLICATION_MARKER = "// The umbrella re-exports the names above this line (scripts/surface.ts).";

/**
 * The line in a generated file below which it exports, type-only, the types its names reference and it does not
 * export itself (generated too).
 */
export const REFERENCED_TYPES_MARKER =
  "// The types the names above reference, type-only, so that the docs are complete (deno doc --lint):";

/**
 * The line in a member's entry point below which the script writes, type-only, the types the names above it
 * reference and the entry point does not export itself.
 */
export const MEMBER_REFERENCED_TYPES_MARKER =
  "// The types the names above reference, type-only, so this entry's docs are complete (written by deno task surface):";

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

/** A type a generated file or block exports type-only because its names reference it. */
export interface ReferencedType {
  /**
   * The module it is exported from: a package (the lowest that exports it), or, in a member's entry point, the file
   * of the member that declares it (relative to the entry point).
   */
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

/** A symbol of `deno doc --json`: where it is declared (`file:line:col`), and its declarations. */
interface Declared {
  id: string;
  symbol: DocSymbol;
}

const idOf = (location: DocLocation): string => `${location.filename}:${location.line}:${location.col}`;

function declared(symbol: DocSymbol): Declared {
  const first = symbol.declarations[0];
  // A name a module re-exports is a reference to where it is declared.
  if (first.kind === "reference" && first.def?.target) return { id: idOf(first.def.target), symbol };
  return { id: idOf(first.location), symbol };
}

// What resolving a type's references needs.
interface Documented {
  /** Module file URL -> exported name -> its symbol. */
  exports: Map<string, Map<string, Declared>>;
  /** Symbol -> its full declarations (from the module that declares it). */
  full: Map<string, Declared>;
  /** Package specifier (`@toolfence/core`, `@toolfence/adapters/mcp`) -> entry point file URL. */
  entryOf: Map<string, string>;
  /** The symbols a member's entry point lists above its marker: the public ones. */
  listed: Set<string>;
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

// The workspace members' folders, relative to the root.
async function memberDirs(): Promise<string[]> {
  return JSON.parse(await readFile(path.join(ROOT, "deno.json"), "utf8")).workspace as string[];
}

/**
 * `deno doc --json` on every module of the workspace members and the umbrella's own modules, read once per process:
 * every module, not only the entry points, so that a name a declaration imports from a file of its member resolves to
 * the symbol that file declares, whether an entry point exports it or not (no more time: loading the npm
 * dependencies' types is most of it).
 */
function documentation(): Promise<Documented> {
  return documented ??= (async () => {
    const entryOf = new Map<string, string>();
    for (const [specifier, file] of await entryPoints()) {
      entryOf.set(specifier, pathToFileURL(path.join(ROOT, file)).href);
    }
    const files: string[] = [];
    for (const dir of await memberDirs()) {
      const inside = await readdir(path.join(ROOT, dir), { recursive: true });
      files.push(
        ...inside.filter((file) => file.endsWith(".ts") && !file.includes("node_modules")).map((file) =>
          path.join(dir, file)
        ),
      );
    }
    for (const surface of GENERATED) {
      for (const own of surface.own) files.push(path.join(path.dirname(surface.file), own));
    }
    const json = JSON.parse(await denoDocJson(files.sort())) as DocJson;
    const exports = new Map<string, Map<string, Declared>>();
    const full = new Map<string, Declared>();
    for (const [file, node] of Object.entries(json.nodes)) {
      const names = new Map<string, Declared>();
      for (const symbol of node.symbols ?? []) {
        const one = declared(symbol);
        names.set(symbol.name, one);
        if (symbol.declarations[0].kind !== "reference" && !full.has(one.id)) full.set(one.id, one);
      }
      exports.set(file, names);
    }
    const listed = new Set<string>();
    for (const entry of await memberEntries()) {
      const above = aboveMemberMarker(await readFile(path.join(ROOT, entry.file), "utf8"));
      for (const id of listedIds(exports, entry.file, above)) listed.add(id);
    }
    return { exports, full, entryOf, listed };
  })();
}

// The symbols the names an entry point exports in `above` (its text above the marker) stand for.
function listedIds(exports: Documented["exports"], file: string, above: string): Set<string> {
  const names = exports.get(pathToFileURL(path.join(ROOT, file)).href);
  return new Set(
    declaredSurface(above).map((name) => {
      const symbol = names?.get(name.replace(/^type /, ""));
      if (symbol === undefined) throw new Error(`deno doc does not list ${name} among the exports of ${file}`);
      return symbol.id;
    }),
  );
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

const importLists = new Map<string, Promise<Map<string, [string, string]>>>();

// The `import { a as b } from "..."` lists of a module (file URL): local name -> [specifier, imported name].
function importsOf(file: string): Promise<Map<string, [string, string]>> {
  if (!importLists.has(file)) {
    importLists.set(
      file,
      readFile(new URL(file), "utf8").then((text) => {
        const source = text.replace(/\/\*[\s\S]*?\*\//g, "");
        const out = new Map<string, [string, string]>();
        for (const m of source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
          for (const part of m[1].split(",").map((p) => p.trim().replace(/^type\s+/, "")).filter(Boolean)) {
            const [imported, local = imported] = part.split(/\s+as\s+/);
            out.set(local.trim(), [m[2], imported.trim()]);
          }
        }
        return out;
      }),
    );
  }
  return importLists.get(file)!;
}

// The symbol of ours a name used in a declaration of `file` stands for; undefined for an npm dependency's or a global.
async function resolveUsed(
  { exports, entryOf }: Documented,
  file: string,
  used: { name: string; from?: string; importedAs?: string },
): Promise<Declared | undefined> {
  // Without deno doc's resolution (a class's `extends`, a `typeof`): the module's import of the name, or its own.
  const [specifier, name] = used.from !== undefined
    ? [used.from, used.importedAs ?? used.name]
    : (await importsOf(file)).get(used.name) ?? [undefined, used.name];
  if (specifier === undefined) return exports.get(file)?.get(name);
  if (specifier.startsWith(".")) return exports.get(new URL(specifier, file).href)?.get(name);
  // Another package's: ours by its entry point; an npm dependency's is not ours to export.
  const entry = entryOf.get(specifier);
  return entry === undefined ? undefined : exports.get(entry)?.get(name);
}

/**
 * The symbols that `ids` reference, directly or through another such symbol, that are not among `ids`, in the order
 * found. Names resolve as `deno doc --json` resolves them in the module that declares the referencing symbol. Types of
 * npm dependencies are not ours to export and are left out, and so are the types no member's entry point lists: they
 * are their package's own, and `deno doc --lint` on that package's entry points holds where they may appear (it does
 * not look at a constructor's parameters, as FileArtifactStore's AtomicFileWriter, nor through a plain alias, as
 * LangChainToolContent's GatedContent).
 */
async function referencedIds(ids: Set<string>): Promise<string[]> {
  const doc = await documentation();
  const seen = new Set(ids);
  const missing: string[] = [];
  const queue = [...ids];
  while (queue.length > 0) {
    const id = queue.shift()!;
    const symbol = doc.full.get(id);
    if (symbol === undefined) throw new Error(`deno doc --json gave no declaration for ${id}`);
    for (const used of usedNames(symbol.symbol)) {
      const target = await resolveUsed(doc, symbol.symbol.declarations[0].location.filename, used);
      if (target === undefined || seen.has(target.id) || !doc.listed.has(target.id)) continue;
      seen.add(target.id);
      queue.push(target.id);
      missing.push(target.id);
    }
  }
  return missing;
}

// The name a module (file URL) exports a symbol under, if it does.
function exportedName({ exports }: Documented, file: string | undefined, id: string): string | undefined {
  return [...exports.get(file ?? "") ?? []].find(([, symbol]) => symbol.id === id)?.[0];
}

// The first of the packages `sources` (lowest first) whose entry point exports the symbol.
function lowestExporter(doc: Documented, sources: string[], id: string): { from: string; name: string } | undefined {
  for (const from of sources) {
    const name = exportedName(doc, doc.entryOf.get(from), id);
    if (name !== undefined) return { from, name };
  }
  return undefined;
}

/**
 * The types the names a generated file exports reference, directly or through another such type, that the file does
 * not export: each from the first of the umbrella's members (in {@linkcode GENERATED}'s order, lowest layer first)
 * that exports it. Names are resolved as `deno doc --json` resolves them in the module that declares the referencing
 * type, which `deno doc --lint` keeps complete (scripts/check_jsr.ts). Types of npm dependencies are not ours to
 * export and are left out.
 *
 * Requires `--allow-read` and `--allow-run=deno`.
 */
export async function referencedTypes(surface: GeneratedSurface): Promise<ReferencedType[]> {
  const doc = await documentation();
  const lookup = (specifier: string, name: string): Declared | undefined =>
    doc.exports.get(doc.entryOf.get(specifier) ?? "")?.get(name);
  // The symbols a name of the umbrella stands for, and the names taken (by any generated file: one umbrella).
  const taken = new Map<string, string>();
  const exported = new Map<string, Set<string>>();
  for (const generated of GENERATED) {
    const ids = new Set<string>();
    exported.set(generated.file, ids);
    const ownNames = new Set<string>();
    for (const own of generated.own) {
      const entry = pathToFileURL(path.join(ROOT, path.dirname(generated.file), own)).href;
      for (const [name, symbol] of doc.exports.get(entry) ?? []) {
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
  const out: ReferencedType[] = [];
  for (const id of await referencedIds(exported.get(surface.file)!)) {
    const found = lowestExporter(doc, sources, id);
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

/** A workspace member's entry point, for which the script writes the block below its marker. */
export interface MemberEntry {
  /** The entry point, relative to the repository root. */
  file: string;
  /** The member's folder, relative to the root. */
  dir: string;
  /** The packages of the workspace the member may import (its deno.json `imports`), lowest layer first. */
  imports: string[];
}

/** Every entry point of the workspace members (their deno.json `exports`). */
export async function memberEntries(): Promise<MemberEntry[]> {
  const order = LAYERS.flat();
  const out: MemberEntry[] = [];
  for (const dir of await memberDirs()) {
    const config = JSON.parse(await readFile(path.join(ROOT, dir, "deno.json"), "utf8"));
    const imports = Object.keys(config.imports ?? {}).filter((specifier) => order.includes(specifier))
      .sort((a, b) => order.indexOf(a) - order.indexOf(b));
    for (const file of Object.values(config.exports as Record<string, string>)) {
      out.push({ file: path.join(dir, file), dir, imports });
    }
  }
  return out;
}

/** A member's entry point's text above its marker (all of it when it has none). */
export function aboveMemberMarker(source: string): string {
  const at = source.indexOf(MEMBER_REFERENCED_TYPES_MARKER);
  return at < 0 ? source : source.slice(0, at);
}

/**
 * The types the names a member's entry point exports above its marker (`above`, the text above it) reference,
 * directly or through another such type, that the entry point does not export there. Each is exported from the lowest
 * of the packages the member may import that exports it, or, when the member declares it, from the file that
 * declares it: the member may not import itself by its package name (scripts/check_layers.ts).
 *
 * Requires `--allow-read` and `--allow-run=deno`.
 */
export async function memberReferencedTypes(entry: MemberEntry, above: string): Promise<ReferencedType[]> {
  const doc = await documentation();
  const names = new Set(declaredSurface(above).map((name) => name.replace(/^type /, "")));
  const home = path.join(ROOT, entry.dir) + path.sep;
  const out: ReferencedType[] = [];
  for (const id of await referencedIds(listedIds(doc.exports, entry.file, above))) {
    const file = doc.full.get(id)!.symbol.declarations[0].location.filename;
    const found = fileURLToPath(file).startsWith(home)
      ? { from: relativeSpecifier(entry.file, file), name: exportedName(doc, file, id) }
      : lowestExporter(doc, entry.imports, id);
    if (found?.name === undefined) {
      throw new Error(`${entry.file} references ${id}, which neither its member's files nor ${entry.imports} export`);
    }
    if (names.has(found.name) || out.some((type) => type.as === found.name)) {
      throw new Error(`${entry.file} references ${id}, whose name ${found.name} it gives to another symbol`);
    }
    out.push({ from: found.from, name: found.name, as: found.name });
  }
  return out;
}

// A module (file URL) as an entry point (relative to the root) imports it: `./x.ts`, `../x.ts`.
function relativeSpecifier(entry: string, file: string): string {
  const relative = path.relative(path.dirname(path.join(ROOT, entry)), fileURLToPath(file)).split(path.sep).join("/");
  return relative.startsWith(".") ? relative : `./${relative}`;
}

// One type-only `export type { ... } from "..."` per module, in `order`.
function referenceStatements(types: ReferencedType[], order: string[]): string[] {
  return order.filter((from) => types.some((type) => type.from === from)).map((from) =>
    exportStatement(
      types.filter((type) => type.from === from).map((type) =>
        type.as === type.name ? type.name : `${type.name} as ${type.as}`
      ),
      from,
      true,
    )
  );
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
    const order = [...new Set(GENERATED.flatMap((generated) => generated.members.map(([specifier]) => specifier)))];
    blocks.push(REFERENCED_TYPES_MARKER, ...referenceStatements(referenced, order));
  }
  return `${header}\n// Generated by scripts/surface.ts from the members' lists: edit those, then run deno task surface.\n${
    blocks.join("\n")
  }\n`;
}

/**
 * The text the script writes for a member's entry point, given its current text: the text above the marker, then the
 * marker and the block of {@linkcode memberReferencedTypes} (packages lowest first, then the member's files), or
 * nothing when the names above reference no type the entry point does not export.
 */
export async function generateMember(entry: MemberEntry, current: string): Promise<string> {
  const above = aboveMemberMarker(current);
  const referenced = await memberReferencedTypes(entry, above);
  if (referenced.length === 0) return above.replace(/\n+$/, "\n");
  const files = [...new Set(referenced.map((type) => type.from))].filter((from) => from.startsWith(".")).sort();
  const statements = referenceStatements(referenced, [...entry.imports, ...files]);
  return `${above}${MEMBER_REFERENCED_TYPES_MARKER}\n${statements.join("\n")}\n`;
}

if (import.meta.main) {
  const write = process.argv.includes("--write");
  const targets: (readonly [string, (current: string) => Promise<string>])[] = [
    ...GENERATED.map((surface) => [surface.file, (current: string) => generate(surface, current)] as const),
    ...(await memberEntries()).map((entry) =>
      [entry.file, (current: string) => generateMember(entry, current)] as const
    ),
  ];
  let stale = 0;
  for (const [file, next] of targets) {
    const target = path.join(ROOT, file);
    const current = await readFile(target, "utf8");
    const text = await next(current);
    if (text === current) continue;
    if (write) {
      await writeFile(target, text);
      console.log(`wrote ${file}`);
    } else {
      stale++;
      console.error(`${file} is not what scripts/surface.ts writes: run deno task surface`);
    }
  }
  if (stale > 0) process.exit(1);
}
