/**
 * The `browser_wait_for` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { ToolError } from "@toolfence/core";
import { BROWSER_FLAGS, pageLine } from "./_page.ts";
import { WAIT_FOR_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_wait_for`: one of `text`, `text_gone` or `time`. */
export interface BrowserWaitForArgs {
  /** Wait until this text is visible. */
  text?: string;
  /** Wait until this text is no longer visible. */
  text_gone?: string;
  /** Wait this many seconds. */
  time?: number;
  /** How long to wait for the text, in seconds (default 10, at most 60). */
  timeout?: number;
}

/**
 * `browser_wait_for(text | text_gone | time)`: waits for text to appear or
 * disappear on the current page, or for a number of seconds.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserWaitForTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserWaitForTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_wait_for", { time: 0.5 })).output);
 * await session.close();
 * ```
 */
export function browserWaitForTool(browsers: Browsers): Tool<BrowserWaitForArgs> {
  return tool({
    name: "browser_wait_for",
    sessionState: true,
    description: "Wait until a text appears (text) or disappears (text_gone) on the current page, or wait a " +
      "number of seconds (time). Give exactly one. " + BROWSER_FLAGS,
    input: v.object({
      text: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(1000), v.description("Text to wait for."))),
      text_gone: v.optional(
        v.pipe(v.string(), v.minLength(1), v.maxLength(1000), v.description("Text to wait to disappear.")),
      ),
      time: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(60), v.description("Seconds to wait."))),
      timeout: v.optional(
        v.pipe(v.number(), v.minValue(0.1), v.maxValue(60), v.description("Seconds to wait for the text (10).")),
      ),
    }),
    output: WAIT_FOR_OUTPUT,
    concurrencySafe: false,
    openWorld: true,
    effects: ["reads"],
    needs: browsers.needs,
    async run({ text, text_gone, time, timeout }, ctx): Promise<string> {
      const given = [text, text_gone, time].filter((x) => x !== undefined).length;
      if (given !== 1) {
        throw new ToolError("browser_wait_for takes exactly one of text, text_gone and time", {
          code: "invalid_arguments",
          kind: "semantic",
        });
      }
      const browser = browserOf(browsers, ctx.session);
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        if (time !== undefined) {
          await page.waitForTimeout(time * 1000);
          return `Waited ${time} s. ${pageLine(browser, page, seen)}`;
        }
        const wanted = (text ?? text_gone) as string;
        try {
          await page.getByText(wanted).first().waitFor({
            state: text !== undefined ? "visible" : "hidden",
            timeout: (timeout ?? 10) * 1000,
          });
        } catch (error) {
          if ((error as Error).name !== "TimeoutError") throw error;
          throw new ToolError(
            `${JSON.stringify(wanted)} did not ${text !== undefined ? "appear" : "disappear"} within ${
              timeout ?? 10
            } s`,
            { code: "wait_timeout", recoveryHint: "Take a browser_snapshot to see what the page shows." },
          );
        }
        return `${JSON.stringify(wanted)} ${text !== undefined ? "appeared" : "is gone"}. ${
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
