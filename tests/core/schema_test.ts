// Any Standard Schema library for a tool's input and output: zod 4 and
// ArkType tools beside valibot's, with the JSON Schema of each library's own
// converter, held to the same strict validation (unknown keys refused at every
// level, an array parameter sent as a string parsed), through the real
// pipeline, the OpenAI strict dialect and a real MCP client.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import * as zm from "zod/mini";
import * as z3 from "zod/v3";
import { type } from "arktype";
import * as v from "valibot";
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
import { type AnyTool, tool } from "../../core/tool.ts";
import { inputJsonSchema } from "../../core/schema.ts";
import { validateWithJsonSchema } from "../../core/validation.ts";
import { ToolBox } from "../../toolbox.ts";
import { openAIChatTools } from "../../adapters/openai.ts";
import { restoreCall } from "../../adapters/_calls.ts";
import { createMcpServer, mcpOutputSchema } from "../../adapters/mcp/mod.ts";
import { withSession } from "./_helpers.ts";

const ajv = new Ajv({ strict: false, allErrors: true });

const received: unknown[] = [];

// The same tool in each library: a described path, an optional list, a
// defaulted number and a nested object.
const zodTool = tool({
  name: "zod_probe",
  description: "Records what it receives.",
  input: z.object({
    path: z.string().describe("File to read"),
    tags: z.array(z.string()).optional(),
    limit: z.number().int().min(1).default(10),
    inner: z.object({ a: z.string() }),
  }),
  output: z.object({ path: z.string(), count: z.number() }),
  readOnly: true,
  run: (args) => {
    // Types come from the schema: these lines do not compile if they do not.
    const path: string = args.path;
    const limit: number = args.limit;
    const tags: string[] | undefined = args.tags;
    received.push(args);
    return { path, count: limit + (tags?.length ?? 0) };
  },
});

const arkTool = tool({
  name: "ark_probe",
  description: "Records what it receives.",
  input: type({
    path: type("string").describe("File to read"),
    "tags?": "string[]",
    limit: "number.integer >= 1 = 10",
    inner: { a: "string" },
  }),
  output: type({ path: "string", count: "number" }),
  readOnly: true,
  run: (args) => {
    const path: string = args.path;
    const limit: number = args.limit;
    const tags: string[] | undefined = args.tags;
    received.push(args);
    return { path, count: limit + (tags?.length ?? 0) };
  },
});

const LIBRARIES: { name: string; probe: AnyTool }[] = [{ name: "zod", probe: zodTool }, {
  name: "ArkType",
  probe: arkTool,
}];

async function call(t: AnyTool, args: unknown) {
  const box = new ToolBox().register(t);
  return await withSession((session) => box.call(session, t.name, args));
}

