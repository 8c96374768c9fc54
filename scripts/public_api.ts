/**
 * The public surface of every package entry point, as pinned in
 * `tests/public_api.json`: the names each entry exports, types marked
 * `type Name`. `--update` rewrites the pins after a deliberate change.
 *
 * Requires `--allow-read` (and `--allow-write` with `--update`).
 *
 * @example
 * ```sh
 * deno run --allow-read --allow-write scripts/public_api.ts --update
 * ```
 *
 * @module
 */

import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Every entry point: `package/subpath` -> file, from the root deno.json and its members'. */
export async function entryPoints(): Promise<Map<string, string>> {
  const rootConfig = JSON.parse(await readFile(path.join(ROOT, "deno.json"), "utf8"));
  const out = new Map<string, string>();
  for (const dir of ["", ...(rootConfig.workspace as string[])]) {
    const config = JSON.parse(await readFile(path.join(ROOT, dir, "deno.json"), "utf8"));
    for (const [sub, file] of Object.entries(config.exports as Record<string, string>)) {
      out.set(sub === "." ? config.name : `${config.name}${sub.slice(1)}`, path.join(dir, file));
    }
  }
  return out;
}

/** The names a module's text exports: `export { a, type B }` lists and `export const/function/class/...` declarations. */
export function declaredSurface(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const names: string[] = [];
  for (const m of code.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[2].split(",").map((p) => p.trim()).filter(Boolean)) {
      const isType = Boolean(m[1]) || part.startsWith("type ");
      const name = part.replace(/^type\s+/, "").split(/\s+as\s+/).pop()!.trim();
      names.push(isType ? `type ${name}` : name);
    }
  }
  for (
    const m of code.matchAll(
      /export\s+(?:declare\s+)?(?:async\s+)?(const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g,
    )
  ) {
    names.push(m[1] === "interface" || m[1] === "type" ? `type ${m[2]}` : m[2]);
  }
  return [...new Set(names)].sort((a, b) => a.replace(/^type /, "").localeCompare(b.replace(/^type /, "")));
}

/** Whether a module re-exports with `export *` (which hides what it exports). */
export function hasStarExport(source: string): boolean {
  return /^\s*export\s+\*/m.test(source.replace(/\/\*[\s\S]*?\*\//g, ""));
}

if (import.meta.main) {
  const pins: Record<string, string[]> = {};
  for (const [entry, file] of await entryPoints()) {
    pins[entry] = declaredSurface(await readFile(path.join(ROOT, file), "utf8"));
  }
  const text = JSON.stringify(pins, null, 2) + "\n";
  if (process.argv.includes("--update")) {
    await writeFile(path.join(ROOT, "tests/public_api.json"), text);
    console.log(`pinned ${Object.keys(pins).length} entry points in tests/public_api.json`);
  } else {
    console.log(text);
  }
}
