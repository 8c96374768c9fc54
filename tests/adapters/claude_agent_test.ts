// The Claude Agent SDK adapter under the real `query()`, which runs the Claude
// Code binary the SDK ships; the model is a scripted Anthropic Messages API on
// loopback (ANTHROPIC_BASE_URL), and what the model read is taken from the
// requests the binary sends it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type CanUseTool, query, type SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { CLAUDE_AGENT_RESULT_META, claudeAgentOptions } from "../../adapters/claude_agent.ts";
import type { ToolResult } from "../../core/result.ts";
import type { BatchCall } from "../../core/executor.ts";
import { SessionBase } from "../../core/session.ts";
import { ToolBox } from "../../core/toolbox.ts";
import { tool } from "../../core/tool.ts";
import * as v from "valibot";
import { Ajv2020 } from "ajv/dist/2020.js";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CHAIN, FIXED, GOOD_AND_BAD, PROBES, withFixture } from "./_frameworks.ts";
import { type FakeAnthropic, fakeAnthropic, toolResultsIn } from "./_fake_anthropic.ts";
import { declinedCallText } from "../../adapters/declined_call.ts";
import { SchemaDialectError } from "../../adapters/dialect_error.ts";
import { z } from "zod";

async function runAgent(
  box: ToolBox,
  session: SessionBase,
  dir: string,
  turns: (BatchCall[] | string)[],
  canUseTool?: CanUseTool,
): Promise<{ api: FakeAnthropic; messages: SDKMessage[] }> {
  const api = await fakeAnthropic(turns);
  const home = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-claude-home-"));
  const messages: SDKMessage[] = [];
  try {
    const options = claudeAgentOptions(box, session, { canUseTool });
    for await (
      const message of query({
        prompt: "Use the tools.",
        options: {
          ...options,
          tools: [],
          cwd: dir,
          maxTurns: 6,
          model: "claude-sonnet-4-5",
          settingSources: [],
          env: {
            PATH: process.env.PATH,
            HOME: home,
            CLAUDE_CONFIG_DIR: home,
            ANTHROPIC_BASE_URL: api.url,
            ANTHROPIC_API_KEY: "sk-ant-test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            DISABLE_TELEMETRY: "1",
            DISABLE_AUTOUPDATER: "1",
            DISABLE_ERROR_REPORTING: "1",
          },
        },
      })
    ) messages.push(message);
  } finally {
    await api.close();
    await fsp.rm(home, { recursive: true, force: true });
  }
  return { api, messages };
}

const process = globalThis.process;

