/**
 * The `framework` group: `ask_preference`, `read_artifact`.
 *
 * Requires no permissions.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { askPreferenceTool } from "./ask_preference.ts";
import { readArtifactTool } from "./read_artifact.ts";

export { type AskPreferenceArgs, askPreferenceTool, type PreferenceAnswer } from "./ask_preference.ts";
export { MAX_ARTIFACT_WINDOW, type ReadArtifactArgs, readArtifactTool } from "./read_artifact.ts";

/**
 * The tools of the `framework` group.
 *
 * @example
 * ```ts
 * import { frameworkTools } from "@toolfence/tools";
 * console.log(frameworkTools().map((t) => t.name)); // ["ask_preference", "read_artifact"]
 * ```
 */
export function frameworkTools(): AnyTool[] {
  return [askPreferenceTool, readArtifactTool];
}
