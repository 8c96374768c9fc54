/**
 * The `sleep` tool.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { SLEEP_OUTPUT } from "./_outputs.ts";
import { progressTicker } from "../_shared/progress_ticker.ts";

/** Arguments of `sleep`. */
export interface SleepArgs {
  /** How long to wait, in seconds. */
  seconds: number;
}

/**
 * `sleep(seconds)`: waits, at most 10 minutes, reporting progress once a second;
 * a cancel or timeout of the call ends it at once.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { sleepTool } from "@toolfence/tools";
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await new ToolBox().register(sleepTool).call(session, "sleep", { seconds: 0.1 })).output);
 * await session.close();
 * ```
 */
export const sleepTool: Tool<SleepArgs> = tool({
  name: "sleep",
  description: "Wait for the given number of seconds (at most 600), e.g. before checking on a background job again.",
  input: v.object({
    seconds: v.pipe(v.number(), v.minValue(0), v.maxValue(600), v.description("How long to wait, in seconds.")),
  }),
  output: SLEEP_OUTPUT,
  idempotent: true,
  needs: {},
  run({ seconds }, ctx): Promise<{ slept_ms: number }> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      if (ctx.signal.aborted) return reject(ctx.signal.reason);
      const stopTicking = progressTicker(
        ctx,
        (slept) => [`slept ${Math.round(slept)} s of ${seconds} s`, Math.min(1, slept / seconds)],
      );
      const onAbort = () => {
        clearTimeout(timer);
        stopTicking();
        reject(ctx.signal.reason);
      };
      const timer = setTimeout(() => {
        stopTicking();
        ctx.signal.removeEventListener("abort", onAbort);
        resolve({ slept_ms: Math.round(performance.now() - started) });
      }, seconds * 1000);
      ctx.signal.addEventListener("abort", onAbort, { once: true });
    });
  },
});
