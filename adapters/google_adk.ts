/**
 * Google ADK (`@google/adk`): the toolbox's tools as ADK tools, for
 * `new LlmAgent({ tools })`. Every call goes through the toolbox's pipeline:
 *
 * - the model is given the tool's JSON Schema (`parametersJsonSchema`), and
 *   ADK does no validation of its own, so a bad call's function response is
 *   toolfence's message with the fix;
 * - the function response is `{ result: toModelText(result) }` on success and
 *   `{ error: toModelText(result) }` otherwise (ADK's convention); the lossless
 *   `ToolResult` is on the event's `actions.stateDelta` under
 *   `GOOGLE_ADK_RESULT_KEY + callId`; the call's deferred
 *   images are saved as artifacts of the session (when the runner has an
 *   artifact service), named in the text, for `load_artifacts`;
 * - parallel calls go through the session's call gate: concurrency-safe tools
 *   together, any other alone, in the order the model made them;
 * - a tool with `needsApproval` uses ADK's tool confirmation: the first pass
 *   asks for a `ToolConfirmation` (the `adk_request_confirmation` function
 *   call), and the answer either runs the call without asking the session
 *   again or ends it `not_approved` with toolfence's message. The policy's own
 *   questions go to the session's host.
 *
 * Its own entry point, `@toolfence/adapters/google-adk`; `@google/adk` is an
 * optional peer dependency that nothing else of toolfence loads. Importing it
 * needs `--allow-env --allow-sys=cpus` (ADK and its dependencies read them on
 * load).
 *
 * @module
 */

import type { BaseTool, Context, RunAsyncToolRequest } from "@google/adk";
import { type AnyTool, toModelText } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import {
  frameworkApproval,
  type FrameworkToolsOptions,
  freshCallId,
  gatedCall,
  listedTools,
  needsApprovalOf,
} from "./_framework.ts";

import { checkGeminiName } from "./_gemini_schema.ts";
import { toDraft2020 } from "./_draft2020.ts";

// An optional peer on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE), and the tools are built synchronously from its values. Without it, importing
// this entry point fails with the runtime's ERR_MODULE_NOT_FOUND naming the package.
import * as adk from "@google/adk";

export type { FrameworkToolsOptions } from "./_framework.ts";

/** Options of {@linkcode googleAdkTools}. */
export type GoogleAdkToolsOptions<T = unknown> = FrameworkToolsOptions<T>;

/** The function response of a call: what the model reads. */
export type GoogleAdkToolResponse = { result: string } | { error: string };

/**
 * Where the lossless `ToolResult` of a call is: the state delta of the event
 * that carries the function response, under this prefix and the call's id,
 * and so the ADK session's state (ADK drops `temp:` keys from the events it
 * yields, so the key is a lasting one; the model does not read state unless an
 * instruction names the key).
 */
export const GOOGLE_ADK_RESULT_KEY = "toolfence:result:";
const RESULT_KEY = GOOGLE_ADK_RESULT_KEY;

/** The function declaration of an ADK tool (named by ADK's own copy of `@google/genai`). */
export type GoogleAdkFunctionDeclaration = NonNullable<ReturnType<BaseTool["_getDeclaration"]>>;

/** A toolfence tool as an ADK tool. */
export class GoogleAdkTool extends adk.BaseTool {
  #tool: AnyTool;
  #toolbox: ToolBox;
  #session: Session;
  #options: FrameworkToolsOptions;

  /**
   * Wraps one tool of `toolbox` for calls in `session`. Throws
   * `SchemaDialectError` for a tool name Gemini refuses (one that does not
   * start with a letter or an underscore).
   */
  constructor(tool: AnyTool, toolbox: ToolBox, session: Session, options: FrameworkToolsOptions = {}) {
    super({ name: tool.name, description: tool.description });
    checkGeminiName(tool.name, "google-adk");
    this.#tool = tool;
    this.#toolbox = toolbox;
    this.#session = session;
    this.#options = options;
  }

  /** The declaration the model is given: the tool's JSON Schema. */
  override _getDeclaration(): GoogleAdkFunctionDeclaration {
    return {
      name: this.name,
      description: this.description,
      // Gemini's JSON Schema is draft 2020-12's (a tuple is `prefixItems`; its `items` is one schema).
      parametersJsonSchema: toDraft2020(structuredClone(this.#tool.inputSchema)),
    };
  }

  /** Whether ADK should ask for a confirmation: the tool's `needsApproval`, on the validated arguments. */
  override checkRequireConfirmation(args: Record<string, unknown>): Promise<boolean> {
    return needsApprovalOf(this.#tool, args);
  }

  /** Runs the call through the toolbox's pipeline (after ADK's confirmation, when it needs one). */
  override async runAsync({ args, toolContext }: RunAsyncToolRequest): Promise<GoogleAdkToolResponse> {
    let approval;
    if (await needsApprovalOf(this.#tool, args)) {
      const confirmation = toolContext.toolConfirmation;
      if (!confirmation) {
        toolContext.requestConfirmation({
          hint: `Approve or reject ${this.name} with ${JSON.stringify(args)}: answer with a ToolConfirmation.`,
        });
        toolContext.actions.skipSummarization = true;
        return { error: `The call to ${this.name} waits for approval.` };
      }
      approval = frameworkApproval(confirmation.confirmed === true);
    }
    const callId = toolContext.functionCallId ?? freshCallId("google-adk");
    const { result, images } = await gatedCall(this.#toolbox, this.#session, this.#tool, args, {
      callId,
      signal: toolContext.abortSignal,
      approval,
    }, this.#options);
    let text = toModelText(result);
    for (const [index, image] of images.entries()) {
      const name = await saveImage(toolContext, `${callId}-${index + 1}`, image);
      text += `\n${image.note}${name ? ` (artifact ${name})` : " (not kept: no artifact service)"}`;
    }
    toolContext.actions.stateDelta[`${RESULT_KEY}${callId}`] = result;
    return result.status === "success" ? { result: text } : { error: text };
  }
}

async function saveImage(
  context: Context,
  stem: string,
  image: { mediaType: string; data: string },
): Promise<string | undefined> {
  const name = `${stem}.${image.mediaType.slice("image/".length)}`;
  try {
    await context.saveArtifact(name, { inlineData: { mimeType: image.mediaType, data: image.data } });
    return name;
  } catch {
    return undefined;
  }
}

/**
 * The toolbox's listed tools (by the session's capabilities and fence, as
 * `toolbox.list` decides) as Google ADK tools.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import { Session, ToolBox } from "@toolfence/toolfence";
 * import { googleAdkTools } from "@toolfence/adapters/google-adk";
 * const session = new Session({ workspace: Deno.cwd() });
 * const tools = googleAdkTools(new ToolBox().withDefaults("fs"), session);
 * // new LlmAgent({ name: "coder", model, instruction: "...", tools })
 * console.log(tools.some((t) => t.name === "read_file")); // true
 * await session.close();
 * ```
 */
export function googleAdkTools<T = unknown>(
  toolbox: ToolBox,
  session: Session,
  options: GoogleAdkToolsOptions<T> = {},
): GoogleAdkTool[] {
  return listedTools(toolbox, session, options).map((t) => new GoogleAdkTool(t, toolbox, session, options));
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
