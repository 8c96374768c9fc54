// A model's JSON arguments may carry "\ud800", which JSON.parse turns into a lone UTF-16 surrogate: no UTF-8 file
// or file name can hold it, and written out it silently became U+FFFD while the call reported success. Only the MCP
// server refused such text (a hook of its own); a LangChain tool wrote "a\ud800b" as the bytes 61 ef bf bd 62 and
// answered success, the AI SDK's write_file created "x\uFFFD.txt" and reported "x\udc00.txt". The pipeline now
// refuses it at every door, before the tool runs.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import type { ToolMessage } from "@langchain/core/messages";
import { langChainTools } from "../../adapters/langchain.ts";
import { aiSdkTools } from "../../adapters/ai_sdk.ts";
import { runAnthropicToolCalls } from "../../adapters/anthropic.ts";
import { runOpenAIChatToolCalls } from "../../adapters/openai.ts";
import type { ToolResult } from "../../core/result.ts";
import { withFixture } from "./_frameworks.ts";

// As a model's JSON sends them: a high surrogate alone, a low one alone, in a value, in a path, in a key.
const ARGUMENTS = [
  '{"path": "a.txt", "content": "a\\ud800b"}',
  '{"path": "b\\udc00.txt", "content": "ok"}',
  '{"path": "c.txt", "content": "q\\ud83d"}',
  '{"path": "d.txt", "content": "ok", "\\ud800": 1}',
];

describe("a lone surrogate in a call's arguments, at every door", () => {
  test("toolbox.call, LangChain, the AI SDK, Anthropic and OpenAI chat: invalid_text, nothing written", {
    timeout: 60_000,
  }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const before = (await fsp.readdir(dir)).sort();
      const lc = langChainTools(box, session).find((t) => t.name === "write_file")!;
      const ai = aiSdkTools(box, session).write_file as unknown as {
        execute(input: unknown, options: { toolCallId: string; messages: [] }): Promise<ToolResult>;
      };
      for (const [i, text] of ARGUMENTS.entries()) {
        const args = JSON.parse(text);
        const results: [string, ToolResult][] = [];
        results.push(["toolbox", await box.call(session, "write_file", text)]);
        const message = await lc.invoke({ type: "tool_call", id: `l${i}`, name: "write_file", args }) as ToolMessage;
        assert.equal(message.status, "error");
        assert.match(String(message.content), /lone UTF-16 surrogate/);
        results.push(["langchain", message.artifact as ToolResult]);
        results.push(["ai_sdk", await ai.execute(args, { toolCallId: `a${i}`, messages: [] })]);
        const anthropic = await runAnthropicToolCalls(box, session, {
          content: [{ type: "tool_use", id: `t${i}`, name: "write_file", input: args }],
        });
        results.push(["anthropic", anthropic.results[0]]);
        const chat = await runOpenAIChatToolCalls(box, session, {
          tool_calls: [{ id: `c${i}`, type: "function", function: { name: "write_file", arguments: text } }],
        });
        results.push(["openai chat", chat.results[0]]);
        for (const [door, result] of results) {
          assert.equal(result.status, "error", `${door} ${text}`);
          assert.equal(result.errorCode, "invalid_text", `${door} ${text}`);
          assert.match(result.error ?? "", /holds a lone UTF-16 surrogate/, `${door} ${text}`);
        }
      }
      assert.deepEqual((await fsp.readdir(dir)).sort(), before);
      // Well-formed text, a surrogate pair included, is written as it is.
      const ok = await box.call(session, "write_file", '{"path": "e.txt", "content": "\\ud83d\\ude00 ok"}');
      assert.equal(ok.status, "success");
      assert.equal(await fsp.readFile(`${dir}/e.txt`, "utf8"), "\u{1F600} ok");
    });
  });
});
