/**
 * The `patch` tool group: edit_file and apply_patch.
 *
 * @module
 */

export { patchTools } from "./patch_tools.ts";
export { type ApplyPatchArgs, applyPatchTool } from "./apply_patch.ts";
export { type EditFileArgs, editFileTool } from "./edit_file.ts";
