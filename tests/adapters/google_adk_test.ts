// The Google ADK adapter under the real LlmAgent and InMemoryRunner of
// `@google/adk`, driven by a minimal model that implements ADK's public
// BaseLlm and answers with scripted function calls; what the model reads is
// taken from the contents of the request it receives. Approvals go through
// ADK's tool confirmation.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { BaseLlm, type BaseLlmConnection, type Event, InMemoryRunner, LlmAgent, type LlmRequest } from "@google/adk";
import type { LlmResponse } from "@google/adk";
import { GOOGLE_ADK_RESULT_KEY, googleAdkTools } from "../../adapters/google_adk.ts";
import type { ToolResult } from "../../core/result.ts";
import type { BatchCall } from "../../core/executor.ts";
import { SessionBase } from "../../core/session.ts";
import { ToolBox } from "../../core/toolbox.ts";
import { tool } from "../../core/tool.ts";
import { SchemaDialectError } from "../../adapters/dialect_error.ts";
import * as v from "valibot";
import { CHAIN, FIXED, GOOD_AND_BAD, PROBES, withFixture } from "./_frameworks.ts";
import { declinedCallText } from "../../adapters/declined_call.ts";
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";

/** A model that answers each request with the next scripted turn: function calls, or a final text. */
class ScriptedLlm extends BaseLlm {
  readonly requests: LlmRequest[] = [];
  #turns: (BatchCall[] | string)[];
  constructor(turns: (BatchCall[] | string)[]) {
    super({ model: "scripted" });
    this.#turns = turns;
  }
  async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.requests.push(structuredClone({ contents: request.contents }) as LlmRequest);
    const turn = this.#turns.shift() ?? "done";
    yield {
      content: {
        role: "model",
        parts: typeof turn === "string" ? [{ text: turn }] : turn.map((call) => ({
          functionCall: { id: call.callId, name: call.name, args: call.args as Record<string, unknown> },
        })),
      },
      turnComplete: true,
    };
  }
  connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error("this scripted model has no live connection"));
  }
}

/** The function responses the model read, by call id, across its requests. */
function responsesSeen(model: ScriptedLlm): Map<string, Record<string, unknown>> {
  const seen = new Map<string, Record<string, unknown>>();
  for (const request of model.requests) {
    for (const content of request.contents) {
      for (const part of content.parts ?? []) {
        const response = part.functionResponse;
        if (response?.id) seen.set(response.id, response.response as Record<string, unknown>);
      }
    }
  }
  return seen;
}

/** The lossless result of a call, from the state delta of the event with its function response. */
function resultOf(events: Event[], callId: string): ToolResult | undefined {
  for (const event of events) {
    const result = event.actions?.stateDelta?.[`${GOOGLE_ADK_RESULT_KEY}${callId}`];
    if (result) return result as ToolResult;
  }
  return undefined;
}

async function runAgent(
  box: ToolBox,
  session: SessionBase,
  model: ScriptedLlm,
): Promise<{ runner: InMemoryRunner; events: Event[]; sessionId: string }> {
  const agent = new LlmAgent({
    name: "coder",
    model,
    instruction: "Use the tools.",
    tools: googleAdkTools(box, session),
  });
  const runner = new InMemoryRunner({ agent, appName: "toolfence-test" });
  const adkSession = await runner.sessionService.createSession({ appName: "toolfence-test", userId: "u" });
  const events: Event[] = [];
  for await (
    const event of runner.runAsync({ userId: "u", sessionId: adkSession.id, newMessage: { parts: [{ text: "go" }] } })
  ) events.push(event);
  return { runner, events, sessionId: adkSession.id };
}

