// The provider adapters against real tools and sessions, with their inputs
// and outputs typed by the official SDKs (`openai`, `@anthropic-ai/sdk`,
// `@google/genai`): `deno check` (and `deno test`) fail when a shape drifts.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import type OpenAI from "openai";
import type Anthropic from "@anthropic-ai/sdk";
import type * as Genai from "@google/genai";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { ToolError } from "../../core/errors.ts";
import { makeResult } from "../../core/result.ts";
import { openFence } from "../../policy/fence.ts";
import {
  openAIChatCalls,
  type OpenAIChatResponseLike,
  openAIChatTools,
  openAIResponsesCalls,
  type OpenAIResponsesResponseLike,
  openAIResponsesTools,
  runOpenAIChatToolCalls,
  runOpenAIResponsesToolCalls,
} from "../../adapters/openai.ts";
import {
  anthropicCalls,
  type AnthropicMessageLike,
  anthropicTools,
  runAnthropicToolCalls,
} from "../../adapters/anthropic.ts";
import { geminiCalls, type GeminiResponseLike, geminiTools, runGeminiToolCalls } from "../../adapters/gemini.ts";
import { withSession } from "../core/_helpers.ts";
import { SchemaDialectError } from "../../adapters/dialect_error.ts";
import { openAIAgentsTools } from "../../adapters/openai_agents.ts";
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";

// A real PNG (1x1, transparent).
const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="),
  (c) => c.charCodeAt(0),
);

