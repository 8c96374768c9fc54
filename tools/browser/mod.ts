/**
 * The `browser` group: `browser_navigate`, `browser_snapshot`,
 * `browser_click`, `browser_type`, `browser_select`, `browser_press_key`,
 * `browser_wait_for`, `browser_evaluate` (asks), `browser_screenshot` (needs
 * `vision`), `browser_tabs`, `browser_console_messages`, `browser_file_upload`
 * (workspace files only) and `browser_close`.
 *
 * One browser per session, the system Chromium (found on PATH or configured,
 * never downloaded) driven by playwright-core, started on first use inside
 * bubblewrap where it can run, in its own profile, behind a proxy on 127.0.0.1
 * that judges every request (redirects and subframes included) and connects to
 * the address it judged; closed with the session.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import { type BrowserOptions, Browsers } from "./browsers.ts";
import { browserClickTool } from "./click.ts";
import { browserCloseTool } from "./close.ts";
import { browserConsoleMessagesTool } from "./console_messages.ts";
import { browserEvaluateTool } from "./evaluate.ts";
import { browserNavigateTool } from "./navigate.ts";
import { browserPressKeyTool } from "./press_key.ts";
import { browserScreenshotTool } from "./screenshot.ts";
import { browserSelectTool } from "./select.ts";
import { browserSnapshotTool } from "./snapshot.ts";
import { browserTabsTool } from "./tabs.ts";
import { browserTypeTool } from "./type.ts";
import { browserWaitForTool } from "./wait_for.ts";
import { browserFileUploadTool } from "./upload.ts";

export { type BrowserOptions, Browsers, type PageEvent } from "./browsers.ts";
export type { DestinationRules } from "./_destinations.ts";
export { type BrowserNavigateArgs, browserNavigateTool } from "./navigate.ts";
export { browserSnapshotTool } from "./snapshot.ts";
export { type BrowserClickArgs, browserClickTool } from "./click.ts";
export { type BrowserTypeArgs, browserTypeTool } from "./type.ts";
export { type BrowserSelectArgs, browserSelectTool } from "./select.ts";
export { type BrowserPressKeyArgs, browserPressKeyTool } from "./press_key.ts";
export { type BrowserWaitForArgs, browserWaitForTool } from "./wait_for.ts";
export { type BrowserEvaluateArgs, browserEvaluateTool } from "./evaluate.ts";
export {
  type BrowserScreenshotArgs,
  type BrowserScreenshotResult,
  browserScreenshotTool,
  MAX_FULL_PAGE_HEIGHT,
} from "./screenshot.ts";
export { type BrowserTabsArgs, browserTabsTool } from "./tabs.ts";
export { type BrowserConsoleArgs, browserConsoleMessagesTool } from "./console_messages.ts";
export { type BrowserFileUploadArgs, browserFileUploadTool, MAX_UPLOAD_BYTES } from "./upload.ts";
export { browserCloseTool } from "./close.ts";

/**
 * The tools of the `browser` group, sharing one browser per session under
 * `options` (allowlist, private networks, evaluate rule, executable, sandbox).
 *
 * @example
 * ```ts
 * import { browserTools } from "@toolfence/tools";
 * const tools = browserTools({ allow: ["https://docs.deno.com"] });
 * console.log(tools.map((t) => t.name));
 * ```
 */
export function browserTools(options: BrowserOptions = {}): AnyTool[] {
  const browsers = new Browsers(options);
  return [
    browserNavigateTool(browsers),
    browserSnapshotTool(browsers),
    browserClickTool(browsers),
    browserTypeTool(browsers),
    browserSelectTool(browsers),
    browserPressKeyTool(browsers),
    browserWaitForTool(browsers),
    browserEvaluateTool(browsers),
    browserScreenshotTool(browsers),
    browserTabsTool(browsers),
    browserConsoleMessagesTool(browsers),
    browserFileUploadTool(browsers),
    browserCloseTool(browsers),
  ];
}
