// A map (`v.record`) goes to OpenAI's strict mode and to Gemini as a list of
// {key, value} entries. A list that cannot be mapped back (a key named twice,
// whose values one would lose; an entry that is no {key, value} pair) stays a
// list, and validation then read its entries as the map's values: the model
// was told "env.0: expected string, received an object", words that ask for
// the very shape it had been told not to send. The call is now refused naming
// the map (or the entry) and what is wrong, before it runs, through every door
// that maps the lists back (the provider run functions and LangChain's strict
// and Gemini tools). The OpenAI case goes through the real `openai` client
// against a loopback chat completions API.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as v from "valibot";
import OpenAI from "openai";
import type { ToolMessage } from "@langchain/core/messages";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { openAIChatTools, runOpenAIChatToolCalls, runOpenAIResponsesToolCalls } from "../../adapters/openai.ts";
import { runGeminiToolCalls } from "../../adapters/gemini.ts";
import { langChainTools } from "../../adapters/langchain.ts";
import { withSession } from "../core/_helpers.ts";

const ran: unknown[] = [];
const box = new ToolBox().register(tool({
  name: "set_env",
  description: "Sets variables.",
  input: v.object({
    env: v.record(v.string(), v.string()),
    jobs: v.optional(v.array(v.object({ vars: v.record(v.string(), v.number()) }))),
    labels: v.nullish(v.record(v.string(), v.string())),
  }),
  readOnly: true,
  run: (args) => {
    ran.push(args);
    return "set";
  },
}));

const TWICE = [{ key: "CI", value: "1" }, { key: "LANG", value: "C" }, { key: "CI", value: "0" }];

function assertRefused(text: string, path: string, key: string): void {
  assertFault(text, `${path}: the key "${key}" is sent twice in this map's list of {key, value} entries`);
}

function assertFault(text: string, fault: string): void {
  assert.match(text, /^Error \[invalid_arguments\]/, text);
  assert.ok(text.includes(`: ${fault}, so it did not run`), text);
  assert.match(
    text,
    /Send the map as a list of \{"key": \.\.\., "value": \.\.\.\} entries, each key of the map once/,
    text,
  );
  assert.doesNotMatch(text, /expected string|expected number/, text);
}

