/**
 * LangChain.js (`@langchain/core`): the toolbox's tools as LangChain
 * structured tools, for `model.bindTools(tools)`, LangGraph's `ToolNode` or
 * `createAgent`. Every call goes through the toolbox's pipeline:
 *
 * - the model is shown the tool's JSON Schema, but the input is validated by
 *   toolfence, not LangChain (which would throw `ToolInputParsingException`),
 *   so a bad call's ToolMessage carries toolfence's message with the fix;
 * - the result is a `ToolMessage` whose content is `toModelText(result)` (and
 *   the call's deferred images as image content blocks), whose `status` is
 *   `error` for anything but success, and whose `artifact` is the lossless
 *   `ToolResult`;
 * - parallel calls (a `ToolNode` runs a turn's calls together) go through the
 *   session's call gate: concurrency-safe tools together, any other alone, in
 *   the order the model made them;
 * - approval is asked of the session's host. In a LangGraph graph, use
 *   `langGraphTools` (`@toolfence/adapters/langgraph`) to ask through
 *   interrupts instead.
 *
 * Its own entry point, `@toolfence/adapters/langchain`; `@langchain/core` is an
 * optional peer dependency that nothing else of toolfence loads.
 *
 * @module
 */

import type { StructuredTool } from "@langchain/core/tools";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { type FrameworkToolsOptions, listedTools } from "./_framework.ts";
import { ApprovalOrder, FenceTool, type GatedContent, type LangChainStrictOptions } from "./_langchain_tool.ts";

export type { FrameworkToolsOptions, ImagesOption } from "./_framework.ts";
export type { LangChainStrictOptions } from "./_langchain_tool.ts";

/** Options of {@linkcode langChainTools}; `strict: true` for tools bound with OpenAI's strict mode. */
export type LangChainToolsOptions<T = unknown> = FrameworkToolsOptions<T> & LangChainStrictOptions;

/** The content of the tools' ToolMessages: text, or text and images as standard content blocks. */
export type LangChainToolContent = GatedContent;

/**
 * The toolbox's listed tools (by the session's capabilities and fence, as
 * `toolbox.list` decides) as LangChain structured tools.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { langChainTools } from "@toolfence/adapters/langchain";
 * const session = new Session({ workspace: Deno.cwd() });
 * const tools = langChainTools(new ToolBox().withDefaults("fs"), session);
 * // const model = chatModel.bindTools(tools); or new ToolNode(tools)
 * const message = await tools.find((t) => t.name === "list_dir")!.invoke({
 *   type: "tool_call", id: "c1", name: "list_dir", args: { path: "." },
 * });
 * console.log(message.status); // "success"
 * await session.close();
 * ```
 */
export function langChainTools<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: LangChainToolsOptions<T> = {},
): StructuredTool[] {
  const finished = new Map();
  return listedTools(toolbox, session, options).map((t) =>
    new FenceTool(t, toolbox, session, options, undefined, finished, new ApprovalOrder())
  );
}

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
