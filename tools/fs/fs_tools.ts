/**
 * The `fs` group: the file tools every agent needs.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { copyTool } from "./copy.ts";
import { deleteTool } from "./delete.ts";
import { fileInfoTool } from "./file_info.ts";
import { listDirTool } from "./list_dir.ts";
import { mkdirTool } from "./mkdir.ts";
import { moveTool } from "./move.ts";
import { readFileTool } from "./read_file.ts";
import { requestImageTool } from "./request_image.ts";
import { tempDirTool } from "./temp_dir.ts";
import { writeFileTool } from "./write_file.ts";

/**
 * The tools of the `fs` group, listed once, here. Every path goes through the
 * session's workspace and fence; every write through the write-permission flow.
 *
 * Requires `--allow-read` (all) and `--allow-write` (the writing tools) for the workspace.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { fsTools } from "@toolfence/tools";
 * const box = new ToolBox().register(...fsTools());
 * console.log(box.list().map((t) => t.name));
 * ```
 */
export function fsTools(): AnyTool[] {
  return [
    tempDirTool,
    listDirTool,
    fileInfoTool,
    readFileTool,
    writeFileTool,
    moveTool,
    copyTool,
    mkdirTool,
    deleteTool,
    requestImageTool,
  ];
}
