// The OpenAI Agents adapter under the real `run` of `@openai/agents`, driven by
// a minimal model that implements the SDK's public `Model` interface and emits
// scripted function calls; what the model reads on its next turn is taken from
// the input the SDK sends it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Buffer } from "node:buffer";
import OpenAI from "openai";
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  OpenAIChatCompletionsModel,
  run,
  setTracingDisabled,
  Usage,
} from "@openai/agents";
import { openAIAgentsTools } from "../../adapters/openai_agents.ts";
import type { ToolResult } from "../../core/result.ts";
import type { BatchCall } from "../../core/executor.ts";
import { CHAIN, FIXED, GOOD_AND_BAD, PROBES, withFixture } from "./_frameworks.ts";
import { declinedCallText } from "../../adapters/declined_call.ts";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";

setTracingDisabled(true);

/** A model that answers each request with the next scripted turn: function calls, or a final text. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  #turns: (BatchCall[] | string)[];
  constructor(turns: (BatchCall[] | string)[]) {
    this.#turns = turns;
  }
  getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const turn = this.#turns.shift() ?? "done";
    const output: ModelResponse["output"] = typeof turn === "string"
      ? [{
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: turn }],
      }]
      : turn.map((call) => ({
        type: "function_call",
        callId: call.callId!,
        name: call.name,
        arguments: JSON.stringify(call.args),
        status: "completed",
      }));
    return Promise.resolve({ usage: new Usage(), output });
  }
  // deno-lint-ignore require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("this scripted model does not stream");
  }
}

/** What the model read for each call, by call id, from the input of its last request. */
function outputsSeen(model: ScriptedModel): Map<string, unknown> {
  const seen = new Map<string, unknown>();
  const input = model.requests.at(-1)!.input as AgentInputItem[];
  for (const item of input) {
    if (item.type === "function_call_result") {
      const output = item.output as { type: string; text?: string } | unknown[];
      seen.set(item.callId, !Array.isArray(output) && output.type === "text" ? output.text : output);
    }
  }
  return seen;
}

/** The lossless results on the run's output items, by call id. */
function toolResultsOf(items: readonly { type: string; customData?: Record<string, unknown> }[]) {
  return new Map(
    items.filter((item) => item.type === "tool_call_output_item" && item.customData)
      .map((item) => {
        const result = item.customData!.toolResult as ToolResult;
        return [result.callId!, result];
      }),
  );
}

