/**
 * The core of toolfence (`@toolfence/core`): defining tools, the toolbox, the
 * session base, the call pipeline, results, errors and their catalogue,
 * artifacts, and the interfaces the policy implements. It depends on no other
 * toolfence package and knows nothing of MCP or any provider.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool, ToolBox } from "@toolfence/core";
 * const box = new ToolBox().register(tool({
 *   name: "add",
 *   description: "Add two numbers.",
 *   input: v.object({ a: v.number(), b: v.number() }),
 *   run: ({ a, b }) => a + b,
 * }));
 * console.log(box.list().map((t) => t.name)); // ["add"]
 * ```
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
export { ERROR_CODES, type ErrorCode, type ErrorCodeInfo, errorCodeInfo, isCataloguedCode } from "./error_codes.ts";
export {
  type ChoiceOption,
  type ChoiceOutcome,
  type ChoiceRequest,
  type ChoiceSource,
  type ConfirmRequest,
  type Host,
} from "./host.ts";
export {
  ANY_TARGET,
  type Fence,
  type FenceAnswer,
  fenceDeniedError,
  type FencePermission,
  type FencePlaces,
  grantFlags,
  type MissingGrant,
  missingGrants,
  NEED_ORDER,
  OPEN_FENCE,
  requireFence,
  requireGrants,
  resolveNeedTarget,
} from "./fence.ts";
export {
  type AuthorizeOptions,
  type CallPolicy,
  type FileTarget,
  type PathResolver,
  type ResolvedLocation,
  type SandboxSetting,
  type TargetOptions,
  type WriteKind,
} from "./services.ts";
export type { CopiedCounts, FileDoor, FileSnapshot } from "./file_door.ts";
export {
  type BoundedOutput,
  type Launcher,
  type LauncherRequest,
  type MovedPath,
  type ProcessDoor,
  type ProcessExit,
  type ProcessRequest,
  type ProgramRequest,
  type RequestCommon,
  type ResourceLimitHit,
  type RunningProcess,
  type ShellRequest,
  type StartedProcess,
} from "./process_door.ts";
export {
  ARTIFACT_REF_SCHEMA_VERSION,
  type ArtifactRef,
  type AttemptId,
  type BatchClosure,
  effectStateOf,
  isToolResult,
  makeResult,
  type Provenance,
  RESULT_SCHEMA_VERSION,
  type RetryDisposition,
  toModelText,
  type ToolResult,
  ToolResultContractError,
  type ToolResultInit,
  type ToolStatus,
} from "./result.ts";
export {
  fail,
  type FailOptions,
  type FluxResult,
  isFluxResult,
  readReturned,
  type Returned,
  type ReturnedFailureStatus,
  ToolFailure,
} from "./failure.ts";
export { type LateResult, LateResults } from "./late_results.ts";
export { type FluxTool, fromFluxTool, isFluxTool } from "./flux_tool.ts";
export { type Effect, EFFECTS, type EffectState, type FileChange, type FileState, sameFileState } from "./effects.ts";
export {
  inputJsonSchema,
  isObjectJsonSchema,
  type JsonSchema,
  outputJsonSchema,
  type StandardSchema,
  type StandardSchemaResult,
} from "./schema.ts";
export {
  type ArgumentIssue,
  closeObjects,
  formatIssues,
  MAX_VALIDATION_MESSAGE,
  validateWithJsonSchema,
  validateWithStandardSchema,
  validateWithValibot,
  type ValidationOutcome,
} from "./validation.ts";
export {
  type AnyTool,
  assertEffects,
  assertToolName,
  isConcurrencySafe,
  isTool,
  type ObjectInputSchema,
  type OnFailureHook,
  type RetryPolicy,
  type Tool,
  tool,
  TOOL_NAME_PATTERN,
  type ToolDefinition,
  type ToolFailureEvent,
  type ToolFunctionOptions,
  type ToolMetadata,
  type ToolNeeds,
  type ToolPermission,
  type ToolPlace,
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
  artifactIdOf,
  type ArtifactInfo,
  type ArtifactStore,
  type ArtifactWindow,
  type AtomicFileWriter,
  FileArtifactStore,
  MemoryArtifactStore,
  parseArtifactRef,
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
export { type ChildSessionOptions, type FileChangeEvent, SessionBase, type SessionBaseOptions } from "./session.ts";
export { CallGate } from "./call_gate.ts";
export { notApprovedError } from "./_call_gate.ts";
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
export { checkOutput, type OutputSchema } from "./_call_output_schema.ts";
export {
  FLUX_ALIASES,
  type ListOptions,
  SUBAGENT_TOOL_NAMES,
  TOOL_OVERRIDE_INFO_ENV,
  ToolBox,
  type ToolBoxOptions,
} from "./toolbox.ts";
export { tracedBatch, tracedCall } from "./telemetry.ts";
