/**
 * The provider adapters (`@toolfence/adapters`; the umbrella
 * `@toolfence/toolfence` re-exports the provider names): the dialects for
 * `toolbox.schemas(...)` (registered on import), OpenAI chat completions and
 * responses, Anthropic messages and Gemini. The Vercel AI SDK's tools
 * (`@toolfence/adapters/ai-sdk`), each agent framework's
 * (`@toolfence/adapters/openai-agents`, `/langchain`, `/langgraph`,
 * `/mastra`, `/google-adk`, `/claude-agent`) and the MCP server
 * (`@toolfence/adapters/mcp`, `@toolfence/toolfence/mcp`) are entry points of
 * their own, so that importing this module loads none of their SDKs.
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

export { mcp, PROVIDER_DIALECTS } from "./dialects.ts";
export { SchemaDialectError } from "./dialect_error.ts";
export {
  openAIChat,
  openAIChatTools,
  openAIResponses,
  openAIResponsesTools,
  runOpenAIChatToolCalls,
  runOpenAIResponsesToolCalls,
} from "./openai.ts";
export { anthropic, anthropicTools, runAnthropicToolCalls } from "./anthropic.ts";
export { gemini, geminiTools, runGeminiToolCalls } from "./gemini.ts";
export { declinedCallText } from "./declined_call.ts";
// The umbrella re-exports the names above this line (scripts/surface.ts).
export { runToolCalls, type ToolCallDialect, type ToolCallRun } from "./tool_call_dialect.ts";
export {
  type OpenAIChatResponseLike,
  type OpenAIChatRun,
  type OpenAIChatTool,
  type OpenAIDialectOptions,
  type OpenAIResponsesResponseLike,
  type OpenAIResponsesRun,
  type OpenAIResponsesTool,
} from "./openai.ts";
export { type AnthropicMessageLike, type AnthropicRun, type AnthropicTool } from "./anthropic.ts";
export { type GeminiResponseLike, type GeminiRun, type GeminiTool } from "./gemini.ts";
export {
  type OpenAIChatImageMessage,
  type OpenAIChatMessageLike,
  type OpenAIChatToolMessage,
  type OpenAIResponsesCallOutput,
  type OpenAIResponsesImageMessage,
  type OpenAIResponsesItemLike,
} from "./openai.ts";
export {
  type AnthropicContentBlockLike,
  type AnthropicInputSchema,
  type AnthropicToolResultMessage,
} from "./anthropic.ts";
export { type GeminiContentLike, type GeminiFunctionDeclaration, type GeminiResultContent } from "./gemini.ts";
export { type OpenAIChatToolCallLike } from "./openai.ts";
export { type AnthropicToolResultBlock } from "./anthropic.ts";
export { type GeminiPartLike, type GeminiResultPart, type GeminiSchema } from "./gemini.ts";
export { type GeminiType } from "./gemini.ts";
export { fromStrictArguments, toStrictSchema } from "./strict_schema.ts";
export {
  openAIChatCalls,
  openAIChatResultMessages,
  openAIResponsesCalls,
  type OpenAIResponsesFunctionCallLike,
  openAIResponsesResultItems,
} from "./openai.ts";
export { anthropicCalls, anthropicResultMessage, type AnthropicToolUseLike } from "./anthropic.ts";
export { geminiCalls, geminiResultContent } from "./gemini.ts";
// The types the names above reference, type-only, so this entry's docs are complete (written by deno task surface):
export type {
  AfterBatchHook,
  AfterCallHook,
  AgentModel,
  AnyTool,
  ArtifactInfo,
  ArtifactRef,
  ArtifactStore,
  AttemptId,
  AuthorizeOptions,
  BatchCall,
  BatchClosure,
  BatchOptions,
  BatchResult,
  BeforeCallDecision,
  BeforeCallEvent,
  BeforeCallHook,
  BoundedOutput,
  CallGate,
  CallOptions,
  CallPolicy,
  ChildSessionOptions,
  ChoiceOption,
  ChoiceOutcome,
  ChoiceRequest,
  ChoiceSource,
  ConfirmRequest,
  CopiedCounts,
  DeferredImage,
  DeferredImageMessage,
  Dialect,
  Dialects,
  Effect,
  EffectState,
  ErrorKind,
  Fence,
  FenceAnswer,
  FencePermission,
  FileChange,
  FileChangeEvent,
  FileDoor,
  FileSnapshot,
  FileState,
  FileTarget,
  HookSet,
  Host,
  ImageMediaType,
  JsonSchema,
  JsonSchemaToolSpec,
  LateResult,
  LateResults,
  LateResultsOptions,
  Launcher,
  LauncherRequest,
  ListOptions,
  ModelMessage,
  ModelRequest,
  ModelToolCall,
  ModelTurn,
  MovedPath,
  ObjectInputSchema,
  OnFailureHook,
  PathResolver,
  ProcessDoor,
  ProcessExit,
  ProcessRequest,
  ProgramRequest,
  ProgressEvent,
  Provenance,
  QuestionSubject,
  RequestCommon,
  ResourceLimitHit,
  RetryDisposition,
  RetryPolicy,
  RunningProcess,
  SandboxSetting,
  SessionBase,
  ShellRequest,
  StandardSchema,
  StandardSchemaResult,
  StartedProcess,
  SubagentToolsFactory,
  TargetOptions,
  Tool,
  ToolBox,
  ToolBoxOptions,
  ToolContext,
  ToolDefinition,
  ToolFailureEvent,
  ToolGroupFactory,
  ToolGroups,
  ToolMetadata,
  ToolNeeds,
  ToolPermission,
  ToolPlace,
  ToolResult,
  ToolStatus,
  WriteKind,
} from "@toolfence/core";
