/**
 * The npm package's manifest, derived from deno.json: which import-map entry a
 * bare specifier resolves through, which npm package and version that is, and
 * the package.json that lists them. Pure functions, so the rules are tested
 * without building anything.
 *
 * @module
 */
import { builtinModules } from "node:module";

/** The parts of deno.json the build reads. */
export interface DenoConfig {
  name?: string;
  version?: string;
  license?: string;
  exports?: string | Record<string, string>;
  imports?: Record<string, string>;
}

/** An npm package an import-map entry points at. */
export interface NpmTarget {
  /** The package's name on the registry. */
  name: string;
  /** The version or range written in the entry. */
  version: string;
}

/** What one bare specifier needs in package.json. */
export interface ResolvedBare {
  /** The name code imports it by (the import-map key's package), which is the dependency's key. */
  importName: string;
  /** The registry package behind it. */
  target: NpmTarget;
}

const builtins = new Set(builtinModules);

/** Whether `specifier` is neither relative, absolute nor a URL, nor a Node built-in. */
export function isBareSpecifier(specifier: string): boolean {
  if (specifier.startsWith(".") || specifier.startsWith("/")) return false;
  if (/^[a-z][a-z0-9+.-]*:/i.test(specifier)) return false; // node:, npm:, jsr:, https:, file:, data:
  return !builtins.has(specifier.split("/")[0]);
}

/** The package part of a bare specifier: `@scope/name/sub` gives `@scope/name`, `name/sub` gives `name`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Parses `npm:name@version/sub` and the prefix form `npm:/name@version/`; undefined for anything else. */
export function parseNpmSpecifier(value: string): NpmTarget | undefined {
  const match = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)(?:@([^/]+))?(?:\/.*)?$/.exec(value);
  if (!match) return undefined;
  // An entry without a version would let npm pick one; the build must not differ from the lockfile's choice silently.
  return match[2] === undefined ? undefined : { name: match[1], version: match[2] };
}

/**
 * The import-map entry a bare specifier resolves through, as Deno resolves it:
 * an exact key first, then the longest key ending in `/` that prefixes it.
 * Throws, naming the specifier, when no entry matches or the entry is not a
 * versioned `npm:` package, since Node could not resolve it from package.json.
 */
export function resolveBare(specifier: string, imports: Record<string, string>): ResolvedBare {
  let key: string | undefined = Object.hasOwn(imports, specifier) ? specifier : undefined;
  if (key === undefined) {
    for (const candidate of Object.keys(imports)) {
      if (
        candidate.endsWith("/") && specifier.startsWith(candidate) &&
        (key === undefined || candidate.length > key.length)
      ) {
        key = candidate;
      }
    }
  }
  if (key === undefined) {
    throw new Error(`"${specifier}" is not in deno.json's import map; add it as an npm: entry`);
  }
  const target = parseNpmSpecifier(imports[key]);
  if (target === undefined) {
    throw new Error(
      `"${specifier}" maps to ${imports[key]} in deno.json; the npm build can only depend on versioned npm: packages`,
    );
  }
  return { importName: packageNameOf(specifier), target };
}

/** The package.json version string for a target imported as `importName` (an npm alias when the names differ). */
export function dependencyVersion(importName: string, target: NpmTarget): string {
  return importName === target.name ? target.version : `npm:${target.name}@${target.version}`;
}

/** The bare specifiers each kind of emitted file uses. */
export interface BareUsage {
  /** In the library's `.js` files: needed at run time. */
  runtime: Iterable<string>;
  /** In the library's `.d.ts` files: needed by a consumer's type checker. */
  types: Iterable<string>;
  /** In the compiled tests: needed to run the suite. */
  tests: Iterable<string>;
}

/** The dependency sections of package.json. */
export interface DependencyPlan {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional: true }>;
  devDependencies: Record<string, string>;
}

