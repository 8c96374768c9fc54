// The AI SDK's own approval flow: a tool that needs approval makes the real
// generateText/streamText (driven by ai/test's mock model) stop with a
// tool-approval-request; the app's tool-approval-response decides. Approved,
// the call runs once through the pipeline (the session's host is not asked);
// denied, it never runs and the model reads toolfence's decline text.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { generateText, isStepCount, type ModelMessage, streamText } from "ai";
import { MockLanguageModelV4, simulateReadableStream } from "ai/test";
import { aiSdkTools } from "../../adapters/ai_sdk.ts";
import { declinedCallText } from "../../adapters/declined_call.ts";
import type { ToolResult } from "../../core/result.ts";
import { withFixture } from "./_frameworks.ts";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

const deployCall = (id: string, service: string) => ({
  content: [{ type: "tool-call" as const, toolCallId: id, toolName: "deploy", input: JSON.stringify({ service }) }],
  finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
  usage,
  warnings: [],
});

const finalText = {
  content: [{ type: "text" as const, text: "done" }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage,
  warnings: [],
};

/** The tool results in a prompt, by call id. */
function resultsIn(prompt: readonly { role: string; content: unknown }[]): Map<string, unknown> {
  const seen = new Map<string, unknown>();
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content as { type: string; toolCallId: string; output: unknown }[]) {
      if (part.type === "tool-result") seen.set(part.toolCallId, part.output);
    }
  }
  return seen;
}

/** The approval request of one call among the response messages. */
function approvalIdOf(messages: readonly ModelMessage[], toolCallId: string): string {
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as { type: string; toolCallId?: string; approvalId?: string }[]) {
      if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) return part.approvalId!;
    }
  }
  throw new Error(`no approval request for ${toolCallId}`);
}

describe("aiSdkTools and the AI SDK's approval flow", () => {
  for (const answer of ["approved", "denied"] as const) {
    test(`generateText: a call that needs approval waits for the app's answer (${answer})`, {
      timeout: 60_000,
    }, async () => {
      await withFixture(async ({ session, box, asked, deployed }) => {
        const model = new MockLanguageModelV4({ doGenerate: [deployCall("d1", "web"), finalText] });
        const tools = aiSdkTools(box, session);
        const prompt: ModelMessage[] = [{ role: "user", content: "Deploy web" }];
        const first = await generateText({ model, tools, messages: prompt, stopWhen: isStepCount(3) });
        assert.deepEqual(deployed, [], "nothing runs before the answer");
        assert.equal(model.doGenerateCalls.length, 1);
        const approvalId = approvalIdOf(first.response.messages, "d1");

        const second = await generateText({
          model,
          tools,
          stopWhen: isStepCount(3),
          messages: [...prompt, ...first.response.messages, {
            role: "tool",
            content: [{
              type: "tool-approval-response",
              approvalId,
              approved: answer === "approved",
              ...(answer === "denied" ? { reason: declinedCallText("deploy") } : {}),
            }],
          }],
        });
        assert.equal(second.text, "done");
        assert.ok(!asked.includes("Approve tool call"), "the AI SDK's flow answered, not the session's host");
        const seen = resultsIn(model.doGenerateCalls[1].prompt).get("d1");
        if (answer === "approved") {
          assert.deepEqual(deployed, ["web"], "the approved call ran once");
          assert.deepEqual(seen, { type: "text", value: "deployed web" });
        } else {
          assert.deepEqual(deployed, [], "the denied call never ran");
          assert.deepEqual(seen, { type: "execution-denied", reason: declinedCallText("deploy") });
        }
      });
    });
  }

  test("streamText: the approval request streams, and an approved call runs once", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session, box, asked, deployed }) => {
      const chunks = (parts: unknown[]) => ({ stream: simulateReadableStream({ chunks: parts as never[] }) });
      const finish = (reason: "tool-calls" | "stop") => ({
        type: "finish",
        finishReason: { unified: reason, raw: reason },
        usage,
      });
      const model = new MockLanguageModelV4({
        doStream: [
          chunks([
            { type: "tool-call", toolCallId: "s1", toolName: "deploy", input: JSON.stringify({ service: "db" }) },
            finish("tool-calls"),
          ]),
          chunks([
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "done" },
            { type: "text-end", id: "t" },
            finish("stop"),
          ]),
        ],
      });
      const tools = aiSdkTools(box, session);
      const prompt: ModelMessage[] = [{ role: "user", content: "Deploy db" }];
      const first = streamText({ model, tools, messages: prompt, stopWhen: isStepCount(3) });
      const kinds: string[] = [];
      for await (const part of first.fullStream) kinds.push(part.type);
      assert.ok(kinds.includes("tool-approval-request"), kinds.join(","));
      assert.deepEqual(deployed, []);
      const messages = (await first.response).messages;
      const second = streamText({
        model,
        tools,
        stopWhen: isStepCount(3),
        messages: [...prompt, ...messages, {
          role: "tool",
          content: [{ type: "tool-approval-response", approvalId: approvalIdOf(messages, "s1"), approved: true }],
        }],
      });
      assert.equal(await second.text, "done");
      assert.deepEqual(deployed, ["db"]);
      assert.ok(!asked.includes("Approve tool call"));
    });
  });

  test("execute called directly, outside the flow, still asks the session's host", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, asked, deployed }) => {
      const deploy = aiSdkTools(box, session).deploy;
      const result = await deploy.execute!({ service: "web" } as never, { toolCallId: "x1", messages: [] } as never);
      assert.equal((result as ToolResult).status, "success");
      assert.deepEqual(asked, ["Approve tool call"]);
      assert.deepEqual(deployed, ["web"]);
    });
  });

  test("a needsApproval that throws ends the call with its error; the run goes on", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, asked }) => {
      const ran: string[] = [];
      box.register(tool({
        name: "release",
        description: "Release a version.",
        input: v.object({ version: v.string() }),
        needsApproval: () => {
          throw new Error("the approval rules could not be read");
        },
        run: ({ version }) => {
          ran.push(version);
          return `released ${version}`;
        },
      }));
      const model = new MockLanguageModelV4({
        doGenerate: [{
          content: [{ type: "tool-call" as const, toolCallId: "r1", toolName: "release", input: '{"version":"1.0"}' }],
          finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
          usage,
          warnings: [],
        }, finalText],
      });
      const result = await generateText({
        model,
        tools: aiSdkTools(box, session),
        prompt: "Release 1.0",
        stopWhen: isStepCount(3),
      });
      assert.equal(result.text, "done");
      assert.deepEqual(ran, [], "the tool never ran");
      assert.deepEqual(asked, []);
      const seen = resultsIn(model.doGenerateCalls[1].prompt) as Map<string, { type: string; value: string }>;
      assert.equal(seen.get("r1")?.type, "error-text");
      assert.match(seen.get("r1")!.value, /the approval rules could not be read/);
    });
  });
});
