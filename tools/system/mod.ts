/**
 * The `system` group: `system_info`, `datetime`, `sleep`.
 *
 * Requires no permissions (`--allow-sys=osRelease,cpus` adds details to `system_info`).
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { datetimeTool } from "./datetime.ts";
import { sleepTool } from "./sleep.ts";
import { systemInfoTool } from "./system_info.ts";

export { type SystemInfo, systemInfoTool } from "./system_info.ts";
export { type DatetimeArgs, type DatetimeResult, datetimeTool, zonedIso } from "./datetime.ts";
export { type SleepArgs, sleepTool } from "./sleep.ts";

/**
 * The tools of the `system` group.
 *
 * @example
 * ```ts
 * import { systemTools } from "@toolfence/tools";
 * console.log(systemTools().map((t) => t.name)); // ["system_info", "datetime", "sleep"]
 * ```
 */
export function systemTools(): AnyTool[] {
  return [systemInfoTool, datetimeTool, sleepTool];
}
