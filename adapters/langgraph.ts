/**
 * LangGraph (`@langchain/langgraph`): the LangChain tools of
 * `@toolfence/adapters/langchain`, with approval through LangGraph's
 * interrupts. When a call needs approval (the tool's `needsApproval`, on the
 * validated arguments), the tool calls `interrupt()` before anything of the
 * call runs; the graph stops with a {@linkcode LangGraphApprovalRequest} in its
 * `__interrupt__`, and resuming with `new Command({ resume: true })` runs the
 * call (the session is not asked again), `false` ends it `not_approved` with
 * toolfence's message. Calls of one turn that need approval are asked one at
 * a time, in the order of the calls (LangGraph matches resume values to the
 * interrupts of a node by their order, so a tool's `needsApproval` must give
 * the same answer for the same arguments each time the node runs). Calls that finished before an interrupt
 * are not run again when LangGraph re-runs the node on resume.
 *
 * Needs a checkpointer (as every LangGraph interrupt does). The policy's own
 * questions go to the session's host.
 *
 * Its own entry point, `@toolfence/adapters/langgraph`; `@langchain/langgraph`
 * and `@langchain/core` are optional peer dependencies that nothing else of
 * toolfence loads.
 *
 * @module
 */

import type { StructuredTool } from "@langchain/core/tools";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { frameworkApproval, type FrameworkToolsOptions, listedTools, needsApprovalOf } from "./_framework.ts";
import { ApprovalOrder, type ApprovalStep, FenceTool, type LangChainStrictOptions } from "./_langchain_tool.ts";

// An optional peer on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE). Without it, importing
// this entry point fails with the runtime's ERR_MODULE_NOT_FOUND naming the package.
import { interrupt } from "@langchain/langgraph";

export type { FrameworkToolsOptions, ImagesOption } from "./_framework.ts";
export type { LangChainStrictOptions } from "./_langchain_tool.ts";

/** Options of {@linkcode langGraphTools}; `strict: true` for tools bound with OpenAI's strict mode. */
export type LangGraphToolsOptions<T = unknown> = FrameworkToolsOptions<T> & LangChainStrictOptions;

/** The value of the interrupt a call that needs approval raises. */
export interface LangGraphApprovalRequest {
  /** Always `toolfence_approval`. */
  type: "toolfence_approval";
  /** The tool. */
  toolName: string;
  /** The call's id. */
  callId: string;
  /** The arguments, as the model gave them. */
  args: unknown;
  /** The question, for a person. */
  message: string;
}

/**
 * What resumes an approval interrupt: `true` (or `{ approved: true }`)
 * approves; anything else declines.
 */
export type LangGraphApprovalAnswer = boolean | { approved: boolean };

/**
 * The toolbox's listed tools as LangChain structured tools for a LangGraph
 * graph (`new ToolNode(tools)`, `createReactAgent`), asking approvals through
 * interrupts.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { ToolNode } from "@langchain/langgraph/prebuilt";
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { langGraphTools } from "@toolfence/adapters/langgraph";
 * const session = new Session({ workspace: Deno.cwd() });
 * const tools = new ToolNode(langGraphTools(new ToolBox().withDefaults("fs"), session));
 * // graph.addNode("tools", tools); compile({ checkpointer }); resume with new Command({ resume: true })
 * console.log(tools.tools.some((t) => t.name === "read_file")); // true
 * await session.close();
 * ```
 */
export function langGraphTools<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: LangGraphToolsOptions<T> = {},
): StructuredTool[] {
  const approve: ApprovalStep = async (tool, args, callId) => {
    if (!(await needsApprovalOf(tool, args))) return undefined;
    const request: LangGraphApprovalRequest = {
      type: "toolfence_approval",
      toolName: tool.name,
      callId,
      args,
      message: `Allow ${tool.name} with ${JSON.stringify(args)}?`,
    };
    const answer = interrupt<LangGraphApprovalRequest, LangGraphApprovalAnswer>(request);
    return frameworkApproval(answer === true || (typeof answer === "object" && answer?.approved === true));
  };
  const finished = new Map();
  const order = new ApprovalOrder();
  return listedTools(toolbox, session, options).map((t) =>
    new FenceTool(t, toolbox, session, options, approve, finished, order)
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
