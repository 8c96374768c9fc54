/**
 * The `patch` group: changing parts of files.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { applyPatchTool } from "./apply_patch.ts";
import { editFileTool } from "./edit_file.ts";

/**
 * The tools of the `patch` group: `edit_file` and `apply_patch`.
 *
 * Requires `--allow-read` and `--allow-write` for the workspace.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { patchTools } from "@toolfence/tools";
 * const box = new ToolBox().register(...patchTools());
 * console.log(box.list().map((t) => t.name));
 * ```
 */
export function patchTools(): AnyTool[] {
  return [editFileTool, applyPatchTool];
}
