/**
 * The `cmd` group: `bash` and the background-job tools.
 *
 * Requires `--allow-run` (the shell and bubblewrap, and stopping their process
 * groups, which Deno allows only with `--allow-run` for every program),
 * `--allow-env=NODE_V8_COVERAGE` (and the inherited variables), and
 * `--allow-read` / `--allow-write` for the workspace and the temp folder;
 * `toolfence flags --groups cmd` prints them.
 *
 * @module
 */

import process from "node:process";
import type { AnyTool } from "../../core/tool.ts";
import { bashTool } from "./bash.ts";
import { bashBackgroundTool, bashListTool, bashReadTool, bashStopTool, bashWaitTool } from "./background.ts";

export * from "./bash.ts";
export * from "./background.ts";
export * from "./output_limit.ts";

/**
 * The tools of the `cmd` group; none on Windows, where there is no bash and
 * no POSIX process groups to kill a command with its children.
 *
 * @example
 * ```ts
 * import { ToolBox } from "../../core/toolbox.ts";
 * import { cmdTools } from "./mod.ts";
 * const box = new ToolBox().register(...cmdTools());
 * console.log(box.list().map((t) => t.name));
 * ```
 */
export function cmdTools(): AnyTool[] {
  if (process.platform === "win32") return [];
  return [bashTool, bashBackgroundTool, bashReadTool, bashWaitTool, bashListTool, bashStopTool];
}
