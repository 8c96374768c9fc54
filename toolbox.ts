/**
 * The umbrella's `ToolBox`: the core's toolbox with the built-in groups, the
 * sub-agent tools, the provider dialects by name and the runtime fence wired
 * in, so that `new ToolBox().withDefaults("fs")` and `schemas("anthropic")`
 * work as they always have. Importing it registers nothing anywhere.
 *
 * @module
 */

import { ToolBox as CoreToolBox, type ToolBoxOptions } from "@toolfence/core";
import { runtimeFence } from "@toolfence/policy";
import { BUILTIN_GROUPS, SUBAGENT_TOOLS } from "@toolfence/tools";
import { PROVIDER_DIALECTS } from "@toolfence/adapters";

/**
 * A set of tools and the one entry point for calling them, with the built-in
 * groups (`withDefaults`), the sub-agent tools (`withSubagents`), the provider
 * dialects by name (`schemas("openai-chat")`) and the runtime's fence (`list`).
 * Each option can still be given to replace its default.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * const box = new ToolBox().withDefaults("fs", "search");
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await box.call(session, "list_dir", { path: "." });
 * console.log(result.status, box.schemas("anthropic").length > 0);
 * await session.close();
 * ```
 */
export class ToolBox extends CoreToolBox {
  /** Creates an empty toolbox that knows the built-in groups and dialects. */
  constructor(options: ToolBoxOptions = {}) {
    super({
      groups: BUILTIN_GROUPS,
      subagents: SUBAGENT_TOOLS,
      dialects: PROVIDER_DIALECTS,
      fence: runtimeFence,
      ...options,
    });
  }
}
