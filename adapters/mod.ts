/**
 * The provider adapters (`@toolfence/toolfence/adapters`): the dialects for
 * `toolbox.schemas(...)` (registered on import), OpenAI chat completions and
 * responses, Anthropic messages, Gemini and the Vercel AI SDK. The MCP server
 * is its own entry point, `@toolfence/toolfence/mcp`, so that importing this
 * module never loads the MCP SDK.
 *
 * @example
 * ```ts
 * import { ToolBox } from "@toolfence/toolfence";
 * import "@toolfence/adapters";
 * console.log(new ToolBox().schemas("openai-responses")); // []
 * ```
 *
 * @module
 */

export { anthropic, gemini, mcp, openAIChat, openAIResponses, PROVIDER_DIALECTS } from "./dialects.ts";
export { SchemaDialectError } from "./dialect_error.ts";
export { declinedCallText } from "./declined_call.ts";
export { fromStrictArguments, toStrictSchema } from "./strict_schema.ts";
export {
  openAIChatCalls,
  type OpenAIChatImageMessage,
  type OpenAIChatMessageLike,
  type OpenAIChatResponseLike,
  openAIChatResultMessages,
  type OpenAIChatRun,
  type OpenAIChatTool,
  type OpenAIChatToolCallLike,
  type OpenAIChatToolMessage,
  openAIChatTools,
  type OpenAIDialectOptions,
  type OpenAIResponsesCallOutput,
  openAIResponsesCalls,
  type OpenAIResponsesFunctionCallLike,
  type OpenAIResponsesImageMessage,
  type OpenAIResponsesItemLike,
  type OpenAIResponsesResponseLike,
  openAIResponsesResultItems,
  type OpenAIResponsesRun,
  type OpenAIResponsesTool,
  openAIResponsesTools,
  runOpenAIChatToolCalls,
  runOpenAIResponsesToolCalls,
} from "./openai.ts";
export {
  anthropicCalls,
  type AnthropicContentBlockLike,
  type AnthropicInputSchema,
  type AnthropicMessageLike,
  anthropicResultMessage,
  type AnthropicRun,
  type AnthropicTool,
  type AnthropicToolResultBlock,
  type AnthropicToolResultMessage,
  anthropicTools,
  type AnthropicToolUseLike,
  runAnthropicToolCalls,
} from "./anthropic.ts";
export {
  geminiCalls,
  type GeminiContentLike,
  type GeminiFunctionDeclaration,
  type GeminiPartLike,
  type GeminiResponseLike,
  type GeminiResultContent,
  geminiResultContent,
  type GeminiResultPart,
  type GeminiRun,
  type GeminiSchema,
  type GeminiTool,
  geminiTools,
  type GeminiType,
  runGeminiToolCalls,
} from "./gemini.ts";
export { mcpAnnotations, type McpToolAnnotations, mcpTools, type McpToolSpec, titleOf } from "./mcp/dialect.ts";
