// A lone UTF-16 surrogate in what a tool gives back (its output, a value or key in it, its error) reaches the model
// as U+FFFD. A web page puts one in its text with `textContent = "A\ud800B"` (or a console message), and
// browser_snapshot handed it on as it was: JSON.stringify writes it as "\ud800", which Anthropic's API refuses ("The
// request body is not valid JSON: no low surrogate in string", anthropics/claude-code#1939 and its duplicates), and
// then every later request while the result stays in the conversation; a Python MCP client's UTF-8 encode raises on
// it. The real `@anthropic-ai/sdk` sends the replies to a loopback API applying that rule; the official MCP client
// reads the same tools over MCP.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as v from "valibot";
import type Anthropic from "@anthropic-ai/sdk";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { fail } from "../../core/failure.ts";
import { ToolError } from "../../core/errors.ts";
import { Session } from "../../policy/session.ts";
import { anthropicTools, runAnthropicToolCalls } from "../../adapters/anthropic.ts";
import { createMcpServer } from "../../adapters/mcp/mod.ts";
import { browserTools } from "../../tools/browser/mod.ts";
import { noBrowser } from "../tools/browser/_fixtures.ts";
import { withSession } from "../core/_helpers.ts";
import { type AnthropicRule, withLoopbackAnthropic } from "./_loopback_anthropic.ts";

const wellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

// Every string and key of a value, as a strict JSON parser meets them.
function illFormedIn(value: unknown): string | undefined {
  if (typeof value === "string") return wellFormed(value) ? undefined : value;
  if (typeof value !== "object" || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = wellFormed(key) ? illFormedIn(item) : key;
    if (found !== undefined) return found;
  }
  return undefined;
}

// Anthropic parses the body strictly: a lone surrogate anywhere refuses the request.
const strictJson: AnthropicRule = (sent) =>
  illFormedIn(sent) === undefined ? undefined : "The request body is not valid JSON: no low surrogate in string";

async function sendToAnthropic(box: ToolBox, session: Session, calls: Anthropic.ToolUseBlockParam[]) {
  let results: Awaited<ReturnType<typeof runAnthropicToolCalls>>["results"] = [];
  await withLoopbackAnthropic(strictJson, async (client, refused) => {
    const run = await runAnthropicToolCalls(box, session, { content: calls, stop_reason: "tool_use" });
    results = run.results;
    const answer = await client.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 64,
      messages: [{ role: "user", content: "go" }, { role: "assistant", content: calls }, run.message],
      tools: anthropicTools(box.list()),
    }).catch((error: Error) => error);
    assert.deepEqual(refused, []);
    assert.equal(((answer as Anthropic.Message).content[0] as Anthropic.TextBlock).text, "seen");
  });
  return results;
}

const OUTPUTS: Record<string, () => unknown> = {
  text: () => "A\ud800B",
  nested: () => ({ items: ["ok", "C\udc00"], "\ud83d": 1 }),
  cut: () => "\udfff".repeat(3_000),
  thrown: () => {
    throw new Error("no element named D\ud800");
  },
  refused: () => {
    throw new ToolError("E\udc00 is gone", {
      code: "not_found",
      recoveryHint: "look for F\ud800",
      details: { page: "I\ud800" },
    });
  },
  failed: () => fail("G\ud800 failed", { code: "tool_error", output: { log: "H\udc00" } }),
};

function makeBox() {
  return new ToolBox({ maxOutputChars: 2_000 }).register(tool({
    name: "emit",
    description: "Gives back what it is asked to.",
    input: v.object({ what: v.picklist(Object.keys(OUTPUTS)) }),
    readOnly: true,
    run: ({ what }) => OUTPUTS[what](),
  }));
}