function sorted(record: Map<string, string>): Record<string, string> {
  return Object.fromEntries([...record].sort(([a], [b]) => a.localeCompare(b)));
}

/** How some packages are depended on, whatever the code does with them. */
export interface DependencyRules {
  /** Packages of the same workspace, by name, with the range to depend on them by (the same version). */
  workspace?: Readonly<Record<string, string>>;
  /** Packages users bring themselves (valibot, whose schemas they pass in), with the range they may have. */
  peers?: Readonly<Record<string, string>>;
  /** Packages only some entry points or one lazily-loaded tool need (the AI SDK, TypeScript): optional peers. */
  optionalPeers?: ReadonlySet<string>;
}

/**
 * Splits the packages the build uses into sections: what the library's
 * JavaScript imports is a dependency; what only its declarations import is an
 * optional peer (a consumer who uses those types has the package already); what
 * only the tests import, and `@types/node` when the import map has it, are dev
 * dependencies. Peers are dev dependencies too, so the tests have them.
 * `rules` moves packages to the peer sections and pins workspace packages.
 */
export function planDependencies(
  usage: BareUsage,
  imports: Record<string, string>,
  rules: DependencyRules = {},
): DependencyPlan {
  const collect = (specifiers: Iterable<string>) => {
    const out = new Map<string, string>();
    for (const s of specifiers) {
      const name = packageNameOf(s);
      if (rules.workspace && Object.hasOwn(rules.workspace, name)) {
        out.set(name, rules.workspace[name]);
        continue;
      }
      const { importName, target } = resolveBare(s, imports);
      out.set(importName, dependencyVersion(importName, target));
    }
    return out;
  };
  const used = collect(usage.runtime);
  const types = collect(usage.types);
  const tests = collect(usage.tests);
  const isPeer = (name: string) => (rules.peers !== undefined && Object.hasOwn(rules.peers, name));
  const isOptional = (name: string) => rules.optionalPeers?.has(name) ?? false;
  const runtime = new Map([...used].filter(([name]) => !isPeer(name) && !isOptional(name)));
  const peers = new Map([
    ...[...types].filter(([name]) => !runtime.has(name)),
    ...[...used].filter(([name]) => isOptional(name)),
    ...[...used, ...types].filter(([name]) => isPeer(name)).map(([name]) => [name, rules.peers![name]] as const),
  ]);
  const dev = new Map(
    [...tests, ...[...used, ...types].filter(([name]) => peers.has(name))].filter(([name]) =>
      !runtime.has(name) && !(rules.workspace && Object.hasOwn(rules.workspace, name))
    ),
  );
  if (Object.hasOwn(imports, "@types/node")) {
    const target = parseNpmSpecifier(imports["@types/node"]);
    if (target) dev.set("@types/node", dependencyVersion("@types/node", target));
  }
  return {
    dependencies: sorted(runtime),
    peerDependencies: sorted(peers),
    peerDependenciesMeta: Object.fromEntries(
      [...peers.keys()].filter((n) => !isPeer(n)).sort().map((n) => [n, { optional: true as const }]),
    ),
    devDependencies: sorted(dev),
  };
}

/** The subpath exports: deno.json's, plus `./mcp` for the MCP server module when it exists. */
export function subpathExports(config: DenoConfig, mcpModule: string | undefined): Record<string, string> {
  const declared: Record<string, string> = typeof config.exports === "string"
    ? { ".": config.exports }
    : { ...(config.exports ?? {}) };
  if (mcpModule !== undefined && !Object.hasOwn(declared, "./mcp")) declared["./mcp"] = mcpModule;
  return declared;
}

/** `./core/mod.ts` gives `./core/mod` (the emitted `.js` and `.d.ts` share it). */
export function emittedStem(sourcePath: string): string {
  const relative = sourcePath.startsWith("./") ? sourcePath : `./${sourcePath}`;
  return relative.replace(/\.(m|c)?tsx?$/, "");
}