describe("claudeAgentOptions with query() and the Claude Code binary", { timeout: 240_000 }, () => {
  test("a good call, a bad call whose fix the model reads", { timeout: 240_000 }, async () => {
    await withFixture(async ({ dir, session, box, expectedTexts }) => {
      const expected = await expectedTexts([...GOOD_AND_BAD, FIXED]);
      const { api, messages } = await runAgent(box, session, dir, [GOOD_AND_BAD, [FIXED], "done"]);
      const result = messages.find((m) => m.type === "result");
      assert.equal(result && "result" in result ? result.result : undefined, "done", JSON.stringify(api.paths));
      const tools = api.requests[0].tools!.map((t) => t.name);
      assert.ok(tools.includes("mcp__toolfence__read_file"));
      const seen = new Map([...toolResultsIn(api.requests[1]), ...toolResultsIn(api.requests[2])]);
      const text = (id: string) => {
        const content = seen.get(id)?.content;
        const joined = Array.isArray(content) ? content.map((b: { text?: string }) => b.text).join("\n") : content;
        // Claude Code appends its own reminders to the last tool result of a turn.
        return String(joined).replace(/\n*<system-reminder>[^]*?<\/system-reminder>/g, "");
      };
      assert.equal(text("good"), expected[0]);
      assert.equal(text("bad"), expected[1]);
      assert.equal(seen.get("bad")?.is_error, true);
      assert.equal(text("fixed"), expected[2]);
      const results = resultsOf(messages);
      assert.deepEqual(["good", "bad", "fixed"].map((id) => [results.get(id)?.status, results.get(id)?.errorCode]), [
        ["success", undefined],
        ["error", "invalid_arguments"],
        ["success", undefined],
      ]);
      // The lossless result names the call by the model's tool_use id, which Claude Code passes in _meta.
      assert.deepEqual(["good", "bad", "fixed"].map((id) => results.get(id)?.callId), ["good", "bad", "fixed"]);
    });
  });

  test("8 parallel edits of one file all succeed, in the order the model made them", { timeout: 240_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      const { messages } = await runAgent(box, session, dir, [CHAIN, "done"]);
      assert.equal(await fsp.readFile(path.join(dir, "chain.txt"), "utf8"), "step 8\n");
      const results = resultsOf(messages);
      assert.deepEqual(CHAIN.map((c) => results.get(c.callId)?.status), Array(8).fill("success"));
    });
  });

  test(
    "Claude Code runs read-only calls together (annotations), the others never overlap",
    { timeout: 240_000 },
    async () => {
      await withFixture(async ({ dir, session, box, overlap }) => {
        await runAgent(box, session, dir, [PROBES, "done"]);
        console.log(`claude-agent: at most ${overlap.safe.most} safe and ${overlap.unsafe.most} unsafe calls at once`);
        assert.ok(
          overlap.safe.most > 1,
          "the read-only calls ran one at a time: the annotations did not reach Claude Code",
        );
        assert.equal(overlap.unsafe.most, 1);
      });
    },
  );

  test(
    "approval is Claude Code's canUseTool: one granted runs once, one declined never runs",
    { timeout: 240_000 },
    async () => {
      await withFixture(async ({ dir, session, box, asked, deployed }) => {
        const decided: string[] = [];
        const canUseTool: CanUseTool = (toolName, input) => {
          decided.push(`${toolName} ${JSON.stringify(input)}`);
          return Promise.resolve(
            input.service === "web"
              ? { behavior: "allow" as const, updatedInput: input }
              : { behavior: "deny" as const, message: "no" },
          );
        };
        const { api, messages } = await runAgent(box, session, dir, [
          [
            { name: "deploy", callId: "d-web", args: { service: "web" } },
            { name: "deploy", callId: "d-db", args: { service: "db" } },
            { name: "deploy", callId: "d-staging", args: { service: "staging" } },
          ],
          "done",
        ], canUseTool);
        assert.deepEqual(decided.sort(), [
          'mcp__toolfence__deploy {"service":"db"}',
          'mcp__toolfence__deploy {"service":"web"}',
        ], "only the calls that need approval are asked about");
        assert.deepEqual(deployed.sort(), ["staging", "web"]);
        const seen = toolResultsIn(api.requests[1]);
        const text = (id: string) => JSON.stringify(seen.get(id)?.content);
        assert.match(text("d-web"), /deployed web/);
        assert.equal(seen.get("d-db")?.content, declinedCallText("deploy"));
        assert.equal(resultsOf(messages).get("d-web")?.metadata.approval, "user");
        assert.ok(!asked.includes("Approve tool call"), "approval went through canUseTool, not the session's host");
      });
    },
  );

  test(
    "without a canUseTool of yours, the session's host is asked once and the call runs",
    { timeout: 240_000 },
    async () => {
      await withFixture(async ({ dir, session, box, asked, deployed }) => {
        const { api } = await runAgent(box, session, dir, [
          [{ name: "deploy", callId: "d-web", args: { service: "web" } }],
          "done",
        ]);
        assert.deepEqual(asked, ["Approve tool call"]);
        assert.deepEqual(deployed, ["web"]);
        assert.match(JSON.stringify(toolResultsIn(api.requests[1]).get("d-web")?.content), /deployed web/);
      });
    },
  );
});

