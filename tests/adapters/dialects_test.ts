// The provider dialects through `toolbox.schemas(...)`: exact shapes, the
// rules of each format, and build-time failures naming tool, path and reason.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { z } from "zod";
import { type } from "arktype";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import "../../adapters/dialects.ts";
import { type AnyTool, type ObjectInputSchema, tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import type { JsonSchema } from "../../core/schema.ts";
import { openFence } from "../../policy/fence.ts";
import { SchemaDialectError } from "../../adapters/dialect_error.ts";
import type { GeminiSchema, GeminiTool } from "../../adapters/gemini.ts";
import type { OpenAIChatTool, OpenAIResponsesTool } from "../../adapters/openai.ts";
import type { AnthropicTool } from "../../adapters/anthropic.ts";
import type { McpToolSpec } from "../../adapters/mcp/dialect.ts";

const fence = openFence();

const readFile = tool({
  name: "read_file",
  description: "Read a file.",
  input: v.object({
    path: v.pipe(v.string(), v.description("Relative path")),
    offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),
    encoding: v.optional(v.picklist(["utf-8", "latin1"])),
  }),
  readOnly: true,
  permissions: ["read"],
  run: () => "",
});

const runScript = tool({
  name: "run_script",
  description: "Run a script.",
  input: v.object({
    script: v.string(),
    env: v.optional(v.record(v.string(), v.string())),
    target: v.nullable(v.union([v.string(), v.array(v.string())])),
  }),
  destructive: true,
  permissions: ["run", "env"],
  run: () => "",
});

const noArgs = tool({ name: "now", description: "The time.", input: v.object({}), readOnly: true, run: () => 0 });

function classTool(name: string, inputSchema: JsonSchema): AnyTool {
  return { name, description: `${name} tool`, inputSchema, execute: () => null };
}

const box = new ToolBox().register(readFile, runScript, noArgs);

function walk(schema: unknown, visit: (node: Record<string, unknown>, path: string) => void, path = ""): void {
  if (Array.isArray(schema)) schema.forEach((s, i) => walk(s, visit, `${path}/${i}`));
  else if (typeof schema === "object" && schema !== null) {
    visit(schema as Record<string, unknown>, path);
    for (const [k, s] of Object.entries(schema)) if (k !== "enum" && k !== "default") walk(s, visit, `${path}/${k}`);
  }
}

function dialectError(fn: () => unknown, dialect: string, toolName: string, path: string, reason: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof SchemaDialectError, String(error));
    assert.deepEqual([error.dialect, error.toolName, error.schemaPath], [dialect, toolName, path]);
    assert.match(error.reason, reason);
    return true;
  });
}

describe("openai-chat and openai-responses", () => {
  test("function tools in strict mode, in each API's shape", { timeout: 60_000 }, () => {
    const chat = box.schemas("openai-chat", { fence }) as OpenAIChatTool[];
    assert.deepEqual(chat.map((t) => [t.type, t.function.name, t.function.strict]), [
      ["function", "read_file", true],
      ["function", "run_script", true],
      ["function", "now", true],
    ]);
    assert.deepEqual(chat[0].function.parameters.required, ["path", "offset", "encoding"]);
    assert.deepEqual(chat[2].function.parameters, {
      type: "object",
      properties: {},
      required: [],
      additionalProperties: false,
    });
    const responses = box.schemas("openai-responses", { fence }) as OpenAIResponsesTool[];
    assert.deepEqual(Object.keys(responses[0]).sort(), ["description", "name", "parameters", "strict", "type"]);
    assert.deepEqual(responses[0].parameters, chat[0].function.parameters);
  });

  test("strict: false sends the JSON Schema as it is; auto falls back per tool", { timeout: 60_000 }, () => {
    const plain = box.schemas("openai-chat", { fence, strict: false }) as OpenAIChatTool[];
    assert.deepEqual(plain[0].function.parameters, readFile.inputSchema);
    assert.equal(plain[0].function.strict, false);
    const loose = classTool("loose", { type: "object", properties: { value: {} }, required: ["value"] });
    const mixed = new ToolBox().register(readFile, loose);
    dialectError(
      () => mixed.schemas("openai-chat", { fence }),
      "openai-chat",
      "loose",
      "/properties/value",
      /any type/,
    );
    const auto = mixed.schemas("openai-responses", { fence, strict: "auto" }) as OpenAIResponsesTool[];
    assert.deepEqual(auto.map((t) => t.strict), [true, false]);
  });
});

