// The folder or file a search starts from, resolved through the workspace and
// the fence, with the workspace area it lies in (where .gitignore files start
// to count).

import type fs from "node:fs";
import fsp from "node:fs/promises";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { requireFence } from "@toolfence/core";

/** A resolved search root. */
export interface SearchRoot {
  /** Its real absolute path. */
  path: string;
  /** The workdir, or the temp dir when the root lies in it. */
  base: string;
  stat: fs.Stats;
}

/** Resolves `input` for searching: inside the workspace, readable under the fence, existing. */
export async function searchRoot(ctx: ToolContext, input: string): Promise<SearchRoot> {
  const resolved = await ctx.workspace.resolve(input);
  requireFence(ctx.policy.fence, "read", resolved.path);
  let stat: fs.Stats;
  try {
    stat = await fsp.stat(resolved.path);
  } catch (error) {
    throw new ToolError(`${input} does not exist`, {
      code: "not_found",
      recoveryHint: "Check the path with list_dir.",
      details: { path: resolved.path, errno: (error as NodeJS.ErrnoException).code },
    });
  }
  const base = resolved.area === "temp" ? await ctx.workspace.tempDir() : ctx.workspace.workdir;
  return { path: resolved.path, base, stat };
}
