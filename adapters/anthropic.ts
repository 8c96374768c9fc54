/**
 * Anthropic: the `anthropic` dialect (`input_schema`, one object schema with no
 * `anyOf`/`oneOf`/`allOf` at its root) and an adapter that runs the `tool_use`
 * blocks of a message through the toolbox and builds the user message with the
 * `tool_result` blocks (`is_error: true` for failures), then the deferred images.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import type { BatchCall, BatchOptions } from "@toolfence/core";
import type { DeferredImage, ImageMediaType } from "@toolfence/core";
import { toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { base64, CUT_OFF_REASONS, imageNote } from "./_calls.ts";
import { runToolCalls, type ToolCallDialect } from "./tool_call_dialect.ts";
import { SchemaDialectError } from "./dialect_error.ts";
import { toDraft2020 } from "./_draft2020.ts";

/** The input schema of an Anthropic tool: one object schema. */
export interface AnthropicInputSchema {
  /** Always `object`. */
  type: "object";
  /** The arguments. */
  properties?: Record<string, unknown>;
  /** Required argument names. */
  required?: string[];
  /** Any other JSON Schema keyword. */
  [keyword: string]: unknown;
}

/** A client tool of the messages API. */
export interface AnthropicTool {
  /** Tool name. */
  name: string;
  /** Tool description. */
  description: string;
  /** JSON Schema of the input. */
  input_schema: AnthropicInputSchema;
}

/**
 * The tools array of the messages API, each input schema in JSON Schema
 * draft 2020-12 (the API refuses a request with a schema of another draft's
 * form: a tuple is `prefixItems`). Throws `SchemaDialectError` for a
 * schema whose root is not a plain object schema.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { anthropicTools } from "@toolfence/adapters";
 * const echo = tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * console.log(anthropicTools([echo])[0].input_schema.type); // "object"
 * ```
 */
export function anthropicTools(tools: readonly AnyTool[]): AnthropicTool[] {
  return tools.map((t) => {
    // Anthropic takes JSON Schema 2020-12 only: a draft-07 tuple (`items` as a list) failed the whole request.
    const schema = toDraft2020(structuredClone(t.inputSchema));
    for (const keyword of ["anyOf", "oneOf", "allOf"]) {
      if (keyword in schema) {
        throw new SchemaDialectError(
          "anthropic",
          t.name,
          `/${keyword}`,
          `the input schema may not have "${keyword}" at its root`,
        );
      }
    }
    if (schema.type !== "object") {
      throw new SchemaDialectError("anthropic", t.name, "/type", 'the input schema must be of type "object"');
    }
    delete schema.$schema;
    return { name: t.name, description: t.description, input_schema: schema as AnthropicInputSchema };
  });
}

/** A content block of an assistant message (only `tool_use` blocks are read). */
export interface AnthropicContentBlockLike {
  /** The block type. */
  readonly type: string;
}

/** A `tool_use` block. */
export interface AnthropicToolUseLike extends AnthropicContentBlockLike {
  /** Always `tool_use`. */
  readonly type: "tool_use";
  /** The id echoed in the result. */
  readonly id: string;
  /** Tool name. */
  readonly name: string;
  /** The arguments, already parsed. */
  readonly input: unknown;
}

/**
 * A message (its `content` is read, and its `stop_reason`: a `tool_use` block
 * that ends a message stopped at `max_tokens` was cut off) or its content
 * blocks.
 */
export type AnthropicMessageLike =
  | { content: readonly AnthropicContentBlockLike[]; stop_reason?: string | null }
  | readonly AnthropicContentBlockLike[];

/** A `tool_result` block. */
export interface AnthropicToolResultBlock {
  /** Always `tool_result`. */
  type: "tool_result";
  /** The id of the `tool_use` this answers. */
  tool_use_id: string;
  /** What the model reads. */
  content: string;
  /** Present (true) when the call failed. */
  is_error?: true;
}

/** The user message that answers the tool calls. */
export interface AnthropicToolResultMessage {
  /** Always `user`. */
  role: "user";
  /** The `tool_result` blocks in call order, then a note and an image block per deferred image. */
  content: (
    | AnthropicToolResultBlock
    | { type: "text"; text: string }
    | { type: "image"; source: { type: "base64"; media_type: ImageMediaType; data: string } }
  )[];
}

/** What the adapter returns. */
export interface AnthropicRun {
  /** The user message to append. */
  message: AnthropicToolResultMessage;
  /** The lossless results, in call order. */
  results: ToolResult[];
  /** The images the tools deferred. */
  images: DeferredImage[];
}

function isToolUse(block: AnthropicContentBlockLike): block is AnthropicToolUseLike {
  return block.type === "tool_use";
}

/**
 * The `tool_use` blocks of a message, as batch calls.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { anthropicCalls, type AnthropicToolUseLike } from "@toolfence/adapters";
 * const toolUse: AnthropicToolUseLike = { type: "tool_use", id: "t1", name: "echo", input: { text: "hi" } };
 * console.log(anthropicCalls({ content: [toolUse] }));
 * ```
 */
