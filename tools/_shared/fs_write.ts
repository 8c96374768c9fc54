// Write helpers shared by the fs and patch tools, on top of the policy's file
// door: creating missing folders in a way that can be undone, with the errors
// the tools report.

import type { FileTarget, ToolContext } from "@toolfence/core";
import { fileOpError } from "./fs_errors.ts";

/**
 * Creates the folder `target` (or, with `parentsOnly`, the folder that will
 * hold it) and its missing parents through the file door, and returns the
 * topmost one it created (undo with {@linkcode undoParents}), or undefined
 * when all existed.
 */
export async function makeFolder(
  ctx: ToolContext,
  target: FileTarget,
  shown: string,
  parentsOnly = false,
): Promise<string | undefined> {
  try {
    return await ctx.policy.files.mkdir(target, { parentsOnly });
  } catch (error) {
    throw fileOpError(error, shown, target.path, parentsOnly ? "creating the folders of" : "creating");
  }
}

/** {@linkcode makeFolder} for the folder that will hold `target`. */
export function makeParents(ctx: ToolContext, target: FileTarget, shown: string): Promise<string | undefined> {
  return makeFolder(ctx, target, shown, true);
}

/** Removes what {@linkcode makeParents} created; quietly, since it runs while handling another failure. */
export async function undoParents(ctx: ToolContext, created: string | undefined): Promise<void> {
  if (created !== undefined) await ctx.policy.files.discard(created).catch(() => {});
}
