// A tool call the model was still writing when its answer reached the output
// limit does not run. The real SDKs (`@anthropic-ai/sdk`'s stream helper,
// `openai`'s chat completions and responses) read a loopback API that answers
// as the real one does when it stops at max_tokens: the Anthropic stream's
// partial JSON is parsed into an object that keeps only the keys that were
// complete, so a write_file whose expected_sha256 (its guard) was cut off ran
// as an unguarded overwrite.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { ToolBox } from "../../toolbox.ts";
import type { Host } from "../../core/host.ts";
import { anthropicTools, runAnthropicToolCalls } from "../../adapters/anthropic.ts";
import {
  openAIChatTools,
  openAIResponsesTools,
  runOpenAIChatToolCalls,
  runOpenAIResponsesToolCalls,
} from "../../adapters/openai.ts";
import { withSession } from "../core/_helpers.ts";

// Answers every question yes: the person at the keyboard approves the overwrite the model asked for.
const yes: Host = {
  choose: (request) => Promise.resolve({ choice: request.defaultChoice, source: "user" }),
  confirm: () => Promise.resolve({ choice: true, source: "user" }),
};

const STALE = "0".repeat(64);
// A write_file guarded by a stale hash, cut off inside the hash.
const CUT = `{"path": "notes.txt", "content": "rewritten by the model", "expected_sha256": "${STALE.slice(0, 40)}`;

/** A loopback server answering each request with `answer(path)`, as text/event-stream or JSON. */
async function withServer(
  answer: (path: string) => { type: string; body: string },
  body: (url: string) => Promise<void>,
): Promise<void> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const { type, body } = answer(request.url ?? "");
      response.writeHead(200, { "content-type": type });
      response.end(body);
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  try {
    await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
}

function sse(events: Record<string, unknown>[], named = true): string {
  return events.map((e) => `${named ? `event: ${e.type}\n` : ""}data: ${JSON.stringify(e)}\n\n`).join("");
}

// An Anthropic stream: an echo call, then a write_file call whose input stops at `json`, then `stopReason`.
function anthropicStream(json: string, stopReason: string): string {
  return sse([
    {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-5-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    },
    {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "t_echo", name: "echo", input: {} },
    },
    { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"text": "hi"}' } },
    { type: "content_block_stop", index: 0 },
    {
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "t_write", name: "write_file", input: {} },
    },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: json } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 9 } },
    { type: "message_stop" },
  ]);
}

function toolbox(): ToolBox {
  const box = new ToolBox().withDefaults("fs");
  box.tool({
    name: "echo",
    description: "Echo.",
    input: v.object({ text: v.string() }),
    readOnly: true,
    run: (a) => a.text,
  });
  return box;
}

const EDITED = "the user edited this meanwhile\n";

