// LangChain tools under the real ChatOpenAI (`@langchain/openai`), whose chat
// completions API is a loopback server that checks a tool message as OpenAI
// does: its content is a string or text parts only
// (`ChatCompletionToolMessageParam`). @langchain/openai passes a ToolMessage's
// image blocks through as they are, so a call that deferred an image made
// every later request of the conversation a 400; `{ images: false }` keeps
// them out and tells the model so.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ChatOpenAI } from "@langchain/openai";
import { type AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredTool } from "@langchain/core/tools";
import { langChainTools } from "../../adapters/langchain.ts";
import { langGraphTools } from "../../adapters/langgraph.ts";
import { withFixture } from "./_frameworks.ts";

interface Sent {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
}

/** Runs `body` with a ChatOpenAI whose API calls `snapshot` once, then answers "done"; 400 for a tool message with anything but text. */
async function withOpenAI(body: (model: ChatOpenAI, sent: Sent[], refused: string[]) => Promise<void>): Promise<void> {
  const sent: Sent[] = [];
  const refused: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const request_ = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Sent;
      sent.push(request_);
      for (const [i, message] of request_.messages.entries()) {
        if (message.role !== "tool" || typeof message.content === "string") continue;
        const parts = message.content as { type: string }[];
        const bad = parts.findIndex((part) => part.type !== "text");
        if (bad < 0) continue;
        const error = `Invalid value: '${
          parts[bad].type
        }'. Supported values are: 'text'. (messages[${i}].content[${bad}].type)`;
        refused.push(error);
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: error, type: "invalid_request_error" } }));
        return;
      }
      const first = sent.length === 1;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "gpt-5",
        choices: [{
          index: 0,
          finish_reason: first ? "tool_calls" : "stop",
          message: first
            ? {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "call_1", type: "function", function: { name: "snapshot", arguments: "{}" } }],
            }
            : { role: "assistant", content: "done" },
        }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }));
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  try {
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    await body(
      new ChatOpenAI({ model: "gpt-5", apiKey: "test", maxRetries: 0, configuration: { baseURL } }),
      sent,
      refused,
    );
  } finally {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
}

/** The docs' tool loop: the model, then each call's ToolMessage, then the model again. */
async function turn(model: ChatOpenAI, tools: StructuredTool[]): Promise<BaseMessage[]> {
  const bound = model.bindTools(tools);
  const messages: BaseMessage[] = [new HumanMessage("Look at the screen")];
  const ai = await bound.invoke(messages) as AIMessage;
  messages.push(ai);
  for (const call of ai.tool_calls ?? []) {
    messages.push(await tools.find((t) => t.name === call.name)!.invoke(call) as ToolMessage);
  }
  messages.push(await bound.invoke(messages) as AIMessage);
  return messages;
}

describe("LangChain tools under ChatOpenAI, a call that deferred an image", () => {
  for (const [name, make] of [["langChainTools", langChainTools], ["langGraphTools", langGraphTools]] as const) {
    test(`${name}(..., { images: false }): the tool message is text, the next request is taken`, {
      timeout: 60_000,
    }, async () => {
      await withFixture(async ({ session, box }) => {
        await withOpenAI(async (model, sent, refused) => {
          const messages = await turn(model, make(box, session, { images: false }));
          assert.deepEqual(refused, []);
          assert.equal(messages.at(-1)!.content, "done");
          const tool = sent[1].messages.find((message) => message.role === "tool")!;
          assert.equal(tool.tool_call_id, "call_1");
          assert.equal(
            tool.content,
            "taken\nImage from snapshot: the screen (not shown: this model takes no images in tool results)",
          );
          const message = messages.find((m): m is ToolMessage => ToolMessage.isInstance(m))!;
          assert.equal((message.artifact as { status: string }).status, "success");
        });
      });
    });
  }

  test("by default the image goes as a block (for models that take them), which OpenAI refuses", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session, box }) => {
      await withOpenAI(async (model, _sent, refused) => {
        await assert.rejects(turn(model, langChainTools(box, session)), /400/);
        assert.match(refused[0], /Invalid value: 'image'/);
      });
    });
  });
});
