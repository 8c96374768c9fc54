// The AI SDK tool set under the real `generateText`, driven by the mock model
// from `ai/test`: the tool calls it emits run through our pipeline, and what
// the model reads on its next turn is inspected in the prompt it receives.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { convertToModelMessages, generateText, isStepCount, type UIMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import type { ToolResult } from "../../core/result.ts";
import { aiSdkTools } from "../../adapters/ai_sdk.ts";
import { withSession } from "../core/_helpers.ts";
import { answerCounts, withGeminiServer } from "./_gemini_http.ts";

const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="),
  (c) => c.charCodeAt(0),
);

const countWords = tool({
  name: "count_words",
  description: "Count the words of a file in the workspace.",
  input: v.object({
    path: v.pipe(v.string(), v.description("File, relative to the workspace")),
    unique: v.optional(v.boolean(), false),
  }),
  readOnly: true,
  permissions: ["read"],
  async run({ path, unique }, ctx) {
    const words = (await readFile(await ctx.policy.resolveForRead(path), "utf8")).split(/\s+/).filter(Boolean);
    return { words: unique ? new Set(words).size : words.length };
  },
});

const snapshot = tool({
  name: "snapshot",
  description: "Take a picture.",
  input: v.object({}),
  readOnly: true,
  run: async (_args, ctx) => {
    await ctx.deferImage(PNG, "the screen");
    return "taken";
  },
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

function toolCalls(...calls: [string, string, unknown][]) {
  return {
    content: calls.map(([toolCallId, toolName, input]) => ({
      type: "tool-call" as const,
      toolCallId,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

const finalText = {
  content: [{ type: "text" as const, text: "done" }],
  finishReason: { unified: "stop" as const, raw: "stop" },
  usage,
  warnings: [],
};

/** The tool results the model received on its second turn, by call id. */
function toolResultsSeen(model: MockLanguageModelV4): Map<string, unknown> {
  const prompt = model.doGenerateCalls[1].prompt;
  const seen = new Map<string, unknown>();
  for (const message of prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) if (part.type === "tool-result") seen.set(part.toolCallId, part.output);
  }
  return seen;
}

describe("aiSdkTools with generateText", () => {
  test("a bad call's validation error, a policy refusal and a good result reach the model's next turn", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(join(dir, "notes.txt"), "the fence holds the fence\n");
      const box = new ToolBox().register(countWords);
      const model = new MockLanguageModelV4({
        doGenerate: [
          toolCalls(
            ["c1", "count_words", { path: 5, verbose: true }],
            ["c2", "count_words", { path: "../../etc/passwd" }],
            ["c3", "count_words", { path: "notes.txt", unique: true }],
          ),
          finalText,
        ],
      });
      const result = await generateText({
        model,
        tools: aiSdkTools(box, session),
        prompt: "Count the words in notes.txt",
        stopWhen: isStepCount(3),
      });
      assert.equal(result.text, "done");
      assert.equal(model.doGenerateCalls.length, 2);

      const firstTools = model.doGenerateCalls[0].tools ?? [];
      const countTool = firstTools.find((t) => t.name === "count_words") as { inputSchema: unknown } | undefined;
      assert.deepEqual(countTool?.inputSchema, countWords.inputSchema, "the model gets our JSON Schema");

      const seen = toolResultsSeen(model);
      assert.deepEqual(seen.get("c1"), {
        type: "error-text",
        value:
          "Error [invalid_arguments]: Invalid arguments for count_words: path: expected string, received 5; verbose: unexpected argument\nHint: Fix the arguments named above and call again.",
      });
      const refused = seen.get("c2") as { type: string; value: string };
      assert.equal(refused.type, "error-text");
      assert.match(refused.value, /^Error \[outside_workspace\]: Path .* is not within the agent's workspace/);
      assert.deepEqual(seen.get("c3"), { type: "text", value: '{"words":3}' });

      // The developer keeps the lossless results.
      const results = result.steps[0].toolResults.map((r) => r.output as ToolResult);
      assert.deepEqual(results.map((r) => [r.callId, r.status, r.errorCode]), [
        ["c1", "error", "invalid_arguments"],
        ["c2", "error", "outside_workspace"],
        ["c3", "success", undefined],
      ]);
    });
  });

  test("deferred images follow the call's text as file parts", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(snapshot);
      const model = new MockLanguageModelV4({ doGenerate: [toolCalls(["s1", "snapshot", {}]), finalText] });
      await generateText({ model, tools: aiSdkTools(box, session), prompt: "Look", stopWhen: isStepCount(3) });
      const output = toolResultsSeen(model).get("s1") as { type: string; value: Record<string, unknown>[] };
      assert.equal(output.type, "content");
      // One text part (the call's text, then the image's note), then the image.
      assert.deepEqual(output.value.map((part) => part.type), ["text", "file"]);
      assert.equal(output.value[0].text, "taken\nImage from snapshot: the screen");
      assert.equal(output.value[1].mediaType, "image/png");
      assert.equal(session.takeDeferredImages().length, 0, "the image was delivered once");
    });
  });

  test("a Gemini model (the AI SDK's Google provider) is sent one function response per call", {
    timeout: 60_000,
  }, async () => {
    // The provider turns each text part of a tool's output into a functionResponse of its own (for models without
    // multimodal function responses, gemini-2.5 and older), and Gemini refuses a request whose function responses
    // outnumber the calls ("Please ensure that the number of function response parts is equal to the number of
    // function call parts of the function call turn"): an image's note as a second text part did that.
    await withSession(async (session) => {
      const box = new ToolBox().register(snapshot, countWords);
      await writeFile(join(session.workspace.workdir, "a.txt"), "one two");
      const turns = [[{ name: "snapshot", args: {} }, { name: "count_words", args: { path: "a.txt" } }], "done"];
      await withGeminiServer(turns, async (model, requests) => {
        const { text } = await generateText({
          model,
          tools: aiSdkTools(box, session),
          prompt: "Look",
          stopWhen: isStepCount(3),
        });
        assert.equal(text, "done");
        assert.deepEqual(answerCounts(requests[1]), { calls: 2, responses: 2, images: 1 });
        const responses = requests[1].contents.at(-1)!.parts.flatMap((p) =>
          p.functionResponse ? [p.functionResponse] : []
        );
        assert.deepEqual(responses.map((r) => [r.name, r.response.content]), [
          ["snapshot", "taken\nImage from snapshot: the screen"],
          ["count_words", '{"words":2}'],
        ]);
      });
    });
  });

  test(
    "a chat app's UI round trip: given the tools, convertToModelMessages gives the model what it read the first time",
    {
      timeout: 60_000,
    },
    async () => {
      // What docs/adapters.md tells a chat app to do: the UI messages keep the lossless ToolResult as each call's
      // output, and only the tools' toModelOutput turns it back into what the model reads.
      await withSession(async (session) => {
        const boom = tool({
          name: "boom",
          description: "Fail.",
          input: v.object({}),
          run: () => Promise.reject(new Error("kaboom")),
        });
        const tools = aiSdkTools(new ToolBox().register(snapshot, boom), session);
        const model = new MockLanguageModelV4({
          doGenerate: [toolCalls(["s1", "snapshot", {}], ["b1", "boom", {}]), finalText],
        });
        const first = await generateText({ model, tools, prompt: "Look", stopWhen: isStepCount(3) });
        const messages: UIMessage[] = [{
          id: "a",
          role: "assistant",
          parts: first.steps[0].toolResults.map((r) => ({
            type: `tool-${r.toolName}` as const,
            toolCallId: r.toolCallId,
            state: "output-available" as const,
            input: r.input,
            output: r.output,
          })),
        }];
        const outputs = async (options?: { tools: typeof tools }) => {
          const converted = await convertToModelMessages(messages, options);
          return new Map(
            converted.flatMap((m) =>
              m.role === "tool"
                ? m.content.flatMap((p) => p.type === "tool-result" ? [[p.toolCallId, p.output]] : [])
                : []
            ),
          );
        };
        const read = toolResultsSeen(model);
        const withTools = await outputs({ tools });
        const json = (value: unknown) => JSON.parse(JSON.stringify(value));
        assert.deepEqual(json(withTools.get("s1")), json(read.get("s1")));
        assert.deepEqual(withTools.get("b1"), { type: "error-text", value: "Error [tool_error]: kaboom" });
        // Without the tools, the stored ToolResult itself: what the docs warn of.
        const without = await outputs();
        assert.equal((without.get("b1") as { type: string }).type, "json");
      });
    },
  );

  test("a conversation aborted while its call waits behind another's ends at once, its call not run", {
    timeout: 60_000,
  }, async () => {
    // Two conversations on one session (two tabs of a chat app): the first's call holds the session's call gate, and
    // the second's, waiting behind it, is aborted by its user. Before, the wait ignored the abort: the second
    // generateText hung until the first's call ended (a command, up to its timeout).
    await withSession(async (session) => {
      let release!: () => void;
      const held = new Promise<void>((done) => release = done);
      let holding!: () => void;
      const holds = new Promise<void>((done) => holding = done);
      const ran: string[] = [];
      const hold = tool({
        name: "hold",
        description: "Hold.",
        input: v.object({}),
        run: async () => {
          holding();
          await held;
          return "held";
        },
      });
      const note = tool({ name: "note", description: "Note.", input: v.object({}), run: () => ran.push("note") });
      const tools = aiSdkTools(new ToolBox().register(hold, note), session);
      const first = generateText({
        model: new MockLanguageModelV4({ doGenerate: [toolCalls(["h1", "hold", {}]), finalText] }),
        tools,
        prompt: "Hold",
        stopWhen: isStepCount(3),
      });
      await holds;
      const abort = new AbortController();
      const queued = new MockLanguageModelV4({ doGenerate: [toolCalls(["n1", "note", {}]), finalText] });
      const second = generateText({
        model: queued,
        tools,
        prompt: "Note",
        stopWhen: isStepCount(3),
        abortSignal: abort.signal,
      });
      // Its call has reached the gate once the model's first turn has answered.
      while (queued.doGenerateCalls.length === 0) await new Promise((done) => setTimeout(done, 10));
      await new Promise((done) => setTimeout(done, 100));
      abort.abort(new Error("the user stopped it"));
      const outcome = await Promise.race([
        second.then(() => "settled", () => "settled"),
        new Promise((done) => setTimeout(() => done("still waiting"), 5_000)),
      ]);
      release();
      assert.equal(outcome, "settled", "the aborted conversation waited for the other's call");
      assert.equal((await first).text, "done");
      assert.deepEqual(ran, [], "the aborted call did not run");
    });
  });

  test("only tools whose capabilities are met are offered", { timeout: 60_000 }, async () => {
    await withSession((session) => {
      const vision = tool({ name: "look", description: "x", input: v.object({}), requires: ["vision"], run: () => 0 });
      const box = new ToolBox().register(countWords, vision);
      assert.deepEqual(Object.keys(aiSdkTools(box, session)), ["count_words"]);
      assert.deepEqual(Object.keys(aiSdkTools(box, session, { capabilities: ["vision"] })), ["count_words", "look"]);
      return Promise.resolve();
    });
    // The session's own capabilities count, as in every other adapter.
    await withSession((session) => {
      const vision = tool({ name: "look", description: "x", input: v.object({}), requires: ["vision"], run: () => 0 });
      assert.deepEqual(Object.keys(aiSdkTools(new ToolBox().register(countWords, vision), session)), [
        "count_words",
        "look",
      ]);
      return Promise.resolve();
    }, { capabilities: ["vision"] });
  });
});