/** The lossless results, by tool_use id, from the SDK's user messages. */
function resultsOf(messages: SDKMessage[]): Map<string, ToolResult> {
  const results = new Map<string, ToolResult>();
  for (const message of messages) {
    if (message.type !== "user") continue;
    const meta = (message.tool_use_result as { _meta?: Record<string, unknown> } | undefined)?._meta;
    const result = meta?.[CLAUDE_AGENT_RESULT_META] as ToolResult | undefined;
    const content = message.message.content;
    const block = Array.isArray(content) ? content.find((b) => b.type === "tool_result") : undefined;
    if (result && block && "tool_use_id" in block) results.set(block.tool_use_id, result);
  }
  return results;
}

describe("claudeAgentOptions and the Anthropic API's input schemas", { timeout: 240_000 }, () => {
  // Claude Code sends an MCP tool's schema on to the API, which refuses every request of the session when one is
  // not draft 2020-12 (a draft-07 tuple's `items: [...]`).
  test("what Claude Code sends of a tuple tool is a draft 2020-12 schema", { timeout: 240_000 }, async () => {
    await withFixture(async ({ dir, session, box }) => {
      box.register(tool({
        name: "pair",
        description: "Take a pair.",
        input: z.object({ t: z.tuple([z.string(), z.number()]) }),
        run: ({ t }) => t.join(","),
      }));
      const { api } = await runAgent(box, session, dir, [
        [{ name: "pair", callId: "p1", args: { t: ["a", 1] } }],
        "done",
      ]);
      const sent = api.requests[0].tools!.find((t) => t.name === "mcp__toolfence__pair") as
        | { input_schema: Record<string, unknown> }
        | undefined;
      assert.ok(sent, JSON.stringify(api.requests[0].tools!.map((t) => t.name)));
      const ajv = new Ajv2020({ strict: false });
      const { $schema: _declared, ...schema } = sent.input_schema;
      assert.ok(ajv.validateSchema(schema), ajv.errorsText(ajv.errors));
      assert.equal(ajv.compile(schema)({ t: ["a", 1] }), true);
      assert.equal(ajv.compile(schema)({ t: ["a", "b"] }), false);
      const seen = toolResultsIn(api.requests[1]).get("p1");
      assert.equal(seen?.is_error, undefined, JSON.stringify(seen));
    });
  });
});

describe("claudeAgentOptions and the Anthropic API's tool names", () => {
  test("a tool whose mcp__<server>__<name> is longer than 64 characters is refused when the options are made", {
    timeout: 30_000,
  }, async () => {
    const named = (name: string) => tool({ name, description: "T.", input: v.object({}), run: () => "" });
    const session = new SessionBase();
    try {
      // mcp__toolfence__ is 16 characters: 48 are left for the tool's name.
      const fits = claudeAgentOptions(new ToolBox().register(named("a".repeat(48))), session);
      assert.deepEqual(Object.keys(fits.mcpServers), ["toolfence"]);
      assert.throws(
        () => claudeAgentOptions(new ToolBox().register(named("b".repeat(49))), session),
        (error: Error) =>
          error instanceof RangeError && error.message.includes(`"${"b".repeat(49)}"`) &&
          /\(65 characters\)/.test(error.message) &&
          /shorter serverName/.test(error.message),
      );
      // A shorter server name leaves room.
      claudeAgentOptions(new ToolBox().register(named("b".repeat(49))), session, { serverName: "t" });
    } finally {
      await session.close();
    }
  });

  // Claude Code gives such a server's tools names with "_" in place of the character (`tool fence` made
  // mcp__tool_fence__read_file), and canUseTool, not knowing them, refused every call ("... is not allowed").
  test("a server name with a character Claude Code replaces is refused when the options are made", {
    timeout: 30_000,
  }, async () => {
    const box = new ToolBox().register(tool({ name: "t", description: "T.", input: v.object({}), run: () => "" }));
    const session = new SessionBase();
    try {
      for (const serverName of ["tool fence", "my.tools", "tools/x", "wérk", ""]) {
        assert.throws(
          () => claudeAgentOptions(box, session, { serverName }),
          (error: Error) =>
            error instanceof RangeError && error.message.includes(JSON.stringify(serverName)) &&
            /letters, digits, _ and - only/.test(error.message),
          serverName,
        );
      }
      assert.deepEqual(Object.keys(claudeAgentOptions(box, session, { serverName: "my-tools_2" }).mcpServers), [
        "my-tools_2",
      ]);
    } finally {
      await session.close();
    }
  });
});