describe("a record keyed by an enum", () => {
  test("gemini's {key, value} entries name the keys, as openai strict mode's do", { timeout: 60_000 }, () => {
    const input = z.object({ limits: z.record(z.enum(["cpu", "memory"]), z.number()) });
    const box = new ToolBox().register(tool({ name: "limits", description: "T.", input, run: () => "" }));
    const [entry] = box.schemas("gemini") as GeminiTool[];
    const limits = entry.functionDeclarations[0].parameters!.properties!.limits;
    assert.deepEqual(limits.items!.properties!.key, { type: "STRING", format: "enum", enum: ["cpu", "memory"] });
    const [chat] = box.schemas("openai-chat") as OpenAIChatTool[];
    const strict = chat.function.parameters as JsonSchema;
    assert.deepEqual((strict.properties!.limits.items as JsonSchema).properties!.key, {
      type: "string",
      enum: ["cpu", "memory"],
    });
  });
});

describe("open objects in openai strict mode and gemini", () => {
  test("zod's looseObject and catchall(unknown) and ArkType's [string]: unknown render as valibot's looseObject does", {
    timeout: 60_000,
  }, () => {
    // zod and ArkType write an open object's extra keys as `additionalProperties: {}`, which accepts any value as
    // `true` or no keyword does (valibot's v.looseObject): closed for the model like valibot's, not refused as an
    // object with "free extra properties" of a schema.
    const render = (name: string, input: ObjectInputSchema) => {
      const box = new ToolBox().register(tool({ name, description: "T.", input, run: () => "" }));
      const [chat] = box.schemas("openai-chat") as OpenAIChatTool[];
      const [entry] = box.schemas("gemini") as GeminiTool[];
      return { strict: chat.function.parameters, gemini: entry.functionDeclarations[0].parameters };
    };
    const expected = render("v_open", v.looseObject({ a: v.string(), o: v.looseObject({ b: v.number() }) }));
    assert.equal((expected.strict.properties!.o as JsonSchema).additionalProperties, false);
    for (
      const [name, input] of [
        ["z_loose", z.looseObject({ a: z.string(), o: z.looseObject({ b: z.number() }) })],
        ["z_catchall", z.object({ a: z.string(), o: z.object({ b: z.number() }).catchall(z.unknown()) })],
        ["a_index", type({ a: "string", o: { b: "number", "[string]": "unknown" } })],
      ] as const
    ) {
      assert.deepEqual(render(name, input), expected, name);
    }
    // Extra keys of a given type are still refused: strict mode and Gemini cannot say "these, and any others of X".
    dialectError(
      () => render("z_typed", z.object({ o: z.object({ b: z.number() }).catchall(z.string()) })),
      "openai-chat",
      "z_typed",
      "/properties/o/additionalProperties",
      /free extra properties/,
    );
  });
});

describe("tuples in openai strict mode and gemini", () => {
  test("zod's and ArkType's draft-07 tuples are refused as tuples, not by a keyword the user never wrote", {
    timeout: 60_000,
  }, () => {
    for (
      const [name, input] of [["z_pair", z.object({ t: z.tuple([z.string(), z.number()]) })], [
        "a_pair",
        type({ t: ["string", "number"] }),
      ]] as const
    ) {
      const box = new ToolBox().register(tool({ name, description: "T.", input, run: () => "" }));
      dialectError(
        () => box.schemas("openai-chat"),
        "openai-chat",
        name,
        "/properties/t/items",
        /cannot express tuples/,
      );
      dialectError(() => box.schemas("gemini"), "gemini", name, "/properties/t/items", /cannot express tuples/);
    }
  });
});

describe("anthropic", () => {
  test("input_schema, no root combinators", { timeout: 60_000 }, () => {
    const tools = box.schemas("anthropic", { fence }) as AnthropicTool[];
    assert.deepEqual(tools[0], { name: "read_file", description: "Read a file.", input_schema: readFile.inputSchema });
    const union = classTool("either", { anyOf: [{ type: "object" }, { type: "object" }] });
    dialectError(() => new ToolBox().register(union).schemas("anthropic"), "anthropic", "either", "/anyOf", /root/);
    const scalar = classTool("scalar", { type: "string" });
    dialectError(() => new ToolBox().register(scalar).schemas("anthropic"), "anthropic", "scalar", "/type", /object/);
  });
});

