// A conversation between the session's model and a toolbox: the model asks
// for tool calls, they run in the given session, their results go back, until
// the model answers without calling a tool. The default sub-agent and the
// model risk assessor both run on it.

import {
  type AgentModel,
  jsonSchemaDialect,
  type JsonSchemaToolSpec,
  type ModelMessage,
  type SessionBase as Session,
  toModelText,
  type ToolBox,
  ToolError,
} from "@toolfence/core";

/** Most model turns one conversation takes before it is given up. */
export const MAX_MODEL_TURNS = 30;

/** The session's model; throws `no_model`, saying how to give one, when it has none. */
export function sessionModel(session: Session, wanted: string): AgentModel {
  if (session.model !== undefined) return session.model;
  throw new ToolError(
    `${wanted} needs the session's model, and this session has none. The application must give one: ` +
      "new Session({ model }) with an object whose respond(request, signal) runs one turn of its model " +
      "(the AgentModel interface), or withSubagents(getter) with its own sub-agents",
    { code: "no_model", details: { wanted } },
  );
}

/** Options of {@linkcode converse}. */
export interface Conversation {
  model: AgentModel;
  /** Where the tools run. */
  session: Session;
  /** The tools the model may call (its listed ones, for the session's capabilities). */
  toolbox: ToolBox;
  system: string;
  task: string;
  signal: AbortSignal;
}

/** Runs the conversation to the model's answer (its text without tool calls). */
export async function converse({ model, session, toolbox, system, task, signal }: Conversation): Promise<string> {
  const tools = toolbox.schemas(jsonSchemaDialect, { capabilities: session.capabilities }) as JsonSchemaToolSpec[];
  const messages: ModelMessage[] = [{ role: "user", content: task }];
  for (let turn = 0; turn < MAX_MODEL_TURNS; turn++) {
    signal.throwIfAborted();
    const answer = await model.respond({ system, messages: [...messages], tools }, signal);
    const calls = answer.toolCalls ?? [];
    if (calls.length === 0) return answer.text ?? "";
    messages.push({ role: "assistant", content: answer.text ?? "", toolCalls: calls });
    for (const call of calls) {
      const result = await toolbox.call(session, call.name, call.arguments, { callId: call.id, signal });
      messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: toModelText(result) });
    }
  }
  throw new ToolError(`The model did not answer within ${MAX_MODEL_TURNS} turns`, {
    code: "subagent_failed",
    details: { turns: MAX_MODEL_TURNS },
  });
}
