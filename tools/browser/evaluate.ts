/**
 * The `browser_evaluate` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { browserOf } from "./_browser_session.ts";
import type { Browsers } from "./browsers.ts";
import { ToolError } from "@toolfence/core";
import { BROWSER_FLAGS, framedScriptError, untrusted } from "./_page.ts";
import { EVALUATE_OUTPUT } from "./_outputs.ts";

/** Arguments of `browser_evaluate`. */
export interface BrowserEvaluateArgs {
  /** A JavaScript expression, or a function such as `() => document.title`. */
  script: string;
}

/**
 * `browser_evaluate(script)`: runs JavaScript in the current page and returns
 * its JSON-serialisable result, framed as untrusted web content (so is the
 * message of a script that throws: `script_error`). It asks the
 * host first unless the group's option `evaluate: "allow"` says otherwise,
 * since the script acts with the page's cookies and storage; an automatic
 * answer refuses.
 *
 * Requires `--allow-run`, `--allow-net`, `--allow-env`, `--allow-sys=homedir`, `--allow-read` (workspace, temp
 * folder, the browser's folder) and `--allow-write` (workspace, temp folder).
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { Browsers } from "@toolfence/tools";
 * import { browserEvaluateTool } from "@toolfence/tools";
 * const box = new ToolBox().register(browserEvaluateTool(new Browsers()));
 * const session = new Session({ workspace: Deno.cwd(), autoConfirm: false });
 * console.log((await box.call(session, "browser_evaluate", { script: "document.title" })).output);
 * await session.close();
 * ```
 */
export function browserEvaluateTool(browsers: Browsers): Tool<BrowserEvaluateArgs> {
  return tool({
    name: "browser_evaluate",
    sessionState: true,
    description: "Run JavaScript in the current page and return its result (JSON). Give an expression or a " +
      "function such as () => document.title. Asks the user first: the script acts with the page's cookies. " +
      BROWSER_FLAGS,
    input: v.object({
      script: v.pipe(v.string(), v.minLength(1), v.maxLength(100_000), v.description("Expression or function.")),
    }),
    output: EVALUATE_OUTPUT,
    openWorld: true,
    effects: ["reads", "runs_processes", "network"],
    needs: browsers.needs,
    async run({ script }, ctx): Promise<string> {
      const browser = browserOf(browsers, ctx.session);
      const page = await browser.page();
      if (browser.options.evaluate !== "allow") {
        const shown = script.length > 2000 ? script.slice(0, 2000) + "…" : script;
        const allowed = await ctx.session.confirm({
          title: "Run a script in the browser",
          message:
            `The agent wants to run this script in ${page.url()}, with the page's cookies and storage:\n${shown}`,
          defaultChoice: false,
        }, ctx.signal);
        if (!allowed) {
          throw new ToolError(`Running the script in ${page.url()} was denied`, {
            code: "permission_denied",
            kind: "policy",
            status: "skipped",
            recoverable: false,
            recoveryHint: "Use browser_snapshot, browser_click and browser_type instead.",
          });
        }
      }
      const asked = page.url();
      return await browser.withPage(ctx.signal, async (current) => {
        // The answer was about one page; a script never runs on another one it was not asked about.
        if (current !== page || current.url() !== asked) {
          throw new ToolError(`The page changed from ${asked} to ${current.url()} while the user was asked`, {
            code: "page_changed",
            recoveryHint: "Call browser_evaluate again for the page now shown.",
          });
        }
        let value: unknown;
        try {
          value = await current.evaluate(script);
        } catch (error) {
          if (browser.running === false) throw error;
          throw new ToolError(framedScriptError((error as Error).message), {
            code: "script_error",
            details: { error: (error as Error).message },
          });
        }
        return untrusted(current, resultText(value));
      });
    },
  });
}

/**
 * A script's result as JSON, whatever the page made of it: Playwright hands back BigInts, cycles (an object that
 * holds itself), Dates, RegExps, NaN and the infinities, which JSON.stringify refuses or turns into something else.
 * A BigInt is written `"12n"`, a cycle `"[Circular]"`, a non-finite number by its name; nothing throws.
 */
function resultText(value: unknown): string {
  if (value === undefined) return "undefined";
  const ancestors: object[] = [];
  const plain = (item: unknown): unknown => {
    if (typeof item === "bigint") return `${item}n`;
    if (typeof item === "number") return Number.isFinite(item) ? item : String(item);
    if (typeof item === "undefined") return null;
    if (item === null || typeof item !== "object") return typeof item === "function" ? String(item) : item;
    if (item instanceof Date) return Number.isNaN(item.getTime()) ? "Invalid Date" : item.toISOString();
    if (item instanceof RegExp) return String(item);
    if (ancestors.includes(item)) return "[Circular]";
    ancestors.push(item);
    try {
      if (Array.isArray(item)) return item.map(plain);
      // Own keys written as own properties (never through an inherited setter such as __proto__).
      const out: Record<string, unknown> = Object.create(null);
      for (const key of Object.keys(item)) {
        Object.defineProperty(out, key, {
          value: plain((item as Record<string, unknown>)[key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    } finally {
      ancestors.pop();
    }
  };
  return JSON.stringify(plain(value), null, 2) ?? String(value);
}
