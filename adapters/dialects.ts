/**
 * The provider dialects as values, for `toolbox.schemas(openAIChat)`, and
 * {@linkcode PROVIDER_DIALECTS}, the same dialects by name (what the umbrella's
 * `ToolBox` and the command line look names up in). Importing this module
 * registers nothing and loads no provider SDK, nor the MCP SDK.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/core";
 * import { anthropic } from "@toolfence/adapters";
 * console.log(new ToolBox().schemas(anthropic)); // []
 * ```
 *
 * @module
 */

import type { AnyTool, Dialect, Dialects } from "@toolfence/core";
import { anthropicTools } from "./anthropic.ts";
import { geminiTools } from "./gemini.ts";
import { mcpTools } from "./mcp/dialect.ts";
import { openAIChatTools, type OpenAIDialectOptions, openAIResponsesTools } from "./openai.ts";

/** OpenAI chat completions: `{ type: "function", function: { name, description, parameters, strict } }`. */
export const openAIChat: Dialect = Object.freeze({
  name: "openai-chat",
  render: (tools: readonly AnyTool[], options?: Record<string, unknown>): unknown[] =>
    openAIChatTools(tools, options as OpenAIDialectOptions | undefined),
});

/** OpenAI responses: `{ type: "function", name, description, parameters, strict }`. */
export const openAIResponses: Dialect = Object.freeze({
  name: "openai-responses",
  render: (tools: readonly AnyTool[], options?: Record<string, unknown>): unknown[] =>
    openAIResponsesTools(tools, options as OpenAIDialectOptions | undefined),
});

/** Anthropic messages: `{ name, description, input_schema }`. */
export const anthropic: Dialect = Object.freeze({
  name: "anthropic",
  render: (tools: readonly AnyTool[]): unknown[] => anthropicTools(tools),
});

/** Gemini: one `{ functionDeclarations }` entry holding every tool. */
export const gemini: Dialect = Object.freeze({
  name: "gemini",
  render: (tools: readonly AnyTool[]): unknown[] => geminiTools(tools),
});

/** MCP `tools/list` entries: name, title, description, input schema and annotations. */
export const mcp: Dialect = Object.freeze({
  name: "mcp",
  render: (tools: readonly AnyTool[]): unknown[] => mcpTools(tools),
});

/** The provider dialects by name, besides the core's `json-schema`. */
export const PROVIDER_DIALECTS: Dialects = Object.freeze({
  "openai-chat": openAIChat,
  "openai-responses": openAIResponses,
  anthropic,
  gemini,
  mcp,
});
