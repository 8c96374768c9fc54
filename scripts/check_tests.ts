/**
 * The test-timeout check: every `test()` and `it()` of `node:test` under
 * `tests/` states its own `{ timeout }`, so a test waiting on something that
 * never comes fails instead of holding the run.
 *
 * Why on every test and not on the `describe`: Deno's `node:test` honours
 * `timeout` on `test`/`it` but ignores it on `describe` (a suite's tests run
 * unbounded under `deno test`; Node applies a suite's timeout to the suite).
 * Under Node the run also gets {@linkcode NODE_TEST_FLAGS}.
 *
 * With `--fix`, the missing timeouts are written in: `{ timeout: N }` before
 * the test function, or `timeout: N` into an options object that lacks it.
 * N is the enclosing `describe`'s own timeout when it states one, else the
 * file's entry in {@linkcode SLOW_FILES}, else {@linkcode DEFAULT_TIMEOUT_MS}.
 * The fixed files are then formatted with `deno fmt`.
 *
 * Requires `--allow-read` for the repository and `--allow-env` (the TypeScript
 * parser reads its settings); `--fix` also `--allow-write`
 * and `--allow-run=deno`.
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-env scripts/check_tests.ts
 * deno run --allow-read --allow-env --allow-write --allow-run=deno scripts/check_tests.ts --fix
 * ```
 *
 * @module
 */

import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/** A test's timeout where nothing else is said: ample for a test that takes seconds on a loaded 2-core machine. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Files whose tests take longer, relative to the root: about six times the
 * file's slowest test as measured under `deno test` on a loaded 2-core
 * machine (load average 7 to 11), in whole half-minutes. A `describe` or a
 * test that states its own timeout keeps it.
 */
export const SLOW_FILES: Readonly<Record<string, number>> = {
  "tests/oracle/fuzz_test.ts": 240_000,
  "tests/oracle/oracle_test.ts": 180_000,
  "tests/adapters/mcp_protocol_fuzz_test.ts": 120_000,
  "tests/tools/diagnostic/check_types_test.ts": 120_000,
  "tests/policy/shell/command_bash_test.ts": 90_000,
  "tests/tools/diagnostic/check_syntax_test.ts": 90_000,
  "tests/reliability/edit_properties_test.ts": 90_000,
  "tests/reliability/mcp_load_test.ts": 90_000,
  "tests/tools/output_schemas_test.ts": 90_000,
};

/**
 * The bound on one test file under `node --test`: Node 22 applies
 * `--test-timeout` to each file as a whole too (it kills the file's process),
 * so it must exceed the slowest file; Node 24 applies it to each test that
 * states none.
 */
export const NODE_FILE_TIMEOUT_MS = 900_000;

/**
 * The flags `node --test` runs with: a timeout, and `--test-force-exit` so a
 * file whose timed-out test left a child process or a socket open ends
 * once its tests have (Node 24 otherwise waits for the event loop to empty).
 */
export const NODE_TEST_FLAGS: readonly string[] = ["--test-force-exit", `--test-timeout=${NODE_FILE_TIMEOUT_MS}`];

/** A test call without a timeout of its own. */
export interface MissingTimeout {
  /** The file, as given. */
  file: string;
  /** 1-based line of the call. */
  line: number;
  /** The test's name as written in the source. */
  name: string;
  /** The timeout `--fix` writes in. */
  timeoutMs: number;
  /** Where `--fix` inserts, and what. */
  edit: { at: number; text: string };
}

/** The names `node:test` exports that run a test (and `describe`, whose timeout the tests inside take). */
const TEST_EXPORTS = new Set(["test", "it"]);
const SUITE_EXPORTS = new Set(["describe", "suite"]);

