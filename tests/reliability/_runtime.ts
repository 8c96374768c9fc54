// How the reliability tests start a child script on the runtime they run on:
// this folder holds .ts files under Deno and, in the npm build, .js files
// under Node.
import path from "node:path";
import process from "node:process";

const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

/** The argv that runs the sibling script `name` (without extension) with `args`. */
export function scriptArgv(name: string, args: string[]): string[] {
  const extension = path.extname(new URL(import.meta.url).pathname);
  const file = new URL(`./${name}${extension}`, import.meta.url).pathname;
  return isDeno ? [process.execPath, "run", "-A", file, ...args] : [process.execPath, file, ...args];
}
