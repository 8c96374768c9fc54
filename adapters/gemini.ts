/**
 * Gemini: the `gemini` dialect (function declarations whose parameters use
 * the OpenAPI 3.0 subset of Gemini's `Schema`: one upper-case type, `nullable`,
 * string enums (an enum of numbers or booleans keeps its type, its values
 * described), no `$ref` or `additionalProperties`) and an adapter that runs
 * the `functionCall` parts of a response through the toolbox and builds the
 * user content with the `functionResponse` parts (`{ output }` on success,
 * `{ error }` on failure, as Gemini's documentation asks), then the images.
 *
 * @module
 */

import type { AnyTool } from "@toolfence/core";
import type { BatchCall, BatchOptions } from "@toolfence/core";
import type { DeferredImage } from "@toolfence/core";
import { toModelText, type ToolResult } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { base64, imageNote, restoreCall } from "./_calls.ts";
import { runToolCalls, type ToolCallDialect } from "./tool_call_dialect.ts";
import { checkGeminiName, type GeminiSchema, toGeminiParameters } from "./_gemini_schema.ts";

export type { GeminiSchema, GeminiType } from "./_gemini_schema.ts";

/** A function declaration. */
export interface GeminiFunctionDeclaration {
  /** Tool name. */
  name: string;
  /** Tool description. */
  description: string;
  /** The arguments; absent for a tool without any. */
  parameters?: GeminiSchema;
}

/** One entry of Gemini's `tools` array. */
export interface GeminiTool {
  /** The functions. */
  functionDeclarations: GeminiFunctionDeclaration[];
}

/**
 * Gemini's `tools` array: one entry holding every function declaration (none
 * when there are no tools). Throws `SchemaDialectError` for a schema the
 * OpenAPI subset cannot express, and for a tool name that does not start with
 * a letter or an underscore (Gemini's rule); records become `{key, value}` lists, mapped
 * back by the adapter.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { tool } from "@toolfence/core";
 * import { geminiTools } from "@toolfence/adapters";
 * const echo = tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * console.log(JSON.stringify(geminiTools([echo])));
 * // [{"functionDeclarations":[{"name":"echo","description":"Echo.","parameters":{"type":"OBJECT",...}}]}]
 * ```
 */
export function geminiTools(tools: readonly AnyTool[]): GeminiTool[] {
  if (tools.length === 0) return [];
  return [{
    functionDeclarations: tools.map((t) => {
      checkGeminiName(t.name);
      const parameters = toGeminiParameters(t.inputSchema, t.name);
      return parameters
        ? { name: t.name, description: t.description, parameters }
        : { name: t.name, description: t.description };
    }),
  }];
}

/** A part of a Gemini content (only `functionCall` parts are read). */
export interface GeminiPartLike {
  /** A call the model asks for. */
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
}

/** A Gemini content. */
export interface GeminiContentLike {
  /** Its parts. */
  parts?: GeminiPartLike[];
}

/** A `generateContent` response (the first candidate is read), or one content. */
export type GeminiResponseLike = { candidates?: { content?: GeminiContentLike }[] } | GeminiContentLike;

/** A part of the content that answers the calls. */
export type GeminiResultPart =
  | { functionResponse: { id?: string; name: string; response: { output: unknown } | { error: string } } }
  | { text: string }
  | { inlineData: { mimeType: string; data: string } };

/** The user content that answers the calls. */
export interface GeminiResultContent {
  /** Always `user`. */
  role: "user";
  /** One `functionResponse` per call, then a note and an `inlineData` part per image. */
  parts: GeminiResultPart[];
}

/** What the adapter returns. */
export interface GeminiRun {
  /** The content to append. */
  content: GeminiResultContent;
  /** The lossless results, in call order. */
  results: ToolResult[];
  /** The images the tools deferred. */
  images: DeferredImage[];
}

const GENERATED_ID = "gemini-call-";
// Which response the generated ids are of, so that two responses' calls run on one session at once (two
// conversations) do not share an id, and with it their deferred images.
let responses = 0;

/**
 * The `functionCall` parts of a response's first candidate (or of one
 * content), as batch calls. Calls without an id get a generated one, which is
 * not sent back to Gemini: `gemini-call-<response>-<index>`, unique to the
 * response, so that the calls of two responses run at once keep their own
 * results and images.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { geminiCalls } from "@toolfence/adapters";
 * console.log(geminiCalls({ parts: [{ functionCall: { name: "echo", args: { text: "hi" } } }] }));
 * // [{ name: "echo", args: { text: "hi" }, callId: "gemini-call-1-0" }]
 * ```
 */