describe("openAIAgentsTools with run()", () => {
  test("a good call, a bad call whose fix the model reads, and the lossless results", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, expectedTexts }) => {
      const expected = await expectedTexts(GOOD_AND_BAD);
      const [fixedText] = await expectedTexts([FIXED]);
      const model = new ScriptedModel([GOOD_AND_BAD, [FIXED], "done"]);
      const agent = new Agent({ name: "reader", model, tools: openAIAgentsTools(box, session) });
      const result = await run(agent, "Read notes.txt");
      assert.equal(result.finalOutput, "done");

      // The model gets our JSON Schema, non-strict, so the SDK does not validate.
      const sent = model.requests[0].tools.find((t) => t.type === "function" && t.name === "read_file") as
        | { parameters: unknown; strict: boolean }
        | undefined;
      assert.deepEqual(sent?.parameters, box.get("read_file")!.inputSchema);
      assert.equal(sent?.strict, false);

      const afterFirst = new Map<string, unknown>();
      for (const item of model.requests[1].input as AgentInputItem[]) {
        if (item.type === "function_call_result") afterFirst.set(item.callId, (item.output as { text: string }).text);
      }
      assert.equal(afterFirst.get("good"), expected[0]);
      assert.equal(afterFirst.get("bad"), expected[1]);
      assert.match(String(afterFirst.get("bad")), /^Error \[invalid_arguments\]: .*path: expected string, received 5/);
      assert.equal(outputsSeen(model).get("fixed"), fixedText);

      const results = toolResultsOf(result.newItems as never);
      assert.deepEqual([...results.values()].map((r) => [r.callId, r.status, r.errorCode]), [
        ["good", "success", undefined],
        ["bad", "error", "invalid_arguments"],
        ["fixed", "success", undefined],
      ]);
    });
  });

  test("8 parallel edits of one file all succeed, in the order the model made them", { timeout: 60_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const model = new ScriptedModel([CHAIN, "done"]);
      const agent = new Agent({ name: "editor", model, tools: openAIAgentsTools(box, session) });
      const result = await run(agent, "Edit chain.txt");
      assert.equal(result.finalOutput, "done");
      assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 8\n");
      const results = toolResultsOf(result.newItems as never);
      assert.deepEqual(CHAIN.map((c) => results.get(c.callId)?.status), Array(8).fill("success"));
    });
  });

  test(
    "the SDK runs a turn's calls in parallel: concurrency-safe ones overlap, the others never",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ session, box, overlap }) => {
        const model = new ScriptedModel([PROBES, "done"]);
        await run(new Agent({ name: "p", model, tools: openAIAgentsTools(box, session) }), "Wait");
        console.log(`openai-agents: at most ${overlap.safe.most} safe and ${overlap.unsafe.most} unsafe calls at once`);
        assert.ok(overlap.safe.most > 1, "the SDK ran the safe calls one at a time: nothing was tested");
        assert.equal(overlap.unsafe.most, 1);
      });
    },
  );

  test("a deferred image follows the call's text as the SDK's image output", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      const model = new ScriptedModel([[{ name: "snapshot", callId: "s1", args: {} }], "done"]);
      await run(new Agent({ name: "eye", model, tools: openAIAgentsTools(box, session) }), "Look");
      const output = outputsSeen(model).get("s1") as Record<string, unknown>[];
      assert.deepEqual(output.map((part) => part.type), ["input_text", "input_image"]);
      assert.equal(output[0].text, "taken\nImage from snapshot: the screen");
      assert.match(String(output[1].image), /^data:image\/png;base64,iVBOR/);
    });
  });

  test("the SDK's chat completions model sends the image's note on a line of its own after the call's text", {
    timeout: 60_000,
  }, async () => {
    // The chat completions API takes only text in a tool message: the SDK keeps the text parts and joins them with
    // nothing between, so a note in a part of its own read "takenImage from snapshot: the screen".
    await withFixture(async ({ session, box }) => {
      const bodies: { messages: { role: string; tool_call_id?: string; content: unknown }[] }[] = [];
      const replies = [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "s1", type: "function", function: { name: "snapshot", arguments: "{}" } }],
        },
        { role: "assistant", content: "done" },
      ];
      const server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
          bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
          const message = replies[Math.min(bodies.length - 1, 1)];
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({
            id: `c${bodies.length}`,
            object: "chat.completion",
            created: 0,
            model: "gpt-4o",
            choices: [{ index: 0, finish_reason: message.tool_calls ? "tool_calls" : "stop", message }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }));
        });
      });
      await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
      try {
        const { port } = server.address() as AddressInfo;
        const client = new OpenAI({ apiKey: "test", baseURL: `http://127.0.0.1:${port}/v1` });
        const model = new OpenAIChatCompletionsModel(client, "gpt-4o");
        const result = await run(new Agent({ name: "eye", model, tools: openAIAgentsTools(box, session) }), "Look");
        assert.equal(result.finalOutput, "done");
        const toolMessage = bodies[1].messages.find((m) => m.role === "tool" && m.tool_call_id === "s1");
        assert.equal(toolMessage?.content, "taken\nImage from snapshot: the screen");
      } finally {
        server.closeAllConnections();
        await new Promise((closed) => server.close(closed));
      }
    });
  });

  test("a call that needs approval interrupts the run; approved it runs once, declined it never runs", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session, box, asked, deployed }) => {
      const [approvedText] = await withApproval(box, session, () => [{ name: "deploy", args: { service: "staging" } }]);
      assert.equal(approvedText, "deployed staging"); // needsApproval is false for staging: no interruption
      deployed.length = 0;

      const model = new ScriptedModel([
        [
          { name: "deploy", callId: "d-web", args: { service: "web" } },
          { name: "deploy", callId: "d-db", args: { service: "db" } },
        ],
        "done",
      ]);
      const agent = new Agent({ name: "ops", model, tools: openAIAgentsTools(box, session) });
      let result = await run(agent, "Deploy web and db");
      assert.deepEqual(result.interruptions.map((i) => i.rawItem.type === "function_call" && i.rawItem.callId), [
        "d-web",
        "d-db",
      ]);
      assert.deepEqual(deployed, [], "nothing runs before the decision");
      for (const item of result.interruptions) {
        const callId = item.rawItem.type === "function_call" ? item.rawItem.callId : "";
        if (callId === "d-web") result.state.approve(item);
        else result.state.reject(item);
      }
      // The decline reads as every adapter's: toolfence's text through the SDK's formatter.
      result = await run(agent, result.state, {
        toolErrorFormatter: ({ kind, toolName }) =>
          kind === "approval_rejected" ? declinedCallText(toolName) : undefined,
      });
      assert.equal(result.finalOutput, "done");
      assert.deepEqual(deployed, ["web"], "the approved call ran once, without asking the session's host");
      const seen = outputsSeen(model);
      assert.equal(seen.get("d-web"), "deployed web");
      assert.equal(seen.get("d-db"), declinedCallText("deploy"));
      const results = toolResultsOf(result.newItems as never);
      assert.equal(results.get("d-web")?.metadata.approval, "user");
      assert.deepEqual(asked, [], "approval went through the SDK, not the session's host");
    });
  });
});