const seen: unknown[] = [];
const lookup = tool({
  name: "lookup",
  description: "Look a word up.",
  input: v.object({
    word: v.string(),
    limit: v.optional(v.number(), 3),
    tags: v.optional(v.record(v.string(), v.string())),
  }),
  readOnly: true,
  run: (args) => {
    seen.push(args);
    return { word: args.word, limit: args.limit };
  },
});
const broken = tool({
  name: "broken",
  description: "Always refuses.",
  input: v.object({}),
  run: () => {
    throw new ToolError("Path /etc/passwd is not within the agent's workspace", {
      code: "outside_workspace",
      kind: "policy",
    });
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
const box = new ToolBox().register(lookup, broken, snapshot);
const tools = box.list({ fence: openFence() });

// Type-level: does `A` fit where `B` is expected?
type Fits<A, B> = [A] extends [B] ? true : false;
function assertType<T extends true>(_proof?: T): void {}

// Gemini's `Type` is a string enum (nominal in TypeScript); its JSON values are what we write.
type Denominal<T> = T extends Genai.Type ? `${Genai.Type}` : T extends (infer U)[] ? Denominal<U>[]
: T extends object ? { [K in keyof T]: Denominal<T[K]> }
: T;

describe("OpenAI chat completions", () => {
  test("tools, calls from a ChatCompletion, tool messages then the image message", { timeout: 60_000 }, async () => {
    const wire: OpenAI.Chat.Completions.ChatCompletionTool[] = openAIChatTools(tools);
    assert.equal(wire.length, 3);
    const completion: OpenAI.Chat.Completions.ChatCompletion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-test",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        logprobs: null,
        message: {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: [
            {
              id: "c1",
              type: "function",
              function: { name: "lookup", arguments: '{"word":"fence","limit":null,"tags":[{"key":"a","value":"b"}]}' },
            },
            { id: "c2", type: "function", function: { name: "broken", arguments: "{}" } },
            { id: "c3", type: "function", function: { name: "snapshot", arguments: "" } },
          ],
        },
      }],
    };
    assertType<Fits<OpenAI.Chat.Completions.ChatCompletion, OpenAIChatResponseLike>>();
    assertType<Fits<OpenAI.Chat.Completions.ChatCompletionMessage, OpenAIChatResponseLike>>();
    assert.deepEqual(openAIChatCalls(completion).map((c) => c.callId), ["c1", "c2", "c3"]);
    await withSession(async (session) => {
      seen.length = 0;
      const run = await runOpenAIChatToolCalls(box, session, completion);
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = run.messages;
      assert.deepEqual(seen, [{ word: "fence", limit: 3, tags: { a: "b" } }], "strict nulls and pairs mapped back");
      assert.deepEqual(messages.slice(0, 3), [
        { role: "tool", tool_call_id: "c1", content: '{"word":"fence","limit":3}' },
        {
          role: "tool",
          tool_call_id: "c2",
          content: "Error [outside_workspace]: Path /etc/passwd is not within the agent's workspace",
        },
        { role: "tool", tool_call_id: "c3", content: "taken" },
      ]);
      const image = run.messages[3];
      assert.equal(image.role, "user");
      assert.deepEqual(image.content[0], { type: "text", text: "Image from snapshot: the screen" });
      assert.match(JSON.stringify(image.content[1]), /"url":"data:image\/png;base64,iVBOR/);
      assert.equal(run.results[1].status, "error");
      assert.equal(run.images.length, 1);
    });
  });
});

describe("OpenAI responses", () => {
  test(
    "tools, function_call items, function_call_output items then the image message",
    { timeout: 60_000 },
    async () => {
      const wire: OpenAI.Responses.FunctionTool[] = openAIResponsesTools(tools);
      assert.equal(wire[0].strict, true);
      const output: OpenAI.Responses.ResponseOutputItem[] = [
        { type: "reasoning", id: "r1", summary: [] },
        { type: "function_call", call_id: "f1", name: "lookup", arguments: '{"word":"x","limit":2,"tags":null}' },
        { type: "function_call", call_id: "f2", name: "snapshot", arguments: "{}" },
      ];
      assertType<Fits<OpenAI.Responses.Response, OpenAIResponsesResponseLike>>();
      assertType<Fits<OpenAI.Responses.ResponseOutputItem[], OpenAIResponsesResponseLike>>();
      assert.deepEqual(openAIResponsesCalls(output).map((c) => c.name), ["lookup", "snapshot"]);
      await withSession(async (session) => {
        seen.length = 0;
        const run = await runOpenAIResponsesToolCalls(box, session, { output });
        const items: OpenAI.Responses.ResponseInputItem[] = run.items;
        assert.deepEqual(seen, [{ word: "x", limit: 2 }]);
        assert.deepEqual(items.slice(0, 2), [
          { type: "function_call_output", call_id: "f1", output: '{"word":"x","limit":2}' },
          { type: "function_call_output", call_id: "f2", output: "taken" },
        ]);
        assert.deepEqual(run.items[2].type, "message");
        assert.match(JSON.stringify(run.items[2]), /"type":"input_image","image_url":"data:image\/png;base64,/);
      });
    },
  );
});

describe("OpenAI's description limit", () => {
  test("a description over 1024 characters is refused while the tools are built, in every OpenAI mode", {
    timeout: 60_000,
  }, async () => {
    // Before: the tool was rendered whole, and OpenAI answers such a request with 400 string_above_max_length
    // ("Invalid 'tools[0].function.description': string too long. Expected a string with maximum length 1024").
    const wordy = (description: string) =>
      tool({ name: "wordy", description, input: v.object({ a: v.string() }), readOnly: true, run: () => "" });
    const long = wordy("x".repeat(1025));
    for (
      const [dialect, build] of [
        ["openai-chat", () => openAIChatTools([long])],
        ["openai-chat", () => openAIChatTools([long], { strict: false })],
        ["openai-chat", () => openAIChatTools([long], { strict: "auto" })],
        ["openai-responses", () => openAIResponsesTools([long])],
        ["openai-responses", () => openAIResponsesTools([long], { strict: "auto" })],
      ] as const
    ) {
      assert.throws(build, (error: SchemaDialectError) => {
        assert.ok(error instanceof SchemaDialectError, String(error));
        assert.equal(error.toolName, "wordy");
        assert.equal(error.dialect, dialect);
        assert.match(error.message, /description is 1025 characters and OpenAI takes at most 1024/);
        return true;
      });
    }
    // 1024 characters (code points: an emoji is one, though two UTF-16 units) pass as they are.
    const edge = "\u{1F600}".repeat(1024);
    assert.equal(openAIChatTools([wordy(edge)])[0].function.description, edge);
    assert.equal(openAIResponsesTools([wordy("y".repeat(1024))])[0].description, "y".repeat(1024));
    // The OpenAI Agents tools too.
    const longBox = new ToolBox().register(long);
    await withSession((session) => {
      assert.throws(() => openAIAgentsTools(longBox, session), /"wordy".*openai-agents.*at most 1024/);
      return Promise.resolve();
    });
  });
});

describe("Anthropic messages", () => {
  test("tools, tool_use blocks, tool_result blocks with is_error, then image blocks", { timeout: 60_000 }, async () => {
    const wire: Anthropic.Messages.ToolUnion[] = anthropicTools(tools);
    assert.equal(wire.length, 3);
    const message: Anthropic.Messages.Message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-test",
      stop_reason: "tool_use",
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: null as unknown as Anthropic.Messages.Usage,
      content: [
        { type: "text", text: "Let me look.", citations: null },
        { type: "tool_use", id: "t1", name: "lookup", input: { word: 7 }, caller: { type: "direct" } },
        { type: "tool_use", id: "t2", name: "snapshot", input: {}, caller: { type: "direct" } },
      ],
    };
    assertType<Fits<Anthropic.Messages.Message, AnthropicMessageLike>>();
    assert.deepEqual(anthropicCalls(message).map((c) => c.callId), ["t1", "t2"]);
    await withSession(async (session) => {
      const run = await runAnthropicToolCalls(box, session, message);
      const reply: Anthropic.Messages.MessageParam = run.message;
      assert.equal(reply.role, "user");
      assert.deepEqual(run.message.content.slice(0, 2), [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content:
            "Error [invalid_arguments]: Invalid arguments for lookup: word: expected string, received 7\nHint: Fix the arguments named above and call again.",
          is_error: true,
        },
        { type: "tool_result", tool_use_id: "t2", content: "taken" },
      ]);
      assert.deepEqual(run.message.content[2], { type: "text", text: "Image from snapshot: the screen" });
      assert.equal((run.message.content[3] as { source: { media_type: string } }).source.media_type, "image/png");
    });
  });
});

