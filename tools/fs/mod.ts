/**
 * The `fs` tool group: files and folders in the workspace.
 *
 * @module
 */

export { fsTools } from "./fs_tools.ts";
export { type CopyArgs, copyTool } from "./copy.ts";
export { type DeleteArgs, deleteTool } from "./delete.ts";
export { type FileInfoArgs, fileInfoTool } from "./file_info.ts";
export { type ListDirArgs, listDirTool } from "./list_dir.ts";
export { type MkdirArgs, mkdirTool } from "./mkdir.ts";
export { type MoveArgs, moveTool } from "./move.ts";
export { DEFAULT_READ_LIMIT, READ_BUDGET_CHARS, type ReadFileArgs, readFileTool } from "./read_file.ts";
export {
  type RequestImageArgs,
  type RequestImageCrop,
  type RequestImageResult,
  requestImageTool,
} from "./request_image.ts";
export { type TempDirArgs, tempDirTool } from "./temp_dir.ts";
export { type WriteFileArgs, writeFileTool } from "./write_file.ts";