describe("openAIAgentsTools and the SDK's tool names", () => {
  // The SDK turns every character of a name but a letter or a digit into "_", and keys calls and approvals by it.
  test("an approved call of a tool named with a hyphen runs without the session's host being asked", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ session, box, asked }) => {
      const ran: string[] = [];
      box.register(tool({
        name: "deploy-prod",
        description: "Deploy to production.",
        input: v.object({ service: v.string() }),
        needsApproval: true,
        run: ({ service }) => {
          ran.push(service);
          return `deployed ${service} to production`;
        },
      }));
      const tools = openAIAgentsTools(box, session);
      const sdkName = tools.find((t) => t.name.startsWith("deploy") && t.name !== "deploy")!.name;
      assert.equal(sdkName, "deploy_prod");
      const model = new ScriptedModel([[{ name: sdkName, callId: "p1", args: { service: "web" } }], "done"]);
      const agent = new Agent({ name: "ops", model, tools });
      let result = await run(agent, "Deploy web");
      assert.equal(result.interruptions.length, 1);
      result.state.approve(result.interruptions[0]);
      result = await run(agent, result.state);
      assert.deepEqual(ran, ["web"], "the approved call ran");
      assert.deepEqual(asked, [], "the SDK's approval counted: the session's host was not asked again");
      assert.equal(outputsSeen(model).get("p1"), "deployed web to production");
      assert.equal(toolResultsOf(result.newItems as never).get("p1")?.metadata.approval, "user");
    });
  });

  test("two tools the SDK would name alike are refused, naming both", { timeout: 60_000 }, async () => {
    await withFixture(({ session }) => {
      const echo = (name: string) =>
        tool({ name, description: "Echo.", input: v.object({ s: v.string() }), run: ({ s }) => s });
      const box = new ToolBox().register(echo("a-b"), echo("a_b"));
      assert.throws(() => openAIAgentsTools(box, session), (error: unknown) => {
        assert.ok(error instanceof RangeError);
        assert.match(error.message, /"a-b" and "a_b" both reach the OpenAI Agents SDK as "a_b"/);
        return true;
      });
      return Promise.resolve();
    });
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
    const model = new ScriptedModel([[{ name: "release", callId: "r1", args: { version: "1.0" } }], "done"]);
    const result = await run(new Agent({ name: "rel", model, tools: openAIAgentsTools(box, session) }), "Release");
    assert.equal(result.finalOutput, "done");
    assert.deepEqual(result.interruptions, []);
    assert.deepEqual(ran, [], "the tool never ran");
    assert.deepEqual(asked, []);
    assert.match(String(outputsSeen(model).get("r1")), /the approval rules could not be read/);
  });
});

/** Runs one scripted turn of calls and returns what the model read for each. */
async function withApproval(
  box: Parameters<typeof openAIAgentsTools>[0],
  session: Parameters<typeof openAIAgentsTools>[1],
  calls: () => BatchCall[],
): Promise<unknown[]> {
  const turn = calls().map((call, i) => ({ ...call, callId: `c${i}` }));
  const model = new ScriptedModel([turn, "done"]);
  const result = await run(new Agent({ name: "a", model, tools: openAIAgentsTools(box, session) }), "go");
  assert.deepEqual(result.interruptions, []);
  const seen = outputsSeen(model);
  return turn.map((call) => seen.get(call.callId));
}
