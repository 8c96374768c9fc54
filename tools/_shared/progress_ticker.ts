/**
 * Progress once a second for a tool that waits (a sleep, a command): a client
 * that asked for progress (an MCP progress token) hears that the call is alive.
 *
 * @module
 */

import type { ToolContext } from "@toolfence/core";

const EVERY_MS = 1_000;

/**
 * Calls `ctx.progress` once a second with what `report` says of the seconds
 * gone; returns the function that stops it.
 */
export function progressTicker(
  ctx: Pick<ToolContext, "progress">,
  report: (seconds: number) => [message: string, fraction?: number],
): () => void {
  const started = performance.now();
  const ticker = setInterval(() => ctx.progress(...report((performance.now() - started) / 1000)), EVERY_MS);
  return () => clearInterval(ticker);
}
