/**
 * One provider's tool calling as three parts: render the schemas, read the
 * calls, write the results. {@linkcode runToolCalls} is the one loop that
 * serves every such dialect.
 *
 * @module
 */

import type { BatchCall, BatchOptions, DeferredImage, Dialect, ToolBox, ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import { cutOffResult, refusalOf } from "./_calls.ts";

/**
 * A provider's dialect with its tool calling: `render` (from `Dialect`) turns
 * tools into the provider's tools array, `calls` reads the tool calls of a
 * response as batch calls with the tool's own argument shape, and `reply`
 * writes the results (and the images the tools deferred) as what the
 * provider takes back.
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * import { type ToolCallDialect } from "@toolfence/adapters";
 * const plain: ToolCallDialect<{ calls: { name: string; args: unknown }[] }, string[]> = {
 *   name: "plain",
 *   render: (tools) => tools.map((t) => t.name),
 *   calls: (response) => response.calls.map((c, i) => ({ ...c, callId: `c${i}` })),
 *   reply: (results) => results.map((r) => `${r.callId}: ${r.status}`),
 * };
 * console.log(plain.reply([makeResult({ status: "success", toolName: "t", callId: "c0", output: "" })], []));
 * ```
 */
export interface ToolCallDialect<Response, Reply> extends Dialect {
  /**
   * The tool calls of `response`, in order. `toolbox` is there to map the
   * arguments back from the rendered form (strict mode's nulls and
   * `{key, value}` lists) to the tool's own shape.
   */
  calls(response: Response, toolbox: ToolBox): BatchCall[];
  /**
   * The call the response says was cut off: the model reached its output
   * limit while writing its arguments (Anthropic's `stop_reason`
   * `max_tokens`, OpenAI's `finish_reason` `length`), so what arrived of them
   * is not what the model meant (the Anthropic SDK's stream parses the
   * partial JSON into an object missing its last keys). Its id and why, or
   * `undefined`. {@linkcode runToolCalls} answers that call without running
   * it.
   */
  cutOff?(response: Response): { callId: string; why: string } | undefined;
  /** What answers the calls: one entry per result, in call order, then the images. */
  reply(results: readonly ToolResult[], images: readonly DeferredImage[]): Reply;
}

/** What {@linkcode runToolCalls} returns. */
export interface ToolCallRun<Reply> {
  /** What to send back to the provider. */
  reply: Reply;
  /** The lossless results, in call order. */
  results: ToolResult[];
  /** The images the tools deferred. */
  images: DeferredImage[];
}

/**
 * Runs the tool calls of a provider's response through `toolbox.callMany`
 * and returns the reply to send back, with the lossless results: the one
 * loop behind `runOpenAIChatToolCalls`, `runAnthropicToolCalls` and the
 * others.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session } from "@toolfence/policy";
 * import { ToolBox } from "@toolfence/core";
 * import { anthropic, type AnthropicToolUseLike, runToolCalls } from "@toolfence/adapters";
 * const box = new ToolBox();
 * box.tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * const session = new Session({ workspace: Deno.cwd() });
 * const toolUse: AnthropicToolUseLike = { type: "tool_use", id: "t1", name: "echo", input: { text: "hi" } };
 * const { reply } = await runToolCalls(anthropic, box, session, { content: [toolUse] });
 * console.log(reply.content); // [{ type: "tool_result", tool_use_id: "t1", content: "hi" }]
 * await session.close();
 * ```
 */
export async function runToolCalls<Response, Reply, T = unknown, R extends Response = Response>(
  dialect: ToolCallDialect<Response, Reply>,
  toolbox: ToolBox,
  session: Session,
  response: R,
  options: BatchOptions<T> = {},
): Promise<ToolCallRun<Reply>> {
  const calls = dialect.calls(response, toolbox);
  // A call cut off at the output limit does not run: its arguments lack what the model did not get to write. Nor
  // does one whose arguments restoring found wrong (a map's list it could not map back).
  const cut = dialect.cutOff?.(response);
  const at = cut === undefined ? -1 : calls.findIndex((call) => call.callId === cut.callId);
  const answered = calls.map((call, i) => i === at ? cutOffResult(call.name, cut!.callId, cut!.why) : refusalOf(call));
  const run = await toolbox.callMany(session, calls.filter((_, i) => answered[i] === undefined), options);
  let next = 0;
  const results = answered.map((result) => result ?? run.results[next++]);
  return { reply: dialect.reply(results, run.images), results, images: run.images };
}