describe("googleAdkTools with an LlmAgent and InMemoryRunner", () => {
  test("a good call, a bad call whose fix the model reads, and the lossless results", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, expectedTexts }) => {
      const expected = await expectedTexts([...GOOD_AND_BAD, FIXED]);
      const model = new ScriptedLlm([GOOD_AND_BAD, [FIXED], "done"]);
      const { events } = await runAgent(box, session, model);
      const seen = responsesSeen(model);
      assert.deepEqual(Object.keys(seen.get("good")!), ["result"], "the model reads the text alone");
      assert.equal(seen.get("good")!.result, expected[0]);
      assert.equal(seen.get("bad")!.error, expected[1]);
      assert.match(String(seen.get("bad")!.error), /^Error \[invalid_arguments\]: .*path: expected string/);
      assert.equal(seen.get("fixed")!.result, expected[2]);
      assert.deepEqual(
        ["good", "bad", "fixed"].map((id) => {
          const r = resultOf(events, id);
          return [r?.callId, r?.status, r?.errorCode];
        }),
        [["good", "success", undefined], ["bad", "error", "invalid_arguments"], ["fixed", "success", undefined]],
      );
    });
  });

  test("8 parallel edits of one file all succeed, in the order the model made them", { timeout: 60_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const model = new ScriptedLlm([CHAIN, "done"]);
      const { events } = await runAgent(box, session, model);
      assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 8\n");
      assert.deepEqual(CHAIN.map((c) => resultOf(events, c.callId)?.status), Array(8).fill("success"));
    });
  });

  test("the calls of a turn: concurrency-safe ones may overlap, the others never", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box, overlap }) => {
      await runAgent(box, session, new ScriptedLlm([PROBES, "done"]));
      console.log(`google-adk: at most ${overlap.safe.most} safe and ${overlap.unsafe.most} unsafe calls at once`);
      // ADK (JS, 2.0) runs the function calls of a response one after the other.
      assert.ok(overlap.safe.most >= 1);
      assert.equal(overlap.unsafe.most, 1);
    });
  });

  test("a deferred image is saved as an artifact and named in the text", { timeout: 60_000 }, async () => {
    await withFixture(async ({ session, box }) => {
      const model = new ScriptedLlm([[{ name: "snapshot", callId: "s1", args: {} }], "done"]);
      const { runner, sessionId } = await runAgent(box, session, model);
      assert.equal(
        responsesSeen(model).get("s1")!.result,
        "taken\nImage from snapshot: the screen (artifact s1-1.png)",
      );
      const artifact = await runner.artifactService!.loadArtifact({
        appName: "toolfence-test",
        userId: "u",
        sessionId,
        filename: "s1-1.png",
      });
      assert.equal(artifact?.inlineData?.mimeType, "image/png");
    });
  });

  test(
    "approval is ADK's tool confirmation: one granted runs once, one declined never runs",
    { timeout: 60_000 },
    async () => {
      await withFixture(async ({ session, box, asked, deployed }) => {
        const model = new ScriptedLlm([
          [
            { name: "deploy", callId: "d-web", args: { service: "web" } },
            { name: "deploy", callId: "d-db", args: { service: "db" } },
          ],
          "done",
        ]);
        const { runner, events, sessionId } = await runAgent(box, session, model);
        const requests = events.flatMap((e) => e.content?.parts ?? []).map((p) => p.functionCall)
          .filter((call) => call?.name === "adk_request_confirmation");
        assert.equal(requests.length, 2);
        assert.deepEqual(deployed, []);
        const original = (call: (typeof requests)[number]) =>
          (call!.args as { originalFunctionCall: { id: string } }).originalFunctionCall.id;
        const answers = requests.map((call) => ({
          functionResponse: {
            id: call!.id,
            name: "adk_request_confirmation",
            response: { confirmed: original(call) === "d-web" },
          },
        }));
        for await (
          const _ of runner.runAsync({ userId: "u", sessionId, newMessage: { role: "user", parts: answers } })
        ) { /* drain */ }
        assert.deepEqual(deployed, ["web"], "the approved call ran once, the declined one never");
        const seen = responsesSeen(model);
        assert.equal(seen.get("d-web")!.result, "deployed web");
        assert.equal(String(seen.get("d-db")!.error), declinedCallText("deploy"));
        assert.ok(!asked.includes("Approve tool call"), "approval went through ADK, not the session's host");
      });
    },
  );
});

describe("googleAdkTools and Gemini's function names", () => {
  test("a tool whose name Gemini refuses (not starting with a letter or an underscore) is refused when made", {
    timeout: 30_000,
  }, async () => {
    const session = new SessionBase();
    try {
      const box = new ToolBox().register(
        tool({ name: "2fa_check", description: "T.", input: v.object({}), run: () => "" }),
      );
      assert.throws(
        () => googleAdkTools(box, session),
        (error: Error) =>
          error instanceof SchemaDialectError && error.toolName === "2fa_check" && error.dialect === "google-adk",
      );
    } finally {
      await session.close();
    }
  });
});

describe("googleAdkTools' declarations", () => {
  // Gemini's JSON Schema is draft 2020-12's: a tuple is prefixItems, `items` one schema.
  test("a tuple is declared in draft 2020-12 form", { timeout: 30_000 }, async () => {
    const session = new SessionBase();
    try {
      const box = new ToolBox().register(
        tool({
          name: "pair",
          description: "P.",
          input: z.object({ t: z.tuple([z.string(), z.number()]) }),
          run: () => "",
        }),
      );
      const [adkTool] = googleAdkTools(box, session);
      const parameters = adkTool._getDeclaration()!.parametersJsonSchema as Record<string, unknown>;
      const ajv = new Ajv2020({ strict: false });
      assert.ok(ajv.validateSchema(parameters), ajv.errorsText(ajv.errors));
      assert.deepEqual((parameters.properties as Record<string, unknown>).t, {
        type: "array",
        prefixItems: [{ type: "string" }, { type: "number" }],
        items: false,
        minItems: 2,
        maxItems: 2,
      });
    } finally {
      await session.close();
    }
  });
});
