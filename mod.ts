/**
 * toolfence: permission-aware tools for LLM agents.
 *
 * Define a tool once with a valibot schema, register it in a {@linkcode ToolBox},
 * and call it through one pipeline: strict validation, the workspace policy, a
 * person asked where the policy says so, a timeout and an abort signal, and a
 * lossless {@linkcode ToolResult}. Importing this module also registers the
 * built-in tool groups for {@linkcode ToolBox.withDefaults}.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session, tool, ToolBox } from "./mod.ts";
 * const box = new ToolBox().register(tool({
 *   name: "add",
 *   description: "Add two numbers.",
 *   input: v.object({ a: v.number(), b: v.number() }),
 *   run: ({ a, b }) => a + b,
 * }));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "add", { a: 1, b: 2 })).output); // 3
 * await session.close();
 * ```
 *
 * @module
 */

export * from "./core/mod.ts";
export * from "./policy/mod.ts";
export * from "./tools/mod.ts";
// The provider dialects register themselves here so that `toolbox.schemas("openai-chat")`
// works from the package root; the adapters that need provider SDKs stay in `./adapters`.
export * from "./adapters/dialects.ts";