/** Local names bound to `node:test`'s test and suite functions by the file's imports. */
function nodeTestBindings(source: ts.SourceFile): { tests: Set<string>; suites: Set<string> } {
  const tests = new Set<string>();
  const suites = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (statement.moduleSpecifier.text !== "node:test" && statement.moduleSpecifier.text !== "test") continue;
    const clause = statement.importClause;
    if (clause?.name) tests.add(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        const imported = (element.propertyName ?? element.name).text;
        if (TEST_EXPORTS.has(imported)) tests.add(element.name.text);
        if (SUITE_EXPORTS.has(imported)) suites.add(element.name.text);
      }
    }
  }
  return { tests, suites };
}

/** The callee's base name for `test(...)`, `test.skip(...)`, `describe.only(...)`. */
function calleeName(call: ts.CallExpression): string | undefined {
  let callee = call.expression;
  if (ts.isPropertyAccessExpression(callee) && ["skip", "only", "todo"].includes(callee.name.text)) {
    callee = callee.expression;
  }
  return ts.isIdentifier(callee) ? callee.text : undefined;
}

/** The `timeout` an options object literal states, as written (`undefined` when it states none). */
function statedTimeout(options: ts.ObjectLiteralExpression, source: ts.SourceFile): string | undefined {
  for (const property of options.properties) {
    if (
      (ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property)) &&
      property.name.getText(source) === "timeout"
    ) {
      return ts.isPropertyAssignment(property) ? property.initializer.getText(source) : "timeout";
    }
  }
  return undefined;
}

/** A numeric literal's value (`240_000`), or undefined for any other expression. */
function literalMs(text: string | undefined): number | undefined {
  if (text === undefined || !/^[\d_]+$/.test(text)) return undefined;
  return Number(text.replaceAll("_", ""));
}

/**
 * The test calls in one file's source that state no timeout. `timeoutMs` is
 * the file's default (from {@linkcode SLOW_FILES} or
 * {@linkcode DEFAULT_TIMEOUT_MS}); a `describe` with a literal timeout gives
 * its own to the tests inside it.
 */
export function missingTimeouts(file: string, text: string, timeoutMs: number): MissingTimeout[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const { tests, suites } = nodeTestBindings(source);
  const missing: MissingTimeout[] = [];
  const visit = (node: ts.Node, inherited: number) => {
    let inner = inherited;
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      const [title, second, third] = node.arguments;
      const options = node.arguments.length >= 3 && ts.isObjectLiteralExpression(second) ? second : undefined;
      if (name !== undefined && suites.has(name) && options) {
        inner = literalMs(statedTimeout(options, source)) ?? inherited;
      }
      if (name !== undefined && tests.has(name) && node.arguments.length >= 2) {
        const fn = node.arguments.length >= 3 ? third : second;
        const edit = node.arguments.length === 2
          ? { at: fn.getStart(source), text: `{ timeout: ${formatMs(inherited)} }, ` }
          : options && statedTimeout(options, source) === undefined
          ? { at: options.getStart(source) + 1, text: ` timeout: ${formatMs(inherited)},` }
          : undefined;
        // A non-literal options argument cannot be read here: it must state its timeout where it is written.
        const unreadable = node.arguments.length >= 3 && !options;
        if (edit || unreadable) {
          missing.push({
            file,
            line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
            name: title.getText(source).slice(0, 80),
            timeoutMs: inherited,
            edit: edit ?? { at: -1, text: "" },
          });
        }
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, timeoutMs);
  return missing;
}

/** A hook registered on a test's own context (`t.after(...)`), which Deno's `node:test` does not run. */
export interface ContextHook {
  /** The file, as given. */
  file: string;
  /** 1-based line of the call. */
  line: number;
  /** The call as written, up to its arguments (`t.after`). */
  call: string;
}

/** The hooks a test's context offers: each is accepted by Deno's `node:test` and then never called. */
const CONTEXT_HOOKS = new Set(["after", "afterEach", "before", "beforeEach"]);

/**
 * The calls of a context hook (`t.after(...)`) inside the test functions of
 * one file's source. Deno 2.9's `node:test` gives a test inside a `describe`
 * a context whose `after` takes the function and never runs it: the
 * cleanup written there (a server's close, a temp folder's removal) was
 * skipped under `deno test` and the tests left their folders behind. The
 * `describe`'s own `after`/`afterEach` and a `try`/`finally` run under both.
 */
export function contextHooks(file: string, text: string): ContextHook[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const { tests } = nodeTestBindings(source);
  const found: ContextHook[] = [];
  const visit = (node: ts.Node, contexts: ReadonlySet<string>) => {
    let inner = contexts;
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      const fn = node.arguments.at(-1);
      if (name !== undefined && tests.has(name) && fn && (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn))) {
        const first = fn.parameters[0]?.name;
        if (first && ts.isIdentifier(first)) inner = new Set([...contexts, first.text]);
      }
      const callee = node.expression;
      if (
        ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) &&
        contexts.has(callee.expression.text) && CONTEXT_HOOKS.has(callee.name.text)
      ) {
        found.push({
          file,
          line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
          call: callee.getText(source),
        });
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, new Set());
  return found;
}

