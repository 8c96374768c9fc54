/**
 * The built-in tools. Importing this module registers the built-in groups so
 * that `ToolBox.withDefaults()` can find them by name.
 *
 * @module
 */

import { registerSubagentTools, registerToolGroup } from "../core/groups.ts";
import { cmdTools } from "./cmd/mod.ts";
import { systemTools } from "./system/mod.ts";
import { frameworkTools } from "./framework/mod.ts";
import { diagnosticTools } from "./diagnostic/mod.ts";
import { agentTools, type SubagentGetter } from "./agents/mod.ts";
import { fsTools } from "./fs/mod.ts";
import { searchTools } from "./search/mod.ts";
import { patchTools } from "./patch/mod.ts";

// Each group registers itself here in one line; the group modules export their factories.
void registerToolGroup;
registerToolGroup("fs", fsTools);
registerToolGroup("search", () => searchTools());
registerToolGroup("patch", patchTools);
registerToolGroup("cmd", cmdTools);
registerToolGroup("system", systemTools);
registerToolGroup("framework", frameworkTools);
registerToolGroup("diagnostic", diagnosticTools);
registerSubagentTools((getter) => agentTools(getter as SubagentGetter));
