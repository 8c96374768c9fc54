// What the agent-framework adapters share: the options every adapter takes,
// whether a call needs approval (decided before the framework's approval flow
// runs), and one call through the session's call gate with its own deferred
// images.

import type { ChoiceOutcome, ProgressEvent } from "@toolfence/core";
import type { ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import { type AnyTool, isConcurrencySafe } from "@toolfence/core";
import type { ListOptions, ToolBox } from "@toolfence/core";
import { validateWithJsonSchema, validateWithStandardSchema } from "@toolfence/core";
import { base64, imageNote, takeImagesOf } from "./_calls.ts";

/** Options every framework adapter takes. */
export interface FrameworkToolsOptions<T = unknown> extends ListOptions {
  /** A value handed to every tool as `ctx.value`. */
  context?: T;
  /** Deadline of each call; overrides the tools' own. */
  timeoutMs?: number;
  /** Receives progress events. */
  onProgress?: (event: ProgressEvent) => void;
}

/** A deferred image of one call, ready for a framework's image content. */
export interface CallImage {
  /** The line that introduces the image to the model. */
  note: string;
  /** `image/png`, `image/jpeg`, `image/webp` or `image/gif`. */
  mediaType: string;
  /** The bytes, base64. */
  data: string;
}

/**
 * The parts the model reads for a call with deferred images, in a framework's
 * own shapes: one text part (the call's text, then each image's note, a line
 * each), then the images in the notes' order. One text part, because a
 * framework's provider may make a message of each: the AI SDK's Google
 * provider (under the AI SDK and Mastra) sends each text part of a tool output
 * as a `functionResponse` of its own to Gemini models without multimodal
 * function responses, and Gemini refuses a request with more function
 * responses than calls; the OpenAI Agents SDK's chat model glued the parts
 * together without a break.
 */
export function textAndImages<P>(
  text: string,
  images: readonly CallImage[],
  textPart: (text: string) => P,
  imagePart: (image: CallImage) => P,
): P[] {
  return [textPart([text, ...images.map((image) => image.note)].join("\n")), ...images.map(imagePart)];
}

/** The option of the adapters whose framework may hand a call's images to a model that takes none in a tool result. */
export interface ImagesOption {
  /**
   * Whether a call's deferred images go into what the model reads of the
   * call, after its text (default `true`). `false` for a model that takes
   * only text in a tool result, such as OpenAI's chat completions: the AI
   * SDK's `openai.chat()` model sends a tool result's images as JSON text (the
   * base64 included), and LangChain's `ChatOpenAI` passes them on in the tool
   * message, which the API refuses with 400. The text then names each image
   * as not shown. The LangChain tools' `gemini: true` makes `false` the
   * default.
   */
  images?: boolean;
}

/** What the model reads of a call whose images are not sent: its text, then each image's note, marked not shown. */
export function unshownText(text: string, images: readonly CallImage[]): string {
  return [text, ...images.map((image) => `${image.note} (not shown: this model takes no images in tool results)`)]
    .join("\n");
}

/** A call's lossless result and the images it deferred. */
export interface GatedResult {
  result: ToolResult;
  images: CallImage[];
}

/** The tools an adapter offers: what `toolbox.list` gives for the options, with the session. */
export function listedTools(toolbox: ToolBox, session: Session, options: ListOptions): AnyTool[] {
  return toolbox.list({ capabilities: session.capabilities, session, ...options });
}

/**
 * Whether the framework should ask for approval of a call with these
 * arguments: the tool's `needsApproval`, evaluated on the validated arguments.
 * Arguments that do not validate need no approval: the pipeline refuses them
 * with its own message before anything would be approved. Nor does a call
 * whose `needsApproval` throws: the framework's hook would carry the throw out
 * of the agent's run (the AI SDK's `generateText` and the OpenAI Agents SDK's
 * `run` rejected with it), while the pipeline, which asks `needsApproval` again
 * before the tool runs, ends the call with the error as the model's result.
 */
export async function needsApprovalOf(tool: AnyTool, args: unknown): Promise<boolean> {
  const needs = tool.needsApproval;
  if (needs === undefined || needs === false) return false;
  if (needs === true) return true;
  let value = args;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return false;
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  const outcome = tool.input
    ? validateWithStandardSchema(tool.input, record, tool.inputSchema)
    : validateWithJsonSchema(tool.inputSchema, record);
  if (!outcome.ok) return false;
  try {
    return await needs(outcome.value as never);
  } catch {
    return false;
  }
}

/** An approval the framework's flow gave, as the pipeline takes it. */
export function frameworkApproval(choice: boolean): ChoiceOutcome<boolean> {
  return { choice, source: "user" };
}

let counter = 0;

/** A call id for frameworks that give none. */
export function freshCallId(prefix: string): string {
  return `${prefix}-${++counter}`;
}

/**
 * Runs one call through the session's call gate (concurrency-safe tools
 * together, any other alone, first come first served) and the toolbox's
 * pipeline, and takes the images it deferred.
 */
export async function gatedCall<T>(
  toolbox: ToolBox,
  session: Session,
  tool: AnyTool,
  args: unknown,
  call: { callId: string; signal?: AbortSignal; approval?: ChoiceOutcome<boolean> },
  options: FrameworkToolsOptions<T>,
): Promise<GatedResult> {
  const result = await session.callGate.run(
    isConcurrencySafe(tool),
    () =>
      toolbox.call(session, tool.name, args, {
        callId: call.callId,
        signal: call.signal,
        approval: call.approval,
        context: options.context,
        timeoutMs: options.timeoutMs,
        onProgress: options.onProgress,
      }),
    call.signal,
  );
  const images = takeImagesOf(session, new Set([call.callId])).map((image) => ({
    note: imageNote(image),
    mediaType: image.mediaType,
    data: base64(image.data),
  }));
  return { result, images };
}