describe("Gemini", () => {
  test(
    "tools, functionCall parts, functionResponse parts ({output} / {error}), then inlineData",
    { timeout: 60_000 },
    async () => {
      const wire: Denominal<Genai.Tool>[] = geminiTools(tools);
      assert.equal(wire[0].functionDeclarations!.length, 3);
      const response = {
        candidates: [{
          content: {
            role: "model",
            parts: [
              { functionCall: { id: "g1", name: "lookup", args: { word: "w", tags: [{ key: "k", value: "v" }] } } },
              { functionCall: { name: "broken", args: {} } },
              { functionCall: { name: "snapshot", args: {} } },
            ],
          },
        }],
      } satisfies Pick<Genai.GenerateContentResponse, "candidates">;
      assertType<Fits<Genai.GenerateContentResponse, GeminiResponseLike>>();
      assertType<Fits<Genai.Content, GeminiResponseLike>>();
      const ids = geminiCalls(response).map((c) => c.callId!);
      const generated = /^gemini-call-(\d+)-/.exec(ids[1])?.[1];
      assert.deepEqual(ids, ["g1", `gemini-call-${generated}-1`, `gemini-call-${generated}-2`]);
      assert.notEqual(geminiCalls(response)[1].callId, ids[1], "each response's generated ids are its own");
      await withSession(async (session) => {
        seen.length = 0;
        const run = await runGeminiToolCalls(box, session, response);
        const content: Genai.Content = run.content;
        assert.equal(content.role, "user");
        assert.deepEqual(seen, [{ word: "w", limit: 3, tags: { k: "v" } }]);
        assert.deepEqual(run.content.parts.slice(0, 3), [
          { functionResponse: { id: "g1", name: "lookup", response: { output: { word: "w", limit: 3 } } } },
          {
            functionResponse: {
              name: "broken",
              response: { error: "Error [outside_workspace]: Path /etc/passwd is not within the agent's workspace" },
            },
          },
          { functionResponse: { name: "snapshot", response: { output: "taken" } } },
        ]);
        assert.deepEqual(run.content.parts[3], { text: "Image from snapshot: the screen" });
        assert.equal((run.content.parts[4] as { inlineData: { mimeType: string } }).inlineData.mimeType, "image/png");
      });
    },
  );

  test("a result's modelOutput is what the functionResponse carries, not the output", { timeout: 60_000 }, async () => {
    const rows = tool({
      name: "rows",
      description: "Count rows.",
      input: v.object({ structured: v.boolean() }),
      run: ({ structured }) =>
        makeResult({
          output: { rows: [1, 2, 3], internal: "kept" },
          modelOutput: structured ? { count: 3 } : "3 rows",
        }),
    });
    await withSession(async (session) => {
      const run = await runGeminiToolCalls(new ToolBox().register(rows), session, {
        parts: [
          { functionCall: { id: "r1", name: "rows", args: { structured: false } } },
          { functionCall: { id: "r2", name: "rows", args: { structured: true } } },
        ],
      });
      assert.deepEqual(run.content.parts, [
        { functionResponse: { id: "r1", name: "rows", response: { output: "3 rows" } } },
        { functionResponse: { id: "r2", name: "rows", response: { output: { count: 3 } } } },
      ]);
      assert.deepEqual(run.results[0].output, { rows: [1, 2, 3], internal: "kept" }, "the developer keeps the output");
    });
  });
});

