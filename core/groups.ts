/**
 * Tool groups as values: a group is a function that makes its tools, and a set
 * of groups is a plain record by name. Nothing registers itself; the built-in
 * groups are a record in `@toolfence/tools`, wired into the umbrella's
 * `ToolBox`.
 *
 * @module
 */

import type { AnyTool } from "./tool.ts";
import type { ToolBox } from "./toolbox.ts";

/** Makes the tools of a group. */
export type ToolGroupFactory = () => readonly AnyTool[];

/** Named groups of tools, e.g. `{ fs: fsTools, search: searchTools }`. */
export type ToolGroups = Readonly<Record<string, ToolGroupFactory>>;

/**
 * Makes the sub-agent tools for a getter (see `ToolBox.withSubagents`); without
 * one, sub-agents run with the session's model and the tools of `box`, which `withSubagents` passes.
 */
export type SubagentToolsFactory = (getter: unknown, box?: ToolBox) => readonly AnyTool[];

/**
 * The tools of the group `name` in `groups`; throws a `RangeError` for an
 * unknown group, naming the known ones.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool, toolGroup, type ToolGroups } from "@toolfence/core";
 * const groups: ToolGroups = {
 *   greetings: () => [tool({ name: "hello", description: "Say hello.", input: v.object({}), run: () => "hello" })],
 * };
 * console.log(toolGroup(groups, "greetings").map((t) => t.name)); // ["hello"]
 * ```
 */
export function toolGroup(groups: ToolGroups, name: string): readonly AnyTool[] {
  const factory = Object.hasOwn(groups, name) ? groups[name] : undefined;
  if (!factory) {
    const known = Object.keys(groups);
    throw new RangeError(
      `Unknown tool group "${name}"; known groups: ${
        known.length
          ? known.join(", ")
          : "none (pass { groups } to the ToolBox, or use the ToolBox of @toolfence/toolfence)"
      }`,
    );
  }
  return factory();
}
