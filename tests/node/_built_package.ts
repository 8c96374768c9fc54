/**
 * Where the npm build is, for the tests that run the built package in real
 * Node processes. `deno task build:npm` compiles this folder to
 * `npm/tests/node/` and runs it with `node --test`, so the package root is two
 * folders up; under Deno there is no build to test (a stale `npm/` would prove
 * nothing), so these tests skip there with that reason.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The parts of the built package.json the tests read. */
export interface BuiltManifest {
  name: string;
  bin?: Record<string, string>;
  exports?: Record<string, unknown>;
}

/** The built package: its folder and manifest. */
export interface BuiltPackage {
  root: string;
  manifest: BuiltManifest;
}

function locate(): BuiltPackage | string {
  if (typeof (globalThis as { Deno?: unknown }).Deno !== "undefined") {
    return "runs the npm build in Node processes; `deno task build:npm` runs it under node --test";
  }
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
  try {
    const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as BuiltManifest;
    if (manifest.name === "toolfence") return { root, manifest };
  } catch {
    // Not inside a build: fall through to the skip reason.
  }
  return `no built toolfence package at ${root}; run deno task build:npm`;
}

const located = locate();

/** The built package, or undefined when these tests cannot run here. */
export const builtPackage: BuiltPackage | undefined = typeof located === "string" ? undefined : located;

/** `false` when the built package is here, else the reason to skip (for `describe(..., { skip })`). */
export const skipUnlessBuilt: string | false = typeof located === "string" ? located : false;

/** The built package's folder; only call it inside tests that skip without a build. */
export function packageRoot(): string {
  if (!builtPackage) throw new Error(String(skipUnlessBuilt));
  return builtPackage.root;
}

/** Node's flag for its permission model: `--permission` from Node 22, `--experimental-permission` on Node 20. */
export function nodePermissionFlag(): string {
  return process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
}
