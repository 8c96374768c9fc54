/**
 * The built-in tools. Importing this module registers the built-in groups so
 * that `ToolBox.withDefaults()` can find them by name.
 *
 * @module
 */

import { registerToolGroup } from "../core/groups.ts";

// Each group registers itself here in one line; the group modules export their factories.
void registerToolGroup;
