/**
 * The `browser_tabs` tool.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { browserOf, MAX_TABS } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS, framedTabs } from "./_page.ts";
import { TABS_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_tabs`. */
export interface BrowserTabsArgs {
  /** `list` (default), `new`, `select` or `close`. */
  action?: "list" | "new" | "select" | "close";
  /** The tab for `select` and `close` (from `list`); `close` defaults to the current one. */
  index?: number;
  /** A URL to open in the `new` tab, judged like `browser_navigate`'s. */
  url?: string;
}

/**
 * `browser_tabs(action?, index?, url?)`: lists the tabs (windows a page opened
 * included), opens a new one, makes one current, or closes one. The list (each
 * tab's address and title, which the page sets) is framed as untrusted web
 * content.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserTabsTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserTabsTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_tabs", { action: "list" })).output);
 * await session.close();
 * ```
 */
export function browserTabsTool(browsers: Browsers): Tool<BrowserTabsArgs> {
  return tool({
    name: "browser_tabs",
    sessionState: true,
    description:
      "List the browser's tabs (including windows pages opened), or open a new tab (action new, at most 20 tabs, " +
      "optional url), make one current (select, index) or close one (close, index). " + BROWSER_FLAGS,
    input: v.object({
      action: v.optional(v.pipe(v.picklist(["list", "new", "select", "close"]), v.description("What to do."))),
      index: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Tab index from list."))),
      url: v.optional(v.pipe(v.string(), v.maxLength(8192), v.description("URL for a new tab."))),
    }),
    output: TABS_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ action = "list", index, url }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      if (url !== undefined) await browser.destinations.judgeUrl(url, ctx.signal);
      const current = await browser.page();
      const pages = await browser.pages();
      const pick = (i: number | undefined) => {
        const page = pages[i ?? pages.indexOf(current)];
        if (!page) {
          throw new ToolError(`There is no tab ${i}; there are ${pages.length}`, {
            code: "tab_not_found",
            kind: "semantic",
            recoveryHint: "Call browser_tabs with action list.",
          });
        }
        return page;
      };
      if (action === "new") {
        if (pages.length >= MAX_TABS) {
          throw new ToolError(`${pages.length} tabs are open, the most allowed (${MAX_TABS})`, {
            code: "too_many_tabs",
            recoveryHint: "Close a tab with browser_tabs action close, or reuse the current one.",
          });
        }
        const page = await (await browser.context()).newPage();
        browser.select(page);
        if (url !== undefined) await page.goto(url, { waitUntil: "domcontentloaded" });
      } else if (action === "select") {
        if (index === undefined) throw missingIndex();
        browser.select(pick(index));
      } else if (action === "close") {
        await pick(index).close();
      }
      const now = await browser.page();
      const listed = await browser.pages();
      const tabs = await Promise.all(listed.map(async (page) => ({
        url: page.url(),
        title: await page.title().catch(() => ""),
      })));
      return framedTabs(tabs, listed.indexOf(now));
    },
  });
}

function missingIndex(): ToolError {
  return new ToolError("browser_tabs select needs an index", { code: "invalid_arguments", kind: "semantic" });
}