for (const { name, probe } of LIBRARIES) {
  describe(`${name} tools`, () => {
    test("the JSON Schema is the library's own, with every object closed", { timeout: 60_000 }, () => {
      const schema = probe.inputSchema;
      assert.equal(schema.type, "object");
      assert.equal(schema.additionalProperties, false);
      assert.equal(schema.properties!.path.description, "File to read");
      assert.deepEqual(schema.properties!.tags, { type: "array", items: { type: "string" } });
      assert.equal(schema.properties!.inner.additionalProperties, false);
      assert.deepEqual([...schema.required!].sort(), ["inner", "path"]);
      assert.equal(schema.$schema, undefined);
    });

    test("a valid call runs with the library's output (defaults applied)", { timeout: 60_000 }, async () => {
      received.length = 0;
      const r = await call(probe, { path: "a.txt", inner: { a: "x" } });
      assert.equal(r.status, "success", r.error);
      assert.deepEqual(received[0], { path: "a.txt", limit: 10, inner: { a: "x" } });
      assert.deepEqual(r.output, { path: "a.txt", count: 10 });
    });

    test("unknown keys are refused, at the top and nested", { timeout: 60_000 }, async () => {
      const top = await call(probe, { path: "a", inner: { a: "x" }, extra: 1 });
      assert.equal(top.errorCode, "invalid_arguments");
      assert.match(top.error!, /extra: unexpected argument/);
      const nested = await call(probe, { path: "a", inner: { a: "x", sneaky: true } });
      assert.equal(nested.errorCode, "invalid_arguments");
      assert.match(nested.error!, /inner\.sneaky: unexpected argument/);
    });

    test("an array parameter sent as a string is parsed, JSON or comma-separated", { timeout: 60_000 }, async () => {
      received.length = 0;
      const json = await call(probe, { path: "a", inner: { a: "x" }, tags: '["p", "q"]' });
      assert.equal(json.status, "success", json.error);
      const listed = await call(probe, { path: "a", inner: { a: "x" }, tags: "p, q" });
      assert.equal(listed.status, "success", listed.error);
      assert.deepEqual(received.map((r) => (r as { tags: string[] }).tags), [["p", "q"], ["p", "q"]]);
    });

    test("the library's own checks judge what JSON Schema leaves to it", { timeout: 60_000 }, async () => {
      const r = await call(probe, { path: "a", inner: { a: "x" }, limit: 0 });
      assert.equal(r.errorCode, "invalid_arguments");
      assert.match(r.error!, /limit/);
      const wrongType = await call(probe, { path: 3, inner: { a: "x" } });
      assert.equal(wrongType.errorCode, "invalid_arguments");
      assert.match(wrongType.error!, /path: expected string/);
    });

    test("OpenAI strict mode renders it, and a strict answer round-trips to the same arguments", {
      timeout: 60_000,
    }, async () => {
      const [rendered] = openAIChatTools([probe]);
      const strict = rendered.function.parameters!;
      assert.equal(rendered.function.strict, true);
      assert.deepEqual([...strict.required as string[]].sort(), ["inner", "limit", "path", "tags"]);
      assert.equal(strict.additionalProperties, false);
      const answer = { path: "a.txt", tags: null, limit: null, inner: { a: "x" } };
      assert.equal(ajv.validate(strict, answer), true, JSON.stringify(ajv.errors));
      const box = new ToolBox().register(probe);
      received.length = 0;
      await withSession(async (session) => {
        const restored = restoreCall(box, { name: probe.name, args: JSON.stringify(answer) });
        const r = await box.call(session, probe.name, restored.args);
        assert.equal(r.status, "success", r.error);
      });
      assert.deepEqual(received[0], { path: "a.txt", limit: 10, inner: { a: "x" } });
    });

    test("the output is checked on the way out by the library", { timeout: 60_000 }, async () => {
      const broken = tool({
        name: "broken",
        description: "Returns the wrong shape.",
        input: v.object({}),
        output: probe.output!,
        run: () => ({ path: "a", count: "many" }),
      });
      const r = await call(broken, {});
      assert.equal(r.errorCode, "invalid_output");
      assert.equal((r.details as { path: string }).path, "count");
      assert.equal(r.output, null);
    });
  });
}