describe("claudeAgentOptions and the Anthropic API's schemas", () => {
  // Claude Code hands the listed schema to the API, which refuses every request of the session over one tool whose
  // input schema has anyOf, oneOf or allOf at its root, or is no object ("tools.N.custom.input_schema: input_schema
  // does not support oneOf, allOf, or anyOf at the top level"): anthropicTools refused such a tool, claudeAgentOptions
  // listed it.
  test("a tool whose input schema the Anthropic API refuses is refused when the options are made", {
    timeout: 30_000,
  }, async () => {
    const properties = { a: { type: "string" }, b: { type: "number" } };
    const classTool = (name: string, inputSchema: Record<string, unknown>) => ({
      name,
      description: "T.",
      inputSchema,
      readOnly: true,
      execute: () => "",
    });
    const session = new SessionBase();
    try {
      for (
        const [name, inputSchema] of [
          ["either", { type: "object", properties, anyOf: [{ required: ["a"] }, { required: ["b"] }] }],
          ["one", { type: "object", properties, oneOf: [{ required: ["a"] }, { required: ["b"] }] }],
          ["both", { type: "object", properties, allOf: [{ required: ["a"] }, { required: ["b"] }] }],
          ["list", { type: "array", items: { type: "string" } }],
        ] as const
      ) {
        const box = new ToolBox().register(classTool(name, inputSchema) as never);
        assert.throws(
          () => claudeAgentOptions(box, session),
          (error: Error) =>
            error instanceof SchemaDialectError && error.message.includes(`"${name}"`) &&
            /anthropic/.test(error.message),
          name,
        );
      }
      // A union below the root is taken.
      const nested = new ToolBox().register(
        classTool("nested", {
          type: "object",
          properties: { x: { anyOf: [{ type: "string" }, { type: "number" }] } },
        }) as never,
      );
      assert.deepEqual(Object.keys(claudeAgentOptions(nested, session).mcpServers), ["toolfence"]);
    } finally {
      await session.close();
    }
  });

  test("a tuple reaches Claude as JSON Schema 2020-12 (prefixItems), declared so", { timeout: 30_000 }, async () => {
    // Before: the in-process server listed the draft-07 tuple (`items` as a list), which the Anthropic API refuses
    // ("input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12").
    const session = new SessionBase();
    const box = new ToolBox().register(
      tool({
        name: "pair",
        description: "T.",
        input: v.object({ p: v.tuple([v.number(), v.string()]) }),
        run: () => "",
      }),
    );
    const options = claudeAgentOptions(box, session);
    const server = (options.mcpServers.toolfence as { instance: { connect(t: unknown): Promise<void> } }).instance;
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    try {
      await server.connect(serverSide);
      await client.connect(clientSide);
      const [listed] = (await client.listTools()).tools;
      const draft2020 = new Ajv2020({ strict: false });
      assert.equal(draft2020.validateSchema(listed.inputSchema), true, JSON.stringify(draft2020.errors));
      assert.equal(listed.inputSchema.$schema, "https://json-schema.org/draft/2020-12/schema");
      const valid = draft2020.compile(listed.inputSchema);
      assert.equal(valid({ p: [1, "a"] }), true);
      assert.equal(valid({ p: ["a", 1] }), false);
    } finally {
      await client.close();
      await session.close();
    }
  });
});