describe("a call cut off at the output limit", () => {
  // "refusal": Claude's streaming classifiers stop an answer wherever it is, a tool call's input included (before, the
  // cut write_file ran unguarded and overwrote notes.txt).
  for (const reason of ["max_tokens", "refusal"]) {
    test(`Anthropic (the SDK's stream, stop_reason ${reason}): the cut write_file does not run, the model reads why`, {
      timeout: 60_000,
    }, async () => {
      await withServer(() => ({ type: "text/event-stream", body: anthropicStream(CUT, reason) }), async (url) => {
        await withSession(async (session, dir) => {
          await writeFile(join(dir, "notes.txt"), EDITED);
          const box = toolbox();
          const client = new Anthropic({ apiKey: "test", baseURL: url });
          const message = await client.messages.stream({
            model: "claude-sonnet-5-5",
            max_tokens: 64,
            messages: [{ role: "user", content: "Rewrite notes.txt" }],
            tools: anthropicTools(box.list()),
          }).finalMessage();
          // What the SDK made of the cut input: the guard is gone.
          assert.deepEqual((message.content[1] as Anthropic.ToolUseBlock).input, {
            path: "notes.txt",
            content: "rewritten by the model",
          });
          const { message: reply, results } = await runAnthropicToolCalls(box, session, message);
          assert.equal(await readFile(join(dir, "notes.txt"), "utf8"), EDITED);
          assert.deepEqual(reply.content[0], { type: "tool_result", tool_use_id: "t_echo", content: "hi" });
          const cut = reply.content[1] as Anthropic.ToolResultBlockParam;
          assert.equal(cut.tool_use_id, "t_write");
          assert.equal(cut.is_error, true);
          assert.match(String(cut.content), /^Error \[invalid_arguments\]: The call to write_file was cut off/);
          assert.match(String(cut.content), new RegExp(`stop_reason "${reason}"`));
          assert.match(
            String(cut.content),
            reason === "refusal"
              ? /Hint: The provider stopped the answer/
              : /Hint: Make the call again with shorter arguments/,
          );
          assert.deepEqual(results.map((r) => [r.callId, r.status]), [["t_echo", "success"], ["t_write", "error"]]);
        }, { host: yes });
      });
    });
  }

  test("Anthropic: the same calls complete (stop_reason tool_use) run, and the stale guard refuses", {
    timeout: 60_000,
  }, async () => {
    const whole = `{"path": "notes.txt", "content": "rewritten by the model", "expected_sha256": "${STALE}"}`;
    await withServer(() => ({ type: "text/event-stream", body: anthropicStream(whole, "tool_use") }), async (url) => {
      await withSession(async (session, dir) => {
        await writeFile(join(dir, "notes.txt"), EDITED);
        const box = toolbox();
        const client = new Anthropic({ apiKey: "test", baseURL: url });
        const message = await client.messages.stream({
          model: "claude-sonnet-5-5",
          max_tokens: 64,
          messages: [{ role: "user", content: "Rewrite notes.txt" }],
        }).finalMessage();
        const { results } = await runAnthropicToolCalls(box, session, message);
        assert.equal(results[0].status, "success");
        assert.notEqual(results[1].error ?? "", "");
        assert.doesNotMatch(results[1].error ?? "", /cut off/);
        assert.equal(await readFile(join(dir, "notes.txt"), "utf8"), EDITED);
      }, { host: yes });
    });
  });

  test("OpenAI responses (the SDK's stream, incomplete at max_output_tokens) and chat (finish_reason length)", {
    timeout: 60_000,
  }, async () => {
    const item = {
      type: "function_call",
      id: "fc_1",
      call_id: "call_w",
      name: "write_file",
      arguments: CUT,
      status: "incomplete",
    };
    const response = {
      id: "resp_1",
      object: "response",
      created_at: 1,
      model: "gpt-5",
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [item],
      parallel_tool_calls: true,
      tool_choice: "auto",
      tools: [],
      error: null,
      instructions: null,
      metadata: {},
      temperature: 1,
      top_p: 1,
    };
    const completion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-5",
      choices: [{
        index: 0,
        finish_reason: "length",
        message: {
          role: "assistant",
          content: null,
          refusal: null,
          tool_calls: [
            { id: "call_e", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } },
            { id: "call_w", type: "function", function: { name: "write_file", arguments: CUT } },
          ],
        },
      }],
    };
    const answer = (path: string) =>
      path.includes("/responses")
        ? {
          type: "text/event-stream",
          body: sse([
            {
              type: "response.created",
              sequence_number: 0,
              response: { ...response, status: "in_progress", output: [], incomplete_details: null },
            },
            {
              type: "response.output_item.added",
              sequence_number: 1,
              output_index: 0,
              item: { ...item, arguments: "", status: "in_progress" },
            },
            {
              type: "response.function_call_arguments.delta",
              sequence_number: 2,
              item_id: "fc_1",
              output_index: 0,
              delta: CUT,
            },
            { type: "response.output_item.done", sequence_number: 3, output_index: 0, item },
            { type: "response.incomplete", sequence_number: 4, response },
          ]),
        }
        : { type: "application/json", body: JSON.stringify(completion) };
    await withServer(answer, async (url) => {
      await withSession(async (session) => {
        const box = toolbox();
        const openai = new OpenAI({ apiKey: "test", baseURL: `${url}/v1` });
        const streamed = await openai.responses.stream({
          model: "gpt-5",
          input: "Rewrite notes.txt",
          tools: openAIResponsesTools(box.list()),
        }).finalResponse();
        const { items } = await runOpenAIResponsesToolCalls(box, session, streamed);
        assert.equal(items.length, 1);
        assert.equal(items[0].type, "function_call_output");
        const output = (items[0] as OpenAI.Responses.ResponseInputItem.FunctionCallOutput).output;
        assert.match(
          String(output),
          /^Error \[invalid_arguments\]: The call to write_file was cut off.*max_output_tokens/,
        );

        const created = await openai.chat.completions.create({
          model: "gpt-5",
          messages: [{ role: "user", content: "Rewrite notes.txt" }],
          tools: openAIChatTools(box.list()),
        });
        const { messages } = await runOpenAIChatToolCalls(box, session, created);
        assert.deepEqual(messages[0], { role: "tool", tool_call_id: "call_e", content: "hi" });
        assert.equal((messages[1] as OpenAI.Chat.ChatCompletionToolMessageParam).tool_call_id, "call_w");
        assert.match(
          String((messages[1] as OpenAI.Chat.ChatCompletionToolMessageParam).content),
          /^Error \[invalid_arguments\]: The call to write_file was cut off.*finish_reason "length"/,
        );
      }, { host: yes });
    });
  });
});
