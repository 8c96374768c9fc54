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

import type { AnyTool } from "../../core/tool.ts";
import { type BrowserOptions, Browsers } from "./_browser_session.ts";
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

export type { BrowserOptions, PageEvent } from "./_browser_session.ts";
export type { DestinationRules } from "./_destinations.ts";
export * from "./navigate.ts";
export * from "./snapshot.ts";
export * from "./click.ts";
export * from "./type.ts";
export * from "./select.ts";
export * from "./press_key.ts";
export * from "./wait_for.ts";
export * from "./evaluate.ts";
export * from "./screenshot.ts";
export * from "./tabs.ts";
export * from "./console_messages.ts";
export * from "./upload.ts";
export * from "./close.ts";

/**
 * The tools of the `browser` group, sharing one browser per session under
 * `options` (allowlist, private networks, evaluate rule, executable, sandbox).
 *
 * @example
 * ```ts
 * import { browserTools } from "./mod.ts";
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
