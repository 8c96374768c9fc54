/**
 * The `browser_select` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS, locate, pageLine } from "./_page.ts";
import { SELECT_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_select`. */
export interface BrowserSelectArgs {
  /** The `<select>` element's reference from `browser_snapshot`. */
  ref: string;
  /** The options to select, by value or label. */
  values: string[];
}

/**
 * `browser_select(ref, values)`: selects options of a `<select>` by value or label.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserSelectTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserSelectTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_select", { ref: "e4", values: ["blue"] })).output);
 * await session.close();
 * ```
 */
export function browserSelectTool(browsers: Browsers): Tool<BrowserSelectArgs> {
  return tool({
    name: "browser_select",
    sessionState: true,
    description: "Select options (by value or label) in the dropdown with the given ref from browser_snapshot. " +
      BROWSER_FLAGS,
    input: v.object({
      ref: v.pipe(v.string(), v.description("Element reference from browser_snapshot, e.g. e12.")),
      values: v.pipe(v.array(v.string()), v.maxLength(1000), v.description("Values or labels of the options.")),
    }),
    output: SELECT_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ ref, values }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        const element = await locate(page, ref);
        const chosen = await element.selectOption(values);
        return `Selected ${JSON.stringify(chosen)} in ${ref}. ${pageLine(browser, page, seen)}`;
      });
    },
  });
}
