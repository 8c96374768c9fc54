// The folder or file a search starts from, resolved through the policy's file
// door (the workspace, the path rules, the fence: the same place as every
// other file tool), with the workspace area it lies in (where .gitignore files
// start to count).

import type fs from "node:fs";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";

/** A resolved search root. */
export interface SearchRoot {
  /** Its real absolute path. */
  path: string;
  /** The workdir, or the temp dir when the root lies in it. */
  base: string;
  stat: fs.Stats;
}

/** Resolves `input` for searching: through the file door, readable, existing. */
export async function searchRoot(ctx: ToolContext, input: string): Promise<SearchRoot> {
  const target = await ctx.policy.files.resolve(input);
  if (!target.existed || target.stat === undefined) {
    throw new ToolError(`${input} does not exist`, {
      code: "not_found",
      recoveryHint: "Check the path with list_dir.",
      details: { path: target.path },
    });
  }
  const base = target.area === "temp" ? await ctx.workspace.tempDir() : ctx.workspace.workdir;
  return { path: target.path, base, stat: target.stat };
}
