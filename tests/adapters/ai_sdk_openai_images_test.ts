// aiSdkTools and mastraTools under the AI SDK's real OpenAI chat model
// (`@ai-sdk/openai`'s `openai.chat()`), whose chat completions API is a
// loopback server. That provider writes a tool output of content parts as
// JSON text in the tool message, so a call that deferred an image made the
// model read the image's base64 as text (a 1.6 MB JPEG is 2.1 million
// characters); `{ images: false }` keeps the images out and tells the model so.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { generateText, isStepCount } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import { aiSdkTools } from "../../adapters/ai_sdk.ts";
import { mastraTools } from "../../adapters/mastra.ts";
import { withFixture } from "./_frameworks.ts";

interface Sent {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
}

/** Runs `body` with `openai.chat("gpt-5")` whose API calls `snapshot` once, then answers "done". */
async function withOpenAIChat(
  body: (model: ReturnType<ReturnType<typeof createOpenAI>["chat"]>, sent: Sent[]) => Promise<void>,
): Promise<void> {
  const sent: Sent[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      sent.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      const first = sent.length === 1;
      const message = first
        ? {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "snapshot", arguments: "{}" } }],
        }
        : { role: "assistant", content: "done" };
      const choice = { index: 0, finish_reason: first ? "tool_calls" : "stop", message };
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      const streamed = (sent.at(-1) as { stream?: boolean }).stream === true;
      if (streamed) {
        const delta = first
          ? { role: "assistant", tool_calls: [{ index: 0, ...message.tool_calls![0] }] }
          : { role: "assistant", content: "done" };
        const chunk = (c: unknown) => `data: ${JSON.stringify(c)}\n\n`;
        const base = { id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-5" };
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.end(
          chunk({ ...base, choices: [{ index: 0, delta, finish_reason: null }] }) +
            chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason }], usage }) +
            "data: [DONE]\n\n",
        );
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ id: "c", object: "chat.completion", created: 1, model: "gpt-5", choices: [choice], usage }),
      );
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  try {
    const openai = createOpenAI({
      apiKey: "test",
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    });
    await body(openai.chat("gpt-5"), sent);
  } finally {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
}

function toolMessage(sent: Sent[]): { content: unknown; tool_call_id?: string } {
  return sent[1].messages.find((message) => message.role === "tool")!;
}

const UNSHOWN = "taken\nImage from snapshot: the screen (not shown: this model takes no images in tool results)";

describe("a call that deferred an image, under the AI SDK's OpenAI chat model", () => {
  test("aiSdkTools(..., { images: false }): the model reads the text, no base64", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      await withOpenAIChat(async (model, sent) => {
        const { text } = await generateText({
          model,
          tools: aiSdkTools(box, session, { images: false }),
          prompt: "Look",
          stopWhen: isStepCount(3),
        });
        assert.equal(text, "done");
        assert.deepEqual(toolMessage(sent), { role: "tool", tool_call_id: "call_1", content: UNSHOWN });
      });
    });
  });

  test("by default the image's base64 reaches the model as JSON text", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      await withOpenAIChat(async (model, sent) => {
        await generateText({ model, tools: aiSdkTools(box, session), prompt: "Look", stopWhen: isStepCount(3) });
        assert.match(String(toolMessage(sent).content), /"type":"file".*"data":"iVBOR/);
      });
    });
  });

  test("mastraTools(..., { images: false }) under Agent.generate: the same text", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      await withOpenAIChat(async (model, sent) => {
        const tools = mastraTools(box, session, { images: false });
        const agent = new Agent({ id: "o", name: "o", instructions: "Look.", model: model as never, tools });
        const output = await agent.generate("Look", { maxSteps: 3 });
        assert.equal(output.text, "done");
        const content = toolMessage(sent).content;
        assert.equal(typeof content === "string" ? content : JSON.stringify(content), UNSHOWN);
      });
    });
  });
});
