// Write helpers shared by the fs and patch tools, on top of the confined
// operations of policy/confined_fs.ts: creating missing parent folders in a
// way that can be undone.

import path from "node:path";
import { discardConfined, mkdirsConfined } from "@toolfence/policy";
import { fileOpError } from "./fs_errors.ts";

/**
 * Creates the folder `dir` and its missing parents (strictly inside one of
 * `roots`, each in its pinned parent) and returns the topmost one it created
 * (remove it to undo), or undefined when all existed.
 */
export function makeFolder(
  dir: string,
  shown: string,
  roots: readonly string[],
  doing = "creating",
): string | undefined {
  try {
    return mkdirsConfined(dir, roots);
  } catch (error) {
    throw fileOpError(error, shown, dir, doing);
  }
}

/** {@linkcode makeFolder} for the folder that will hold `realPath`. */
export function makeParents(realPath: string, shown: string, roots: readonly string[]): string | undefined {
  return makeFolder(path.dirname(realPath), shown, roots, "creating the folders of");
}

/** Removes what {@linkcode makeParents} created; quietly, since it runs while handling another failure. */
export async function undoParents(created: string | undefined): Promise<void> {
  if (created !== undefined) await discardConfined(created);
}