/** What {@linkcode packageJson} needs besides deno.json. */
export interface PackageInputs {
  config: DenoConfig;
  /** The npm name; default `toolfence`. */
  name?: string;
  /** npm workspaces (the folders of the other packages), for the build's own install only. */
  workspaces?: readonly string[];
  exports: Record<string, string>;
  /** The `toolfence` bin inside the package (e.g. `bin/toolfence.js`), if there is one. */
  bin?: string;
  /** The top-level files and folders of the library's output, for `files`. */
  files: readonly string[];
  plan: DependencyPlan;
  description: string;
}

/**
 * The package.json that goes into the tarball: the build's manifest without
 * what only the build's own install in npm/ uses (`devDependencies`, the
 * umbrella's `workspaces`), which an installer would otherwise read as the
 * package's.
 */
export function packedManifest(manifest: Record<string, unknown>): Record<string, unknown> {
  const { devDependencies: _dev, workspaces: _workspaces, ...packed } = manifest;
  return packed;
}

/** The package.json of the npm build. */
export function packageJson(inputs: PackageInputs): Record<string, unknown> {
  const { config, plan } = inputs;
  if (!config.version) throw new Error("deno.json has no version");
  const exportsField: Record<string, { types: string; default: string }> = {};
  for (const [subpath, source] of Object.entries(inputs.exports)) {
    const stem = emittedStem(source);
    exportsField[subpath] = { types: `${stem}.d.ts`, default: `${stem}.js` };
  }
  const root = inputs.exports["."];
  const manifest: Record<string, unknown> = {
    name: inputs.name ?? "toolfence",
    version: config.version,
    description: inputs.description,
    license: config.license,
    type: "module",
  };
  if (root !== undefined) {
    manifest.main = `${emittedStem(root)}.js`;
    manifest.types = `${emittedStem(root)}.d.ts`;
  }
  manifest.exports = { ...exportsField, "./package.json": "./package.json" };
  if (inputs.bin !== undefined) manifest.bin = { toolfence: inputs.bin };
  manifest.files = [...inputs.files].sort();
  manifest.engines = { node: ">=22" };
  if (inputs.workspaces !== undefined && inputs.workspaces.length > 0) manifest.workspaces = [...inputs.workspaces];
  for (const section of ["dependencies", "peerDependencies", "peerDependenciesMeta", "devDependencies"] as const) {
    if (Object.keys(plan[section]).length > 0) manifest[section] = plan[section];
  }
  return manifest;
}

/**
 * Needed by one entry point or one tool only, loaded when used: the AI SDK
 * (`@toolfence/adapters/ai-sdk`), the agent frameworks (each by its own
 * `@toolfence/adapters/<framework>` entry point), the MCP server stack (the
 * MCP SDK and jose, by `@toolfence/adapters/mcp` and `toolfence serve`), the PostgreSQL client (`postgres`, by
 * `serve --http --store postgres://...` only), Hono (the web console, `serve --console`), TypeScript (`check_syntax`),
 * ripgrep's binary (`grep`, which falls back to a `rg` on the PATH or its own
 * engine), playwright-core (the `browser` group, which drives the system
 * Chromium), `@opentelemetry/api` (the core's tracing, once an application
 * registers a tracer provider). The library imports each with a dynamic
 * `import()` (through `importPeer`, which names the package when it is
 * missing); static imports of them are type-only (tests/scripts/optional_peers_test.ts).
 */
export const OPTIONAL_PEERS: ReadonlySet<string> = new Set([
  "ai",
  "@openai/agents",
  "@langchain/core",
  "@langchain/langgraph",
  "@mastra/core",
  "@anthropic-ai/claude-agent-sdk",
  "@google/adk",
  "zod",
  "@modelcontextprotocol/sdk",
  "jose",
  "postgres",
  "hono",
  "typescript",
  "@vscode/ripgrep",
  "playwright-core",
  "@opentelemetry/api",
]);
