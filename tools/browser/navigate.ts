/**
 * The `browser_navigate` tool.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import type { Page } from "playwright-core";
import { BLOCKED_HEADER } from "./_egress_proxy.ts";
import { BROWSER_FLAGS, pageLine } from "./_page.ts";
import { NAVIGATE_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_navigate`. */
export interface BrowserNavigateArgs {
  /** The URL to open. */
  url: string;
}

/**
 * `browser_navigate(url)`: opens a URL in the current tab. The URL is judged
 * first (http/https, or `file:` inside the workspace; allowlisted origins run,
 * others ask the host once per origin, private and loopback addresses ask
 * unless allowed), and every request the page makes, redirects included, is
 * judged again by the browser's proxy.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserNavigateTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserNavigateTool(new Browsers({ allow: ["example.com"] })));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_navigate", { url: "https://example.com/" })).output);
 * await session.close();
 * ```
 */
export function browserNavigateTool(browsers: Browsers): Tool<BrowserNavigateArgs> {
  return tool({
    name: "browser_navigate",
    sessionState: true,
    description: "Open a URL in the browser's current tab (http, https, or a file: URL inside the workspace). " +
      "Destinations not on the allowlist, and local or private addresses, need the user's approval. " +
      "Then call browser_snapshot to read the page. " + BROWSER_FLAGS,
    input: v.object({
      url: v.pipe(v.string(), v.maxLength(8192), v.description("Absolute URL, e.g. https://example.com/docs.")),
    }),
    output: NAVIGATE_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ url }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      await browser.destinations.judgeUrl(url, ctx.signal);
      const seen = browser.eventCount;
      return await browser.withPage(ctx.signal, async (page) => {
        let status: number | undefined;
        try {
          const response = await gotoPast(page, url);
          if (response?.headers()[BLOCKED_HEADER]) throw blockedNavigation(browser.events.slice(seen), url);
          status = response?.status();
        } catch (error) {
          if (error instanceof ToolError) {
            await page.goto("about:blank").catch(() => {});
            throw error;
          }
          const blocked = browser.events.slice(seen).filter((e) => e.kind === "blocked");
          if (blocked.length) {
            await page.goto("about:blank").catch(() => {});
            throw blockedNavigation(blocked, url);
          }
          throw new ToolError(`Opening ${url} failed: ${(error as Error).message.split("\n")[0]}`, {
            code: "navigation_failed",
            details: { url },
            cause: error,
          });
        }
        return `${pageLine(browser, page, seen)}${status ? `, HTTP status ${status}` : ""}. ` +
          "Call browser_snapshot to read it.";
      });
    },
  });
}

// The page's own navigation (a timer of the page being left, `location.href = ...`) may begin while the model's is
// under way, and Playwright then fails the model's goto ("is interrupted by another navigation"): under load, in CI
// run ci17 (Node 22), a page's script navigation to a destination being judged failed the next test's navigate. The
// model's navigation is what was asked: tried once more, the page's own having replaced the old page or been refused.
async function gotoPast(page: Page, url: string): ReturnType<Page["goto"]> {
  try {
    return await page.goto(url, { waitUntil: "domcontentloaded" });
  } catch (error) {
    if (!/interrupted by another navigation/.test((error as Error).message ?? "")) throw error;
    return await page.goto(url, { waitUntil: "domcontentloaded" });
  }
}

function blockedNavigation(events: { kind: string; text: string }[], url: string): ToolError {
  const blocked = events.filter((e) => e.kind === "blocked").map((e) => e.text);
  return new ToolError(
    `Opening ${url} was stopped: ${blocked.at(-1) ?? "a request it led to is not allowed"}`,
    {
      code: "url_not_allowed",
      kind: "policy",
      status: "skipped",
      recoverable: false,
      recoveryHint: "Open an allowed destination, or ask the user to allow this one.",
      details: { url, blocked },
    },
  );
}
