/**
 * The built-in groups as a plain record, and the factory of the sub-agent
 * tools: values a `ToolBox` is given (`new ToolBox({ groups: BUILTIN_GROUPS })`),
 * never registered on import.
 *
 * @module
 */

import process from "node:process";
import type { AnyTool, SubagentToolsFactory, ToolBox, ToolGroups } from "@toolfence/core";
import { fsTools } from "./fs/mod.ts";
import { searchTools } from "./search/mod.ts";
import { patchTools } from "./patch/mod.ts";
import { cmdTools } from "./cmd/mod.ts";
import { systemTools } from "./system/mod.ts";
import { frameworkTools } from "./framework/mod.ts";
import { diagnosticTools } from "./diagnostic/mod.ts";
import { browserTools } from "./browser/mod.ts";
import { agentTools, type SubagentGetter } from "./agents/mod.ts";

/** The `cmd` group; on Windows it has no tools, and says so on stderr rather than be silently empty (as xun). */
function cmdGroup(): readonly AnyTool[] {
  const tools = cmdTools();
  if (tools.length === 0) {
    process.stderr.write(
      "toolfence: the cmd group has no tools on Windows (no bash, no POSIX process groups to stop a command with)\n",
    );
  }
  return tools;
}

/**
 * The built-in tool groups by name, in the order `withDefaults()` registers them.
 *
 * @example
 * ```ts
 * import { BUILTIN_GROUPS } from "@toolfence/tools";
 * console.log(Object.keys(BUILTIN_GROUPS)); // ["fs", "search", "patch", "cmd", "system", "framework", "diagnostic", "browser"]
 * ```
 */
export const BUILTIN_GROUPS: ToolGroups = Object.freeze({
  fs: fsTools,
  search: (): readonly AnyTool[] => searchTools(),
  patch: patchTools,
  cmd: cmdGroup,
  system: systemTools,
  framework: frameworkTools,
  diagnostic: diagnosticTools,
  browser: (): readonly AnyTool[] => browserTools(),
});

/**
 * Makes `agent_run` and `agent_run_parallel` for a getter (or, without one,
 * for the session's model with the tools of `box`); the `subagents` option of a
 * `ToolBox`.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { SUBAGENT_TOOLS } from "@toolfence/tools";
 * console.log(SUBAGENT_TOOLS(() => undefined, new ToolBox()).map((t) => t.name)); // ["agent_run", "agent_run_parallel"]
 * ```
 */
export const SUBAGENT_TOOLS: SubagentToolsFactory = (getter: unknown, box?: ToolBox): readonly AnyTool[] =>
  agentTools(getter as SubagentGetter | undefined, box);