/** Runs `body` with the official MCP client connected to a server of {@linkcode makeBox}'s tools. */
async function withMcpClient(body: (client: Client) => Promise<void>): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-surrogates-"));
  const served = createMcpServer(makeBox(), { workspace: dir });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "1" });
  try {
    await served.server.connect(serverSide);
    await client.connect(clientSide);
    await body(client);
  } finally {
    await client.close();
    await served.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

describe("a lone surrogate in a tool's result reaches the model as U+FFFD", () => {
  test("Anthropic takes the reply, and the lossless results hold U+FFFD", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = makeBox();
      const calls = Object.keys(OUTPUTS).map((what, i): Anthropic.ToolUseBlockParam => ({
        type: "tool_use",
        id: `t${i}`,
        name: "emit",
        input: { what },
      }));
      const results = await sendToAnthropic(box, session, calls);
      assert.deepEqual(results.map((r) => r.status), ["success", "success", "success", "error", "error", "error"]);
      assert.equal(results[0].output, "A\uFFFDB");
      assert.deepEqual(results[1].output, { items: ["ok", "C\uFFFD"], "\uFFFD": 1 });
      assert.equal(results[2].truncated, true);
      assert.match(results[3].error!, /D\uFFFD$/);
      assert.equal(results[4].error, "E\uFFFD is gone");
      assert.equal(results[4].recoveryHint, "look for F\uFFFD");
      // The developer's details too (and a thrown error's stack, which quotes its message as it was under Node).
      assert.deepEqual(results[4].details, { page: "I\uFFFD" });
      assert.deepEqual(results[5].output, { log: "H\uFFFD" });
      for (const result of results) assert.equal(illFormedIn(result), undefined, result.status);
    });
  });

  test("over MCP, every text and structuredContent is well-formed", { timeout: 60_000 }, async () => {
    await withMcpClient(async (client) => {
      for (const what of Object.keys(OUTPUTS)) {
        const result = await client.callTool({ name: "emit", arguments: { what } }) as CallToolResult;
        assert.equal(illFormedIn(result), undefined, what);
        assert.match((result.content[0] as { text: string }).text, /\uFFFD/, what);
      }
    });
  });

  test("over MCP, a protocol error repeating what the client sent (a tool name, cursor, URI) is well-formed", {
    timeout: 60_000,
  }, async () => {
    await withMcpClient(async (client) => {
      const refusals = [
        () => client.callTool({ name: "no\ud800pe", arguments: {} }),
        () => client.listTools({ cursor: "c\udc00" }),
        () => client.readResource({ uri: "toolfence://calls/x\ud800" }),
        // 101 UTF-16 units: cut at 100, inside the pair.
        () => client.callTool({ name: `${"n".repeat(99)}\ud83d\ude00`, arguments: {} }),
      ];
      for (const refusal of refusals) {
        const error = await refusal().then(() => assert.fail("answered"), (error: Error) => error);
        assert.equal(illFormedIn({ message: error.message, data: (error as { data?: unknown }).data }), undefined);
        assert.match(error.message, /\uFFFD|… \(101 characters\)/);
      }
    });
  });

  test("a web page's text and console messages, read by the browser tools", {
    timeout: 90_000,
    skip: noBrowser,
  }, async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "toolfence-surrogates-page-"));
    const session = new Session({ workspace: dir });
    try {
      const box = new ToolBox().register(...browserTools({ sandbox: "off" }));
      const page = '<p id="p">x</p><script>p.textContent = "A\\ud800B"; console.log("C\\ud800")</script>';
      const opened = await box.call(session, "browser_navigate", { url: `data:text/html,${encodeURIComponent(page)}` });
      assert.equal(opened.status, "success", String(opened.error));
      const calls: Anthropic.ToolUseBlockParam[] = [
        { type: "tool_use", id: "s", name: "browser_snapshot", input: {} },
        { type: "tool_use", id: "c", name: "browser_console_messages", input: {} },
      ];
      const results = await sendToAnthropic(box, session, calls);
      assert.deepEqual(results.map((r) => r.status), ["success", "success"]);
      assert.match(String(results[0].output), /A\uFFFDB/);
      assert.match(String(results[1].output), /C\uFFFD/);
    } finally {
      await session.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