describe("zod's open objects and the MCP server", () => {
  test(
    "z.looseObject stays open: its JSON Schema and the validator keep unknown keys",
    { timeout: 60_000 },
    async () => {
      const loose = tool({
        name: "loose",
        description: "Keeps what it is given.",
        input: z.object({ open: z.looseObject({ b: z.string() }) }),
        run: ({ open }) => open,
      });
      assert.deepEqual(loose.inputSchema.properties!.open.additionalProperties, {});
      const r = await call(loose, { open: { b: "y", more: 1 } });
      assert.equal(r.status, "success", r.error);
      assert.deepEqual(r.output, { b: "y", more: 1 });
    },
  );

  test("a real MCP client lists the zod and ArkType tools with their schemas and calls them", {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-standard-"));
    const box = new ToolBox().register(zodTool, arkTool);
    const served = createMcpServer(box, { workspace: dir });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    try {
      await served.server.connect(serverSide);
      await client.connect(clientSide);
      const { tools } = await client.listTools();
      for (const t of [zodTool, arkTool]) {
        const listed = tools.find((x) => x.name === t.name)!;
        assert.deepEqual(listed.inputSchema, t.inputSchema);
        assert.deepEqual(listed.outputSchema, mcpOutputSchema(t));
        const ok = await client.callTool({
          name: t.name,
          arguments: { path: "p", inner: { a: "x" }, tags: "a,b" },
        }) as CallToolResult;
        assert.equal(ok.isError ?? false, false);
        assert.deepEqual(ok.structuredContent, { path: "p", count: 12 });
        const refused = await client.callTool({
          name: t.name,
          arguments: { path: "p", inner: { a: "x" }, x: 1 },
        }) as CallToolResult;
        assert.equal(refused.isError, true);
        assert.match(JSON.stringify(refused.content), /x: unexpected argument/);
      }
    } finally {
      await client.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("valibot's v.intersect", () => {
  // @valibot/to-json-schema writes an allOf of the members, each object closed: no value satisfied it, as each member
  // refused the other's keys, while the call itself (valibot's validation) passed; strict mode and Gemini refused it.
  test("closed objects become the one object they make; others keep an allOf a value can satisfy", {
    timeout: 60_000,
  }, async () => {
    const A = v.object({ x: v.string() });
    const merged = tool({
      name: "merged",
      description: "Both.",
      input: v.object({ a: v.intersect([A, v.object({ y: v.optional(v.number(), 1) })]) }),
      run: (args) => args,
    });
    assert.deepEqual(merged.inputSchema.properties!.a, {
      type: "object",
      properties: { x: { type: "string" }, y: { type: "number", default: 1 } },
      required: ["x"],
      additionalProperties: false,
    });
    assert.equal(ajv.validate(merged.inputSchema, { a: { x: "1", y: 2 } }), true);
    assert.equal(ajv.validate(merged.inputSchema, { a: { x: "1", q: 2 } }), false);
    assert.doesNotThrow(() => openAIChatTools([merged]));
    const clash = tool({
      name: "clash",
      description: "Both.",
      input: v.object({ a: v.intersect([A, v.object({ x: v.pipe(v.string(), v.minLength(2)) })]) }),
      run: () => "",
    });
    assert.equal(ajv.validate(clash.inputSchema, { a: { x: "12" } }), true);
    await withSession(async (session) => {
      const box = new ToolBox().register(merged, clash);
      const good = await box.call(session, "merged", { a: { x: "1" } });
      assert.deepEqual(good.output, { a: { x: "1", y: 1 } });
      const extra = await box.call(session, "clash", { a: { x: "12", q: 1 } });
      assert.match(extra.error!, /a\.q: unexpected argument/);
    });
  });
});

describe("what a tool's schema cannot be", () => {
  test("not an object schema, or not a schema at all, is refused when the tool is made", { timeout: 60_000 }, () => {
    const make = (input: unknown) => () => tool({ name: "t", description: "T.", input: input as never, run: () => "" });
    assert.throws(make(z.string()), /input must be an object schema/);
    assert.throws(make(type("string")), /input must be an object schema/);
    assert.throws(make({ type: "object", properties: {} }), /input must be an object schema/);
    assert.throws(make(z.object({ when: z.date() })), /cannot be expressed as JSON Schema/);
  });

  test("ArkType's Date, bigint, Map and undefined are refused when the tool is made, not advertised as any value", {
    timeout: 60_000,
  }, () => {
    const make = (input: unknown) => () => tool({ name: "t", description: "T.", input: input as never, run: () => "" });
    assert.throws(make(type({ when: "Date" })), /Date cannot be represented in JSON Schema/);
    assert.throws(make(type({ n: "bigint" })), /a bigint cannot be represented/);
    assert.throws(make(type({ m: "Map" })), /Map cannot be represented/);
    assert.throws(make(type({ u: "string | undefined" })), /undefined cannot be represented .*optional/);
    // What ArkType narrows past JSON Schema keeps its base type; its own validation still runs.
    assert.deepEqual(
      tool({ name: "t", description: "T.", input: type({ day: "string.date.parse" }), run: () => "" })
        .inputSchema.properties,
      { day: { type: "string" } },
    );
  });

  test("a Standard Schema without a JSON Schema converter is refused, naming why", { timeout: 60_000 }, () => {
    const bare = { "~standard": { version: 1 as const, vendor: "bare", validate: (value: unknown) => ({ value }) } };
    assert.throws(() => inputJsonSchema(bare), /bare schema has no JSON Schema converter/);
  });

  test("zod's schemas without a converter (zod/mini, zod/v3) are refused naming the zod that has one", {
    timeout: 60_000,
  }, () => {
    for (const input of [zm.object({ a: zm.string() }), z3.object({ a: z3.string() })]) {
      assert.throws(
        () => tool({ name: "t", description: "T.", input: input as never, run: () => "" }),
        (error: Error) =>
          /a zod schema has no JSON Schema converter/.test(error.message) &&
          /4\.2 on, on the schemas of `import \{ z \} from "zod"`/.test(error.message) &&
          /"zod\/mini"/.test(error.message),
      );
    }
  });

  test("an array parameter behind a $ref (a zod schema with an id) sent as a string is parsed", {
    timeout: 60_000,
  }, async () => {
    const Tags = z.array(z.string()).meta({ id: "Tags" });
    const seen: unknown[] = [];
    const tagged = tool({
      name: "tagged",
      description: "Tags.",
      input: z.object({ tags: Tags, more: Tags.optional(), maybe: Tags.nullable().optional() }),
      run: (args) => {
        seen.push(args);
        return "ok";
      },
    });
    // zod writes the three as { $ref }, { allOf: [{ $ref }] } and { anyOf: [{ $ref }, { type: "null" }] }.
    assert.match(JSON.stringify(tagged.inputSchema), /"more":\{"allOf":\[\{"\$ref"/);
    await withSession(async (session) => {
      const box = new ToolBox().register(tagged);
      const r = await box.call(session, "tagged", { tags: "a, b", more: '["c"]', maybe: "d" });
      assert.equal(r.status, "success", r.error);
    });
    assert.deepEqual(seen, [{ tags: ["a", "b"], more: ["c"], maybe: ["d"] }]);
    // A class tool's JSON Schema with $defs, the same rule.
    const schema = {
      type: "object",
      properties: { paths: { $ref: "#/$defs/Paths" } },
      required: ["paths"],
      $defs: { Paths: { type: "array", items: { type: "string" } } },
    };
    assert.deepEqual(validateWithJsonSchema(schema, { paths: "x, y" }), { ok: true, value: { paths: ["x", "y"] } });
  });

  test("an input schema that validates asynchronously is refused at call time", { timeout: 60_000 }, async () => {
    const slow = tool({
      name: "slow",
      description: "Async refinement.",
      input: z.object({ n: z.number().refine(async (n) => await Promise.resolve(n > 0)) }),
      run: () => "ran",
    });
    const r = await call(slow, { n: 1 });
    assert.equal(r.errorCode, "invalid_arguments");
    assert.match(r.error!, /asynchronously/);
  });
});

describe("formats", () => {
  test("a zod or ArkType format (email, date-time, uuid) writes nothing to the console when a call is validated", {
    timeout: 60_000,
  }, async (t) => {
    // Ajv warned `unknown format "email" ignored in schema at path ...` through console.warn on every tool it
    // compiled: output in the application's console for nothing (the library checks the format itself).
    const warned: unknown[][] = [];
    t.mock.method(console, "warn", (...args: unknown[]) => void warned.push(args));
    t.mock.method(console, "log", (...args: unknown[]) => void warned.push(args));
    const zodFormats = tool({
      name: "zod_formats",
      description: "Formats.",
      input: z.object({ to: z.email(), at: z.iso.datetime(), id: z.uuid() }),
      run: ({ to }) => to,
    });
    const arkFormats = tool({
      name: "ark_formats",
      description: "Formats.",
      input: type({ to: "string.email", id: "string.uuid" }),
      run: ({ to }) => to,
    });
    const ok = { to: "a@b.co", at: "2024-01-01T00:00:00Z", id: "123e4567-e89b-12d3-a456-426614174000" };
    assert.equal((await call(zodFormats, ok)).output, "a@b.co");
    assert.equal((await call(arkFormats, { to: ok.to, id: ok.id })).output, "a@b.co");
    // The library's own check still refuses a bad value.
    assert.equal((await call(zodFormats, { ...ok, to: "nobody" })).errorCode, "invalid_arguments");
    assert.equal((await call(arkFormats, { to: "nobody", id: ok.id })).errorCode, "invalid_arguments");
    assert.deepEqual(warned, []);
  });
});
