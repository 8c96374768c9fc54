// A tool that returns nothing (or only whitespace) is answered to Anthropic
// with a text the API takes. Its API refuses an empty or whitespace-only text
// ("messages: text content blocks must be non-empty", "... must contain
// non-whitespace text"), a tool_result's string content among them (reported
// by zed-industries/zed#27130 and anomalyco/opencode#15371 for content ""),
// and then every later request while the result stays in the conversation.
// runAnthropicToolCalls sent content "" for a tool that returned undefined,
// null or "", and "   \n" as it was. The real `@anthropic-ai/sdk` sends the
// reply to a loopback API that applies that rule.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import type Anthropic from "@anthropic-ai/sdk";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { anthropicTools, runAnthropicToolCalls } from "../../adapters/anthropic.ts";
import { withSession } from "../core/_helpers.ts";
import { type AnthropicRule, withLoopbackAnthropic } from "./_loopback_anthropic.ts";

const OUTPUTS: Record<string, unknown> = {
  nothing: undefined,
  null: null,
  empty: "",
  blank: "   \n",
  zero: 0,
  text: "x",
};

describe("a tool's blank output, answered to Anthropic", () => {
  test("reads as no output, and the next request is taken", { timeout: 60_000 }, async () => {
    // Each text block and tool_result text must hold more than whitespace.
    const nonBlank: AnthropicRule = (sent) => {
      for (const [m, message] of sent.messages.entries()) {
        if (typeof message.content === "string") continue;
        for (const [c, block] of message.content.entries()) {
          const text = block.type === "text"
            ? block.text
            : block.type === "tool_result" && typeof block.content === "string"
            ? block.content
            : undefined;
          if (text === undefined || text.trim() !== "") continue;
          return `messages.${m}.content.${c}: text content blocks must ${
            text === "" ? "be non-empty" : "contain non-whitespace text"
          }`;
        }
      }
      return undefined;
    };
    await withLoopbackAnthropic(nonBlank, async (client, refused) => {
      const box = new ToolBox().register(tool({
        name: "emit",
        description: "Returns what it is asked to.",
        input: v.object({ what: v.picklist(Object.keys(OUTPUTS)) }),
        readOnly: true,
        run: ({ what }) => OUTPUTS[what],
      }));
      await withSession(async (session) => {
        const calls: Anthropic.ToolUseBlockParam[] = Object.keys(OUTPUTS).map((what, i) => ({
          type: "tool_use",
          id: `t${i}`,
          name: "emit",
          input: { what },
        }));
        const messages: Anthropic.MessageParam[] = [
          { role: "user", content: "emit each" },
          { role: "assistant", content: calls },
        ];
        const { message, results } = await runAnthropicToolCalls(box, session, {
          content: calls,
          stop_reason: "tool_use",
        });
        messages.push(message);
        const answer = await client.messages.create({
          model: "claude-sonnet-4-5",
          max_tokens: 64,
          messages,
          tools: anthropicTools(box.list()),
        });
        assert.deepEqual(refused, []);
        assert.equal((answer.content[0] as Anthropic.TextBlock).text, "seen");
        assert.deepEqual(
          message.content.map((block) => block.type === "tool_result" ? block.content : block.type),
          ["(no output)", "(no output)", "(no output)", '(only whitespace: "   \\n")', "0", "x"],
        );
        // The lossless results keep what the tool returned (undefined as null, the JSON it has).
        assert.deepEqual(results.map((r) => r.output), [null, null, "", "   \n", 0, "x"]);
      });
    });
  });
});