describe("gemini", () => {
  test("a tool name that does not start with a letter or an underscore is refused, as Gemini would", {
    timeout: 60_000,
  }, () => {
    const named = (name: string) => tool({ name, description: "T.", input: v.object({}), run: () => "" });
    for (const name of ["2fa_check", "-x"]) {
      dialectError(
        () => new ToolBox().register(named(name)).schemas("gemini"),
        "gemini",
        name,
        "",
        /starts with a letter/,
      );
    }
    const [entry] = new ToolBox().register(named("_x"), named("a-1")).schemas("gemini") as GeminiTool[];
    assert.deepEqual(entry.functionDeclarations.map((d) => d.name), ["_x", "a-1"]);
  });

  test("one tools entry with every declaration, the OpenAPI subset only", { timeout: 60_000 }, () => {
    const [entry, ...rest] = box.schemas("gemini", { fence }) as GeminiTool[];
    assert.equal(rest.length, 0);
    const [read, run, now] = entry.functionDeclarations;
    assert.deepEqual(now, { name: "now", description: "The time." }, "no parameters for a tool without any");
    assert.deepEqual(read.parameters, {
      type: "OBJECT",
      properties: {
        path: { type: "STRING", description: "Relative path" },
        offset: { type: "INTEGER", minimum: 0, default: 0 },
        encoding: { type: "STRING", format: "enum", enum: ["utf-8", "latin1"] },
      },
      required: ["path"],
    });
    assert.deepEqual(run.parameters!.properties!.target, {
      anyOf: [{ type: "STRING" }, { type: "ARRAY", items: { type: "STRING" } }],
      nullable: true,
    });
    assert.equal(run.parameters!.properties!.env.type, "ARRAY", "a record becomes a list of entries");
    walk(entry, (node, path) => {
      for (const banned of ["additionalProperties", "$ref", "$defs", "oneOf", "allOf", "const", "propertyNames"]) {
        assert.ok(!(banned in node), `${banned} at ${path}`);
      }
      if ("type" in node) {
        assert.equal(typeof node.type, "string", `one type at ${path}`);
        assert.match(node.type as string, /^(STRING|NUMBER|INTEGER|BOOLEAN|ARRAY|OBJECT)$/);
      }
    });
  });

  test("local references are inlined; recursion and non-string enums fail with the path", { timeout: 60_000 }, () => {
    const withRef = classTool("ref", {
      type: "object",
      properties: { point: { $ref: "#/$defs/point" } },
      $defs: { point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
    });
    const [entry] = new ToolBox().register(withRef).schemas("gemini") as GeminiTool[];
    assert.deepEqual(entry.functionDeclarations[0].parameters!.properties!.point as GeminiSchema, {
      type: "OBJECT",
      properties: { x: { type: "NUMBER" } },
      required: ["x"],
    });
    const recursive = classTool("tree", {
      type: "object",
      properties: { node: { $ref: "#/$defs/node" } },
      $defs: { node: { type: "object", properties: { child: { $ref: "#/$defs/node" } } } },
    });
    dialectError(
      () => new ToolBox().register(recursive).schemas("gemini"),
      "gemini",
      "tree",
      "/properties/node/properties/child",
      /recursive/,
    );
    const mixed = tool({
      name: "level",
      description: "x",
      input: v.object({ n: v.picklist([1, "two"]) }),
      run: () => 0,
    });
    dialectError(
      () => new ToolBox().register(mixed).schemas("gemini"),
      "gemini",
      "level",
      "/properties/n/enum",
      /strings, or else values of one other type/,
    );
  });

  test("an enum of numbers or booleans keeps its type, its values in the description", { timeout: 60_000 }, () => {
    const levels = tool({
      name: "level",
      description: "x",
      input: v.object({
        n: v.pipe(v.picklist([1, 2, 3]), v.description("How deep")),
        ratio: v.picklist([0.5, 1]),
        on: v.literal(true),
      }),
      run: () => 0,
    });
    const [entry] = new ToolBox().register(levels).schemas("gemini") as GeminiTool[];
    assert.deepEqual(entry.functionDeclarations[0].parameters!.properties, {
      n: { type: "NUMBER", description: "How deep (enum: [1,2,3])" },
      ratio: { type: "NUMBER", description: "(enum: [0.5,1])" },
      on: { type: "BOOLEAN", description: "(enum: [true])" },
    });
  });
});

describe("mcp", () => {
  test("inputSchema and annotations from the metadata", { timeout: 60_000 }, () => {
    const tools = box.schemas("mcp", { fence }) as McpToolSpec[];
    assert.deepEqual(tools[0], {
      name: "read_file",
      title: "Read file",
      description: "Read a file.",
      inputSchema: readFile.inputSchema,
      annotations: {
        title: "Read file",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    });
    assert.deepEqual(tools[1].annotations, {
      title: "Run script",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    });
  });
});

test("schemas() fails when a tool cannot be expressed, before any request", { timeout: 60_000 }, () => {
  const anything = classTool("anything", { type: "object", properties: { data: { type: "object" } } });
  const mixed = new ToolBox().register(readFile, anything);
  dialectError(
    () => mixed.schemas("openai-responses"),
    "openai-responses",
    "anything",
    "/properties/data",
    /no declared properties/,
  );
  dialectError(() => mixed.schemas("gemini"), "gemini", "anything", "/properties/data", /no declared properties/);
  assert.equal(mixed.schemas("anthropic").length, 2, "Anthropic takes any JSON Schema below the root");
});

describe("tuples for Anthropic and MCP: JSON Schema 2020-12", () => {
  test("a tuple is written as prefixItems: the schema is valid 2020-12 and takes the same values", {
    timeout: 60_000,
  }, () => {
    // Before: the draft-07 tuple (`items` as a list) went out as it was; Anthropic's API refuses such an input_schema
    // ("tools.N.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"), failing the
    // whole request, and MCP 2025-11-25 reads a schema without $schema as 2020-12.
    const shapes = {
      pair: v.tuple([v.number(), v.string()]),
      strict: v.strictTuple([v.boolean()]),
      rest: v.tupleWithRest([v.string()], v.number()),
      nested: v.optional(v.array(v.object({ at: v.tuple([v.number(), v.number()]) }))),
    };
    const tuples = new ToolBox().register(
      tool({ name: "vt", description: "Tuples.", input: v.object(shapes), readOnly: true, run: () => "" }),
      tool({
        name: "zt",
        description: "Tuples.",
        input: z.object({ pair: z.tuple([z.number(), z.string()]), rest: z.tuple([z.string()], z.number()) }),
        readOnly: true,
        run: () => "",
      }),
    );
    const draft07 = new Ajv({ strict: false });
    const draft2020 = new Ajv2020({ strict: false });
    const samples: Record<string, unknown>[] = [
      { pair: [1, "a"], strict: [true], rest: ["a", 1, 2], nested: [{ at: [1, 2] }] },
      { pair: [1, "a", "extra"], strict: [true], rest: ["a"] },
      { pair: ["a", 1], strict: [true], rest: ["a"] },
      { pair: [1, "a"], strict: [true, false], rest: ["a", "b"] },
      { pair: [1, "a"], strict: [true], rest: ["a"], nested: [{ at: [1, "x"] }] },
    ];
    for (const t of tuples.list({ fence })) {
      const rendered = [
        [
          "anthropic",
          (tuples.schemas("anthropic", { fence }) as AnthropicTool[]).find((r) => r.name === t.name)!
            .input_schema,
        ],
        ["mcp", (tuples.schemas("mcp", { fence }) as McpToolSpec[]).find((r) => r.name === t.name)!.inputSchema],
      ] as const;
      for (const [dialect, schema] of rendered) {
        assert.equal(
          draft2020.validateSchema(schema),
          true,
          `${dialect} ${t.name}: ${JSON.stringify(draft2020.errors)}`,
        );
        assert.doesNotMatch(JSON.stringify(schema), /"items":\[|additionalItems/, `${dialect} ${t.name}`);
        const before = draft07.compile(t.inputSchema);
        const after = draft2020.compile(schema);
        for (const sample of samples) {
          assert.equal(after(sample), before(sample), `${dialect} ${t.name} ${JSON.stringify(sample)}`);
        }
      }
      // The tool's own schema (what validates the calls) is left as it was.
      assert.match(JSON.stringify(t.inputSchema), /"items":\[/);
    }
  });
  test(
    "draft-07 dependencies become dependentRequired and dependentSchemas, holding the same",
    { timeout: 30_000 },
    () => {
      // A 2020-12 validator ignores `dependencies`: sent as it was, a name that needs another held nothing.
      const input: JsonSchema = {
        type: "object",
        properties: { card: { type: "string" }, billing: { type: "string" }, nested: { type: "object" } },
        dependencies: {
          card: ["billing"],
          nested: { properties: { nested: { type: "object", dependencies: { a: ["b"] } } } },
        },
      };
      const deps = new ToolBox().register(classTool("deps", input));
      const draft07 = new Ajv({ strict: false });
      const draft2020 = new Ajv2020({ strict: false });
      const samples: Record<string, unknown>[] = [
        { card: "x", billing: "y" },
        { card: "x" },
        { nested: { a: 1, b: 2 } },
        { nested: { a: 1 } },
        {},
      ];
      const before = draft07.compile(input);
      for (
        const [dialect, schema] of [
          ["anthropic", (deps.schemas("anthropic", { fence }) as AnthropicTool[])[0].input_schema],
          ["mcp", (deps.schemas("mcp", { fence }) as McpToolSpec[])[0].inputSchema],
        ] as const
      ) {
        assert.doesNotMatch(JSON.stringify(schema), /"dependencies"/, dialect);
        const after = draft2020.compile(schema);
        for (const sample of samples) {
          assert.equal(after(sample), before(sample), `${dialect} ${JSON.stringify(sample)}`);
        }
      }
      assert.equal(before({ card: "x" }), false);
    },
  );
});
