/**
 * The browsers of the `browser` group's tools, and their options: what the
 * tools of one `browserTools()` call share. Nothing here loads playwright-core,
 * which the tools load on first use.
 *
 * @module
 */

import type { ToolNeeds } from "@toolfence/core";
import type { SandboxMode } from "@toolfence/policy";
import type { DestinationRules } from "./_destinations.ts";
import { browserNeeds } from "./_launch.ts";

/** Options of the browser group. */
export interface BrowserOptions extends DestinationRules {
  /** The Chromium to run; default the first Chromium found on PATH. Never downloaded. */
  executablePath?: string;
  /** `allow`: `browser_evaluate` runs without asking. Default `ask`. */
  evaluate?: "ask" | "allow";
  /**
   * Run the browser inside bubblewrap: `auto` (where bubblewrap works), `required` or `off`; default the
   * session's sandbox mode (the one shell commands use).
   */
  sandbox?: SandboxMode;
  /** Viewport size in CSS pixels; default 1000×700, so that a screenshot of it needs no scaling. */
  viewport?: { width: number; height: number };
  /**
   * The largest download kept in the session's temp dir, in bytes; default 256 MiB. A session's downloads, kept and
   * in progress, come to at most four times it together: past either, downloads in progress are cancelled.
   */
  maxDownloadBytes?: number;
}

/** A console message, page error or failed request, kept for `browser_console_messages`. */
export interface PageEvent {
  /** `console.<type>`, `pageerror`, `requestfailed`, `blocked` or `download`. */
  kind: string;
  /** The message, URL or path. */
  text: string;
}

/**
 * The browsers of every session for one set of options: what the tools of one
 * `browserTools()` call share. Each session gets its own browser, started on
 * first use and closed with the session.
 *
 * @example
 * ```ts
 * import { Browsers, browserSnapshotTool } from "@toolfence/tools";
 * const snapshot = browserSnapshotTool(new Browsers({ allow: ["https://docs.deno.com"] }));
 * console.log(snapshot.name); // "browser_snapshot"
 * ```
 */
export class Browsers {
  /** The options every session's browser is started with. */
  readonly options: BrowserOptions;
  /** What the tools that start or drive this browser need of the runtime's permissions. */
  readonly needs: ToolNeeds;

  /** Browsers for `options`; nothing is started until a tool needs a page. */
  constructor(options: BrowserOptions = {}) {
    const max = options.maxDownloadBytes;
    if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
      throw new TypeError(`maxDownloadBytes must be a positive whole number of bytes, not ${max}`);
    }
    this.options = options;
    this.needs = browserNeeds(options.executablePath);
  }
}
