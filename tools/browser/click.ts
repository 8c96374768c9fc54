/**
 * The `browser_click` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS, locate, pageLine } from "./_page.ts";
import { CLICK_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_click`. */
export interface BrowserClickArgs {
  /** The element's reference from `browser_snapshot`. */
  ref: string;
  /** Double-click instead. */
  double?: boolean;
}

/**
 * `browser_click(ref, double?)`: clicks the element with that snapshot
 * reference. A navigation it starts is judged like `browser_navigate`'s.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserClickTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserClickTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_click", { ref: "e2" })).output);
 * await session.close();
 * ```
 */
export function browserClickTool(browsers: Browsers): Tool<BrowserClickArgs> {
  return tool({
    name: "browser_click",
    sessionState: true,
    description: "Click the element with the given ref from the latest browser_snapshot. " + BROWSER_FLAGS,
    input: v.object({
      ref: v.pipe(v.string(), v.description("Element reference from browser_snapshot, e.g. e12.")),
      double: v.optional(v.pipe(v.boolean(), v.description("Double-click instead of a single click."))),
    }),
    output: CLICK_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ ref, double }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        const element = await locate(page, ref);
        if (double) await element.dblclick();
        else await element.click();
        return `Clicked ${ref}. ${pageLine(browser, page, seen)}`;
      });
    },
  });
}
