// The Mastra adapter under the real Agent of `@mastra/core`, driven by the AI
// SDK's MockLanguageModelV4 (Mastra's models are AI SDK language models) that
// streams scripted tool calls; what the model reads on its next turn is taken
// from the prompt it receives. Approvals go through Mastra's own suspension,
// with an in-memory store.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { MockLanguageModelV3, MockLanguageModelV4, simulateReadableStream } from "ai/test";
import { mastraTools } from "../../adapters/mastra.ts";
import type { ToolResult } from "../../core/result.ts";
import type { BatchCall } from "../../core/executor.ts";
import type { SessionBase } from "../../core/session.ts";
import type { ToolBox } from "../../core/toolbox.ts";
import { CHAIN, FIXED, GOOD_AND_BAD, PNG, PROBES, withFixture } from "./_frameworks.ts";
import { Buffer } from "node:buffer";
import { declinedCallText } from "../../adapters/declined_call.ts";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { answerCounts, withGeminiServer } from "./_gemini_http.ts";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

const PNG_BASE64 = Buffer.from(PNG).toString("base64");

type Prompt = Parameters<MockLanguageModelV4["doStream"]>[0]["prompt"];

/** A model that answers each request with the next scripted turn: tool calls, or a final text. */
function scriptedModel(turns: (BatchCall[] | string)[], as: { provider?: string; modelId?: string } = {}) {
  const prompts: Prompt[] = [];
  const tools: Parameters<MockLanguageModelV4["doGenerate"]>[0]["tools"][] = [];
  const next = (prompt: Prompt) => {
    prompts.push(prompt);
    return turns.shift() ?? "done";
  };
  const model = new MockLanguageModelV4({
    ...as,
    doGenerate: (options) => {
      tools.push(options.tools);
      const turn = next(options.prompt);
      return Promise.resolve(
        typeof turn === "string"
          ? {
            content: [{ type: "text" as const, text: turn }],
            finishReason: { unified: "stop" as const, raw: "stop" },
            usage,
            warnings: [],
          }
          : {
            content: turn.map((call) => ({
              type: "tool-call" as const,
              toolCallId: call.callId!,
              toolName: call.name,
              input: JSON.stringify(call.args),
            })),
            finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
            usage,
            warnings: [],
          },
      );
    },
    doStream: (options) => {
      const turn = next(options.prompt);
      const chunks: Record<string, unknown>[] = typeof turn === "string"
        ? [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: turn },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ]
        : [
          ...turn.map((call) => ({
            type: "tool-call",
            toolCallId: call.callId!,
            toolName: call.name,
            input: JSON.stringify(call.args),
          })),
          { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage },
        ];
      // The stream parts, as the mock's type wants them (the union is wider than TypeScript infers here).
      const stream = simulateReadableStream({ chunks, chunkDelayInMs: null }) as never;
      return Promise.resolve({ stream });
    },
  });
  return { model, prompts, tools };
}

/** The tool results in a prompt, by call id: what the model read. */
function resultsSeen(prompt: Prompt): Map<string, { type: string; value: unknown }> {
  const seen = new Map<string, { type: string; value: unknown }>();
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result") seen.set(part.toolCallId, part.output as { type: string; value: unknown });
    }
  }
  return seen;
}

function agentOf(box: ToolBox, session: SessionBase, model: MockLanguageModelV4 | MockLanguageModelV3) {
  const agent = new Agent({
    id: "coder",
    name: "coder",
    instructions: "Use the tools.",
    // ai/test's mock implements LanguageModelV4; Mastra names that type from its own copy of the provider package.
    model: model as never,
    tools: mastraTools(box, session),
  });
  new Mastra({ agents: { coder: agent }, storage: new InMemoryStore(), logger: false });
  return agent;
}

