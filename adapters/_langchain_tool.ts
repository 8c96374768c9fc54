// The LangChain tool class behind `langChainTools` and `langGraphTools`: a
// StructuredTool whose schema is the tool's JSON Schema for the model, whose
// input validation is toolfence's, and whose output is a ToolMessage with the
// model's text (and images) as content and the lossless ToolResult as its
// artifact.

import type { ToolRunnableConfig } from "@langchain/core/tools";
import type { ToolMessage } from "@langchain/core/messages";
import type { CallbackManagerForToolRun } from "@langchain/core/callbacks/manager";
import { type AnyTool, type ChoiceOutcome, toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import {
  type FrameworkToolsOptions,
  freshCallId,
  gatedCall,
  type GatedResult,
  type ImagesOption,
  textAndImages,
  unshownText,
} from "./_framework.ts";
import { restoreStrictArguments, toStrictSchema } from "./strict_schema.ts";
import { CUT_OFF_REASONS, cutOffResult, mapListResult } from "./_calls.ts";
import { checkGeminiName, toGeminiParameters } from "./_gemini_schema.ts";
import { openAIDescription } from "./_openai_description.ts";

// An optional peer on npm, imported statically: a top-level await here would make the module graph impossible to
// require() (ERR_REQUIRE_ASYNC_MODULE), and the tool class extends its StructuredTool. Without it, importing
// the LangChain and LangGraph entry points fails with the runtime's ERR_MODULE_NOT_FOUND naming the package.
import * as langchainTools from "@langchain/core/tools";
import * as langchainMessages from "@langchain/core/messages";

/** Options of the LangChain and LangGraph tools beyond those every framework adapter takes. */
export interface LangChainStrictOptions extends ImagesOption {
  /**
   * OpenAI strict mode: `true` when the tools are bound with `strict: true`
   * (`model.bindTools(tools, { strict: true })`, `convertToOpenAITool(tool,
   * { strict: true })`), which only set the flag and send each tool's schema
   * as it is. Each tool's schema is then the strict rendering of the
   * `openai-chat` dialect (every object closed, every property required,
   * optional ones nullable), and the model's `null`s are mapped back to
   * "absent" before validation. A tool strict mode cannot express, or whose
   * description is over OpenAI's 1024 characters, throws `SchemaDialectError`
   * here. Default `false`: the tool's JSON Schema as it is.
   */
  strict?: boolean;
  /**
   * A Gemini chat model (`ChatGoogleGenerativeAI` of `@langchain/google-genai`):
   * `true` when the tools are bound to one. Its converter sends each tool's
   * schema as Gemini's `parameters` (an OpenAPI 3.0 subset), taking out only
   * `additionalProperties` and `$schema`, and Gemini refuses the whole request
   * for any other keyword it lacks (`const` of a literal, `propertyNames` of a
   * record such as `bash`'s `env`, a tuple's list of `items`). Each tool's
   * schema is then the `gemini` dialect's rendering (maps as lists of
   * {key, value} entries, mapped back before validation); a tool Gemini cannot
   * take throws `SchemaDialectError` here. Not with `strict`. Default `false`.
   *
   * Its `images` default to `false` too: ChatGoogleGenerativeAI sends a
   * ToolMessage's image blocks as JSON inside the function response (a 1 MB
   * PNG became 1.4 million characters of base64 the model reads as text), so
   * each image is named in the text as not shown; `images: true` sends them.
   */
  gemini?: boolean;
}

/** Decides a call's approval in the framework's flow, or leaves it to the session (undefined). */
export type ApprovalStep = (
  tool: AnyTool,
  args: unknown,
  callId: string,
) => Promise<ChoiceOutcome<boolean> | undefined>;

/**
 * Orders the approval steps of calls by when they entered `call`: the calls of
 * one turn enter in the order the model made them, so LangGraph's interrupts
 * (which it matches to resume values by their order within the node) are
 * raised in the same order on every re-run of the node.
 */
export class ApprovalOrder {
  #last: Promise<void> = Promise.resolve();
  #turns = new Map<string, { before: Promise<void>; done: () => void }>();

  /** Takes the next turn for the call with this tool call id; returns its release (idempotent). */
  enter(callId: string | undefined): () => void {
    const before = this.#last;
    let done!: () => void;
    this.#last = new Promise<void>((resolve) => done = resolve);
    if (callId === undefined) {
      // A call without an id has no approval step to order; it only keeps its place.
      void before.then(done);
      return done;
    }
    const turn = { before, done };
    this.#turns.set(callId, turn);
    return () => {
      if (this.#turns.get(callId) === turn) this.#turns.delete(callId);
      done();
    };
  }

  /** Runs `step` after the approval steps of the calls that entered earlier. */
  async inTurn<R>(callId: string | undefined, step: () => Promise<R>): Promise<R> {
    const turn = callId === undefined ? undefined : this.#turns.get(callId);
    if (!turn) return await step();
    await turn.before;
    try {
      return await step();
    } finally {
      turn.done();
    }
  }
}

/** How many finished calls are remembered, so that a node LangGraph re-runs after an interrupt does not run them twice. */
const REMEMBERED = 512;

/** The content of a ToolMessage: text, or text and images as LangChain's standard content blocks. */
export type GatedContent =
  | string
  | ({ type: "text"; text: string } | { type: "image"; mimeType: string; data: string })[];

/** A toolfence tool as a LangChain structured tool. */
export class FenceTool extends langchainTools.StructuredTool {
  name: string;
  description: string;
  schema: Record<string, unknown>;
  #tool: AnyTool;
  #toolbox: ToolBox;
  #session: Session;
  #options: FrameworkToolsOptions;
  #strict: boolean;
  #gemini: boolean;
  #images: boolean;
  #approve: ApprovalStep | undefined;
  #finished: Map<string, Promise<GatedResult>>;
  #order: ApprovalOrder;

  constructor(
    tool: AnyTool,
    toolbox: ToolBox,
    session: Session,
    options: FrameworkToolsOptions & LangChainStrictOptions,
    approve: ApprovalStep | undefined,
    finished: Map<string, Promise<GatedResult>>,
    order: ApprovalOrder,
  ) {
    super();
    this.name = tool.name;
    this.#strict = options.strict === true;
    this.#gemini = options.gemini === true;
    if (this.#strict && this.#gemini) {
      throw new RangeError("strict (OpenAI's strict mode) and gemini are renderings for different models: give one");
    }
    // A Gemini model's converter sends image blocks as base64 text in the function response: not shown by default.
    this.#images = options.images ?? !this.#gemini;
    // LangChain's strict flag alone (bindTools / convertToOpenAITool with strict: true) sent the plain schema with
    // strict: true, which OpenAI refuses (optional properties left out of `required`).
    this.description = this.#strict ? openAIDescription(tool, "openai-chat") : tool.description;
    this.schema =
      (this.#strict
        ? toStrictSchema(tool.inputSchema, tool.name, "openai-chat")
        : this.#gemini
        ? geminiSchema(tool)
        : structuredClone(tool.inputSchema)) as Record<string, unknown>;
    this.#tool = tool;
    this.#toolbox = toolbox;
    this.#session = session;
    this.#options = options;
    this.#approve = approve;
    this.#finished = finished;
    this.#order = order;
  }

  /**
   * LangChain validates the input against `schema` at the start of `call`,
   * before its first `await`; during that synchronous part the schema accepts
   * anything, so every input reaches toolfence's validation and the model reads
   * toolfence's message. The model is shown the real schema.
   */
  // deno-lint-ignore no-explicit-any
  override call(arg: any, configArg?: any, tags?: string[]): Promise<any> {
    // A tool call given to `call` itself is passed on as `invoke` passes it: the arguments, and the call in
    // the config, so that `_call` sees the call's id.
    if (isToolCall(arg) && (configArg === undefined || isPlainObject(configArg))) {
      configArg = { ...configArg, toolCall: arg };
      arg = arg.args;
    }
    const callId: string | undefined = isPlainObject(configArg) ? configArg.toolCall?.id : undefined;
    const release = this.#approve ? this.#order.enter(callId) : undefined;
    const schema = this.schema;
    // A fresh empty schema, which accepts anything (the validator marks the schema object it is given).
    this.schema = {};
    try {
      const called = super.call(arg, configArg, tags);
      if (release) called.then(release, release);
      return called;
    } catch (error) {
      release?.();
      throw error;
    } finally {
      this.schema = schema;
    }
  }

  protected override async _call(
    sent: unknown,
    _runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<ToolMessage | GatedContent> {
    // Under strict mode the model sends null for an absent property (and {key, value} lists for maps), under
    // Gemini's rendering {key, value} lists for maps: mapped back.
    const { args: arg, fault } = this.#strict || this.#gemini
      ? restoreStrictArguments(this.#tool.inputSchema, sent)
      : { args: sent, fault: undefined };
    const toolCallId = config?.toolCall?.id;
    const callId = toolCallId ?? freshCallId("langchain");
    // A call the model was still writing when its answer hit the output limit: its arguments are what LangChain's
    // partial-JSON parse kept (a content cut mid-line reads as whole), so it does not run. Nor does one with a
    // {key, value} list for a map that cannot be mapped back (an entry that is no pair, a key named twice).
    const cut = toolCallId === undefined ? undefined : cutOffIn(config, toolCallId);
    const refused = cut !== undefined
      ? cutOffResult(this.name, toolCallId!, cut)
      : fault !== undefined
      ? mapListResult(this.name, callId, fault)
      : undefined;
    if (refused !== undefined) {
      return new langchainMessages.ToolMessage({
        content: toModelText(refused),
        artifact: refused,
        tool_call_id: callId,
        name: this.name,
        status: "error",
      });
    }
    // The approval (a LangGraph interrupt) comes first: when it stops the node, nothing of the call has
    // run. It is asked on every run of the node, also for a call that already finished, so that the
    // interrupts keep their order.
    const approve = this.#approve;
    const approval = approve ? await this.#order.inTurn(toolCallId, () => approve(this.#tool, arg, callId)) : undefined;
    // Only LangGraph re-runs a call, when the node runs again on resume after an interrupt: the memo is keyed by
    // the graph's task, the call's id and its arguments, never by the id alone (an id a server numbers from 0 each turn, or the
    // same call invoked again, would otherwise read an earlier call's result and never run).
    const key = this.#approve && toolCallId !== undefined ? taskCallKey(config, toolCallId, arg) : undefined;
    let pending = key === undefined ? undefined : this.#finished.get(key);
    if (!pending) {
      pending = gatedCall(this.#toolbox, this.#session, this.#tool, arg, {
        callId,
        signal: config?.signal,
        approval,
      }, this.#options);
      if (key !== undefined) remember(this.#finished, key, pending);
    }
    const { result, images } = await pending;
    const content = contentOf(result, this.#images ? images : [], this.#images ? [] : images);
    if (toolCallId === undefined) return content;
    return new langchainMessages.ToolMessage({
      content,
      artifact: result,
      tool_call_id: toolCallId,
      name: this.name,
      status: result.status === "success" ? "success" : "error",
    });
  }
}

/**
 * The `gemini` dialect's parameters of a tool, for a LangChain Gemini model; a tool without parameters keeps its
 * empty object schema (LangChain's converter leaves such a tool's `parameters` out, as Gemini wants).
 */
function geminiSchema(tool: AnyTool): Record<string, unknown> {
  checkGeminiName(tool.name, "gemini");
  return { ...(toGeminiParameters(tool.inputSchema, tool.name) ?? structuredClone(tool.inputSchema)) };
}

/**
 * Why the call `toolCallId` was cut off, when the AI message that made it is in the graph's state (LangGraph's
 * `ToolNode` and `createAgent` give the tools the state's messages) and says so: its stop reason (Anthropic's
 * `stop_reason`, which a streamed ChatAnthropic keeps in `additional_kwargs`; OpenAI's
 * `finish_reason`) ended the answer at the output limit, and this is its last tool call, with nothing written after
 * it. Undefined otherwise, and for a tool invoked outside a graph (no state).
 */
function cutOffIn(config: ToolRunnableConfig | undefined, toolCallId: string): string | undefined {
  const state = (config as { state?: unknown } | undefined)?.state;
  const messages = Array.isArray(state) ? state : (state as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as {
      tool_calls?: { id?: string }[];
      content?: unknown;
      response_metadata?: Record<string, unknown>;
      additional_kwargs?: Record<string, unknown>;
    } | undefined;
    const calls = message?.tool_calls;
    if (!Array.isArray(calls) || !calls.some((call) => call?.id === toolCallId)) continue;
    const reasons: [string, unknown][] = [
      ["stop_reason", message!.response_metadata?.stop_reason ?? message!.additional_kwargs?.stop_reason],
      ["finish_reason", message!.response_metadata?.finish_reason],
    ];
    const found = reasons.find(([, reason]) => typeof reason === "string" && CUT_OFF_REASONS.has(reason));
    if (found === undefined || calls.at(-1)?.id !== toolCallId) return undefined;
    // Text after the last call: the model finished the call and was cut off later.
    const last = Array.isArray(message!.content)
      ? message!.content.at(-1) as { type?: unknown } | undefined
      : undefined;
    if (last?.type === "text") return undefined;
    return `${found[0]} "${found[1]}"`;
  }
  return undefined;
}

// deno-lint-ignore no-explicit-any
function isPlainObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype;
}

function isToolCall(value: unknown): value is { type: "tool_call"; id?: string; args: unknown } {
  return isPlainObject(value) && value.type === "tool_call" && "args" in value;
}

/**
 * The key of a call within the LangGraph task that runs it: the task's checkpoint namespace (`tools:<task id>`,
 * the same when the node runs again on resume, another one on the next turn), the call's id and its arguments
 * (the same on resume; a node that invokes the call again with other arguments runs it). Outside a graph (no
 * namespace), or for arguments that are not JSON, there is no key: the call runs each time it is invoked.
 */
function taskCallKey(config: ToolRunnableConfig | undefined, toolCallId: string, args: unknown): string | undefined {
  const namespace = (config?.configurable as { checkpoint_ns?: unknown } | undefined)?.checkpoint_ns;
  if (typeof namespace !== "string" || namespace === "") return undefined;
  try {
    return `${namespace}\u0000${toolCallId}\u0000${JSON.stringify(args)}`;
  } catch {
    return undefined;
  }
}

function remember(finished: Map<string, Promise<GatedResult>>, callId: string, pending: Promise<GatedResult>): void {
  finished.set(callId, pending);
  if (finished.size > REMEMBERED) finished.delete(finished.keys().next().value!);
}

// `unshown`: the images the model is told of and not sent.
function contentOf(result: ToolResult, images: GatedResult["images"], unshown: GatedResult["images"]): GatedContent {
  const text = unshownText(toModelText(result), unshown);
  if (images.length === 0) return text;
  return textAndImages<Exclude<GatedContent, string>[number]>(
    text,
    images,
    (text) => ({ type: "text", text }),
    (image) => ({ type: "image", mimeType: image.mediaType, data: image.data }),
  );
}
