/**
 * OpenAI Agents JS (`@openai/agents`): the toolbox's tools as the SDK's own
 * function tools, every call going through the toolbox's pipeline.
 *
 * - Validation is toolfence's: the tools are non-strict JSON-schema tools, so
 *   the SDK only parses the JSON and a bad call gets toolfence's message (the
 *   issues and the fix) as its output. Arguments that are not JSON, blank ones
 *   included (which `toolbox.call` takes as `{}`), never reach toolfence: the
 *   SDK's runner parses them before any hook of the tool and answers with its
 *   own text ("An error occurred while parsing tool arguments...").
 * - Approval is the SDK's: a tool with `needsApproval` becomes an SDK tool
 *   with `needsApproval`, so the run stops with `interruptions`; after
 *   `result.state.approve(item)` the call runs without the session being asked
 *   again, after `result.state.reject(item)` it never runs. The policy's own
 *   questions (a write outside the workspace, a command off the allowlist) go
 *   to the session's host.
 * - Parallel calls of one turn go through the session's call gate:
 *   concurrency-safe tools together, any other tool alone, in the order the
 *   model made them.
 * - The model reads `toModelText(result)`, with the call's deferred images as
 *   the SDK's image outputs; the lossless `ToolResult` is the output item's
 *   `customData.toolResult` (`result.newItems`).
 *
 * Its own entry point, `@toolfence/adapters/openai-agents`; `@openai/agents`
 * is an optional peer dependency that nothing else of toolfence loads. Importing
 * it needs `--allow-env` (the SDK reads its settings on load).
 *
 * @module
 */

import type { FunctionTool } from "@openai/agents";
import { toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import {
  type CallImage,
  frameworkApproval,
  type FrameworkToolsOptions,
  freshCallId,
  gatedCall,
  listedTools,
  needsApprovalOf,
  textAndImages,
} from "./_framework.ts";

import { openAIDescription } from "./_openai_description.ts";

// An optional peer on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE), and the tools are built synchronously from its values. Without it, importing
// this entry point fails with the runtime's ERR_MODULE_NOT_FOUND naming the package.
import { tool as agentTool } from "@openai/agents";

export type { FrameworkToolsOptions } from "./_framework.ts";

/** How many full results wait for their output items at most. */
const KEPT_RESULTS = 512;

/** Options of {@linkcode openAIAgentsTools}. */
export type OpenAIAgentsToolsOptions<T = unknown> = FrameworkToolsOptions<T>;

/** What a tool returns to the SDK: text, or text and images. */
export type OpenAIAgentsToolOutput =
  | string
  | ({ type: "text"; text: string } | { type: "image"; image: { data: string; mediaType: string } })[];

/** The parameters of the tools: the tool's JSON Schema, typed as the SDK types a non-strict tool's. */
export type OpenAIAgentsParameters = {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: true;
};

/**
 * The toolbox's listed tools (by the session's capabilities and fence, as
 * `toolbox.list` decides) as OpenAI Agents function tools, for
 * `new Agent({ tools })`. The SDK names a tool with every character but a
 * letter or a digit as "_" (`deploy-prod` reaches the model as `deploy_prod`);
 * throws a `RangeError` naming both tools when two tools would get one name.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { Agent } from "@openai/agents";
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { openAIAgentsTools } from "@toolfence/adapters/openai-agents";
 * const session = new Session({ workspace: Deno.cwd() });
 * const agent = new Agent({
 *   name: "coder",
 *   instructions: "Fix the failing test.",
 *   tools: openAIAgentsTools(new ToolBox().withDefaults("fs"), session),
 * });
 * // let result = await run(agent, "..."); approve or reject result.interruptions,
 * // then: result = await run(agent, result.state);
 * console.log(agent.tools.map((t) => t.name).includes("read_file")); // true
 * await session.close();
 * ```
 */
export function openAIAgentsTools<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: OpenAIAgentsToolsOptions<T> = {},
): FunctionTool<unknown, OpenAIAgentsParameters, OpenAIAgentsToolOutput>[] {
  // Full results wait here, by call id, until the SDK asks for the output item's custom data.
  const results = new Map<string, ToolResult>();
  // The SDK renames a tool (every character but a letter or a digit becomes "_": `deploy-prod` is `deploy_prod`),
  // and keys the model's calls and its approvals by that name, so the approval of a call is looked up by it.
  const byName = new Map<string, string>();
  const tools = listedTools(toolbox, session, options).map((t) => {
    let sdkName = t.name;
    const created = agentTool({
      name: t.name,
      description: openAIDescription(t, "openai-agents"),
      parameters: structuredClone(t.inputSchema) as unknown as OpenAIAgentsParameters,
      strict: false,
      needsApproval: t.needsApproval ? (_context, input) => needsApprovalOf(t, input) : false,
      execute: async (input, runContext, details): Promise<OpenAIAgentsToolOutput> => {
        const callId = details?.toolCall?.callId ?? freshCallId("openai-agents");
        const approved = runContext?.isToolApproved({ toolName: sdkName, callId });
        const { result, images } = await gatedCall(toolbox, session, t, input, {
          callId,
          signal: details?.signal,
          approval: approved === undefined ? undefined : frameworkApproval(approved),
        }, options);
        results.set(callId, result);
        // A result whose output item never asks for it (a run that failed after the call) is not kept forever.
        if (results.size > KEPT_RESULTS) results.delete(results.keys().next().value!);
        return modelOutput(result, images);
      },
      customDataExtractor: ({ toolCall }) => {
        const result = results.get(toolCall.callId);
        results.delete(toolCall.callId);
        return result ? { toolResult: result } : undefined;
      },
    });
    sdkName = created.name;
    // Two tools the SDK names alike (`a-b` and `a_b`): it would expose one and run it for both, the other lost.
    const other = byName.get(sdkName);
    if (other !== undefined) {
      throw new RangeError(
        `Tools "${other}" and "${t.name}" both reach the OpenAI Agents SDK as "${sdkName}" (it turns every ` +
          `character but a letter or a digit into "_"), so it would expose only one of them; rename one of the tools`,
      );
    }
    byName.set(sdkName, t.name);
    return created;
  });
  return tools;
}

function modelOutput(result: ToolResult, images: CallImage[]): OpenAIAgentsToolOutput {
  const text = toModelText(result);
  if (images.length === 0) return text;
  return textAndImages<Exclude<OpenAIAgentsToolOutput, string>[number]>(
    text,
    images,
    (text) => ({ type: "text", text }),
    (image) => ({ type: "image", image: { data: image.data, mediaType: image.mediaType } }),
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
