/**
 * OpenAI: the `openai-chat` and `openai-responses` dialects, and adapters that
 * run the tool calls of a chat completion or a response through the toolbox and
 * build the messages that carry the results back.
 *
 * Both dialects use strict mode by default: every object closed, every
 * property required, optional properties nullable, records as `{key, value}`
 * lists (see {@linkcode toStrictSchema}). The adapters map what the model sends
 * back with {@linkcode fromStrictArguments} before validation, so nothing is
 * lost. OpenAI has no error flag on tool results; a failure's text says so.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import type { JsonSchema } from "@toolfence/core";
import type { BatchCall, BatchOptions } from "@toolfence/core";
import type { DeferredImage } from "@toolfence/core";
import { toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { CUT_OFF_REASONS, dataUrl, imageNote, restoreCall } from "./_calls.ts";
import { runToolCalls, type ToolCallDialect } from "./tool_call_dialect.ts";
import { SchemaDialectError } from "./dialect_error.ts";
import { toStrictSchema } from "./strict_schema.ts";
import { openAIDescription } from "./_openai_description.ts";

/** Options of the OpenAI dialects. */
export interface OpenAIDialectOptions {
  /**
   * `true` (default): strict schemas, and a tool strict mode cannot express
   * fails. `false`: the tools' JSON Schema as it is, `strict: false`. `"auto"`:
   * strict where possible, the plain schema for the tools that cannot be strict.
   */
  strict?: boolean | "auto";
}

/** A function tool of the chat completions API. */
export interface OpenAIChatTool {
  /** Always `function`. */
  type: "function";
  /** The function. */
  function: {
    /** Tool name. */
    name: string;
    /** Tool description. */
    description: string;
    /** JSON Schema of the arguments. */
    parameters: JsonSchema;
    /** Whether the model must follow the schema exactly. */
    strict: boolean;
  };
}

/** A function tool of the responses API. */
export interface OpenAIResponsesTool {
  /** Always `function`. */
  type: "function";
  /** Tool name. */
  name: string;
  /** Tool description. */
  description: string;
  /** JSON Schema of the arguments. */
  parameters: JsonSchema;
  /** Whether the model must follow the schema exactly. */
  strict: boolean;
}

function parametersFor(
  t: AnyTool,
  dialect: string,
  strict: boolean | "auto",
): { parameters: JsonSchema; strict: boolean } {
  if (strict === false) return { parameters: structuredClone(t.inputSchema), strict: false };
  try {
    return { parameters: toStrictSchema(t.inputSchema, t.name, dialect), strict: true };
  } catch (error) {
    if (strict === "auto" && error instanceof SchemaDialectError) {
      return { parameters: structuredClone(t.inputSchema), strict: false };
    }
    throw error;
  }
}

/**
 * The tools array of the chat completions API. Throws
 * `SchemaDialectError` for a tool strict mode cannot express (unless
 * `strict` is `false` or `"auto"`), and for a tool whose description is
 * longer than the 1024 characters OpenAI takes (whatever `strict` is).
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { openAIChatTools } from "@toolfence/adapters";
 * const echo = tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * console.log(JSON.stringify(openAIChatTools([echo])));
 * ```
 */
export function openAIChatTools(tools: readonly AnyTool[], options: OpenAIDialectOptions = {}): OpenAIChatTool[] {
  return tools.map((t) => ({
    type: "function",
    function: {
      name: t.name,
      description: openAIDescription(t, "openai-chat"),
      ...parametersFor(t, "openai-chat", options.strict ?? true),
    },
  }));
}

/**
 * The tools array of the responses API (same rules as {@linkcode openAIChatTools}).
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { openAIResponsesTools } from "@toolfence/adapters";
 * const echo = tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * console.log(openAIResponsesTools([echo])[0].strict); // true
 * ```
 */
export function openAIResponsesTools(
  tools: readonly AnyTool[],
  options: OpenAIDialectOptions = {},
): OpenAIResponsesTool[] {
  return tools.map((t) => ({
    type: "function",
    name: t.name,
    description: openAIDescription(t, "openai-responses"),
    ...parametersFor(t, "openai-responses", options.strict ?? true),
  }));
}

// ------------------------------------------------------------ chat completions

/** A tool call as a chat completion message carries it (function or custom). */
export interface OpenAIChatToolCallLike {
  /** The call id, echoed in the result message. */
  id: string;
  /** `function` (or `custom` for custom tools). */
  type: string;
  /** A function call's name and JSON arguments. */
  function?: { name: string; arguments: string };
  /** A custom tool call's name and free-text input. */
  custom?: { name: string; input: string };
}