/** `60000` as `60_000`, as the tests write it. */
function formatMs(ms: number): string {
  return String(ms).replace(/\B(?=(\d{3})+$)/g, "_");
}

/** The source with the edits of {@linkcode missingTimeouts} applied (the unreadable ones left). */
export function withTimeouts(text: string, missing: readonly MissingTimeout[]): string {
  let out = text;
  for (const { edit } of [...missing].filter((m) => m.edit.at >= 0).sort((a, b) => b.edit.at - a.edit.at)) {
    out = out.slice(0, edit.at) + edit.text + out.slice(edit.at);
  }
  return out;
}

/** Every `*_test.ts` file under `dir`, relative to `root`, sorted. */
export async function testFiles(root: string, dir = "tests"): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && /_test\.ts$/.test(e.name))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name))).filter((f) => !f.includes("/fixtures/"))
    .sort();
}

/** The default timeout of one test file. */
export function fileTimeout(file: string): number {
  return SLOW_FILES[file.split(path.sep).join("/")] ?? DEFAULT_TIMEOUT_MS;
}

if (import.meta.main) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const fix = process.argv.slice(2).includes("--fix");
  let unfixed = 0;
  const fixed: string[] = [];
  let hooks = 0;
  for (const file of await testFiles(root)) {
    const text = await readFile(path.join(root, file), "utf8");
    for (const hook of contextHooks(file, text)) {
      hooks++;
      console.error(
        `${hook.file}:${hook.line}: ${hook.call}(...) is never run by Deno's node:test: clean up in a try/finally`,
      );
    }
    const missing = missingTimeouts(file, text, fileTimeout(file));
    if (missing.length === 0) continue;
    if (fix) {
      await writeFile(path.join(root, file), withTimeouts(text, missing));
      fixed.push(file);
    }
    for (const m of missing) {
      if (fix && m.edit.at >= 0) continue;
      unfixed++;
      console.error(
        `${m.file}:${m.line}: ${m.name} states no timeout` +
          (m.edit.at < 0 ? " (its options are not an object literal: add `timeout` where they are written)" : ""),
      );
    }
  }
  if (fixed.length > 0) {
    spawnSync("deno", ["fmt", "--quiet", ...fixed], { cwd: root, stdio: "inherit" });
    console.log(`test timeouts: wrote the missing timeouts into ${fixed.length} files`);
  }
  if (hooks > 0) {
    console.error(`test hooks: ${hooks} hook(s) on a test's context, which Deno's node:test never runs`);
    process.exit(1);
  }
  if (unfixed > 0) {
    console.error(
      `test timeouts: ${unfixed} test(s) without a timeout; \`deno task check:tests --fix\` writes them in`,
    );
    process.exit(1);
  }
  console.log("test timeouts: ok");
}
