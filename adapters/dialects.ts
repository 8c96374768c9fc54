/**
 * Registers the provider dialects with the core, so that
 * `toolbox.schemas("openai-chat" | "openai-responses" | "anthropic" | "gemini" | "mcp")`
 * works once this module is imported (`adapters/mod.ts` and the package root
 * import it). Importing it loads no provider SDK and not the MCP SDK.
 *
 * @example
 * ```ts
 * import "./dialects.ts";
 * import { ToolBox } from "../core/mod.ts";
 * console.log(new ToolBox().schemas("anthropic")); // []
 * ```
 *
 * @module
 */

import { registerDialect } from "../core/dialects.ts";
import { anthropicTools } from "./anthropic.ts";
import { geminiTools } from "./gemini.ts";
import { mcpTools } from "./mcp/dialect.ts";
import { openAIChatTools, type OpenAIDialectOptions, openAIResponsesTools } from "./openai.ts";

registerDialect("openai-chat", (tools, options) => openAIChatTools(tools, options as OpenAIDialectOptions));
registerDialect("openai-responses", (tools, options) => openAIResponsesTools(tools, options as OpenAIDialectOptions));
registerDialect("anthropic", (tools) => anthropicTools(tools));
registerDialect("gemini", (tools) => geminiTools(tools));
registerDialect("mcp", (tools) => mcpTools(tools));

/** The dialects this module registers, besides the core's `json-schema`. */
export const PROVIDER_DIALECTS: readonly string[] = ["openai-chat", "openai-responses", "anthropic", "gemini", "mcp"];
