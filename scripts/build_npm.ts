/**
 * Builds one npm package per workspace package into `npm/` and proves them on
 * Node, the steps dnt takes without its shims (the code runs on both runtimes
 * through `node:` built-ins and the platform seam): `toolfence` (the umbrella:
 * the root's modules and the bin) in `npm/`, and `@toolfence/core`,
 * `@toolfence/policy`, `@toolfence/tools`, `@toolfence/adapters` in
 * `npm/<member>/`, installed together as npm workspaces.
 *
 * 1. compile every module (the root's, every member's) and every test under
 *    `tests/` to ESM `.js` (without comments) + `.d.ts` (with the JSDoc) with
 *    the TypeScript compiler API, relative
 *    `.ts` imports rewritten to `.js`, bare specifiers (the members' package
 *    names too) kept; type errors under Node's module rules fail the build;
 * 2. copy the source tree beside the output (assets, fixtures, and the `.ts`
 *    files that tests start with `deno run`), README.md and LICENSE; the
 *    package's `files` globs take only the built kinds and assets;
 * 3. write each package.json: version and dependency ranges from its
 *    deno.json (caret), the other members at `^` the same version, valibot a
 *    peer (`^1`), the AI SDK, TypeScript and ripgrep optional peers of the
 *    package that loads them, `exports` with types conditions, the
 *    `toolfence` bin, `engines` (node >= 22);
 * 4. `npm install` inside `npm/` (scripts off, as under Deno);
 * 5. run the whole suite with `node --test` against the built files
 *    (`npm/tests/` imports `npm/core/...`): top-level results and skips as
 *    they come, then what failed; the whole TAP goes to
 *    `npm/node-test-results.tap`. Beside it scripts/node_results_reporter.mjs
 *    records which results of each file reached the runner (node loses some
 *    when frames of a file's child stream are lost, with no failure): a file
 *    whose results did not all arrive runs again alone, once, and its re-run's
 *    results stand for it (still incomplete: a failure). The counts printed
 *    (`# pass N`, `# fail N`, `# cancelled N`, which `.ci/run` adds up) are
 *    summed per file after the re-runs; node's own closing counts are shown
 *    in another form;
 * 6. `npm pack` every package into `npm/tarballs/` (before step 5, which runs
 *    beside the consumers); install them into consumer projects in temp
 *    folders (the umbrella with everything; the lowest supported peers; the
 *    core alone; the umbrella with no optional peer, whose program also runs
 *    under Deno), type-check each with `tsc --module nodenext --strict`
 *    (TypeScript 7, installed once beside them; the lowest-peers consumer
 *    with the workspace's TypeScript 6) and run it.
 *
 * Flags: `--no-tests` skips step 5, `--no-consumer` the consumers of step 6,
 * `--tests-only` runs step 5 and the consumers (unless `--no-consumer`)
 * alone, on the build and tarballs a `--no-tests` run left in `npm/` (CI
 * builds while the Deno suite runs, and tests under Node after it);
 * `--node 22,24` runs step 5 once per Node version, each from the `node` npm
 * package (`npx -y node@22`), and the consumers under the first; with
 * `--split`, each version runs a share of the files of about equal weight (by
 * the seconds of `tests/node_test_times.json`), all versions at once, so that
 * the suite runs once under Node, shared among the versions (CI: the whole
 * suite already ran under Deno).
 * The consumers run while the suite does.
 *
 * Requires --allow-read, --allow-write (npm/ and the temp folder),
 * --allow-env, --allow-run=npm,npx,node,deno,timeout.
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
import { NODE_TEST_FLAGS } from "./check_tests.ts";
import { splitByWeight, TEST_JOBS } from "./run_tests.ts";
import {
  type DenoConfig,
  dependencyVersion,
  emittedStem,
  isBareSpecifier,
  OPTIONAL_PEERS,
  packageJson,
  packageNameOf,
  packedManifest,
  parseNpmSpecifier,
  planDependencies,
  resolveBare,
  subpathExports,
} from "./_npm_package.ts";
import { consumerManifest, CONSUMERS, consumerTsconfig, NATIVE_TYPESCRIPT } from "./_npm_consumer.ts";
import { failureDetails, isHeadline, skipped, tapCounts } from "./_tap.ts";
import {
  countLines,
  describeTopLevel,
  fileResults,
  fileSeconds,
  isComplete,
  parseEvents,
  totalCounts,
} from "./_node_results.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, "npm");
const testsDir = path.join(root, "tests");
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

/** Runs a program with its stdout and stderr together in the result (for a step whose output is printed later). */
async function runQuiet(program: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(program, { args, cwd, stdin: "null", stdout: "piped", stderr: "piped" }).output();
  const decoder = new TextDecoder();
  return { code: out.code, output: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

function description(modText: string): string {
  const first = /\/\*\*\s*\n\s*\*\s*(.+)/.exec(modText)?.[1] ?? "";
  const text = first.replace(/^toolfence:\s*/, "").trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A member package's README: its name, what it is, and where the documentation is. */
function memberReadme(npmName: string, modText: string): string {
  return `# ${npmName}\n\n${description(modText)}\n\nPart of [toolfence](https://www.npmjs.com/package/toolfence): ` +
    "its README and `docs/` describe every package.\n";
}

/** A workspace package's mod.ts (the umbrella's is the root's). */
function memberMod(pkg: WorkspacePackage): string {
  return path.join(root, pkg.dir, "mod.ts");
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

/** The whole TAP output of the Node run, in npm/ (outside the package's `files`). */
const TAP_FILE = "node-test-results.tap";

/** The TAP of the files run again alone because not all their results arrived. */
const RERUN_TAP_FILE = "node-test-reruns.tap";

/** The results reporter's events (scripts/node_results_reporter.mjs), in npm/. */
const EVENTS_FILE = "node-test-events.jsonl";

/** The results reporter, copied into npm/ at the same path: Node loads it as it is. */
const RESULTS_REPORTER = "scripts/node_results_reporter.mjs";

/** How long a file's re-run alone may take: the slowest file takes about a minute under load. */
const RERUN_SECONDS = 300;

/** The re-run's flags: NODE_TEST_FLAGS without --test-force-exit (see where a file is re-run). */
const RERUN_FLAGS = NODE_TEST_FLAGS.filter((flag) => flag !== "--test-force-exit");

/** A file's text, or "" when it is missing (a run that ended before its reporter wrote anything). */
async function readFileOr(file: string): Promise<string> {
  return existsSync(file) ? await readFile(file, "utf8") : "";
}

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
function packageFiles(builtOrAssets: readonly string[], base: string): string[] {
  const entries = new Set<string>();
  for (const file of builtOrAssets) {
    const [top, ...rest] = path.relative(base, file).split(path.sep);
    entries.add(rest.length === 0 ? top : `${top}/**/*${kindOf(file)}`);
  }
  return [...entries];
}

/** One package of the workspace: the umbrella (folder "") or a member. */
interface WorkspacePackage {
  /** Folder relative to the root; "" for the umbrella. */
  dir: string;
  /** Its deno.json. */
  config: DenoConfig;
  /** The name on npm: the JSR name, except the umbrella's, which is `toolfence`. */
  npmName: string;
}

/**
 * Declarations a package's own `.d.ts` pull in without naming them: web-tree-sitter's
 * refer to `EmscriptenModule` of `@types/emscripten` (its optional peer), so a
 * consumer type-checking without `skipLibCheck` needs it.
 */
const TYPES_OF: Readonly<Record<string, string>> = { "web-tree-sitter": "@types/emscripten" };

/** valibot: users pass its schemas in, so they bring it (any 1.x). */
const PEERS: Readonly<Record<string, string>> = { valibot: "^1" };

async function workspacePackages(rootConfig: DenoConfig & { workspace?: string[] }): Promise<WorkspacePackage[]> {
  const out: WorkspacePackage[] = [{ dir: "", config: rootConfig, npmName: "toolfence" }];
  for (const member of rootConfig.workspace ?? []) {
    const dir = path.normalize(member).replace(/\/$/, "");
    const config = JSON.parse(await readFile(path.join(root, dir, "deno.json"), "utf8")) as DenoConfig;
    out.push({ dir, config, npmName: config.name! });
  }
  return out;
}

/** `@toolfence/adapters/mcp` -> its file, for every export of every member: how the compiler finds them. */
function workspacePaths(packages: readonly WorkspacePackage[]): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const pkg of packages) {
    if (pkg.dir === "") continue;
    for (const [sub, file] of Object.entries(subpathExports(pkg.config, undefined))) {
      paths[sub === "." ? pkg.config.name! : `${pkg.config.name}${sub.slice(1)}`] = [path.join(root, pkg.dir, file)];
    }
  }
  return paths;
}

/** Whether `file` (absolute) belongs to `pkg`: under its folder, or for the umbrella under none of the members'. */
function belongsTo(file: string, pkg: WorkspacePackage, memberDirs: readonly string[]): boolean {
  const rel = path.relative(root, file);
  if (pkg.dir !== "") return rel.startsWith(pkg.dir + path.sep);
  return !memberDirs.some((d) => rel.startsWith(d + path.sep));
}

/** The program that runs Node: `node`, or `npx -y node@<version>` (the `node` npm package) for another version. */
function nodeCommand(version: string | undefined): [string, string[]] {
  return version === undefined ? ["node", []] : ["npx", ["-y", `node@${version}`]];
}

/** The range a member's deno.json imports `name` at (`npm:name@^1.4.0`: `^1.4.0`): its peer range on npm. */
function peerRange(name: string, packages: readonly WorkspacePackage[]): string {
  for (const pkg of packages) {
    const target = pkg.dir === "" ? undefined : pkg.config.imports?.[name];
    const version = target === undefined ? undefined : parseNpmSpecifier(target)?.version;
    if (version !== undefined) return version;
  }
  throw new Error(`no member of the workspace imports ${name} at a version`);
}

/**
 * Installs {@link NATIVE_TYPESCRIPT} into a temporary folder, outside every
 * consumer project, and returns the folder (its `node_modules/typescript`).
 * A failed install is printed here, with npm's words; the consumers it would
 * check then fail at their `tsc` step, which finds no compiler.
 */
async function installNativeTypeScript(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-typescript-"));
  const ran = await runQuiet(
    "npm",
    ["install", "--no-audit", "--no-fund", "--loglevel=error", "--no-save", `typescript@${NATIVE_TYPESCRIPT}`],
    dir,
  );
  if (ran.code !== 0) console.log(`\nnpm install typescript@${NATIVE_TYPESCRIPT} failed:\n${ran.output.trimEnd()}`);
  return dir;
}

/** The version in a package folder's package.json, or `missing` when it has none. */
function packageVersion(dir: string): string {
  return existsSync(path.join(dir, "package.json"))
    ? String(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version)
    : "missing";
}

/** How many consumer projects are checked at once. */
const CONSUMER_JOBS = 3;
// The seconds each test file took under `node --test` in a run on a 2-core machine, to share the files between Node
// versions (`--split`).
const NODE_TIMES_FILE = path.join(root, "tests", "node_test_times.json");
/** Where a run leaves the seconds it measured, in NODE_TIMES_FILE's form (in npm/). */
const NODE_TIMES_MEASURED = "node-test-times.json";

/** Where the build leaves the packed tarballs (for the consumer checks and bench/footprint.ts). */
export const TARBALL_DIR = "tarballs";
/** The file in TARBALL_DIR naming each package's tarball (for `--tests-only`'s consumers). */
const TARBALL_INDEX = "tarballs.json";

async function main(args: string[]): Promise<number> {
  const testsOnly = args.includes("--tests-only");
  const wantTests = !args.includes("--no-tests");
  const wantConsumer = !args.includes("--no-consumer");
  const nodeFlag = args.indexOf("--node");
  const nodeVersions: (string | undefined)[] = nodeFlag >= 0 ? args[nodeFlag + 1].split(",") : [undefined];
  const split = args.includes("--split");
  const buildStarted = performance.now();
  const config = JSON.parse(await readFile(path.join(root, "deno.json"), "utf8")) as DenoConfig & {
    workspace?: string[];
  };
  const imports = config.imports ?? {};
  const packages = await workspacePackages(config);
  const memberDirs = packages.filter((p) => p.dir !== "").map((p) => p.dir);
  let failures = 0;

  const nodeTests = async (allTestFiles: readonly string[]) => {
    if (!wantTests) return;
    // With --split the versions run at once, each with as many queues as one version alone: the two halves' waits
    // (servers, sandboxes, timers) overlap, and neither waits for the other's slowest file.
    const concurrency = TEST_JOBS;
    // Each version's share weighs about the same by the files' seconds under Node (a run's times, committed in
    // NODE_TIMES_FILE; a file not there weighs a second), heaviest first, so that neither ends long after the other.
    const nodeSeconds: Record<string, number> = JSON.parse(await readFile(NODE_TIMES_FILE, "utf8").catch(() => "{}"));
    // NODE_TIMES_FILE names the sources (`.ts`), the run their built files (`.js`).
    const sourceOf = (file: string) => file.replace(/\.js$/, ".ts");
    const weight = (file: string) => nodeSeconds[sourceOf(file)] ?? 1;
    const shares = split ? splitByWeight(allTestFiles, weight, nodeVersions.length) : [];
    const measuredSeconds = new Map<string, number>();
    const runVersion = async (version: string | undefined, index: number) => {
      const testFiles = split ? shares[index] : allTestFiles;
      const name = `node ${version ?? "(on the PATH)"}`;
      const started = step(
        `Running ${split ? `${testFiles.length} of the suite's ${allTestFiles.length} files` : "the test suite"} ` +
          `under ${name} --test against the build`,
      );
      const [program, prefix] = nodeCommand(version);
      await run(program, [...prefix, "--version"], outDir);
      const named = (file: string) => path.join(outDir, version ? `node${version}-${file}` : file);
      // Beside the TAP, the results reporter writes which results of which file reached the runner (see
      // scripts/_node_results.ts): node drops a file's results when frames of its child's stream are lost.
      const nodeArgs = (files: readonly string[], events: string, flags: readonly string[] = NODE_TEST_FLAGS) => [
        ...prefix,
        "--test",
        "--test-reporter=tap",
        "--test-reporter-destination=stdout",
        `--test-reporter=${path.join(outDir, RESULTS_REPORTER)}`,
        `--test-reporter-destination=${events}`,
        ...flags,
        `--test-concurrency=${concurrency}`,
        ...files,
      ];
      const eventsFile = named(EVENTS_FILE);
      // Only the top-level results and skips are shown as they come (named by the version when several run at
      // once), the counts at the end; the whole TAP is kept in a file.
      const node = await run(
        program,
        nodeArgs(testFiles, eventsFile),
        outDir,
        (line) => isHeadline(line) && !line.startsWith("# ") && console.log(split ? `${name}: ${line}` : line),
      );
      await writeFile(named(TAP_FILE), node.stdout);
      const failed = failureDetails(node.stdout);
      if (failed.length > 0) console.log(`\nFailed under Node ${version ?? ""}:\n${failed.join("\n")}`);
      const nodeCounts = tapCounts(node.stdout);
      // Each file whose results did not all arrive runs again alone, once; its re-run's results stand for it (still
      // incomplete: a failure). The re-run goes without --test-force-exit, which ends a file's process before its
      // stream has drained and so cuts off its last results and closing counts (tests/policy/shell/
      // check_command_test.js, 5 of its 10 on Node 22 and 24, alone too; without the flag all 10 arrive). What that
      // flag guards against, a leftover child keeping the file's process alive, is bounded instead: `timeout` ends
      // the re-run's whole process group after RERUN_SECONDS, and a re-run ended so is a failure.
      const events = parseEvents(await readFileOr(eventsFile));
      for (const [file, seconds] of fileSeconds(events, testFiles, outDir)) measuredSeconds.set(file, seconds);
      const results = fileResults(events, testFiles, outDir);
      const reruns: string[] = [];
      let unresolved = 0;
      for (const [index, result] of [...results.entries()]) {
        if (isComplete(result)) continue;
        if (!testFiles.includes(result.file)) {
          console.log(`${name}: ${result.file}: ${result.problems.join("; ")}: a failure`);
          unresolved++;
          continue;
        }
        const rerunEvents = named(`rerun-${EVENTS_FILE}`);
        await rm(rerunEvents, { force: true });
        const rerun = await run(
          "timeout",
          ["--kill-after=10", String(RERUN_SECONDS), program, ...nodeArgs([result.file], rerunEvents, RERUN_FLAGS)],
          outDir,
          () => {},
        );
        if (rerun.code === 124 || rerun.code === 137) {
          console.log(`${name}: the re-run of ${result.file} was still running after ${RERUN_SECONDS} s; ended it`);
        }
        reruns.push(`# re-run of ${result.file}\n${rerun.stdout}`);
        const again = fileResults(parseEvents(await readFileOr(rerunEvents)), [result.file], outDir);
        const fresh = again.find((r) => r.file === result.file) ?? result;
        const extra = again.filter((r) => r.file !== result.file);
        results[index] = fresh;
        results.push(...extra);
        const rerunFailed = failureDetails(rerun.stdout);
        if (rerunFailed.length > 0) {
          console.log(`\nFailed under Node ${version ?? ""} (re-run):\n${rerunFailed.join("\n")}`);
        }
        if (rerun.code !== 0 || !isComplete(fresh) || extra.some((r) => !isComplete(r))) unresolved++;
        console.log(
          `${name}: ${result.file} reported ${describeTopLevel(result)} (${result.problems.join("; ")}); ` +
            `re-ran it alone: ${describeTopLevel(fresh)}` +
            (isComplete(fresh) ? "" : `, still incomplete (${fresh.problems.join("; ")}): a failure`),
        );
      }
      if (reruns.length > 0) await writeFile(named(RERUN_TAP_FILE), reruns.join("\n"));
      const counts = totalCounts(results);
      console.log(
        `   ${name}'s own TAP counts: ${nodeCounts.pass} passed, ${nodeCounts.fail} failed, ` +
          `${nodeCounts.cancelled} cancelled of ${nodeCounts.tests}`,
      );
      // The counts per file, after the re-runs: the ones .ci/run adds up (node's own are not printed as such).
      console.log(countLines(counts).join("\n"));
      console.log(
        `   ${name} --test: ${counts.passed} passed, ${counts.failed} failed, ${counts.cancelled} cancelled of ` +
          `${counts.tests} in ${testFiles.length} files (${reruns.length} re-run); ` +
          `${skipped(node.stdout).length} tests or suites skipped`,
      );
      // A failure counted, a file still incomplete, or node's failing exit that no re-run accounts for (a file whose
      // stream broke fails node's run; its clean re-run stands for it).
      if (counts.failed + counts.cancelled > 0 || unresolved > 0 || (node.code !== 0 && reruns.length === 0)) {
        failures++;
      }
      done(started);
    };
    if (split) await Promise.all(nodeVersions.map(runVersion));
    else for (const [index, version] of nodeVersions.entries()) await runVersion(version, index);
    // What each file took here, in NODE_TIMES_FILE's form: copied there, it weighs the next runs' shares.
    const times: Record<string, number> = {};
    for (const [file, seconds] of [...measuredSeconds].sort(([a], [b]) => a < b ? -1 : 1)) {
      times[sourceOf(file)] = Math.round(seconds * 100) / 100;
    }
    await writeFile(path.join(outDir, NODE_TIMES_MEASURED), JSON.stringify(times, null, 2) + "\n");
    console.log(`\nThe seconds of ${measuredSeconds.size} files under Node: npm/${NODE_TIMES_MEASURED}`);
  };

  // The consumer projects of the packed tarballs (by package name).
  const consumers = async (tarballs: ReadonlyMap<string, string>) => {
    if (!wantConsumer || tarballs.size !== packages.length) return;
    const [program, prefix] = nodeCommand(nodeVersions[0]);
    // TypeScript 7, installed once for every consumer it checks.
    const nativeTypeScript = installNativeTypeScript();
    // One consumer's steps after another, but CONSUMER_JOBS consumers at once: their time is mostly npm install's
    // downloads and disk. Each one's output is printed whole when it ends.
    const checkConsumer = async (check: (typeof CONSUMERS)[number]): Promise<boolean> => {
      const started = performance.now();
      const log = [`\n== Consumer project (${check.title}): install the tarballs, tsc --module nodenext --strict, run`];
      const consumer = await mkdtemp(path.join(os.tmpdir(), "toolfence-consumer-"));
      let ok = true;
      try {
        // The consumer depends on what it imports, at deno.json's versions, like a user following the README;
        // the packages of the workspace come from their tarballs (they are on no registry yet).
        const consumerDependencies: Record<string, string> = {};
        for (const specifier of importedSpecifiers("main.ts", check.source).filter(isBareSpecifier)) {
          const name = packageNameOf(specifier);
          if (tarballs.has(name) || name === "toolfence" || check.dependencies?.[name] !== undefined) continue;
          const { importName, target } = resolveBare(specifier, imports);
          consumerDependencies[importName] = dependencyVersion(importName, target);
        }
        for (const name of check.alsoInstall ?? []) {
          const { importName, target } = resolveBare(name, imports);
          consumerDependencies[importName] = dependencyVersion(importName, target);
        }
        Object.assign(consumerDependencies, check.lowest ?? {}, check.dependencies ?? {});
        for (const name of check.peerVersions?.names ?? []) {
          const range = peerRange(name, packages);
          consumerDependencies[name] = check.peerVersions!.at === "lowest" ? range.replace(/^[\^~]/, "") : range;
        }
        const local = Object.fromEntries(
          check.packages.map((name) => [name, `file:${tarballs.get(name)}`]),
        );
        const typesNode = resolveBare("@types/node", imports);
        // The types a package's declarations need are its optional peers: a consumer that type-checks them installs
        // them, as a user without skipLibCheck would.
        const declarationTypes = Object.fromEntries(
          packages.filter((p) => check.packages.includes(p.npmName)).flatMap((p) =>
            Object.values(TYPES_OF).filter((name) => p.config.imports?.[name] !== undefined).map((name) => {
              const { importName, target } = resolveBare(name, p.config.imports!);
              return [importName, dependencyVersion(importName, target)];
            })
          ),
        );
        await writeFile(
          path.join(consumer, "package.json"),
          JSON.stringify(
            consumerManifest(local, consumerDependencies, {
              "@types/node": dependencyVersion("@types/node", typesNode.target),
              ...declarationTypes,
            }),
            null,
            2,
          ),
        );
        const tsconfig = check.skipLibCheck
          ? {
            ...consumerTsconfig,
            compilerOptions: { ...consumerTsconfig.compilerOptions as object, skipLibCheck: true },
          }
          : consumerTsconfig;
        await writeFile(path.join(consumer, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
        await writeFile(path.join(consumer, "main.ts"), check.source);
        const typescript = path.join(
          check.typescript === "project" ? root : await nativeTypeScript,
          "node_modules",
          "typescript",
        );
        const tsc = path.join(typescript, "bin", "tsc");
        const steps: [string, string[]][] = [
          ["npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"]],
          ["node", [tsc, "-p", ".", "--module", "nodenext", "--moduleResolution", "nodenext", "--strict"]],
          [program, [...prefix, "dist/main.js"]],
          ...(check.alsoDeno
            ? [["deno", ["run", "--allow-all", "--quiet", "dist/main.js"]] as [string, string[]]]
            : []),
        ];
        for (const [stepProgram, stepArgs] of steps) {
          const shown = stepArgs.map((a) => a === tsc ? `tsc (TypeScript ${packageVersion(typescript)})` : a);
          log.push(`   $ ${stepProgram} ${shown.join(" ")}`);
          const ran = await runQuiet(stepProgram, stepArgs, consumer);
          if (ran.output.trim() !== "") log.push(ran.output.trimEnd());
          if (ran.code !== 0) {
            log.push("   consumer check failed");
            ok = false;
            break;
          }
        }
      } finally {
        await rm(consumer, { recursive: true, force: true });
      }
      log.push(`   (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      console.log(log.join("\n"));
      return ok;
    };
    // The frameworks' installs take longest: they start first.
    const queue = [...CONSUMERS].sort((a, b) =>
      Number(b.peerVersions !== undefined) - Number(a.peerVersions !== undefined)
    );
    const worker = async () => {
      for (let check = queue.shift(); check !== undefined; check = queue.shift()) {
        if (!await checkConsumer(check)) failures++;
      }
    };
    try {
      await Promise.all(Array.from({ length: CONSUMER_JOBS }, worker));
    } finally {
      await rm(await nativeTypeScript, { recursive: true, force: true });
    }
  };

  if (testsOnly) {
    // The build an earlier `--no-tests` run left (CI builds it beside the Deno suite, and tests it under Node after).
    if (!existsSync(path.join(outDir, "node_modules"))) {
      console.log("npm/ holds no installed build: run `deno task build:npm --no-tests` first");
      return 1;
    }
    // The built test modules, as the build's own run takes them: fixtures are data, never compiled.
    const built = (await walk(path.join(outDir, "tests"))).filter((f) =>
      /[._]test\.js$/.test(f) && !path.relative(outDir, f).split(path.sep).includes("fixtures")
    );
    // The consumers of the tarballs it packed, beside the suite (their time is mostly npm install's unpacking).
    const index = path.join(outDir, TARBALL_DIR, TARBALL_INDEX);
    const packed = new Map(Object.entries(JSON.parse(await readFileOr(index) || "{}") as Record<string, string>));
    if (wantConsumer && packed.size !== packages.length) {
      console.log(`npm/${TARBALL_DIR}/${TARBALL_INDEX} names ${packed.size} of the ${packages.length} tarballs`);
      failures++;
    }
    const consumersChecked = consumers(packed);
    await nodeTests(built.map((f) => path.relative(outDir, f)).sort());
    await consumersChecked;
    return failures === 0 ? 0 : 1;
  }

  let started = step("Compiling with the TypeScript compiler API (nodenext, ES2023)");
  await cleanOutput();
  const rootEntries = [...Object.values(subpathExports(config, undefined)), "main.ts"].map((f) => path.join(root, f));
  const rootFiles = [...reachable(rootEntries)].filter((f) =>
    !memberDirs.some((d) => f.startsWith(path.join(root, d)))
  );
  const libraryTree = [
    ...rootFiles,
    ...(await Promise.all(memberDirs.map((d) => walk(path.join(root, d))))).flat(),
  ];
  const testTree = await walk(testsDir);
  const librarySources = libraryTree.filter((f) => isCompilable(f) && !isTestFile(f));
  // Every test module is compiled, helpers and child scripts too (a test may start `_writer.js` by name);
  // `fixtures/` folders hold data, such as files with errors on purpose for the diagnostic tools.
  const isFixture = (f: string) => path.relative(testsDir, f).split(path.sep).includes("fixtures");
  const testSources = testTree.filter((f) => isCompilable(f) && !isFixture(f));
  const result = compile(
    {
      root,
      outDir,
      rootNames: [...librarySources, ...testSources],
      ambient: DENO_ONLY_TYPES,
      paths: workspacePaths(packages),
    },
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
  // A declaration file that imports web-tree-sitter's types needs @types/emscripten's globals; web-tree-sitter's own
  // declarations do not say so, so ours do (a consumer with `"types": ["node"]` would not load them otherwise).
  for (const emitted of library.filter((e) => e.path.endsWith(".d.ts"))) {
    const implied = [...new Set(emitted.bare.map(packageNameOf).filter((n) => Object.hasOwn(TYPES_OF, n)))];
    if (implied.length === 0) continue;
    const references = implied.map((n) => `/// <reference types="${TYPES_OF[n].replace(/^@types\//, "")}" />\n`);
    await writeFile(emitted.path, references.join("") + await readFile(emitted.path, "utf8"));
  }
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
  for (const pkg of packages) {
    for (const file of ["README.md", "LICENSE"]) {
      if (!existsSync(path.join(root, file))) {
        console.log(`   warning: ${file} is missing`);
      } else if (file === "README.md" && pkg.dir !== "") {
        // A member's README points to the umbrella's: one copy of the whole README per install, not six.
        await writeFile(
          path.join(outDir, pkg.dir, file),
          memberReadme(pkg.npmName, await readFile(memberMod(pkg), "utf8")),
        );
      } else {
        await copyFile(path.join(root, file), path.join(outDir, pkg.dir, file));
      }
    }
  }
  await mkdir(path.dirname(path.join(outDir, RESULTS_REPORTER)), { recursive: true });
  await copyFile(path.join(root, RESULTS_REPORTER), path.join(outDir, RESULTS_REPORTER));
  console.log(`   ${libraryTree.length + testTree.length} files copied`);
  done(started);

  started = step("Writing a package.json per package");
  const workspaceRanges = Object.fromEntries(
    packages.filter((p) => p.dir !== "").map((p) => [p.config.name!, `^${p.config.version}`]),
  );
  for (const pkg of packages) {
    const pkgOut = path.join(outDir, pkg.dir);
    const own = library.filter((e) => belongsTo(e.source, pkg, memberDirs));
    const assets = libraryTree.filter((f) => !isCompilable(f) && belongsTo(f, pkg, memberDirs))
      .map((f) => path.join(outDir, path.relative(root, f)));
    const files = packageFiles([...own.map((e) => e.path), ...assets], pkgOut);
    for (const file of ["README.md", "LICENSE"]) if (existsSync(path.join(pkgOut, file))) files.push(file);
    const isUmbrella = pkg.dir === "";
    const mainSource = path.join(root, "main.ts");
    // The bin needs main.ts's `main(args)`: Node has no `import.meta.main` to start it by.
    const binSource = isUmbrella && existsSync(mainSource) &&
        /export\s+async\s+function\s+main\s*\(/.test(await readFile(mainSource, "utf8"))
      ? "./main.ts"
      : undefined;
    if (binSource !== undefined) files.push(binFile);
    // A member resolves through its own import map (caret ranges) first, then the root's.
    const packageImports = { ...imports, ...(pkg.config.imports ?? {}) };
    const declarations = own.filter((e) => e.path.endsWith(".d.ts")).flatMap((e) => e.bare);
    const implied = declarations.map(packageNameOf).filter((n) => Object.hasOwn(TYPES_OF, n)).map((n) => TYPES_OF[n]);
    const plan = planDependencies(
      {
        runtime: own.filter((e) => e.path.endsWith(".js")).flatMap((e) => e.bare),
        // Types the declarations need are for a consumer's type check, never loaded: optional peers.
        types: [...declarations, ...implied],
        tests: isUmbrella ? tests.flatMap((e) => e.bare) : [],
      },
      packageImports,
      { workspace: workspaceRanges, peers: PEERS, optionalPeers: OPTIONAL_PEERS },
    );
    const exportsMap = subpathExports(pkg.config, undefined);
    const manifest = packageJson({
      config: pkg.config,
      name: pkg.npmName,
      exports: exportsMap,
      bin: binSource ? binFile : undefined,
      files,
      plan,
      description: description(await readFile(memberMod(pkg), "utf8")),
      workspaces: isUmbrella ? memberDirs : undefined,
    });
    await writeFile(path.join(pkgOut, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
    if (binSource !== undefined) {
      const bin = path.join(pkgOut, binFile);
      await mkdir(path.dirname(bin), { recursive: true });
      await writeFile(bin, binWrapper(`../${emittedStem(binSource).slice(2)}.js`));
      await chmod(bin, 0o755);
    }
    const section = (name: string, record: Record<string, string>) =>
      Object.keys(record).length ? `; ${name}: ${Object.entries(record).map(([k, v]) => `${k}@${v}`).join(", ")}` : "";
    console.log(
      `   ${pkg.npmName}: exports ${Object.keys(exportsMap).join(", ")}${binSource ? `; bin ${binFile}` : ""}` +
        section("dependencies", plan.dependencies) + section("peers", plan.peerDependencies),
    );
  }
  done(started);

  started = step("npm pack: one tarball per package");
  const tarballDir = path.join(outDir, TARBALL_DIR);
  await mkdir(tarballDir, { recursive: true });
  const tarballs = new Map<string, string>();
  for (const pkg of packages) {
    // The tarball's package.json leaves out what only the build's install uses; npm/ keeps the whole one.
    const manifestFile = path.join(outDir, pkg.dir, "package.json");
    const manifest = await readFile(manifestFile, "utf8");
    await writeFile(manifestFile, JSON.stringify(packedManifest(JSON.parse(manifest)), null, 2) + "\n");
    const pack = await run(
      "npm",
      ["pack", "--silent", "--pack-destination", tarballDir],
      path.join(outDir, pkg.dir),
      () => {},
    ).finally(() => writeFile(manifestFile, manifest));
    const tarball = pack.stdout.trim().split("\n").pop() ?? "";
    if (pack.code !== 0 || !tarball.endsWith(".tgz")) {
      console.log(`   npm pack failed for ${pkg.npmName}`);
      failures++;
      continue;
    }
    tarballs.set(pkg.npmName, path.join(tarballDir, tarball));
    console.log(`   ${pkg.npmName}: ${TARBALL_DIR}/${tarball}`);
  }
  await writeFile(path.join(tarballDir, TARBALL_INDEX), JSON.stringify(Object.fromEntries(tarballs), null, 2) + "\n");
  done(started);

  // The consumers need the tarballs alone (npm pack needs no install): they start now, beside the build's own
  // install and then the suite under Node. Their time is mostly npm install's downloads, which the suite's CPU fills.
  const consumersChecked = consumers(tarballs);
  started = step("npm install (in npm/, the members as npm workspaces)");
  const install = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
    outDir,
  );
  done(started);
  if (install.code !== 0) {
    console.log("npm install failed; the suite cannot run under Node");
    failures++;
  } else {
    await nodeTests(
      tests.filter((e) => e.path.endsWith(".js") && isTestFile(e.source)).map((e) => path.relative(outDir, e.path))
        .sort(),
    );
  }
  await consumersChecked;

  console.log(
    `\nnpm build ${failures === 0 ? "ok" : "FAILED"} in ${((performance.now() - buildStarted) / 1000).toFixed(1)} s`,
  );
  return failures === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
