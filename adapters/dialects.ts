/**
 * The MCP dialect, and {@linkcode PROVIDER_DIALECTS}: the provider dialects by
 * name (what the umbrella's `ToolBox` and the command line look names up in).
 * Each provider's dialect is a value in its own module (`openAIChat` in
 * `openai.ts`, ...), with its three parts: render, calls, reply. Importing this module
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
import { anthropic } from "./anthropic.ts";
import { gemini } from "./gemini.ts";
import { mcpTools } from "./mcp/dialect.ts";
import { openAIChat, openAIResponses } from "./openai.ts";

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