/** An assistant message of the chat completions API, as far as tool calls go. */
export interface OpenAIChatMessageLike {
  /** The tool calls, when the model made any. */
  tool_calls?: readonly OpenAIChatToolCallLike[] | null;
}

/**
 * A chat completion (the first choice's message is read, and its
 * `finish_reason`: the last tool call of a choice that stopped at `length`
 * or `content_filter` was cut off), or just its message.
 */
export type OpenAIChatResponseLike =
  | { choices: readonly { message: OpenAIChatMessageLike; finish_reason?: string | null }[] }
  | OpenAIChatMessageLike;

/** The result of one tool call, as a `tool` message. */
export interface OpenAIChatToolMessage {
  /** Always `tool`. */
  role: "tool";
  /** The id of the call this answers. */
  tool_call_id: string;
  /** What the model reads. */
  content: string;
}

/** A user message carrying deferred images after the tool messages. */
export interface OpenAIChatImageMessage {
  /** Always `user`. */
  role: "user";
  /** A note, then the image, for each image. */
  content: ({ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } })[];
}

/** What the chat adapter returns. */
export interface OpenAIChatRun {
  /** The messages to append to the conversation, in order: one `tool` message per call, then the images. */
  messages: (OpenAIChatToolMessage | OpenAIChatImageMessage)[];
  /** The lossless results, in call order. */
  results: ToolResult[];
  /** The images the tools deferred. */
  images: DeferredImage[];
}

/**
 * The tool calls of a chat completion (its first choice) or of an assistant
 * message, as batch calls. Arguments stay JSON text here; the run functions
 * parse and map them.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { openAIChatCalls } from "@toolfence/adapters";
 * const calls = openAIChatCalls({
 *   tool_calls: [{ id: "c1", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }],
 * });
 * console.log(calls); // [{ name: "echo", args: '{"text":"hi"}', callId: "c1" }]
 * ```
 */
export function openAIChatCalls<R extends OpenAIChatResponseLike>(response: R): BatchCall[] {
  const read: OpenAIChatResponseLike = response;
  const message = "choices" in read ? read.choices[0]?.message : read;
  return (message?.tool_calls ?? []).map((call) => {
    if (call.function) return { name: call.function.name, args: call.function.arguments, callId: call.id };
    return { name: call.custom?.name ?? "", args: call.custom?.input, callId: call.id };
  });
}

// The tool call a chat completion stopped in the middle of: the last one of
// its first choice when that choice's `finish_reason` is `length` (the
// output limit, or the context window, was reached while the model wrote
// it) or `content_filter` (the filter stopped the answer there). Its arguments are what arrived, not what the model meant.
function openAIChatCutOff<R extends OpenAIChatResponseLike>(
  response: R,
): { callId: string; why: string } | undefined {
  const read: OpenAIChatResponseLike = response;
  if (!("choices" in read)) return undefined;
  const reason = read.choices[0]?.finish_reason;
  if (typeof reason !== "string" || !CUT_OFF_REASONS.has(reason)) return undefined;
  const last = read.choices[0].message.tool_calls?.at(-1);
  return last ? { callId: last.id, why: `finish_reason "${reason}"` } : undefined;
}

/**
 * The messages that answer a chat completion's tool calls: one `tool` message
 * per result, then one user message with the images, if any.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * import { openAIChatResultMessages } from "@toolfence/adapters";
 * const result = makeResult({ status: "success", toolName: "echo", callId: "c1", output: "hi" });
 * console.log(openAIChatResultMessages([result], [])); // [{ role: "tool", tool_call_id: "c1", content: "hi" }]
 * ```
 */
export function openAIChatResultMessages(
  results: readonly ToolResult[],
  images: readonly DeferredImage[],
): (OpenAIChatToolMessage | OpenAIChatImageMessage)[] {
  const messages: (OpenAIChatToolMessage | OpenAIChatImageMessage)[] = results.map((result) => ({
    role: "tool",
    tool_call_id: result.callId ?? "",
    content: toModelText(result),
  }));
  if (images.length > 0) {
    messages.push({
      role: "user",
      content: images.flatMap((image) => [
        { type: "text" as const, text: imageNote(image) },
        { type: "image_url" as const, image_url: { url: dataUrl(image) } },
      ]),
    });
  }
  return messages;
}

