// Typed outputs over MCP: outputSchema in tools/list for the tools that declare
// one, structuredContent on success (the cut envelope when the output was over
// the cap), nothing structured on failure, an after-call hook that breaks the
// output refused rather than sent; and the provider dialects send no output
// schema at all (only what a model should read).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { z } from "zod";
import { Ajv } from "ajv";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { outputJsonSchema } from "../../core/schema.ts";
import { openFence } from "../../policy/fence.ts";
import { Session } from "../../policy/session.ts";
import { aiSdkTools } from "../../adapters/ai_sdk.ts";
import {
  createMcpServer,
  CUT_OUTPUT_SCHEMA,
  mcpTools,
  mcpWrapsOutput,
  WRAPPED_OUTPUT_KEY,
} from "../../adapters/mcp/mod.ts";
import { SchemaDialectError } from "../../adapters/dialect_error.ts";

const STAT = v.strictObject({ name: v.string(), size: v.pipe(v.number(), v.integer(), v.minValue(0)) });
const LIST = v.strictObject({ names: v.array(v.string()) });

function makeBox() {
  return new ToolBox({ maxOutputChars: 2_000 }).register(
    tool({
      name: "stat",
      description: "Stat.",
      input: v.object({ size: v.number() }),
      output: STAT,
      readOnly: true,
      run: ({ size }) => ({ name: "f", size }),
    }),
    tool({
      name: "many",
      description: "Many names.",
      input: v.object({ n: v.number() }),
      output: LIST,
      readOnly: true,
      run: ({ n }) => ({ names: Array.from({ length: n }, (_, i) => `name-${i}`) }),
    }),
    tool({ name: "plain", description: "Plain.", input: v.object({}), readOnly: true, run: () => ({ a: 1 }) }),
  );
}