describe("a {key, value} list sent for a map that cannot be mapped back", () => {
  test("OpenAI chat (real client, loopback API): refused naming the map and key; the other call runs", {
    timeout: 60_000,
  }, async () => {
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-5",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "c1",
              type: "function",
              function: { name: "set_env", arguments: JSON.stringify({ env: TWICE, jobs: null }) },
            },
            {
              id: "c2",
              type: "function",
              function: {
                name: "set_env",
                arguments: JSON.stringify({
                  env: [{ key: "A", value: "1" }],
                  jobs: [{ vars: [{ key: "n", value: 1 }] }, {
                    vars: [{ key: "n", value: 1 }, { key: "n", value: 2 }],
                  }],
                }),
              },
            },
            {
              id: "c3",
              type: "function",
              function: { name: "set_env", arguments: JSON.stringify({ env: [{ key: "A", value: "1" }], jobs: null }) },
            },
          ],
        },
      }],
    };
    const server = http.createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(completion));
      });
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    try {
      const client = new OpenAI({
        apiKey: "k",
        baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        maxRetries: 0,
        timeout: 60_000,
      });
      const answer = await client.chat.completions.create({
        model: "gpt-5",
        messages: [{ role: "user", content: "set them" }],
        tools: openAIChatTools(box.list()),
      });
      await withSession(async (session) => {
        ran.length = 0;
        const { messages, results } = await runOpenAIChatToolCalls(box, session, answer);
        assert.deepEqual(messages.map((m) => m.role === "tool" && m.tool_call_id), ["c1", "c2", "c3"]);
        assertRefused(String(messages[0].content), "env", "CI");
        assertRefused(String(messages[1].content), "jobs.1.vars", "n");
        assert.equal(messages[2].content, "set");
        assert.deepEqual(results.map((r) => [r.status, r.errorCode, r.attempts]), [
          ["error", "invalid_arguments", 0],
          ["error", "invalid_arguments", 0],
          ["success", undefined, 1],
        ]);
        assert.deepEqual(ran, [{ env: { A: "1" } }]);
      });
    } finally {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    }
  });

  test("an entry that is no {key, value} pair is refused naming the entry, under strict mode and Gemini", {
    timeout: 60_000,
  }, async () => {
    const entries: [unknown, string][] = [
      [{ key: "CI" }, '{"key":"CI"}'],
      [{ key: 1, value: "x" }, '{"key":1,"value":"x"}'],
      [["CI", "1"], '["CI","1"]'],
      [{ name: "CI", value: "1" }, '{"name":"CI","value":"1"}'],
      [{ key: "CI", value: "1", note: "x" }, '{"key":"CI","value":"1","note":"x"}'],
    ];
    await withSession(async (session) => {
      ran.length = 0;
      const { messages } = await runOpenAIChatToolCalls(box, session, {
        tool_calls: entries.map(([entry], i) => ({
          id: `e${i}`,
          type: "function",
          function: {
            name: "set_env",
            arguments: JSON.stringify({ env: [{ key: "A", value: "1" }, entry], jobs: null }),
          },
        })),
      });
      for (const [i, [, shown]] of entries.entries()) {
        assertFault(
          String(messages[i].content),
          `env.1: an entry of this map's list must be {"key": <a string>, "value": <its value>}, not ${shown}`,
        );
      }
      // In a list of objects, and in a map that may be null (a union, whose members the list fits none of): the same,
      // at the entry's path.
      const { content } = await runGeminiToolCalls(box, session, {
        candidates: [{
          content: {
            role: "model",
            parts: [{
              functionCall: {
                name: "set_env",
                args: { env: [], jobs: [{ vars: [] }, { vars: [{ key: "n", value: 1 }, { key: "m" }] }] },
              },
            }],
          },
        }],
      });
      const labels = await runGeminiToolCalls(box, session, {
        candidates: [{
          content: {
            role: "model",
            parts: [{ functionCall: { name: "set_env", args: { env: [], labels: [{ key: "x", val: "y" }] } } }],
          },
        }],
      });
      const parts = [...content.parts, ...labels.content.parts] as {
        functionResponse: { response: { error?: string } };
      }[];
      assertFault(
        parts[0].functionResponse.response.error!,
        `jobs.1.vars.1: an entry of this map's list must be {"key": <a string>, "value": <its value>}, not {"key":"m"}`,
      );
      assertFault(
        parts[1].functionResponse.response.error!,
        `labels.0: an entry of this map's list must be {"key": <a string>, "value": <its value>}, not {"key":"x","val":"y"}`,
      );
      assert.deepEqual(ran, []);
    });
  });

  test("OpenAI responses and Gemini: the same refusal", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      ran.length = 0;
      const { items } = await runOpenAIResponsesToolCalls(box, session, {
        output: [{ type: "function_call", call_id: "k1", name: "set_env", arguments: JSON.stringify({ env: TWICE }) }],
      });
      assertRefused(String((items[0] as { output: string }).output), "env", "CI");
      const { content } = await runGeminiToolCalls(box, session, {
        candidates: [{
          content: {
            role: "model",
            parts: [
              { functionCall: { name: "set_env", args: { env: TWICE } } },
              { functionCall: { name: "set_env", args: { env: [{ key: "B", value: "2" }] } } },
            ],
          },
        }],
      });
      const parts = content.parts as { functionResponse: { response: { error?: string; output?: string } } }[];
      assertRefused(parts[0].functionResponse.response.error!, "env", "CI");
      assert.equal(parts[1].functionResponse.response.output, "set");
      assert.deepEqual(ran, [{ env: { B: "2" } }]);
    });
  });

  test("LangChain tools under strict and gemini: the same refusal as an error ToolMessage", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      for (const options of [{ strict: true }, { gemini: true }]) {
        ran.length = 0;
        const [t] = langChainTools(box, session, options);
        const message = await t.invoke({
          type: "tool_call",
          id: "l1",
          name: "set_env",
          args: { env: TWICE, jobs: null },
        }) as ToolMessage;
        assert.equal(message.status, "error");
        assert.equal(message.tool_call_id, "l1");
        assertRefused(String(message.content), "env", "CI");
        assert.deepEqual(ran, []);
      }
    });
  });
});
