/**
 * Mastra (`@mastra/core`): the toolbox's tools as Mastra tools, for
 * `new Agent({ tools })`. Every call goes through the toolbox's pipeline:
 *
 * - the model is shown the tool's JSON Schema, while Mastra's own validation
 *   accepts any input (the input schema is a Standard Schema that passes
 *   everything through), so a bad call's result is toolfence's message with
 *   the fix;
 * - `execute` returns the lossless `ToolResult` (the step's tool result), and
 *   `toModelOutput` what the model reads: `toModelText(result)` as text, as
 *   `error-text` for anything but success, with the call's deferred images as
 *   AI SDK `media` parts (Mastra converts them for the model's version);
 * - parallel calls go through the session's call gate: concurrency-safe tools
 *   together, any other alone, in the order the model made them;
 * - a tool with `needsApproval` gets Mastra's `requireApproval` (evaluated on
 *   the validated arguments): the run suspends, `agent.approveToolCallGenerate`
 *   runs the call without asking the session again and
 *   `agent.declineToolCallGenerate` keeps it from running. The policy's own
 *   questions go to the session's host.
 *
 * Its own entry point, `@toolfence/adapters/mastra`; `@mastra/core` is an
 * optional peer dependency that nothing else of toolfence loads.
 *
 * @module
 */

import type { ToolsInput } from "@mastra/core/agent";
import { type JsonSchema, toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import {
  type CallImage,
  frameworkApproval,
  type FrameworkToolsOptions,
  freshCallId,
  gatedCall,
  type ImagesOption,
  listedTools,
  needsApprovalOf,
  textAndImages,
  unshownText,
} from "./_framework.ts";

// An optional peer on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE), and the tools are built synchronously from its values. Without it, importing
// this entry point fails with the runtime's ERR_MODULE_NOT_FOUND naming the package.
import { createTool } from "@mastra/core/tools";

export type { FrameworkToolsOptions, ImagesOption } from "./_framework.ts";

/** Options of {@linkcode mastraTools}. */
export type MastraToolsOptions<T = unknown> = FrameworkToolsOptions<T> & ImagesOption;

/** The deferred images of a call, kept on its result for `toModelOutput`. */
const IMAGES = "mastraImages";

/**
 * What the model reads of a result, in the AI SDK's tool-output shape Mastra hands on. An image is AI SDK v5's
 * `media` part, the one Mastra converts for each model's version (`image-data` for LanguageModelV3, a tagged
 * `file` for V4); a `file` part went to every model as it was, in no version's shape.
 */
export type MastraModelOutput =
  | { type: "text"; value: string }
  | { type: "error-text"; value: string }
  | {
    type: "content";
    value: ({ type: "text"; text: string } | { type: "media"; data: string; mediaType: string })[];
  };

/**
 * A Standard Schema that accepts every input unchanged and describes itself
 * with the tool's JSON Schema: Mastra shows the model the schema and leaves the
 * validating to toolfence.
 */
function passThrough(schema: JsonSchema) {
  const describe = () => structuredClone(schema) as Record<string, unknown>;
  return {
    "~standard": {
      version: 1 as const,
      vendor: "toolfence",
      validate: (value: unknown): { value: Record<string, unknown> } => ({
        value: value as Record<string, unknown>,
      }),
      jsonSchema: { input: describe, output: describe },
    },
  };
}

/**
 * The toolbox's listed tools (by the session's capabilities and fence, as
 * `toolbox.list` decides) as Mastra tools, by name.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { mastraTools } from "@toolfence/adapters/mastra";
 * const session = new Session({ workspace: Deno.cwd() });
 * const tools = mastraTools(new ToolBox().withDefaults("fs"), session);
 * // new Agent({ id: "coder", name: "coder", instructions: "...", model, tools })
 * console.log("read_file" in tools); // true
 * await session.close();
 * ```
 */
export function mastraTools<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: MastraToolsOptions<T> = {},
): ToolsInput {
  const tools: ToolsInput = {};
  for (const t of listedTools(toolbox, session, options)) {
    tools[t.name] = createTool({
      id: t.name,
      description: t.description,
      inputSchema: passThrough(t.inputSchema),
      // Out of Mastra's per-provider schema rewriting (its "compat layers", which run unless a tool says
      // strict: false): for OpenAI and Gemini models they close every object, and a record (`v.record`) came
      // out as an object with no properties, so the model could send no entry of a map. The model gets the
      // tool's JSON Schema as it is, as in the OpenAI Agents and AI SDK adapters; toolfence validates.
      strict: false,
      requireApproval: t.needsApproval ? (input: unknown) => needsApprovalOf(t, input) : false,
      execute: async (input, context): Promise<ToolResult> => {
        const callId = context?.agent?.toolCallId ?? freshCallId("mastra");
        // An agent runs a call that needs approval only once it was approved (requireApproval decides, and
        // Mastra keeps it authoritative). Run any other way (tool.execute, a workflow step) the session asks.
        const approval = t.needsApproval && context?.agent && (await needsApprovalOf(t, input))
          ? frameworkApproval(true)
          : undefined;
        const { result, images } = await gatedCall(toolbox, session, t, input, {
          callId,
          signal: context?.abortSignal,
          approval,
        }, options);
        if (images.length === 0) return result;
        return { ...result, metadata: { ...result.metadata, [IMAGES]: images } };
      },
      toModelOutput: (result) => modelOutput(result as ToolResult, options.images !== false),
    });
  }
  return tools;
}

// `sendImages` false: the images are named in the text as not shown (ImagesOption).
function modelOutput(result: ToolResult, sendImages: boolean): MastraModelOutput {
  const text = toModelText(result);
  if (result.status !== "success") return { type: "error-text", value: text };
  const images = result.metadata[IMAGES] as CallImage[] | undefined;
  if (!images) return { type: "text", value: text };
  if (!sendImages) return { type: "text", value: unshownText(text, images) };
  return {
    type: "content",
    value: textAndImages<Extract<MastraModelOutput, { type: "content" }>["value"][number]>(
      text,
      images,
      (text) => ({ type: "text", text }),
      (image) => ({ type: "media", data: image.data, mediaType: image.mediaType }),
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
