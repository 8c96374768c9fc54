/**
 * The `browser_type` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS, locate, pageLine } from "./_page.ts";
import { TYPE_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_type`. */
export interface BrowserTypeArgs {
  /** The element's reference from `browser_snapshot`. */
  ref: string;
  /** The text to enter (it replaces what the field holds). */
  text: string;
  /** Press Enter afterwards. */
  submit?: boolean;
}

/**
 * `browser_type(ref, text, submit?)`: fills a text field with `text`
 * (replacing its content) and presses Enter when `submit` is true.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserTypeTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserTypeTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_type", { ref: "e3", text: "hello", submit: true })).output);
 * await session.close();
 * ```
 */
export function browserTypeTool(browsers: Browsers): Tool<BrowserTypeArgs> {
  return tool({
    name: "browser_type",
    sessionState: true,
    description: "Type text into the field with the given ref from browser_snapshot (replacing its content); " +
      "submit: true presses Enter afterwards. " + BROWSER_FLAGS,
    input: v.object({
      ref: v.pipe(v.string(), v.description("Element reference from browser_snapshot, e.g. e12.")),
      text: v.pipe(v.string(), v.maxLength(100_000), v.description("The text to enter.")),
      submit: v.optional(v.pipe(v.boolean(), v.description("Press Enter after typing."))),
    }),
    output: TYPE_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ ref, text, submit }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        const element = await locate(page, ref);
        await element.fill(text);
        if (submit) await element.press("Enter");
        return `Typed ${text.length} characters into ${ref}${submit ? " and pressed Enter" : ""}. ${
          pageLine(
            browser,
            page,
            seen,
          )
        }`;
      });
    },
  });
}
