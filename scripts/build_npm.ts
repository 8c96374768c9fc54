/**
 * Builds the npm package into `npm/` and proves it on Node, the steps dnt
 * takes without its shims (the code runs on both runtimes through `node:`
 * built-ins and the platform seam):
 *
 * 1. compile every module (`mod.ts`, `main.ts`, `core/`, `policy/`, `tools/`,
 *    `adapters/`) and every test under `tests/` to ESM `.js` + `.d.ts` with the
 *    TypeScript compiler API, relative `.ts` imports rewritten to `.js`, bare
 *    specifiers kept; type errors under Node's module rules fail the build;
 * 2. copy the source tree beside the output (assets, fixtures, and the `.ts`
 *    files that tests start with `deno run`), README.md and LICENSE; the
 *    package's `files` globs take only the built kinds and assets;
 * 3. write package.json: version and dependency versions from deno.json,
 *    `exports` with types conditions, the `toolfence` bin, `engines`;
 * 4. `npm install` inside `npm/` (scripts off, as under Deno);
 * 5. run the whole suite with `node --test` against the built files
 *    (`npm/tests/` imports `npm/core/...`): top-level results and skips as
 *    they come, then what failed and node's TAP counts (`# pass N`, which
 *    `.ci/run` adds up); the whole TAP goes to `npm/node-test-results.tap`;
 * 6. `npm pack`, install the tarball into a consumer project in a temp
 *    folder, type-check it with `tsc --module nodenext --strict` and run it.
 *
 * Flags: `--no-tests` skips step 5, `--no-consumer` step 6.
 *
 * Requires --allow-read, --allow-write (npm/ and the temp folder),
 * --allow-env, --allow-run=npm,node.
 *
 * @example
 * ```sh
 * deno task build:npm
 * ```
 *
 * @module
 */
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compile, importedSpecifiers } from "./_npm_compile.ts";
import {
  type DenoConfig,
  dependencyVersion,
  emittedStem,
  isBareSpecifier,
  packageJson,
  packageNameOf,
  planDependencies,
  resolveBare,
  subpathExports,
} from "./_npm_package.ts";
import { consumerManifest, consumerSource, consumerTsconfig } from "./_npm_consumer.ts";
import { failureDetails, isHeadline, skipped, tapCounts } from "./_tap.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, "npm");
const testsDir = path.join(root, "tests");
/** The library's folders (SPEC section 1, and any deno.json exports from); every `.ts` file in them is a module. */
const libraryDirs = ["core", "policy", "tools", "adapters"];
const libraryRootFiles = ["mod.ts", "main.ts"];
/**
 * Deno's `import.meta.main`, which Node 20 lacks: there it is undefined, so a
 * guarded block does not run, and the bin (see {@linkcode binWrapper}) calls the
 * command line itself.
 */
const DENO_ONLY_TYPES = "interface ImportMeta { readonly main?: boolean }\n";
const isTestFile = (f: string) => /[._]test\.(m|c)?tsx?$/.test(f);
const isCompilable = (f: string) => /\.(m|c)?tsx?$/.test(f) && !/\.d\.(m|c)?ts$/.test(f);

