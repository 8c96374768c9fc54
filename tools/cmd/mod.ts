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
import type { AnyTool } from "@toolfence/core";
import { bashTool } from "./bash.ts";
import { bashBackgroundTool, bashListTool, bashReadTool, bashStopTool, bashWaitTool } from "./background.ts";

export { type BashArgs, type BashResult, bashTool } from "./bash.ts";
export {
  type BashBackgroundArgs,
  bashBackgroundTool,
  bashListTool,
  type BashReadArgs,
  bashReadTool,
  type BashStopArgs,
  bashStopTool,
  type BashWaitArgs,
  bashWaitTool,
  type JobReport,
  type JobStatus,
} from "./background.ts";
export { DEFAULT_SESSION_OUTPUT_MAXIMUM, sessionOutputMaximum, setSessionOutputMaximum } from "./output_limit.ts";

/**
 * The tools of the `cmd` group; none on Windows, where there is no bash and
 * no POSIX process groups to kill a command with its children.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { cmdTools } from "@toolfence/tools";
 * const box = new ToolBox().register(...cmdTools());
 * console.log(box.list().map((t) => t.name));
 * ```
 */
export function cmdTools(): AnyTool[] {
  if (process.platform === "win32") return [];
  return [bashTool, bashBackgroundTool, bashReadTool, bashWaitTool, bashListTool, bashStopTool];
}
