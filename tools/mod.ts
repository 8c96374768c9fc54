/**
 * The built-in tools, by group: `fs`, `search`, `patch`, `cmd`, `system`,
 * `framework`, `diagnostic`, `browser`, and the sub-agent tools. Importing this module
 * registers the groups so that `ToolBox.withDefaults()` finds them by name and
 * `ToolBox.withSubagents()` finds the sub-agent tools.
 *
 * @module
 */

import { registerSubagentTools, registerToolGroup } from "../core/groups.ts";
import { fsTools } from "./fs/mod.ts";
import { searchTools } from "./search/mod.ts";
import { patchTools } from "./patch/mod.ts";
import { cmdTools } from "./cmd/mod.ts";
import { systemTools } from "./system/mod.ts";
import { frameworkTools } from "./framework/mod.ts";
import { diagnosticTools } from "./diagnostic/mod.ts";
import { browserTools } from "./browser/mod.ts";
import { agentTools, type SubagentGetter } from "./agents/mod.ts";

export * from "./fs/mod.ts";
export * from "./search/mod.ts";
export * from "./patch/mod.ts";
export * from "./cmd/mod.ts";
export * from "./system/mod.ts";
export * from "./framework/mod.ts";
export * from "./diagnostic/mod.ts";
export * from "./browser/mod.ts";
export * from "./agents/mod.ts";

registerToolGroup("fs", fsTools);
registerToolGroup("search", () => searchTools());
registerToolGroup("patch", patchTools);
registerToolGroup("cmd", cmdTools);
registerToolGroup("system", systemTools);
registerToolGroup("framework", frameworkTools);
registerToolGroup("diagnostic", diagnosticTools);
registerToolGroup("browser", () => browserTools());
registerSubagentTools((getter) => agentTools(getter as SubagentGetter));