describe("mastraTools with a Mastra Agent", () => {
  test(
    "run outside an agent, a call that needs approval is asked of the session's host",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ session, box, asked, deployed }) => {
        const deploy = mastraTools(box, session).deploy as {
          execute: (input: unknown, context: unknown) => Promise<unknown>;
        };
        const result = await deploy.execute({ service: "web" }, {}) as ToolResult;
        assert.equal(result.status, "success");
        assert.deepEqual(asked, ["Approve tool call"]);
        assert.deepEqual(deployed, ["web"]);
      });
    },
  );

  test("a good call, a bad call whose fix the model reads, and the lossless results", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, expectedTexts }) => {
      const expected = await expectedTexts([...GOOD_AND_BAD, FIXED]);
      const { model, prompts } = scriptedModel([GOOD_AND_BAD, [FIXED], "done"]);
      const output = await agentOf(box, session, model).generate("Read notes.txt", { maxSteps: 5 });
      assert.equal(output.text, "done");
      const seen = new Map([...resultsSeen(prompts[1]), ...resultsSeen(prompts[2])]);
      assert.deepEqual(seen.get("good"), { type: "text", value: expected[0] });
      assert.deepEqual(seen.get("bad"), { type: "error-text", value: expected[1] });
      assert.match(String(seen.get("bad")!.value), /^Error \[invalid_arguments\]: .*path: expected string/);
      assert.deepEqual(seen.get("fixed"), { type: "text", value: expected[2] });
      const results = output.steps.flatMap((step) => step.toolResults).map((r) => r.payload.result as ToolResult);
      assert.deepEqual(results.map((r) => [r.callId, r.status, r.errorCode]), [
        ["good", "success", undefined],
        ["bad", "error", "invalid_arguments"],
        ["fixed", "success", undefined],
      ]);
    });
  });

  for (const [provider, modelId] of [["openai.chat", "gpt-4o"], ["google.generative-ai", "gemini-2.5-flash"]]) {
    test(`a ${provider} model gets the tool's own JSON Schema: a record stays a map it can fill`, {
      timeout: 60_000,
    }, async () => {
      await withFixture(async ({ session, box }) => {
        const seen: unknown[] = [];
        const label = tool({
          name: "label",
          description: "Label a file.",
          input: v.object({ path: v.string(), labels: v.record(v.string(), v.number()) }),
          run: (args) => {
            seen.push(args);
            return "labelled";
          },
        });
        box.register(label);
        const call = { name: "label", callId: "l1", args: { path: "notes.txt", labels: { draft: 1 } } };
        const { model, prompts, tools } = scriptedModel([[call], "done"], { provider, modelId });
        await agentOf(box, session, model).generate("Label notes.txt", { maxSteps: 3 });
        // Mastra's schema rewriting for these providers turned the record into an object with no properties.
        const sent = tools[0]?.find((t) => t.name === "label") as { inputSchema: unknown } | undefined;
        assert.deepEqual(sent?.inputSchema, label.inputSchema);
        assert.deepEqual(resultsSeen(prompts[1]).get("l1"), { type: "text", value: "labelled" });
        assert.deepEqual(seen, [{ path: "notes.txt", labels: { draft: 1 } }]);
      });
    });
  }

  test("8 parallel edits of one file all succeed, in the order the model made them", { timeout: 60_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const { model, prompts } = scriptedModel([CHAIN, "done"]);
      await agentOf(box, session, model).generate("Edit chain.txt", { maxSteps: 3 });
      assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 8\n");
      const seen = resultsSeen(prompts[1]);
      assert.deepEqual(CHAIN.map((c) => seen.get(c.callId)?.type), Array(8).fill("text"));
    });
  });

  test(
    "Mastra runs a turn's calls in parallel: concurrency-safe ones overlap, the others never",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ session, box, overlap }) => {
        const { model } = scriptedModel([PROBES, "done"]);
        await agentOf(box, session, model).generate("Wait", { maxSteps: 3 });
        console.log(`mastra: at most ${overlap.safe.most} safe and ${overlap.unsafe.most} unsafe calls at once`);
        assert.ok(overlap.safe.most > 1, "Mastra ran the safe calls one at a time: nothing was tested");
        assert.equal(overlap.unsafe.most, 1);
      });
    },
  );

  test("a deferred image follows the call's text as a file part", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      const { model, prompts } = scriptedModel([[{ name: "snapshot", callId: "s1", args: {} }], "done"]);
      await agentOf(box, session, model).generate("Look", { maxSteps: 3 });
      const output = resultsSeen(prompts[1]).get("s1")!;
      assert.equal(output.type, "content");
      const parts = output.value as Record<string, unknown>[];
      assert.deepEqual(parts.map((p) => p.type), ["text", "file"]);
      assert.equal(parts[0].text, "taken\nImage from snapshot: the screen");
      // The part as LanguageModelV4 has it (Mastra converts the AI SDK v5 media part it takes for each model).
      assert.deepEqual(parts[1], { type: "file", data: { type: "data", data: PNG_BASE64 }, mediaType: "image/png" });
    });
  });

  test("a Gemini model (the AI SDK's Google provider) is sent one function response per call", {
    timeout: 60_000,
  }, async () => {
    // The provider sends each text part of a tool output as a functionResponse of its own (gemini-2.5 and older),
    // and Gemini refuses more function responses than calls: an image's note as a second text part did that.
    await withFixture(async ({ session, box }) => {
      const turns = [[{ name: "snapshot", args: {} }, { name: "read_file", args: { path: "notes.txt" } }], "done"];
      await withGeminiServer(turns, async (model, requests) => {
        // Mastra names the model type from its own copy of the provider package.
        const tools = mastraTools(box, session);
        const agent = new Agent({ id: "g", name: "g", instructions: "Look.", model: model as never, tools });
        const output = await agent.generate("Look", { maxSteps: 3 });
        assert.equal(output.text, "done");
        assert.deepEqual(answerCounts(requests[1]), { calls: 2, responses: 2, images: 1 });
        const snapshot = requests[1].contents.at(-1)!.parts.find((p) => p.functionResponse?.name === "snapshot");
        assert.equal(snapshot?.functionResponse?.response.content, "taken\nImage from snapshot: the screen");
      });
    });
  });

  test("a LanguageModelV3 model gets the image as its own image-data part", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      const prompts: Prompt[] = [];
      const model = new MockLanguageModelV3({
        doGenerate: (options) => {
          prompts.push(options.prompt as Prompt);
          const call = prompts.length === 1;
          return Promise.resolve({
            content: call
              ? [{ type: "tool-call" as const, toolCallId: "s1", toolName: "snapshot", input: "{}" }]
              : [{ type: "text" as const, text: "done" }],
            finishReason: { unified: call ? "tool-calls" as const : "stop" as const, raw: "x" },
            usage,
            warnings: [],
          });
        },
      });
      await agentOf(box, session, model).generate("Look", { maxSteps: 3 });
      const parts = resultsSeen(prompts[1]).get("s1")!.value as Record<string, unknown>[];
      assert.deepEqual(parts[1], { type: "image-data", data: PNG_BASE64, mediaType: "image/png" });
    });
  });

  test("approval is Mastra's: one call granted runs once, one declined never runs", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, asked, deployed }) => {
      const { model, prompts } = scriptedModel([
        [{ name: "deploy", callId: "d-web", args: { service: "web" } }],
        [{ name: "deploy", callId: "d-db", args: { service: "db" } }],
        "done",
      ]);
      const agent = agentOf(box, session, model);
      let output = await agent.generate("Deploy web, then db", { maxSteps: 5 });
      assert.equal(output.finishReason, "suspended");
      assert.deepEqual(deployed, []);
      output = await agent.approveToolCallGenerate({ runId: output.runId!, toolCallId: "d-web" });
      assert.deepEqual(deployed, ["web"]);
      assert.equal(output.finishReason, "suspended");
      // The decline reads as every adapter's: toolfence's text as Mastra's reason.
      output = await agent.declineToolCallGenerate({
        runId: output.runId!,
        toolCallId: "d-db",
        reason: declinedCallText("deploy"),
      });
      assert.equal(output.text, "done");
      assert.deepEqual(deployed, ["web"], "the approved call ran once, the declined one never");
      const seen = new Map(prompts.flatMap((prompt) => [...resultsSeen(prompt)]));
      assert.deepEqual(seen.get("d-web"), { type: "text", value: "deployed web" });
      assert.deepEqual(seen.get("d-db"), { type: "text", value: declinedCallText("deploy") });
      assert.ok(!asked.includes("Approve tool call"), "approval went through Mastra, not the session's host");
    });
  });
});
