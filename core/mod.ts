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

export { type ErrorKind, ToolError, type ToolErrorOptions, ToolNameConflictError, UsageError } from "./errors.ts";
export { ERROR_CODES, type ErrorCode, type ErrorCodeInfo } from "./error_codes.ts";
export {
  type ChoiceOption,
  type ChoiceOutcome,
  type ChoiceRequest,
  type ChoiceSource,
  type ConfirmRequest,
  type Host,
  type QuestionSubject,
} from "./host.ts";
export { type Fence } from "./fence.ts";
export { type ArtifactRef, isToolResult, toModelText, type ToolResult, type ToolStatus } from "./result.ts";
export { fail, type FailOptions, ToolFailure } from "./failure.ts";
export { type FluxTool, fromFluxTool, isFluxTool } from "./flux_tool.ts";
export { type Effect, type FileChange } from "./effects.ts";
export { type JsonSchema } from "./schema.ts";
export { type AnyTool, type Tool, tool, type ToolDefinition, type ToolNeeds, type ToolPermission } from "./tool.ts";
export { type ProgressEvent, type ToolContext } from "./context.ts";
export {
  type AfterBatchHook,
  type AfterCallHook,
  type BeforeCallDecision,
  type BeforeCallEvent,
  type BeforeCallHook,
  type HookSet,
} from "./hooks.ts";
export {
  type ArtifactStore,
  DEFAULT_ARTIFACT_POOL_BYTES,
  DEFAULT_MEMORY_ARTIFACT_BYTES,
  FileArtifactStore,
  MemoryArtifactPool,
  MemoryArtifactStore,
  type MemoryArtifactStoreOptions,
  SERVER_ARTIFACT_POOL,
} from "./artifacts.ts";
export { toolGroup, type ToolGroupFactory } from "./groups.ts";
export { type Dialect, jsonSchemaDialect } from "./dialects.ts";
export { type BatchCall, type BatchOptions, type BatchResult, type CallOptions } from "./executor.ts";
export { type ListOptions, ToolBox, type ToolBoxOptions } from "./toolbox.ts";
export { type AgentModel } from "./model.ts";
// The umbrella re-exports the names above this line (scripts/surface.ts).
export { type ThrownStatus } from "./errors.ts";
export { type FenceAnswer, type FencePermission } from "./fence.ts";
export {
  type AuthorizeOptions,
  type CallPolicy,
  type FileTarget,
  type PathResolver,
  type TargetOptions,
} from "./services.ts";
export { type ProcessDoor } from "./process_door.ts";
export { type AttemptId, type BatchClosure, type Provenance, type RetryDisposition } from "./result.ts";
export { type ReturnedFailureStatus } from "./failure.ts";
export { type EffectState, type FileState } from "./effects.ts";
export { type ObjectInputSchema, type ToolFunctionOptions, type ToolMetadata, type ToolPlace } from "./tool.ts";
export { type ArtifactInfo } from "./artifacts.ts";
export { type DeferredImage, type DeferredImageMessage } from "./images.ts";
export { SessionBase } from "./session.ts";
export { type SubagentToolsFactory, type ToolGroups } from "./groups.ts";
export { type Dialects } from "./dialects.ts";
export { type SandboxSetting, type WriteKind } from "./services.ts";
export type { CopiedCounts, FileDoor, FileSnapshot } from "./file_door.ts";
export { type Launcher, type LauncherRequest, type ProcessRequest, type StartedProcess } from "./process_door.ts";
export { DEFAULT_LATE_RESULTS_MAX_BYTES, DEFAULT_LATE_RESULTS_MAX_COUNT, LateResults } from "./late_results.ts";
export { type OnFailureHook, type RetryPolicy } from "./tool.ts";
export { type ImageMediaType } from "./images.ts";
export { type ChildSessionOptions, type FileChangeEvent } from "./session.ts";
export { CallGate } from "./call_gate.ts";
export { type ModelMessage, type ModelRequest, type ModelToolCall, type ModelTurn } from "./model.ts";
export { notApprovedError } from "./_call_approval.ts";
export { type StandardSchema, type StandardSchemaResult } from "./schema.ts";
export { validateWithStandardSchema } from "./validation.ts";
export {
  type BoundedOutput,
  type MovedPath,
  type ProgramRequest,
  type ResourceLimitHit,
  type RunningProcess,
  type ShellRequest,
} from "./process_door.ts";
export { type LateResult, type LateResultsOptions } from "./late_results.ts";
export { type ToolFailureEvent } from "./tool.ts";
export { type ProcessExit, type RequestCommon } from "./process_door.ts";
export { errorCodeInfo, isCataloguedCode } from "./error_codes.ts";
export {
  ANY_TARGET,
  fenceDeniedError,
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
  effectStateOf,
  makeResult,
  RESULT_SCHEMA_VERSION,
  ToolResultContractError,
  type ToolResultInit,
} from "./result.ts";
export { type FluxResult, isFluxResult, readReturned, type Returned } from "./failure.ts";
export { comparePaths, sameFileState } from "./effects.ts";
export { isSettled, RACY_MS } from "./settled_stat.ts";
export { inputJsonSchema, isObjectJsonSchema, outputJsonSchema } from "./schema.ts";
export {
  type ArgumentIssue,
  formatIssues,
  validateWithJsonSchema,
  validateWithValibot,
  type ValidationOutcome,
} from "./validation.ts";
export { assertEffects, isConcurrencySafe, isTool } from "./tool.ts";
export { artifactIdOf, type ArtifactWindow, parseArtifactRef, readArtifactWindow, sha256Hex } from "./artifacts.ts";
export {
  checkImage,
  deferredImagesMessage,
  type ImageSize,
  imageSize,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_SIDE_PX,
  sniffImageType,
} from "./images.ts";
export { dialectByName, type JsonSchemaToolSpec } from "./dialects.ts";
export { planSegments } from "./batch.ts";
export { capText } from "./_call_output.ts";
export { textPrefix, wellFormed } from "./_text_prefix.ts";
export { checkOutput, outputCheckedAgainst, type OutputSchema } from "./_call_output_schema.ts";
export { FLUX_ALIASES } from "./toolbox.ts";
export { tracedBatch, tracedCall } from "./telemetry.ts";
export {
  ANSWERED_QUESTIONS_KEPT,
  type AuditQuery,
  type PrunedCounts,
  type Store,
  type StoredAuditRecord,
  type StoredCall,
  type StoredEvent,
  type StoredGrant,
  type StoredQuestion,
  type StoredSession,
} from "./store.ts";
export { MemoryStore, type MemoryStoreOptions } from "./memory_store.ts";
export { importPeer, isMissingPeer, missingPeerError, type Peer } from "./peer.ts";
