/**
 * The `search` group: finding files by name and by content.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { globTool } from "./glob.ts";
import { grepTool, type GrepToolOptions } from "./grep.ts";

/**
 * The tools of the `search` group: `glob` and `grep`.
 *
 * Requires `--allow-read` for the workspace; grep's ripgrep engine also
 * `--allow-run` for the binary and `--allow-env` (see {@linkcode grepTool});
 * without them grep uses its built-in engine.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { searchTools } from "@toolfence/tools";
 * const box = new ToolBox().register(...searchTools());
 * console.log(box.list().map((t) => t.name));
 * ```
 */
export function searchTools(options: GrepToolOptions = {}): AnyTool[] {
  return [globTool, grepTool(options)];
}