export function geminiCalls<R extends GeminiResponseLike>(response: R): BatchCall[] {
  const read: GeminiResponseLike = response;
  const content = "candidates" in read ? read.candidates?.[0]?.content : read as GeminiContentLike;
  const calls = (content?.parts ?? []).flatMap((part) => part.functionCall ? [part.functionCall] : []);
  const run = calls.some((call) => call.id === undefined) ? ++responses : 0;
  return calls.map((call, index) => ({
    name: call.name ?? "",
    args: call.args ?? {},
    callId: call.id ?? `${GENERATED_ID}${run}-${index}`,
  }));
}

/**
 * The user content that answers function calls: a `functionResponse` per
 * result (`{ output }` or `{ error }`), then the deferred images as
 * `inlineData` parts.
 *
 * Requires no permissions.
 *
 * @example
 * ```ts
 * import { makeResult } from "@toolfence/core";
 * import { geminiResultContent } from "@toolfence/adapters";
 * const result = makeResult({ status: "success", toolName: "echo", callId: "gemini-call-1-0", output: "hi" });
 * console.log(JSON.stringify(geminiResultContent([result], [])));
 * // {"role":"user","parts":[{"functionResponse":{"name":"echo","response":{"output":"hi"}}}]}
 * ```
 */
export function geminiResultContent(
  results: readonly ToolResult[],
  images: readonly DeferredImage[],
): GeminiResultContent {
  const parts: GeminiResultPart[] = results.map((result) => {
    const id = result.callId && !result.callId.startsWith(GENERATED_ID) ? { id: result.callId } : {};
    // The output goes as JSON where it is what the model reads; a result's modelOutput (what the model reads
    // instead of the output, which may hold what the tool keeps from the model) and a cut output do not.
    const response = result.status !== "success"
      ? { error: toModelText(result) }
      : result.modelOutput !== undefined
      ? { output: result.modelOutput }
      : { output: typeof result.output === "string" || result.truncated ? toModelText(result) : result.output };
    return { functionResponse: { ...id, name: result.toolName, response } };
  });
  for (const image of images) {
    parts.push({ text: imageNote(image) });
    parts.push({ inlineData: { mimeType: image.mediaType, data: base64(image.data) } });
  }
  return { role: "user", parts };
}

/**
 * Runs the function calls of a response through `toolbox.callMany` and
 * returns the content to send back, with the lossless results.
 *
 * Requires whatever permissions the called tools need.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * import { Session } from "@toolfence/policy";
 * import { ToolBox } from "@toolfence/core";
 * import { runGeminiToolCalls } from "@toolfence/adapters";
 * const box = new ToolBox();
 * box.tool({ name: "echo", description: "Echo.", input: v.object({ text: v.string() }), run: (a) => a.text });
 * const session = new Session({ workspace: Deno.cwd() });
 * const { content } = await runGeminiToolCalls(box, session, {
 *   candidates: [{ content: { parts: [{ functionCall: { name: "echo", args: { text: "hi" } } }] } }],
 * });
 * console.log(content.parts);
 * await session.close();
 * ```
 */
export async function runGeminiToolCalls<T = unknown, R extends GeminiResponseLike = GeminiResponseLike>(
  toolbox: ToolBox,
  session: Session,
  response: R,
  options: BatchOptions<T> = {},
): Promise<GeminiRun> {
  const { reply, results, images } = await runToolCalls(gemini, toolbox, session, response, options);
  return { content: reply, results, images };
}

/**
 * Gemini: every tool in one `{ functionDeclarations }` entry, calls from the
 * `functionCall` parts of the first candidate (arguments mapped back to the
 * tool's shape), results as one user content of `functionResponse` parts and
 * the images.
 */
export const gemini: ToolCallDialect<GeminiResponseLike, GeminiResultContent> = Object.freeze({
  name: "gemini",
  render: (tools: readonly AnyTool[]): unknown[] => geminiTools(tools),
  calls: (response: GeminiResponseLike, toolbox: ToolBox): BatchCall[] =>
    geminiCalls(response).map((call) => restoreCall(toolbox, call)),
  reply: geminiResultContent,
});
