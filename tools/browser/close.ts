/**
 * The `browser_close` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { BROWSER_FLAGS } from "./_page.ts";
import { CLOSE_OUTPUT } from "./_outputs.ts";

/**
 * `browser_close()`: closes the session's browser and every tab; the next
 * browser call starts a new one with a fresh profile.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserCloseTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserCloseTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "browser_close", {})).output);
 * await session.close();
 * ```
 */
export function browserCloseTool(browsers: Browsers): Tool<Record<string, never>> {
  return tool({
    name: "browser_close",
    sessionState: true,
    description: "Close the browser and all its tabs (cookies and storage are discarded). " + BROWSER_FLAGS,
    input: v.object({}),
    output: CLOSE_OUTPUT,
    idempotent: true,
    effects: ["runs_processes"],
    // Listed exactly when the tools that start the browser are.
    needs: browsers.needs,
    async run(_args, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const was = browser.running;
      await browser.close();
      return was ? "Closed the browser." : "No browser was open.";
    },
  });
}