describe("two conversations on one session at once", () => {
  // A tool that defers a picture of `who`, then takes a while; and one that only takes a while.
  const snap = tool({
    name: "snap",
    description: "Take a picture.",
    input: v.object({ who: v.string(), ms: v.number() }),
    readOnly: true,
    run: async ({ who, ms }, ctx) => {
      await ctx.deferImage(PNG, `the screen of ${who}`);
      await new Promise((done) => setTimeout(done, ms));
      return `took ${who}`;
    },
  });
  const wait = tool({
    name: "wait",
    description: "Wait.",
    input: v.object({ ms: v.number() }),
    readOnly: true,
    run: async ({ ms }) => {
      await new Promise((done) => setTimeout(done, ms));
      return "waited";
    },
  });
  const box = new ToolBox().register(snap, wait);
  const toolUse = (id: string, name: string, input: unknown): Anthropic.Messages.ToolUseBlock => ({
    type: "tool_use",
    id,
    name,
    input,
    caller: { type: "direct" },
  });

  test("each reply carries the images of its own calls (Anthropic ids)", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      // The first finishes while the second's image is already queued.
      const [first, second] = await Promise.all([
        runAnthropicToolCalls(box, session, [toolUse("toolu_a", "wait", { ms: 100 })]),
        runAnthropicToolCalls(box, session, [toolUse("toolu_b", "snap", { who: "b", ms: 400 })]),
      ]);
      assert.deepEqual(first.images.map((i) => i.note), []);
      assert.deepEqual(second.images.map((i) => i.note), ["the screen of b"]);
      assert.equal(second.message.content.filter((block) => block.type === "image").length, 1);
    });
  });

  test("each reply carries the images of its own calls (Gemini calls without ids)", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const [first, second] = await Promise.all([
        runGeminiToolCalls(box, session, { parts: [{ functionCall: { name: "wait", args: { ms: 100 } } }] }),
        runGeminiToolCalls(box, session, { parts: [{ functionCall: { name: "snap", args: { who: "b", ms: 400 } } }] }),
      ]);
      assert.notEqual(first.results[0].callId, second.results[0].callId);
      assert.deepEqual(first.images.map((i) => i.note), []);
      assert.deepEqual(second.images.map((i) => i.note), ["the screen of b"]);
      assert.equal(second.content.parts.filter((part) => "inlineData" in part).length, 1);
    });
  });
});

