/**
 * The `fs` tool group: files and folders in the workspace.
 *
 * @module
 */

export { fsTools } from "./fs_tools.ts";
export { copyTool } from "./copy.ts";
export { deleteTool } from "./delete.ts";
export { fileInfoTool } from "./file_info.ts";
export { listDirTool } from "./list_dir.ts";
export { mkdirTool } from "./mkdir.ts";
export { moveTool } from "./move.ts";
export { DEFAULT_READ_LIMIT, READ_BUDGET_CHARS, readFileTool } from "./read_file.ts";
export { requestImageTool } from "./request_image.ts";
export { tempDirTool } from "./temp_dir.ts";
export { writeFileTool } from "./write_file.ts";
