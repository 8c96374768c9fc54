/**
 * The version in one place: the root deno.json's `version` is the source.
 * Each copy must stay a literal (JSR reads each member's deno.json as it is;
 * the code constants are imported by Node and Deno alike without reading
 * files), so this script writes them from the source and checks them:
 *
 * - the `version` of each workspace member's deno.json;
 * - the `^` range of every `jsr:@toolfence/...` import, in every deno.json;
 * - {@linkcode CODE_CONSTANTS}: `VERSION` of the command line
 *   (`toolfence --version`) and `TOOLFENCE_VERSION`, which the MCP server
 *   reports to its clients.
 *
 * The npm builds take each package.json version from its deno.json.
 *
 * Requires `--allow-read` for the repository; `--set` also `--allow-write`.
 *
 * @example
 * ```sh
 * deno run --allow-read scripts/version.ts                        # check
 * deno run --allow-read --allow-write scripts/version.ts --set 0.2.0
 * ```
 *
 * @module
 */

import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The code files that hold the version as a literal, with the constant's name (relative to the root). */
export const CODE_CONSTANTS: readonly { file: string; name: string }[] = [
  { file: "cli/version.ts", name: "VERSION" },
  { file: "adapters/mcp/server.ts", name: "TOOLFENCE_VERSION" },
];

/** One place that holds a copy of the version. */
export interface VersionCopy {
  /** The file, relative to the root. */
  file: string;
  /** What holds it: `version`, an import's name, or a constant's name. */
  what: string;
  /** The version written there. */
  found: string;
}

const JSR_MEMBER_RANGE = /("jsr:@toolfence\/[a-z-]+@\^)([^"]+)(")/g;

function constantPattern(name: string): RegExp {
  return new RegExp(`(export const ${name} = ")([^"]*)(")`);
}

/** The root deno.json and the members' deno.json files, relative to the root. */
async function manifests(root: string): Promise<string[]> {
  const config = JSON.parse(await readFile(path.join(root, "deno.json"), "utf8")) as { workspace?: string[] };
  return ["deno.json", ...(config.workspace ?? []).map((m) => path.join(m, "deno.json"))];
}

/** The source: the root deno.json's `version`. */
export async function sourceVersion(root: string): Promise<string> {
  return (JSON.parse(await readFile(path.join(root, "deno.json"), "utf8")) as { version: string }).version;
}

/** Every copy of the version in the repository at `root`. */
export async function versionCopies(root: string): Promise<VersionCopy[]> {
  const copies: VersionCopy[] = [];
  for (const file of await manifests(root)) {
    const text = await readFile(path.join(root, file), "utf8");
    if (file !== "deno.json") {
      copies.push({ file, what: "version", found: (JSON.parse(text) as { version?: string }).version ?? "" });
    }
    for (const match of text.matchAll(JSR_MEMBER_RANGE)) {
      copies.push({ file, what: match[1].slice(1, -1), found: match[2] });
    }
  }
  for (const { file, name } of CODE_CONSTANTS) {
    const found = constantPattern(name).exec(await readFile(path.join(root, file), "utf8"));
    copies.push({ file, what: name, found: found?.[2] ?? "" });
  }
  return copies;
}

/** The copies that differ from the source. */
export async function versionMismatches(root: string): Promise<VersionCopy[]> {
  const version = await sourceVersion(root);
  return (await versionCopies(root)).filter((copy) => copy.found !== version);
}

/** Writes `version` into the root deno.json and every copy. */
export async function setVersion(root: string, version: string): Promise<void> {
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) throw new Error(`not a semver version: ${version}`);
  for (const file of await manifests(root)) {
    const text = await readFile(path.join(root, file), "utf8");
    await writeFile(
      path.join(root, file),
      text.replace(/^( {2}"version": ")[^"]*(")/m, `$1${version}$2`).replace(JSR_MEMBER_RANGE, `$1${version}$3`),
    );
  }
  for (const { file, name } of CODE_CONSTANTS) {
    const text = await readFile(path.join(root, file), "utf8");
    await writeFile(path.join(root, file), text.replace(constantPattern(name), `$1${version}$3`));
  }
}

if (import.meta.main) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const args = process.argv.slice(2);
  const set = args.indexOf("--set");
  if (set >= 0) await setVersion(root, args[set + 1] ?? "");
  const version = await sourceVersion(root);
  const mismatches = await versionMismatches(root);
  for (const m of mismatches) console.error(`${m.file}: ${m.what} is ${JSON.stringify(m.found)}, not ${version}`);
  if (mismatches.length > 0) {
    console.error(
      `version: ${mismatches.length} copies differ from deno.json's ${version}; --set ${version} writes them`,
    );
    process.exit(1);
  }
  console.log(`version: ${version} in ${(await versionCopies(root)).length + 1} places`);
}
