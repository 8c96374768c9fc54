/**
 * The provider adapters (`@toolfence/toolfence/adapters`): the dialects for
 * `toolbox.schemas(...)` (registered on import), OpenAI chat completions and
 * responses, Anthropic messages, Gemini and the Vercel AI SDK. The MCP server
 * is its own entry point, `@toolfence/toolfence/mcp`, so that importing this
 * module never loads the MCP SDK.
 *
 * @example
 * ```ts
 * import { ToolBox } from "../core/mod.ts";
 * import "./mod.ts";
 * console.log(new ToolBox().schemas("openai-responses")); // []
 * ```
 *
 * @module
 */

export * from "./dialects.ts";
export * from "./dialect_error.ts";
export * from "./strict_schema.ts";
export * from "./openai.ts";
export * from "./anthropic.ts";
export * from "./gemini.ts";
export * from "./ai_sdk.ts";
export * from "./mcp/dialect.ts";