export function anthropicCalls<M extends AnthropicMessageLike>(message: M): BatchCall[] {
  const read: AnthropicMessageLike = message;
  const blocks = "content" in read ? read.content : read as readonly AnthropicContentBlockLike[];
  return blocks.filter(isToolUse).map((block) => ({ name: block.name, args: block.input, callId: block.id }));
}

// The `tool_use` block a message stopped in the middle of: the last block of
// a message whose `stop_reason` is `max_tokens` (or
// `model_context_window_exceeded`, or `refusal`: the streaming classifiers
// stop an answer wherever it is). Its input is what arrived (the SDK's
// stream parses the partial JSON and keeps the keys that were complete), not
// what the model meant.
function anthropicCutOff<M extends AnthropicMessageLike>(message: M): { callId: string; why: string } | undefined {
  const read: AnthropicMessageLike = message;
  if (!("content" in read) || !CUT_OFF_REASONS.has(read.stop_reason ?? "")) return undefined;
  const last = read.content.at(-1);
  return last && isToolUse(last) ? { callId: last.id, why: `stop_reason "${read.stop_reason}"` } : undefined;
}

/**
 * The user message that answers tool calls: `tool_result` blocks (with
 * `is_error: true` for anything but success), then the deferred images.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * import { anthropicResultMessage } from "@toolfence/adapters";
 * const result = makeResult({ status: "success", toolName: "echo", callId: "t1", output: "hi" });
 * console.log(anthropicResultMessage([result], []).content); // [{ type: "tool_result", tool_use_id: "t1", content: "hi" }]
 * ```
 */
export function anthropicResultMessage(
  results: readonly ToolResult[],
  images: readonly DeferredImage[],
): AnthropicToolResultMessage {
  const content: AnthropicToolResultMessage["content"] = results.map((result) => ({
    type: "tool_result" as const,
    tool_use_id: result.callId ?? "",
    content: nonBlank(toModelText(result)),
    ...(result.status === "success" ? {} : { is_error: true as const }),
  }));
  for (const image of images) {
    content.push({ type: "text", text: imageNote(image) });
    content.push({ type: "image", source: { type: "base64", media_type: image.mediaType, data: base64(image.data) } });
  }
  return { role: "user", content };
}

// The API refuses a text that is empty or only whitespace ("text content blocks must be non-empty", "... must contain
// non-whitespace text"), a tool_result's string content too, and goes on refusing every later request while it stays in
// the conversation: a tool that returned nothing (or a command's blank line) is named so instead.
function nonBlank(text: string): string {
  if (text.trim() !== "") return text;
  if (text === "") return "(no output)";
  return text.length <= 40
    ? `(only whitespace: ${JSON.stringify(text)})`
    : `(only whitespace, ${text.length} characters)`;
}

/**
 * Runs the `tool_use` blocks of a message through `toolbox.callMany` and
 * returns the user message to send back, with the lossless results. A
 * `tool_use` block cut off at `max_tokens` (the message's last block) does
 * not run: the model reads that it was cut off.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session } from "@toolfence/policy";
 * import { ToolBox } from "@toolfence/core";
 * import { type AnthropicToolUseLike, runAnthropicToolCalls } from "@toolfence/adapters";
 * const box = new ToolBox();
 * box.tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * const session = new Session({ workspace: Deno.cwd() });
 * const toolUse: AnthropicToolUseLike = { type: "tool_use", id: "t1", name: "echo", input: { text: 1 } };
 * const { message } = await runAnthropicToolCalls(box, session, { content: [toolUse] });
 * console.log(message.content[0]); // { type: "tool_result", ..., is_error: true }
 * await session.close();
 * ```
 */
export async function runAnthropicToolCalls<T = unknown, M extends AnthropicMessageLike = AnthropicMessageLike>(
  toolbox: ToolBox,
  session: Session,
  message: M,
  options: BatchOptions<T> = {},
): Promise<AnthropicRun> {
  const { reply, results, images } = await runToolCalls(anthropic, toolbox, session, message, options);
  return { message: reply, results, images };
}

/**
 * Anthropic messages: tools as `{ name, description, input_schema }`, calls
 * from the `tool_use` blocks (their input is already parsed and not strict;
 * the last one of a message stopped at `max_tokens` is cut off and not run),
 * results as one user message of `tool_result` blocks and the images.
 */
export const anthropic: ToolCallDialect<AnthropicMessageLike, AnthropicToolResultMessage> = Object.freeze({
  name: "anthropic",
  render: (tools: readonly AnyTool[]): unknown[] => anthropicTools(tools),
  calls: (message: AnthropicMessageLike): BatchCall[] => anthropicCalls(message),
  cutOff: (message: AnthropicMessageLike) => anthropicCutOff(message),
  reply: anthropicResultMessage,
});