async function walk(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...await walk(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

function step(title: string): number {
  console.log(`\n== ${title}`);
  return performance.now();
}

function done(started: number): void {
  console.log(`   (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

/**
 * Runs a program and resolves with its exit code. Its output is shown, unless
 * `onLine` is given: then stdout is collected and each line handed to it.
 */
async function run(
  program: string,
  args: string[],
  cwd: string,
  onLine?: (line: string) => void,
): Promise<{ code: number; stdout: string }> {
  const child = new Deno.Command(program, {
    args,
    cwd,
    stdin: "null",
    stdout: onLine ? "piped" : "inherit",
    stderr: "inherit",
  }).spawn();
  let stdout = "";
  if (onLine) {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of child.stdout) {
      const text = decoder.decode(chunk, { stream: true });
      stdout += text;
      const lines = (pending + text).split("\n");
      pending = lines.pop() ?? "";
      lines.forEach(onLine);
    }
    if (pending) onLine(pending);
  }
  const status = await child.status;
  return { code: status.code, stdout };
}

function description(modText: string): string {
  const first = /\/\*\*\s*\n\s*\*\s*(.+)/.exec(modText)?.[1] ?? "";
  const text = first.replace(/^toolfence:\s*/, "").trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The top folders of deno.json's exports not in {@linkcode libraryDirs}. */
function exportDirs(config: DenoConfig): string[] {
  const sources = typeof config.exports === "string" ? [config.exports] : Object.values(config.exports ?? {});
  const dirs = sources.map((s) => path.normalize(s).split(path.sep)).filter((parts) => parts.length > 1)
    .map((parts) => parts[0]);
  return [...new Set(dirs)].filter((d) => !libraryDirs.includes(d));
}

/** The files `roots` import, directly or not, through relative specifiers; the roots included. */
function reachable(roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const specifier of importedSpecifiers(file, readFileSync(file, "utf8"))) {
      if (specifier.startsWith("./") || specifier.startsWith("../")) {
        queue.push(path.resolve(path.dirname(file), specifier));
      }
    }
  }
  return seen;
}

/** The MCP server module: `adapters/mcp/mod.ts`, else `adapters/mcp.ts`. */
function mcpModule(): string | undefined {
  return ["adapters/mcp/mod.ts", "adapters/mcp.ts"].find((f) => existsSync(path.join(root, f)))
    ?.replace(/^/, "./");
}

/** The whole TAP output of the Node run, in npm/ (outside the package's `files`). */
const TAP_FILE = "node-test-results.tap";

/** Where the `toolfence` bin goes in the package. */
const binFile = "bin/toolfence.js";

/**
 * The `toolfence` bin: runs main.ts's `main(args)` with the process's
 * arguments and exits with its code, as main.ts does under Deno. The exit
 * matters: open handles (a terminal host's stdin) must not keep it alive.
 */
export function binWrapper(mainModule: string): string {
  return `#!/usr/bin/env node
// Generated by scripts/build_npm.ts: the toolfence command line on Node.
import process from "node:process";
import { main } from ${JSON.stringify(mainModule)};

let code;
try {
  code = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(\`toolfence: \${error instanceof Error ? error.message : String(error)}\\n\`);
  code = 1;
}
process.exit(code);
`;
}

async function cleanOutput(): Promise<void> {
  // node_modules and the lockfile survive, so a rebuild installs only what changed.
  await mkdir(outDir, { recursive: true });
  for (const entry of await readdir(outDir)) {
    if (entry === "node_modules" || entry === "package-lock.json") continue;
    await rm(path.join(outDir, entry), { recursive: true, force: true });
  }
}

/** `.d.ts` for declarations, else the extension: what a `files` glob selects a file by. */
function kindOf(file: string): string {
  return /\.d\.(m|c)?ts$/.test(file) ? file.slice(file.lastIndexOf(".d.")) : path.extname(file);
}

/**
 * The package's `files`: the built kinds (`.js`, `.d.ts`) and assets of each
 * library folder by glob, root files by name. The TypeScript sources that
 * npm/ also holds stay out of the package.
 */
function packageFiles(builtOrAssets: readonly string[]): string[] {
  const entries = new Set<string>();
  for (const file of builtOrAssets) {
    const [top, ...rest] = path.relative(outDir, file).split(path.sep);
    entries.add(rest.length === 0 ? top : `${top}/**/*${kindOf(file)}`);
  }
  return [...entries];
}

async function main(args: string[]): Promise<number> {
  const wantTests = !args.includes("--no-tests");
  const wantConsumer = !args.includes("--no-consumer");
  const buildStarted = performance.now();
  const config = JSON.parse(await readFile(path.join(root, "deno.json"), "utf8")) as DenoConfig;
  const imports = config.imports ?? {};
  let failures = 0;

  let started = step("Compiling with the TypeScript compiler API (nodenext, ES2023)");
  await cleanOutput();
  const libraryTree = [
    ...libraryRootFiles.map((f) => path.join(root, f)).filter((f) => existsSync(f)),
    ...(await Promise.all([...libraryDirs, ...exportDirs(config)].map((d) => walk(path.join(root, d))))).flat(),
  ];
  const testTree = await walk(testsDir);
  const librarySources = libraryTree.filter((f) => isCompilable(f) && !isTestFile(f));
  // Every test module is compiled, helpers and child scripts too (a test may start `_writer.js` by name);
  // `fixtures/` folders hold data, such as files with errors on purpose for the diagnostic tools.
  const isFixture = (f: string) => path.relative(testsDir, f).split(path.sep).includes("fixtures");
  const testSources = testTree.filter((f) => isCompilable(f) && !isFixture(f));
  const result = compile(
    { root, outDir, rootNames: [...librarySources, ...testSources], ambient: DENO_ONLY_TYPES },
    isBareSpecifier,
  );
  // Child scripts that no test imports may be Deno's alone (started with `deno run`): their errors are shown, not fatal.
  const checked = reachable([...librarySources, ...testTree.filter(isTestFile)]);
  const fatal = result.diagnostics.filter((d) => d.error && (d.file === undefined || checked.has(d.file)));
  const tolerated = result.diagnostics.filter((d) => !fatal.includes(d));
  for (const d of fatal) console.log(d.text);
  if (tolerated.length > 0) {
    console.log(`   not fatal, in scripts no test or module imports (${tolerated.length}):`);
    for (const d of tolerated) console.log(`   ${d.text}`);
  }
  // What the tests pull in from elsewhere (e.g. scripts/) is built for them, not part of the library.
  const librarySet = new Set(librarySources);
  const library = result.emitted.filter((e) => librarySet.has(e.source));
  const tests = result.emitted.filter((e) => !librarySet.has(e.source));
  console.log(`   ${library.length} library files and ${tests.length} test files emitted`);
  if (fatal.length > 0) {
    console.log(`   ${fatal.length} type errors under Node's module rules`);
    failures++;
  }
  done(started);

  started = step("Copying the sources, assets, fixtures, README.md and LICENSE");
  // npm/ mirrors the source tree under the built files: tests that start `deno run` on a
  // TypeScript module next to them find it. The package's `files` globs leave the sources out.
  for (const file of [...libraryTree, ...testTree]) {
    const target = path.join(outDir, path.relative(root, file));
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(file, target);
  }
  for (const file of ["README.md", "LICENSE"]) {
    if (existsSync(path.join(root, file))) await copyFile(path.join(root, file), path.join(outDir, file));
    else console.log(`   warning: ${file} is missing`);
  }
  console.log(`   ${libraryTree.length + testTree.length} files copied`);
  done(started);

  started = step("Writing package.json");
  const exportsMap = subpathExports(config, mcpModule());
  const mainSource = path.join(root, "main.ts");
  // The bin needs main.ts's `main(args)`: Node 20 has no `import.meta.main` to start it by.
  const binSource =
    existsSync(mainSource) && /export\s+async\s+function\s+main\s*\(/.test(await readFile(mainSource, "utf8"))
      ? "./main.ts"
      : undefined;
  const libraryAssets = libraryTree.filter((f) => !isCompilable(f)).map((f) =>
    path.join(outDir, path.relative(root, f))
  );
  const files = packageFiles([...library.map((e) => e.path), ...libraryAssets]);
  for (const file of ["README.md", "LICENSE"]) if (existsSync(path.join(outDir, file))) files.push(file);
  if (binSource !== undefined) files.push(binFile);
  const plan = planDependencies({
    runtime: library.filter((e) => e.path.endsWith(".js")).flatMap((e) => e.bare),
    types: library.filter((e) => e.path.endsWith(".d.ts")).flatMap((e) => e.bare),
    tests: tests.flatMap((e) => e.bare),
  }, imports);
  const manifest = packageJson({
    config,
    exports: exportsMap,
    bin: binSource ? binFile : undefined,
    files,
    plan,
    description: description(await readFile(path.join(root, "mod.ts"), "utf8")),
  });
  await writeFile(path.join(outDir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  if (binSource !== undefined) {
    const bin = path.join(outDir, binFile);
    await mkdir(path.dirname(bin), { recursive: true });
    await writeFile(bin, binWrapper(`../${emittedStem(binSource).slice(2)}.js`));
    await chmod(bin, 0o755);
  }
  console.log(
    `   exports: ${Object.keys(exportsMap).join(", ")}; bin: ${
      binSource ? binFile : "none (no main.ts exporting main)"
    }`,
  );
  console.log(`   dependencies: ${Object.keys(plan.dependencies).join(", ") || "none"}`);
  if (Object.keys(plan.peerDependencies).length > 0) {
    console.log(`   optional peers (types only): ${Object.keys(plan.peerDependencies).join(", ")}`);
  }
  done(started);

  started = step("npm install (in npm/)");
  const install = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
    outDir,
  );
  done(started);
  if (install.code !== 0) {
    console.log("npm install failed; nothing further can run");
    return 1;
  }

  if (wantTests) {
    started = step("Running the test suite under node --test against the build");
    const testFiles = tests.filter((e) => e.path.endsWith(".js") && isTestFile(e.source))
      .map((e) => path.relative(outDir, e.path)).sort();
    // Only the top-level results, skips and counts are shown as they come; the whole TAP is kept in a file.
    const node = await run(
      "node",
      ["--test", "--test-reporter=tap", `--test-concurrency=${Math.max(2, os.availableParallelism())}`, ...testFiles],
      outDir,
      (line) => isHeadline(line) && console.log(line),
    );
    await writeFile(path.join(outDir, TAP_FILE), node.stdout);
    const failed = failureDetails(node.stdout);
    if (failed.length > 0) console.log(`\nFailed under Node:\n${failed.join("\n")}`);
    const counts = tapCounts(node.stdout);
    console.log(
      `   node --test: ${counts.pass} passed, ${counts.fail} failed, ${counts.cancelled} cancelled of ${counts.tests}; ` +
        `${skipped(node.stdout).length} tests or suites skipped (whole TAP in npm/${TAP_FILE})`,
    );
    if (node.code !== 0) failures++;
    done(started);
  }

  if (wantConsumer) {
    started = step("Consumer project: npm pack, install, tsc --module nodenext --strict, run");
    const consumer = await mkdtemp(path.join(os.tmpdir(), "toolfence-consumer-"));
    try {
      const pack = await run("npm", ["pack", "--silent", "--pack-destination", consumer], outDir, () => {});
      const tarball = pack.stdout.trim().split("\n").pop() ?? "";
      // The consumer depends on what it imports, at deno.json's versions, like a user following the README.
      const consumerDependencies: Record<string, string> = {};
      for (const specifier of importedSpecifiers("main.ts", consumerSource).filter(isBareSpecifier)) {
        if (packageNameOf(specifier) === "toolfence") continue;
        const { importName, target } = resolveBare(specifier, imports);
        consumerDependencies[importName] = dependencyVersion(importName, target);
      }
      const typesNode = resolveBare("@types/node", imports);
      await writeFile(
        path.join(consumer, "package.json"),
        JSON.stringify(
          consumerManifest(path.join(consumer, tarball), consumerDependencies, {
            "@types/node": dependencyVersion("@types/node", typesNode.target),
          }),
          null,
          2,
        ),
      );
      await writeFile(path.join(consumer, "tsconfig.json"), JSON.stringify(consumerTsconfig, null, 2));
      await writeFile(path.join(consumer, "main.ts"), consumerSource);
      const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
      const steps: [string, string[]][] = [
        ["npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"]],
        ["node", [tsc, "-p", ".", "--module", "nodenext", "--moduleResolution", "nodenext", "--strict"]],
        ["node", ["dist/main.js"]],
      ];
      if (pack.code !== 0 || !tarball.endsWith(".tgz")) {
        console.log("   npm pack failed");
        failures++;
      } else {
        for (const [program, programArgs] of steps) {
          console.log(`   $ ${program} ${programArgs.map((a) => path.basename(a) === "tsc" ? "tsc" : a).join(" ")}`);
          if ((await run(program, programArgs, consumer)).code !== 0) {
            console.log("   consumer check failed");
            failures++;
            break;
          }
        }
      }
    } finally {
      await rm(consumer, { recursive: true, force: true });
    }
    done(started);
  }

  console.log(
    `\nnpm build ${failures === 0 ? "ok" : "FAILED"} in ${((performance.now() - buildStarted) / 1000).toFixed(1)} s`,
  );
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