// The Anthropic API checks a tool's input schema against draft 2020-12 and refuses the whole request otherwise
// ("tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"); the schemas of
// zod, ArkType and valibot tuples are draft-07's `items: [...]`.
describe("Anthropic input schemas are draft 2020-12", () => {
  test("tuples become prefixItems, at any depth, and accept what the tool accepts", { timeout: 60_000 }, () => {
    const box = new ToolBox().register(
      tool({
        name: "pair",
        description: "P.",
        input: z.object({ t: z.tuple([z.string(), z.number()]) }),
        run: () => "",
      }),
      tool({
        name: "rest",
        description: "R.",
        input: z.object({ deep: z.array(z.object({ t: z.tuple([z.string()], z.number()) })) }),
        run: () => "",
      }),
      tool({
        name: "loose",
        description: "L.",
        input: v.object({ t: v.tuple([v.string(), v.number()]) }),
        run: () => "",
      }),
    );
    const ajv = new Ajv2020({ strict: false });
    const cases: Record<string, [unknown, boolean][]> = {
      pair: [[{ t: ["a", 1] }, true], [{ t: ["a", "b"] }, false], [{ t: ["a", 1, 2] }, false]],
      rest: [[{ deep: [{ t: ["a", 1, 2] }] }, true], [{ deep: [{ t: ["a", "x"] }] }, false]],
      loose: [[{ t: ["a", 1] }, true], [{ t: [1, 1] }, false]],
    };
    for (const spec of anthropicTools(box.list())) {
      assert.ok(ajv.validateSchema(spec.input_schema), `${spec.name}: ${ajv.errorsText(ajv.errors)}`);
      assert.doesNotMatch(JSON.stringify(spec.input_schema), /additionalItems|"items":\[/);
      const validate = ajv.compile(spec.input_schema);
      for (const [args, ok] of cases[spec.name]) {
        assert.equal(validate(args), ok, `${spec.name} ${JSON.stringify(args)}`);
      }
    }
  });
});

describe("a provider's own shape written as an object literal", () => {
  // A consumer's test double, or a message taken apart and put together again, is an object literal with every
  // field of the provider's shape; the adapters read only some of them. `deno check` of this file fails when a
  // literal is held to the adapter's narrower type (TypeScript's excess-property check).
  test("is taken by every run and calls function, as it is", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const chat = await runOpenAIChatToolCalls(box, session, {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: '{"word":"a"}' } }],
      });
      assert.deepEqual(chat.messages, [{ role: "tool", tool_call_id: "c1", content: '{"word":"a","limit":3}' }]);
      const calls = openAIChatCalls({
        id: "x",
        object: "chat.completion",
        choices: [{
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c2", type: "function", function: { name: "lookup", arguments: '{"word":"b"}' } }],
          },
        }],
      });
      assert.deepEqual(calls.map((c) => c.callId), ["c2"]);
      const responses = await runOpenAIResponsesToolCalls(box, session, {
        id: "r",
        output: [
          { type: "message", id: "m", role: "assistant", content: [] },
          {
            type: "function_call",
            id: "fc",
            call_id: "c3",
            name: "lookup",
            arguments: '{"word":"c"}',
            status: "completed",
          },
        ],
      });
      assert.equal(responses.items[0].type === "function_call_output" && responses.items[0].call_id, "c3");
      assert.deepEqual(
        openAIResponsesCalls([{ type: "function_call", id: "f", call_id: "c", name: "n", arguments: "" }])
          .length,
        1,
      );
      const claude = await runAnthropicToolCalls(box, session, {
        role: "assistant",
        content: [
          { type: "text", text: "Looking it up." },
          { type: "tool_use", id: "t1", name: "lookup", input: { word: "d" } },
        ],
      });
      assert.equal(claude.message.content[0].type === "tool_result" && claude.message.content[0].tool_use_id, "t1");
      assert.equal(anthropicCalls([{ type: "tool_use", id: "t2", name: "lookup", input: {} }])[0].callId, "t2");
      const gemini = await runGeminiToolCalls(box, session, {
        role: "model",
        parts: [{ text: "Looking it up." }, { functionCall: { id: "g1", name: "lookup", args: { word: "e" } } }],
      });
      assert.deepEqual(gemini.content.parts[0], {
        functionResponse: { id: "g1", name: "lookup", response: { output: { word: "e", limit: 3 } } },
      });
      assert.equal(
        geminiCalls({
          candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: { name: "x" } }] } }],
        })
          .length,
        1,
      );
    }, { fence: openFence() });
  });
});