async function connect(box: ToolBox) {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-out-"));
  const served = createMcpServer(box, { workspace: dir });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "1" });
  await served.server.connect(serverSide);
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  return {
    client,
    tools,
    call: (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
    async close() {
      await client.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe("MCP outputSchema and structuredContent", () => {
  test("listed for the tools that declare output: their schema or the cut envelope", { timeout: 60_000 }, async () => {
    const server = await connect(makeBox());
    try {
      const byName = new Map(server.tools.map((t) => [t.name, t]));
      assert.deepEqual(byName.get("stat")!.outputSchema, {
        type: "object",
        anyOf: [outputJsonSchema(STAT), CUT_OUTPUT_SCHEMA],
      });
      assert.equal(byName.get("plain")!.outputSchema, undefined);
    } finally {
      await server.close();
    }
  });

  test(
    "a success answers structuredContent beside the same JSON as text; a failure answers none",
    { timeout: 60_000 },
    async () => {
      const server = await connect(makeBox());
      try {
        const ok = await server.call("stat", { size: 3 });
        assert.deepEqual(ok.structuredContent, { name: "f", size: 3 });
        assert.deepEqual(JSON.parse((ok.content[0] as { text: string }).text), { name: "f", size: 3 });
        // The tool breaks its own schema: the pipeline refuses the output, nothing structured is sent.
        const bad = await server.call("stat", { size: -1 });
        assert.equal(bad.isError, true);
        assert.equal(bad.structuredContent, undefined);
        assert.match((bad.content[0] as { text: string }).text, /invalid_output.*at size/);
        const invalidArgs = await server.call("stat", { size: "x" });
        assert.equal(invalidArgs.isError, true);
        assert.equal(invalidArgs.structuredContent, undefined);
        const plain = await server.call("plain", {});
        assert.equal(plain.structuredContent, undefined);
      } finally {
        await server.close();
      }
    },
  );

  test("a cut output answers the envelope: the text the model read and the artifact, whose whole output matches", {
    timeout: 60_000,
  }, async () => {
    const server = await connect(makeBox());
    try {
      const cut = await server.call("many", { n: 500 });
      const envelope = cut.structuredContent as {
        truncated: boolean;
        text: string;
        omitted: number;
        artifact: { id: string; uri: string };
      };
      assert.equal(envelope.truncated, true);
      assert.equal(envelope.text, (cut.content[0] as { text: string }).text);
      assert.ok(envelope.text.length <= 2_000);
      assert.ok(envelope.omitted > 0);
      assert.ok(new Ajv({ strict: false }).compile(CUT_OUTPUT_SCHEMA)(envelope));
      const read = await server.client.readResource({ uri: envelope.artifact.uri });
      const whole = JSON.parse((read.contents[0] as { text: string }).text);
      assert.equal(whole.names.length, 500);
      assert.ok(v.is(LIST, whole));
    } finally {
      await server.close();
    }
  });

  test("an after-call hook that replaces the output with one the schema refuses is answered as an error", {
    timeout: 60_000,
  }, async () => {
    const box = makeBox();
    box.afterToolCall(({ result }) => ({ ...result, output: { name: "f", size: "huge".repeat(10_000) } }));
    const server = await connect(box);
    try {
      const result = await server.call("stat", { size: 1 });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent, undefined);
      const text = (result.content[0] as { text: string }).text;
      assert.match(text, /invalid_output.*at size/);
      // The refused output is not passed on: at most a bounded quote of where it went wrong.
      assert.ok(text.length < 1_000, `${text.length} characters`);
    } finally {
      await server.close();
    }
  });

  test("an after-call hook that changes the output in place is answered as an error too", {
    timeout: 60_000,
  }, async () => {
    // The pipeline's check is the last word only on a result no after-call hook has seen: a hook that changes the
    // output it was given (returning nothing) is checked again, as one that replaces it is.
    const box = makeBox();
    box.afterToolCall(({ result }) => {
      (result.output as { size: unknown }).size = "huge";
    });
    const server = await connect(box);
    try {
      const result = await server.call("stat", { size: 1 });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent, undefined);
      assert.match((result.content[0] as { text: string }).text, /invalid_output.*at size/);
      // Without any hook, the output checked by the pipeline is sent as it is.
      const plain = await connect(makeBox());
      try {
        assert.deepEqual((await plain.call("stat", { size: 3 })).structuredContent, { name: "f", size: 3 });
      } finally {
        await plain.close();
      }
    } finally {
      await server.close();
    }
  });

  test(
    "an output that is not an object is advertised and sent wrapped as { result }",
    { timeout: 60_000 },
    async () => {
      const words = {
        name: "words",
        description: "Words.",
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        output: v.pipe(v.string(), v.regex(/^said /)),
        execute: () => "said hello",
      };
      assert.equal(mcpWrapsOutput(words), true);
      assert.equal(mcpWrapsOutput(makeBox().get("stat")!), false);
      assert.deepEqual(mcpTools([words])[0].outputSchema, {
        type: "object",
        anyOf: [
          {
            type: "object",
            properties: { [WRAPPED_OUTPUT_KEY]: { type: "string", pattern: "^said " } },
            required: [WRAPPED_OUTPUT_KEY],
            additionalProperties: false,
          },
          CUT_OUTPUT_SCHEMA,
        ],
      });
      const server = await connect(new ToolBox().register(words));
      try {
        const result = await server.call("words", {});
        assert.deepEqual(result.structuredContent, { result: "said hello" });
        assert.deepEqual(result.content[0], { type: "text", text: "said hello" });
      } finally {
        await server.close();
      }
      const broken = { ...words, name: "broken", output: v.map(v.string(), v.string()) };
      assert.throws(() => mcpTools([broken]), SchemaDialectError);
    },
  );

  test(
    "an output schema with references (recursive, named, at the root, wrapped) is listed and checked by the SDK client",
    { timeout: 60_000 },
    async () => {
      // zod writes these as $ref to #/definitions/... or to # itself; advertised inside the anyOf (and under
      // `result` when wrapped), they pointed at the outer schema, and the client's listTools threw for the server.
      type Tree = { name: string; children: Tree[] };
      const Node: z.ZodType<Tree> = z.object({
        name: z.string(),
        get children() {
          return z.array(Node);
        },
      });
      const Tag = z.object({ t: z.string() }).meta({ id: "Tag" });
      const tree: Tree = { name: "a", children: [{ name: "b", children: [] }] };
      const box = new ToolBox().register(
        tool({
          name: "tree",
          description: "A tree under a key.",
          input: z.object({}),
          output: z.object({ root: Node }),
          readOnly: true,
          run: () => ({ root: tree }),
        }),
        tool({
          name: "root",
          description: "A tree.",
          input: z.object({}),
          output: Node,
          readOnly: true,
          run: () => tree,
        }),
        tool({
          name: "forest",
          description: "Trees.",
          input: z.object({}),
          output: z.array(Node),
          readOnly: true,
          run: () => [tree, tree],
        }),
        tool({
          name: "tags",
          description: "Tags.",
          input: z.object({}),
          output: z.object({ a: Tag, b: Tag }),
          readOnly: true,
          run: () => ({ a: { t: "x" }, b: { t: "y" } }),
        }),
      );
      const server = await connect(box);
      try {
        assert.deepEqual(server.tools.map((t) => t.name), ["tree", "root", "forest", "tags"]);
        assert.deepEqual((await server.call("tree", {})).structuredContent, { root: tree });
        assert.deepEqual((await server.call("root", {})).structuredContent, tree);
        assert.deepEqual((await server.call("forest", {})).structuredContent, { [WRAPPED_OUTPUT_KEY]: [tree, tree] });
        assert.deepEqual((await server.call("tags", {})).structuredContent, { a: { t: "x" }, b: { t: "y" } });
        // The references still hold: a subtree that breaks the recursive schema does not match what is listed.
        const ajv = new Ajv({ strict: false });
        const rootSchema = server.tools.find((t) => t.name === "root")!.outputSchema!;
        assert.equal(ajv.validate(rootSchema, { name: "a", children: [{ name: 1, children: [] }] }), false);
        const forestSchema = server.tools.find((t) => t.name === "forest")!.outputSchema!;
        assert.equal(ajv.validate(forestSchema, { result: [{ name: "a", children: [{ children: [] }] }] }), false);
      } finally {
        await server.close();
      }
    },
  );
});

describe("provider dialects send no output schema", () => {
  const withOutput = tool({
    name: "stat",
    description: "Stat.",
    input: v.object({ size: v.number() }),
    output: STAT,
    readOnly: true,
    run: ({ size }) => ({ name: "f", size }),
  });
  const { output: _output, ...rest } = withOutput;
  const withoutOutput = Object.freeze({ ...rest });

  for (const dialect of ["openai-chat", "openai-responses", "anthropic", "gemini", "json-schema"]) {
    test(`${dialect}: the same tool with and without output renders alike`, { timeout: 60_000 }, () => {
      const fence = openFence();
      const a = new ToolBox().register(withOutput).schemas(dialect, { fence });
      const b = new ToolBox().register(withoutOutput).schemas(dialect, { fence });
      assert.deepEqual(a, b);
      assert.doesNotMatch(JSON.stringify(a), /outputSchema|output_schema/);
    });
  }

  test("the AI SDK tool has no outputSchema: its execute answers the lossless ToolResult, not the output", {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-aisdk-out-"));
    const session = new Session({ workspace: dir });
    try {
      const tools = aiSdkTools(new ToolBox().register(withOutput), session);
      assert.equal((tools.stat as { outputSchema?: unknown }).outputSchema, undefined);
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
