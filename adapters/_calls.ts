// What every provider adapter shares: mapping strict-mode arguments back before
// validation, and the base64 forms of deferred images.

import { Buffer } from "node:buffer";
import { makeResult, type ToolResult } from "@toolfence/core";
import type { BatchCall } from "@toolfence/core";
import type { DeferredImage } from "@toolfence/core";
import type { SessionBase as Session } from "@toolfence/core";
import type { ToolBox } from "@toolfence/core";
import { type MapListFault, restoreStrictArguments } from "./strict_schema.ts";

/**
 * Parses JSON-text arguments and maps strict-mode encodings (null for absent,
 * {key, value} lists for records) back to the tool's own shape. Text that is
 * not JSON, and calls of unknown tools, are left for the pipeline to report.
 */
export function restoreCall(toolbox: ToolBox, call: BatchCall): BatchCall {
  const tool = toolbox.get(call.name);
  if (!tool) return call;
  let args = call.args;
  if (typeof args === "string") {
    if (args.trim() === "") return call;
    try {
      args = JSON.parse(args);
    } catch {
      return call;
    }
  }
  const { args: restored, fault } = restoreStrictArguments(tool.inputSchema, args);
  const out = { ...call, args: restored };
  if (fault !== undefined) refusals.set(out, mapListResult(call.name, call.callId, fault));
  return out;
}

// The calls restoreCall found wrong in a way validation would misname: answered without running.
const refusals = new WeakMap<BatchCall, ToolResult>();

/** The answer to a call {@linkcode restoreCall} refused (a map's list it could not map back), or undefined. */
export function refusalOf(call: BatchCall): ToolResult | undefined {
  return refusals.get(call);
}

/**
 * The result of a call with a `{ key, value }` list sent for a map that cannot be mapped back (an entry that is no
 * pair, a key named twice): not run, `invalid_arguments`, naming the list's fault (validation would read the list's
 * entries as the map's values, "env.0: expected string").
 */
export function mapListResult(toolName: string, callId: string | undefined, fault: MapListFault): ToolResult {
  return notRunResult(
    toolName,
    callId,
    `Invalid arguments for ${toolName}: ${fault.path}: ${fault.why}, so it did not run`,
    'Send the map as a list of {"key": ..., "value": ...} entries, each key of the map once.',
  );
}

// A call the adapter answers without running it: its arguments are not what the model meant to send.
function notRunResult(toolName: string, callId: string | undefined, error: string, recoveryHint: string): ToolResult {
  return makeResult({
    status: "error",
    toolName,
    ...(callId === undefined ? {} : { callId }),
    attempts: 0,
    errorKind: "semantic",
    errorCode: "invalid_arguments",
    recoverable: true,
    error,
    recoveryHint,
  });
}

/** Base64 of image bytes. */
export function base64(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
}

/** A `data:` URL of an image. */
export function dataUrl(image: { mediaType: string; data: Uint8Array }): string {
  return `data:${image.mediaType};base64,${base64(image.data)}`;
}

/** The line that introduces a deferred image to the model. */
export function imageNote(image: DeferredImage): string {
  return `Image from ${image.toolName}${image.note ? `: ${image.note}` : ""}`;
}

/**
 * Takes the session's deferred images that belong to `callIds` and puts the
 * others back, so that calls running at the same time (MCP requests, AI SDK
 * executions) each get their own. Both steps run without yielding, so no other
 * call can interleave.
 */
export function takeImagesOf(session: Session, callIds: ReadonlySet<string>): DeferredImage[] {
  const mine: DeferredImage[] = [];
  for (const image of session.takeDeferredImages()) {
    if (image.callId !== undefined && callIds.has(image.callId)) mine.push(image);
    else void session.deferImage(image.data, { toolName: image.toolName, callId: image.callId, note: image.note });
  }
  return mine;
}

// The stop reasons of a provider's filter, which stops an answer wherever it is: Anthropic's `refusal` (its streaming
// classifiers) and OpenAI chat's `content_filter`.
const FILTER_REASONS: ReadonlySet<string> = new Set(["refusal", "content_filter"]);

/**
 * The stop reasons that end a model's answer wherever it was, a tool call's
 * arguments included: Anthropic's `stop_reason` `max_tokens`,
 * `model_context_window_exceeded` and `refusal`, OpenAI chat's
 * `finish_reason` `length` and `content_filter` (as LangChain's chat models
 * report them too). Gemini's function calls arrive as whole objects, so its
 * `MAX_TOKENS` cuts none (as in the gemini dialect).
 */
export const CUT_OFF_REASONS: ReadonlySet<string> = new Set([
  "max_tokens",
  "model_context_window_exceeded",
  "length",
  ...FILTER_REASONS,
]);

/**
 * The result of a call the provider's response says was cut off at the
 * model's output limit (`why`, e.g. `stop_reason "max_tokens"`): not run,
 * `invalid_arguments`, with what the model can do about it.
 */
export function cutOffResult(toolName: string, callId: string, why: string): ToolResult {
  return notRunResult(
    toolName,
    callId,
    `The call to ${toolName} was cut off before its arguments were complete (the model's answer ended at ${why}), ` +
      "so it did not run",
    [...FILTER_REASONS].some((reason) => why.endsWith(`"${reason}"`))
      ? "The provider stopped the answer (its content filter); make the call again only if it is still needed."
      : "Make the call again with shorter arguments, e.g. split a long text over several calls.",
  );
}