/**
 * Runs the tool calls of a chat completion through `toolbox.callMany` and
 * returns the messages to send back, with the lossless results.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session } from "@toolfence/policy";
 * import { ToolBox } from "@toolfence/core";
 * import { runOpenAIChatToolCalls } from "@toolfence/adapters";
 * const box = new ToolBox();
 * box.tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * const session = new Session({ workspace: Deno.cwd() });
 * const { messages } = await runOpenAIChatToolCalls(box, session, {
 *   choices: [{
 *     message: { tool_calls: [{ id: "c1", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }] },
 *   }],
 * });
 * console.log(messages); // [{ role: "tool", tool_call_id: "c1", content: "hi" }]
 * await session.close();
 * ```
 */
export async function runOpenAIChatToolCalls<T = unknown, R extends OpenAIChatResponseLike = OpenAIChatResponseLike>(
  toolbox: ToolBox,
  session: Session,
  response: R,
  options: BatchOptions<T> = {},
): Promise<OpenAIChatRun> {
  const { reply, results, images } = await runToolCalls(openAIChat, toolbox, session, response, options);
  return { messages: reply, results, images };
}

/**
 * OpenAI chat completions: tools as `{ type: "function", function: { name,
 * description, parameters, strict } }`, calls from the first choice's
 * `tool_calls` (strict-mode arguments mapped back), results as `tool`
 * messages and a user message with the images.
 */
export const openAIChat: ToolCallDialect<OpenAIChatResponseLike, (OpenAIChatToolMessage | OpenAIChatImageMessage)[]> =
  Object.freeze({
    name: "openai-chat",
    render: (tools: readonly AnyTool[], options?: Record<string, unknown>): unknown[] =>
      openAIChatTools(tools, options as OpenAIDialectOptions | undefined),
    calls: (response: OpenAIChatResponseLike, toolbox: ToolBox): BatchCall[] =>
      openAIChatCalls(response).map((call) => restoreCall(toolbox, call)),
    cutOff: (response: OpenAIChatResponseLike) => openAIChatCutOff(response),
    reply: openAIChatResultMessages,
  });

// ------------------------------------------------------------------ responses

/** An item of a response's `output` (only `function_call` items are read). */
export interface OpenAIResponsesItemLike {
  /** The item type. */
  readonly type: string;
}

/** A function call item of the responses API. */
export interface OpenAIResponsesFunctionCallLike extends OpenAIResponsesItemLike {
  /** Always `function_call`. */
  readonly type: "function_call";
  /** The id echoed in the output item. */
  readonly call_id: string;
  /** Tool name. */
  readonly name: string;
  /** JSON arguments. */
  readonly arguments: string;
  /** `incomplete` when the response stopped while the model wrote the arguments. */
  readonly status?: string;
}

/**
 * A response (its `output` is read, and its `status`: a function call that
 * ends a response `incomplete` at `max_output_tokens` was cut off), or its
 * output items.
 */
export type OpenAIResponsesResponseLike =
  | {
    output: readonly OpenAIResponsesItemLike[];
    status?: string | null;
    incomplete_details?: { reason?: string | null } | null;
  }
  | readonly OpenAIResponsesItemLike[];

/** The result of one call as a `function_call_output` input item. */
export interface OpenAIResponsesCallOutput {
  /** Always `function_call_output`. */
  type: "function_call_output";
  /** The id of the call this answers. */
  call_id: string;
  /** What the model reads. */
  output: string;
}

/** A user message carrying deferred images after the call outputs. */
export interface OpenAIResponsesImageMessage {
  /** Always `message`. */
  type: "message";
  /** Always `user`. */
  role: "user";
  /** A note, then the image, for each image. */
  content: ({ type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "auto" })[];
}

/** What the responses adapter returns. */
export interface OpenAIResponsesRun {
  /** Input items for the next request: one output per call, then the images. */
  items: (OpenAIResponsesCallOutput | OpenAIResponsesImageMessage)[];
  /** The lossless results, in call order. */
  results: ToolResult[];
  /** The images the tools deferred. */
  images: DeferredImage[];
}

function isFunctionCall(item: OpenAIResponsesItemLike): item is OpenAIResponsesFunctionCallLike {
  return item.type === "function_call";
}

/**
 * The `function_call` items of a response, as batch calls.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { type OpenAIResponsesFunctionCallLike, openAIResponsesCalls } from "@toolfence/adapters";
 * const call: OpenAIResponsesFunctionCallLike = { type: "function_call", call_id: "c1", name: "echo", arguments: "{}" };
 * const calls = openAIResponsesCalls({ output: [call] });
 * console.log(calls); // [{ name: "echo", args: "{}", callId: "c1" }]
 * ```
 */
