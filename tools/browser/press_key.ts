/**
 * The `browser_press_key` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { ToolError } from "@toolfence/core";
import { BROWSER_FLAGS, pageLine } from "./_page.ts";
import { PRESS_KEY_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_press_key`. */
export interface BrowserPressKeyArgs {
  /** A key name such as `Enter`, `ArrowDown`, `a`, or a chord such as `Control+A`. */
  key: string;
}

/**
 * `browser_press_key(key)`: presses a key (or chord) in the current tab.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserPressKeyTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserPressKeyTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_press_key", { key: "Tab" })).output);
 * await session.close();
 * ```
 */
export function browserPressKeyTool(browsers: Browsers): Tool<BrowserPressKeyArgs> {
  return tool({
    name: "browser_press_key",
    sessionState: true,
    description: "Press a key in the current tab, e.g. Enter, Escape, ArrowDown, Tab, a, or a chord such as " +
      "Control+A. " + BROWSER_FLAGS,
    input: v.object({
      key: v.pipe(v.string(), v.minLength(1), v.maxLength(100), v.description("Key name or chord.")),
    }),
    output: PRESS_KEY_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ key }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        try {
          await page.keyboard.press(key);
        } catch (error) {
          if (/Unknown key/i.test((error as Error).message)) {
            throw new ToolError(`${JSON.stringify(key)} is not a key name`, {
              code: "invalid_key",
              kind: "semantic",
              recoveryHint: "Use names such as Enter, Escape, ArrowDown, Tab, Backspace, a, Control+A.",
            });
          }
          throw error;
        }
        return `Pressed ${key}. ${pageLine(browser, page, seen)}`;
      });
    },
  });
}
