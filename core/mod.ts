/**
 * The core of toolfence: defining tools, the toolbox, sessions, the call
 * pipeline, results and artifacts. It knows nothing of MCP or any provider.
 *
 * @module
 */

export {
  type ErrorKind,
  type ThrownStatus,
  ToolError,
  type ToolErrorOptions,
  ToolNameConflictError,
  UsageError,
} from "./errors.ts";
export {
  type ChoiceOption,
  type ChoiceOutcome,
  type ChoiceRequest,
  type ChoiceSource,
  type ConfirmRequest,
  type Host,
} from "./host.ts";
export {
  type CallPolicy,
  type Fence,
  type FenceAnswer,
  type FencePermission,
  OPEN_FENCE,
  type PathResolver,
  type ResolvedLocation,
  type SandboxSetting,
  type WriteKind,
} from "./services.ts";
export {
  type ArtifactRef,
  isToolResult,
  makeResult,
  RESULT_SCHEMA_VERSION,
  toModelText,
  type ToolResult,
  ToolResultContractError,
  type ToolResultInit,
  type ToolStatus,
} from "./result.ts";
export { inputJsonSchema, type JsonSchema } from "./schema.ts";
export {
  type ArgumentIssue,
  closeObjects,
  formatIssues,
  MAX_VALIDATION_MESSAGE,
  validateWithJsonSchema,
  validateWithValibot,
  type ValidationOutcome,
} from "./validation.ts";
export {
  type AnyTool,
  assertToolName,
  isConcurrencySafe,
  isTool,
  type ObjectInputSchema,
  type RetryPolicy,
  type Tool,
  tool,
  TOOL_NAME_PATTERN,
  type ToolDefinition,
  type ToolFunctionOptions,
  type ToolMetadata,
  type ToolPermission,
} from "./tool.ts";
export { type ProgressEvent, type ToolCallContext, type ToolContext } from "./context.ts";
export {
  type AfterBatchHook,
  type AfterCallHook,
  type BeforeCallDecision,
  type BeforeCallEvent,
  type BeforeCallHook,
  type HookSet,
} from "./hooks.ts";
export {
  type ArtifactInfo,
  type ArtifactStore,
  type ArtifactWindow,
  FileArtifactStore,
  MemoryArtifactStore,
  readArtifactWindow,
  sha256Hex,
} from "./artifacts.ts";
export {
  checkImage,
  type DeferredImage,
  type DeferredImageMessage,
  deferredImagesMessage,
  type ImageMediaType,
  MAX_IMAGE_BYTES,
  sniffImageType,
} from "./images.ts";
export { type ChildSessionOptions, SessionBase, type SessionBaseOptions } from "./session.ts";
export { type SubagentToolsFactory, toolGroup, type ToolGroupFactory, type ToolGroups } from "./groups.ts";
export { type Dialect, dialectByName, type Dialects, jsonSchemaDialect, type JsonSchemaToolSpec } from "./dialects.ts";
export {
  type BatchCall,
  type BatchOptions,
  type BatchResult,
  type CallOptions,
  DEFAULT_GRACE_MS,
  DEFAULT_MAX_OUTPUT_CHARS,
  executeCall,
  type ExecutionEnvironment,
} from "./executor.ts";
export { executeBatch, planSegments } from "./batch.ts";
export { capText } from "./_call_output.ts";
export { type ListOptions, SUBAGENT_TOOL_NAMES, ToolBox, type ToolBoxOptions } from "./toolbox.ts";
export { atomicWrite, type AtomicWriteOptions } from "./atomic_write.ts";
