/**
 * The Vercel AI SDK: a tool set whose `execute` runs every call through the
 * toolbox's pipeline. The AI SDK is handed the JSON Schema for the model and
 * does no validation of its own; the toolbox validates with the tool's schema
 * (strict, with the array-as-string rule and defaults), checks the policy and
 * runs the tool. `execute` returns the lossless `ToolResult` (it shows up in
 * the steps' tool results); `toModelOutput` turns it into what the model reads:
 * text on success, `error-text` for anything else (so a bad call's validation
 * error reaches the model's next turn, flagged as an error), and the call's
 * deferred images as file parts.
 *
 * Calls of one step run as `callMany` would run them: concurrency-safe tools
 * together, any other tool alone, in the order the model made them.
 *
 * A tool that needs approval (`needsApproval`, evaluated on the validated
 * arguments) is the AI SDK's to approve: its `needsApproval` makes
 * `generateText`/`streamText` stop with a `tool-approval-request`, which an AI
 * SDK chat UI answers (`addToolApprovalResponse`); an approved call runs once,
 * a denied one never. Deny with `reason: declinedCallText(name)` for the text
 * every other adapter gives the model. The policy's own questions asked
 * during a call (a command outside the allowlist, a path outside the
 * workspace) still go to the session's host.
 *
 * This is its own entry point, `@toolfence/adapters/ai-sdk`, because importing
 * the AI SDK requires `--allow-sys=hostname`; nothing else of toolfence loads it.
 *
 * @module
 */

import type { ModelMessage, Tool as AiTool, ToolApprovalRequest, ToolApprovalResponse, ToolSet } from "ai";
import type { ProgressEvent } from "@toolfence/core";
import { toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import { isConcurrencySafe } from "@toolfence/core";
import type { ListOptions, ToolBox } from "@toolfence/core";
import { base64, imageNote, takeImagesOf } from "./_calls.ts";
import {
  type CallImage,
  frameworkApproval,
  type ImagesOption,
  listedTools,
  needsApprovalOf,
  textAndImages,
  unshownText,
} from "./_framework.ts";

// An optional peer on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE), and the tools are built synchronously from its values. Without it, importing
// this entry point fails with the runtime's ERR_MODULE_NOT_FOUND naming the package.
import { jsonSchema, tool as aiTool } from "ai";

export type { ImagesOption } from "./_framework.ts";

/** Options of {@linkcode aiSdkTools}. */
export interface AiSdkToolsOptions<T = unknown> extends ListOptions, ImagesOption {
  /** A value handed to every tool as `ctx.value`. */
  context?: T;
  /** Deadline of each call; overrides the tools' own. */
  timeoutMs?: number;
  /** Receives progress events. */
  onProgress?: (event: ProgressEvent) => void;
}

/** The deferred images of a call, kept on its result for `toModelOutput`. */
const IMAGES = "aiSdkImages";

/**
 * An AI SDK `ToolSet` of the toolbox's listed tools (by the session's
 * capabilities and fence unless `options` say otherwise, as `toolbox.list`
 * decides), every `execute` going through `toolbox.call`.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { generateText } from "ai";
 * import { Session } from "@toolfence/policy";
 * import { ToolBox } from "@toolfence/core";
 * import { aiSdkTools } from "@toolfence/adapters/ai-sdk";
 * const session = new Session({ workspace: Deno.cwd() });
 * const tools = aiSdkTools(new ToolBox(), session);
 * // await generateText({ model, tools, prompt: "..." });
 * console.log(Object.keys(tools), typeof generateText);
 * await session.close();
 * ```
 */
export function aiSdkTools<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: AiSdkToolsOptions<T> = {},
): ToolSet {
  const gate = session.callGate;
  const set: ToolSet = {};
  // By the session's capabilities and fence, as every adapter lists: not a tool the session could not run.
  for (const t of listedTools(toolbox, session, options)) {
    const shared = isConcurrencySafe(t);
    set[t.name] = aiTool({
      description: t.description,
      inputSchema: jsonSchema<Record<string, unknown>>(
        structuredClone(t.inputSchema) as Parameters<typeof jsonSchema>[0],
      ),
      // A call that needs approval is the AI SDK's to approve: it emits a tool-approval-request, the app
      // (a chat UI's addToolApprovalResponse) answers, and only an approved call reaches execute.
      needsApproval: t.needsApproval ? (input) => needsApprovalOf(t, input) : undefined,
      execute: (input, { toolCallId, abortSignal, messages }) =>
        gate.run(shared, async (): Promise<ToolResult> => {
          // Approved only when the conversation holds the approval of this very call; run any other way
          // (execute called directly), a call that needs approval is asked of the session's host.
          const approved = t.needsApproval !== undefined && approvedInMessages(messages, toolCallId);
          const result = await toolbox.call(session, t.name, input, {
            callId: toolCallId,
            signal: abortSignal,
            approval: approved ? frameworkApproval(true) : undefined,
            context: options.context,
            timeoutMs: options.timeoutMs,
            onProgress: options.onProgress,
          });
          const images = takeImagesOf(session, new Set([toolCallId]));
          if (images.length === 0) return result;
          return {
            ...result,
            metadata: {
              ...result.metadata,
              [IMAGES]: images.map((image) => ({
                note: imageNote(image),
                mediaType: image.mediaType,
                data: base64(image.data),
              })),
            },
          };
        }, abortSignal),
      toModelOutput: ({ output }) => modelOutput(output, options.images !== false),
    });
  }
  return set;
}

/** Whether the messages answer this call's tool-approval-request with an approval. */
function approvedInMessages(messages: readonly ModelMessage[], toolCallId: string): boolean {
  const parts = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []) as { type: string }[]);
  const requests = new Set(
    parts.filter((p): p is ToolApprovalRequest => p.type === "tool-approval-request")
      .filter((p) => p.toolCallId === toolCallId).map((p) => p.approvalId),
  );
  return parts.some((p) =>
    p.type === "tool-approval-response" && requests.has((p as ToolApprovalResponse).approvalId) &&
    (p as ToolApprovalResponse).approved === true
  );
}

/** What `toModelOutput` returns (the AI SDK does not export the type by name). */
type ModelOutput = Awaited<ReturnType<NonNullable<AiTool["toModelOutput"]>>>;

// `sendImages` false: the images are named in the text as not shown (ImagesOption).
function modelOutput(result: ToolResult, sendImages: boolean): ModelOutput {
  const text = toModelText(result);
  if (result.status !== "success") return { type: "error-text", value: text };
  const images = result.metadata[IMAGES] as CallImage[] | undefined;
  if (!images) return { type: "text", value: text };
  if (!sendImages) return { type: "text", value: unshownText(text, images) };
  return {
    type: "content",
    value: textAndImages<Extract<ModelOutput, { type: "content" }>["value"][number]>(
      text,
      images,
      (text) => ({ type: "text", text }),
      (image) => ({ type: "file", data: { type: "data", data: image.data }, mediaType: image.mediaType }),
    ),
  };
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
