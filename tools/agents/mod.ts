/**
 * The sub-agent tools, registered through `ToolBox.withSubagents(getter)`.
 *
 * Requires no permissions itself.
 *
 * @module
 */

export * from "./agent_run.ts";
export * from "./subagent.ts";