export function openAIResponsesCalls<R extends OpenAIResponsesResponseLike>(response: R): BatchCall[] {
  const read: OpenAIResponsesResponseLike = response;
  const items = "output" in read ? read.output : read as readonly OpenAIResponsesItemLike[];
  return items.filter(isFunctionCall).map((item) => ({ name: item.name, args: item.arguments, callId: item.call_id }));
}

// The function call a response stopped in the middle of: one whose `status`
// is `incomplete`, or the last output item of a response `incomplete` at
// `max_output_tokens`. Its arguments are what arrived, not what the model
// meant.
function openAIResponsesCutOff<R extends OpenAIResponsesResponseLike>(
  response: R,
): { callId: string; why: string } | undefined {
  const read: OpenAIResponsesResponseLike = response;
  const items = "output" in read ? read.output : read as readonly OpenAIResponsesItemLike[];
  const cut = items.find((item) => isFunctionCall(item) && item.status === "incomplete");
  const last = items.at(-1);
  const call = cut ??
    ("output" in read && read.status === "incomplete" && last && isFunctionCall(last) ? last : undefined);
  if (call === undefined || !isFunctionCall(call)) return undefined;
  const reason = "output" in read ? read.incomplete_details?.reason : undefined;
  return { callId: call.call_id, why: reason ? `"${reason}"` : "an incomplete response" };
}

/**
 * The input items that answer a response's function calls: one
 * `function_call_output` per result, then one user message with the images.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * import { openAIResponsesResultItems } from "@toolfence/adapters";
 * const result = makeResult({ status: "success", toolName: "echo", callId: "c1", output: "hi" });
 * console.log(openAIResponsesResultItems([result], [])); // [{ type: "function_call_output", call_id: "c1", output: "hi" }]
 * ```
 */
export function openAIResponsesResultItems(
  results: readonly ToolResult[],
  images: readonly DeferredImage[],
): (OpenAIResponsesCallOutput | OpenAIResponsesImageMessage)[] {
  const items: (OpenAIResponsesCallOutput | OpenAIResponsesImageMessage)[] = results.map((result) => ({
    type: "function_call_output",
    call_id: result.callId ?? "",
    output: toModelText(result),
  }));
  if (images.length > 0) {
    items.push({
      type: "message",
      role: "user",
      content: images.flatMap((image) => [
        { type: "input_text" as const, text: imageNote(image) },
        { type: "input_image" as const, image_url: dataUrl(image), detail: "auto" as const },
      ]),
    });
  }
  return items;
}

/**
 * Runs the function calls of a response through `toolbox.callMany` and returns
 * the input items to send back, with the lossless results.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session } from "@toolfence/policy";
 * import { ToolBox } from "@toolfence/core";
 * import { type OpenAIResponsesFunctionCallLike, runOpenAIResponsesToolCalls } from "@toolfence/adapters";
 * const box = new ToolBox();
 * box.tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * const session = new Session({ workspace: Deno.cwd() });
 * const call: OpenAIResponsesFunctionCallLike = {
 *   type: "function_call",
 *   call_id: "c1",
 *   name: "echo",
 *   arguments: '{"text":"hi"}',
 * };
 * const { items } = await runOpenAIResponsesToolCalls(box, session, { output: [call] });
 * console.log(items);
 * await session.close();
 * ```
 */
export async function runOpenAIResponsesToolCalls<
  T = unknown,
  R extends OpenAIResponsesResponseLike = OpenAIResponsesResponseLike,
>(
  toolbox: ToolBox,
  session: Session,
  response: R,
  options: BatchOptions<T> = {},
): Promise<OpenAIResponsesRun> {
  const { reply, results, images } = await runToolCalls(openAIResponses, toolbox, session, response, options);
  return { items: reply, results, images };
}

/**
 * OpenAI responses: tools as `{ type: "function", name, description,
 * parameters, strict }`, calls from the `function_call` output items
 * (strict-mode arguments mapped back), results as `function_call_output`
 * items and a user message with the images.
 */
export const openAIResponses: ToolCallDialect<
  OpenAIResponsesResponseLike,
  (OpenAIResponsesCallOutput | OpenAIResponsesImageMessage)[]
> = Object.freeze({
  name: "openai-responses",
  render: (tools: readonly AnyTool[], options?: Record<string, unknown>): unknown[] =>
    openAIResponsesTools(tools, options as OpenAIDialectOptions | undefined),
  calls: (response: OpenAIResponsesResponseLike, toolbox: ToolBox): BatchCall[] =>
    openAIResponsesCalls(response).map((call) => restoreCall(toolbox, call)),
  cutOff: (response: OpenAIResponsesResponseLike) => openAIResponsesCutOff(response),
  reply: openAIResponsesResultItems,
});
