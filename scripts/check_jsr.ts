/**
 * Checks that every package of the workspace (the umbrella and each member)
 * would publish to JSR cleanly, offline:
 *
 * 1. `deno publish --dry-run --allow-dirty --no-check` in the package's
 *    folder: the slow-types check (explicit types on everything exported) and
 *    that every file can be published (the type check is `deno task check`'s,
 *    run by `deno task test`, which CI runs first);
 * 2. `deno doc --lint` on each module a deno.json exports, on its own: each exported symbol
 *    has JSDoc, functions and methods have explicit return types, and the
 *    public API names no type of ours that the module does not export itself
 *    (a type another package of the workspace exports does not count: each
 *    entry point re-exports, type-only, the types its names reference, so
 *    that its documentation is complete on its own). References to the types
 *    of npm dependencies (valibot's `GenericSchema`, the MCP SDK's `Server`,
 *    ...) are not ours to make public and are left out: a type is ours when
 *    our code declares a type, class or enum of its name, or exports a value
 *    of its name (`typeof POLICY_LAYERS`).
 *
 * Exits 1 and lists the problems when either finds one.
 *
 * Requires --allow-read, --allow-run=deno.
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-run=deno scripts/check_jsr.ts
 * ```
 *
 * @module
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

async function deno(args: string[], cwd = root): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command("deno", {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, output: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

/** One `deno doc --lint` diagnostic. */
export interface DocLintProblem {
  /** The rule, e.g. `missing-jsdoc`. */
  rule: string;
  /** The first line of the message. */
  message: string;
  /** `file:line:column` of the symbol. */
  location: string;
}

/** Splits `deno doc --lint` output (without colours) into its diagnostics. */
export function parseDocLint(output: string): DocLintProblem[] {
  const problems: DocLintProblem[] = [];
  const lines = output.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const head = /^error\[([a-z-]+)\]: (.*)$/.exec(lines[i]);
    if (!head) continue;
    const location = lines.slice(i + 1, i + 4).map((l) => /-->\s+(\S+)/.exec(l)?.[1]).find(Boolean) ?? "";
    problems.push({ rule: head[1], message: head[2], location: location.replace(`${root}${path.sep}`, "") });
  }
  return problems;
}

// The names our code declares as types (and exports as values), outside tests, benches and scripts.
async function ourNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!["node_modules", "npm", "tests", "bench", "scripts"].includes(entry.name) && !entry.name.startsWith(".")) {
          await visit(full);
        }
      } else if (entry.name.endsWith(".ts")) {
        const text = await readFile(full, "utf8");
        // Declarations only: `type X` inside an import list names someone else's type.
        const declarations = [
          /^\s*(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:interface|class|enum)\s+([A-Za-z_$][\w$]*)/gm,
          /^\s*(?:export\s+)?(?:declare\s+)?type\s+([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=/gm,
          // An exported value a type names with `typeof`.
          /^\s*export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|function\*?)\s+([A-Za-z_$][\w$]*)/gm,
        ];
        for (const pattern of declarations) for (const m of text.matchAll(pattern)) names.add(m[1]);
      }
    }
  };
  await visit(root);
  return names;
}

async function main(): Promise<number> {
  let failed = false;
  const rootConfig = JSON.parse(await readFile(path.join(root, "deno.json"), "utf8"));
  const ours = await ourNames();
  // The packages are checked side by side (each step is mostly waiting on a deno process); the report keeps their order.
  const reports = await Promise.all(["", ...(rootConfig.workspace as string[])].map(async (dir) => {
    const lines: string[] = [];
    let packageFailed = false;
    const folder = path.join(root, dir);
    const config = JSON.parse(await readFile(path.join(folder, "deno.json"), "utf8"));
    // --no-check: `deno task check` type-checks every file (in `deno task test`, which CI runs first); the
    // slow-types check still runs.
    const publish = await deno(["publish", "--dry-run", "--allow-dirty", "--no-check"], folder);
    if (publish.code === 0) {
      lines.push(`${config.name}: deno publish --dry-run: ok (no slow types)`);
    } else {
      packageFailed = true;
      lines.push(`${config.name}: deno publish --dry-run failed:\n${publish.output}`);
    }
    const entries = typeof config.exports === "string" ? [config.exports] : Object.values(config.exports ?? {});
    for (const entry of entries as string[]) {
      const file = path.join(dir, entry);
      const lint = await deno(["doc", "--lint", file]);
      const problems = parseDocLint(lint.output).filter((p) => {
        if (p.rule !== "private-type-ref") return true;
        // Only an npm dependency's type is left out; a type of ours must be exported by this very module.
        const referenced = /references private type '([^']+)'/.exec(p.message)?.[1];
        return referenced === undefined || ours.has(referenced);
      });
      if (problems.length === 0 && (lint.code === 0 || parseDocLint(lint.output).length > 0)) {
        lines.push(`${config.name}: deno doc --lint ${file}: ok`);
      } else {
        packageFailed = true;
        lines.push(`${config.name}: deno doc --lint ${file} found ${problems.length || "unparsed"} problems:`);
        for (const p of problems) lines.push(`  ${p.location}  [${p.rule}] ${p.message}`);
        if (problems.length === 0) lines.push(lint.output);
      }
    }
    return { lines, failed: packageFailed };
  }));
  for (const report of reports) {
    for (const line of report.lines) console.log(line);
    if (report.failed) failed = true;
  }
  return failed ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main());
