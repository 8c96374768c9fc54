/**
 * The registry of built-in tool groups. The core knows groups only by name;
 * `tools/` registers them, so `withDefaults` works wherever `tools/mod.ts` (or
 * the package root) has been imported.
 *
 * @module
 */

import type { AnyTool } from "./tool.ts";

/** Makes the tools of a group. */
export type ToolGroupFactory = () => readonly AnyTool[];

/** Makes the sub-agent tools for a getter (see `ToolBox.withSubagents`). */
export type SubagentToolsFactory = (getter: unknown) => readonly AnyTool[];

const groups = new Map<string, ToolGroupFactory>();
let subagentFactory: SubagentToolsFactory | undefined;

/**
 * Registers (or replaces) a named group of tools.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { registerToolGroup } from "./groups.ts";
 * import { tool } from "./tool.ts";
 * registerToolGroup("greetings", () => [
 *   tool({ name: "hello", description: "Say hello.", input: v.object({}), run: () => "hello" }),
 * ]);
 * ```
 */
export function registerToolGroup(name: string, factory: ToolGroupFactory): void {
  groups.set(name, factory);
}

/**
 * The names of the registered groups, in registration order.
 *
 * @example
 * ```ts
 * import { toolGroupNames } from "./groups.ts";
 * console.log(toolGroupNames());
 * ```
 */
export function toolGroupNames(): string[] {
  return [...groups.keys()];
}

/**
 * The tools of a group; throws for an unknown group, naming the known ones.
 *
 * @example
 * ```ts
 * import { toolGroup } from "./groups.ts";
 * try { toolGroup("nope"); } catch (e) { console.log((e as Error).message); }
 * ```
 */
export function toolGroup(name: string): readonly AnyTool[] {
  const factory = groups.get(name);
  if (!factory) {
    const known = toolGroupNames();
    throw new RangeError(
      `Unknown tool group "${name}"; known groups: ${
        known.length ? known.join(", ") : "none (import toolfence's tools module to register the built-in groups)"
      }`,
    );
  }
  return factory();
}

/**
 * Registers the factory of the sub-agent tools (`agent_run`, `agent_run_parallel`).
 *
 * @example
 * ```ts
 * import { registerSubagentTools } from "./groups.ts";
 * registerSubagentTools(() => []);
 * ```
 */
export function registerSubagentTools(factory: SubagentToolsFactory): void {
  subagentFactory = factory;
}

/**
 * The sub-agent tools for a getter; throws when none are registered.
 *
 * @example
 * ```ts
 * import { subagentTools } from "./groups.ts";
 * try { subagentTools(() => undefined); } catch (e) { console.log((e as Error).message); }
 * ```
 */
export function subagentTools(getter: unknown): readonly AnyTool[] {
  if (!subagentFactory) {
    throw new RangeError("No sub-agent tools are registered; import toolfence's tools module first");
  }
  return subagentFactory(getter);
}
