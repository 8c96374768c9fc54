// A model provider that follows the AgentModel interface and answers from a
// script: each turn is a function of the request it got. There is no model on
// this machine; the library only ever sees the interface, so this is the real
// thing from its side. It records every request.

import type { AgentModel, ModelRequest, ModelTurn } from "../../../core/model.ts";

/** One scripted turn: what the model answers to a request. */
export type ScriptedTurn = (request: ModelRequest) => ModelTurn;

/** A model answering turn after turn from `turns`; past the end it fails. */
export class ScriptedModel implements AgentModel {
  readonly requests: ModelRequest[] = [];
  #turns: ScriptedTurn[];

  constructor(turns: ScriptedTurn[]) {
    this.#turns = [...turns];
  }

  respond(request: ModelRequest, signal: AbortSignal): Promise<ModelTurn> {
    signal.throwIfAborted();
    this.requests.push(structuredClone(request));
    const next = this.#turns.shift();
    if (next === undefined) return Promise.reject(new Error("the script has no more turns"));
    return Promise.resolve(next(request));
  }
}

/** The content of the last tool message of a request. */
export function lastToolResult(request: ModelRequest): string {
  const message = request.messages.findLast((m) => m.role === "tool");
  return message?.role === "tool" ? message.content : "";
}
