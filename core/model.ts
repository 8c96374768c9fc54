/**
 * The session's model, as the library needs it: one turn of a conversation
 * with tools. The library holds no provider client; a caller that wants
 * sub-agents without its own getter (`withSubagents()`), or a model judging
 * commands, hands the session an object following this interface (a thin
 * wrapper around its provider's client).
 *
 * @module
 */

import type { JsonSchemaToolSpec } from "./dialects.ts";

/** A tool call the model asked for. */
export interface ModelToolCall {
  /** The model's id for the call, echoed in the tool message that answers it. */
  id: string;
  /** The tool's name. */
  name: string;
  /** The arguments, as the model wrote them. */
  arguments: unknown;
}

/** One message of the conversation the model is shown. */
export type ModelMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ModelToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string };

/** What the model is asked for one turn. */
export interface ModelRequest {
  /** The instructions. */
  system: string;
  /** The conversation so far, oldest first. */
  messages: ModelMessage[];
  /** The tools it may call (JSON Schema dialect). */
  tools: JsonSchemaToolSpec[];
}

/** The model's turn: tool calls to make, or (with none) its answer. */
export interface ModelTurn {
  /** Its text: the answer when it calls no tool. */
  text?: string;
  /** The calls it asks for; none ends the conversation. */
  toolCalls?: ModelToolCall[];
}

/**
 * The model a session's sub-agents run with (xun's "the session's model"):
 * given the conversation and the tools, it answers one turn. It should stop
 * when `signal` aborts.
 *
 * @example
 * ```ts
 * import type { AgentModel } from "@toolfence/core";
 * // A model that answers at once; a real one calls its provider's API.
 * const echo: AgentModel = {
 *   respond: (request) => Promise.resolve({ text: `got ${request.messages.length} message(s)` }),
 * };
 * console.log((await echo.respond({ system: "", messages: [], tools: [] }, new AbortController().signal)).text);
 * ```
 */
export interface AgentModel {
  /** Answers one turn of the conversation. */
  respond(request: ModelRequest, signal: AbortSignal): Promise<ModelTurn>;
}
