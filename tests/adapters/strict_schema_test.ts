// OpenAI strict mode: the schema rules (closed objects, all properties
// required, optional as nullable) checked with a real JSON Schema validator,
// and the lossless round trip through the real pipeline.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { z } from "zod";
import { Ajv } from "ajv";
import { type AnyTool, tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { type JsonSchema, outputJsonSchema } from "../../core/schema.ts";
import { fromStrictArguments, toStrictSchema } from "../../adapters/strict_schema.ts";
import { SchemaDialectError } from "../../adapters/dialect_error.ts";
import { restoreCall } from "../../adapters/_calls.ts";
import { openAIChatTools, runOpenAIChatToolCalls } from "../../adapters/openai.ts";
import { type GeminiSchema, geminiTools, runGeminiToolCalls } from "../../adapters/gemini.ts";
import { withSession } from "../core/_helpers.ts";

const ajv = new Ajv({ strict: false, allErrors: true });

const input = v.object({
  path: v.pipe(v.string(), v.description("File to read")),
  limit: v.optional(v.pipe(v.number(), v.integer()), 100),
  label: v.optional(v.string()),
  note: v.nullable(v.string()),
  mode: v.optional(v.nullable(v.picklist(["fast", "slow"])), "fast"),
  options: v.optional(v.object({
    depth: v.optional(v.number(), 2),
    follow: v.optional(v.boolean()),
    tags: v.optional(v.array(v.string())),
  })),
  items: v.array(v.object({ name: v.string(), weight: v.optional(v.number(), 1) })),
  env: v.optional(v.record(v.string(), v.string())),
});

const received: unknown[] = [];
const probe = tool({
  name: "probe",
  description: "Records what it receives.",
  input,
  run: (args) => {
    received.push(args);
    return "ok";
  },
});

const strict = toStrictSchema(probe.inputSchema, "probe");

/** Every object node of a schema, with its path. */
function objects(schema: JsonSchema, path = ""): [string, JsonSchema][] {
  const found: [string, JsonSchema][] = [];
  if (schema.properties) {
    found.push([path, schema]);
    for (const [k, s] of Object.entries(schema.properties)) found.push(...objects(s, `${path}/${k}`));
  }
  if (schema.items && !Array.isArray(schema.items)) found.push(...objects(schema.items, `${path}[]`));
  for (const m of schema.anyOf ?? []) found.push(...objects(m, path));
  return found;
}

describe("toStrictSchema", () => {
  test("closes every object and requires every property", { timeout: 60_000 }, () => {
    const nodes = objects(strict);
    assert.ok(nodes.length >= 4, "root, options, items[] and the env pairs are objects");
    for (const [path, node] of nodes) {
      assert.equal(node.additionalProperties, false, `${path || "root"} is closed`);
      assert.deepEqual(node.required, Object.keys(node.properties!), `${path || "root"} requires everything`);
    }
  });

  test("turns optional properties into nullable ones and keeps required ones as they are", { timeout: 60_000 }, () => {
    const p = strict.properties!;
    assert.deepEqual(p.path, { type: "string", description: "File to read" });
    assert.deepEqual(p.limit.type, ["integer", "null"]);
    assert.match(p.limit.description!, /default: 100; null for the default/);
    assert.deepEqual(p.label.type, ["string", "null"]);
    // Already nullable: not wrapped again, and null stays a value.
    assert.deepEqual(p.note, { anyOf: [{ type: "string" }, { type: "null" }] });
    assert.equal(p.options.type!.includes("null"), true);
    assert.equal(p.env.type!.includes("array"), true, "a record is sent as a list of entries");
  });

  test("is a valid schema that accepts what a model sends and refuses unknown keys", { timeout: 60_000 }, () => {
    const validate = ajv.compile(strict);
    const sent = {
      path: "a.txt",
      limit: null,
      label: null,
      note: null,
      mode: null,
      options: { depth: null, follow: true, tags: null },
      items: [{ name: "x", weight: null }],
      env: [{ key: "CI", value: "1" }],
    };
    assert.equal(validate(sent), true, JSON.stringify(validate.errors));
    assert.equal(validate({ ...sent, extra: 1 }), false);
    const { label: _label, ...missing } = sent;
    assert.equal(validate(missing), false, "every property is required");
  });

  test("fails at build time with the tool, the path and the reason", { timeout: 60_000 }, () => {
    const cases: [v.ObjectSchema<v.ObjectEntries, undefined>, string, RegExp][] = [
      [v.object({ anything: v.unknown() }), "/properties/anything", /any type/],
      [v.object({ pair: v.tuple([v.string(), v.number()]) }), "/properties/pair/items", /tuples/],
      // An intersection of objects whose properties clash stays an allOf (one that does not is the object it makes).
      [
        v.object({ both: v.intersect([v.object({ a: v.string() }), v.object({ a: v.number() })]) }),
        "/properties/both/allOf",
        /allOf/,
      ],
    ];
    for (const [schema, path, reason] of cases) {
      const t = tool({ name: "bad", description: "x", input: schema, run: () => 0 });
      assert.throws(() => toStrictSchema(t.inputSchema, t.name), (error: unknown) => {
        assert.ok(error instanceof SchemaDialectError);
        assert.equal(error.toolName, "bad");
        assert.equal(error.dialect, "openai-chat");
        assert.equal(error.schemaPath, path);
        assert.match(error.reason, reason);
        assert.match(error.message, /Tool "bad" cannot be expressed in the openai-chat dialect: at \//);
        return true;
      });
    }
  });

  test("a map at the root is refused: OpenAI takes parameters only of type object, and a map is sent as a list", {
    timeout: 60_000,
  }, () => {
    // zod takes a record as a tool's whole input; strict mode wrote its {key, value} list, `type: "array"`, as the
    // parameters, which OpenAI refuses with the whole request.
    for (const input of [z.record(z.string(), z.string()), z.record(z.enum(["a", "b"]), z.number())]) {
      const t = tool({ name: "vars", description: "x", input, run: () => 0 });
      assert.throws(() => toStrictSchema(t.inputSchema, t.name), (error: unknown) => {
        assert.ok(error instanceof SchemaDialectError);
        assert.equal(error.schemaPath, "");
        assert.match(error.reason, /map \(record\).*wrap the map in an object property/);
        return true;
      });
    }
    // Every schema strict mode does write has an object at its root.
    for (
      const input of [
        v.object({ env: v.record(v.string(), v.string()) }),
        z.object({ m: z.record(z.string(), z.number()) }),
      ]
    ) {
      const t = tool({ name: "vars", description: "x", input, run: () => 0 });
      assert.equal(toStrictSchema(t.inputSchema, t.name).type, "object");
    }
  });
});

describe("string encodings", () => {
  test("zod's z.base64() (contentEncoding) is a note in strict mode and Gemini, not a tool refused", {
    timeout: 60_000,
  }, () => {
    // Strict mode and Gemini refused the tool outright ("does not support the keyword contentEncoding"), so a zod
    // tool taking base64 data could not be offered to OpenAI or Gemini at all.
    const upload = tool({
      name: "upload",
      description: "Upload.",
      input: z.object({ data: z.base64(), name: z.string() }),
      run: () => 0,
    });
    const strictUpload = toStrictSchema(upload.inputSchema, "upload");
    const data = (strictUpload.properties as Record<string, JsonSchema>).data;
    assert.equal(data.contentEncoding, undefined);
    assert.match(String(data.description), /contentEncoding: "base64"/);
    assert.equal(ajv.validate(strictUpload, { data: "aGk=", name: "x" }), true);
    const [gemini] = geminiTools([upload]);
    assert.match(
      String(gemini.functionDeclarations[0].parameters?.properties?.data.description),
      /contentEncoding: "base64"/,
    );
  });
});

describe("fromStrictArguments", () => {
  test("maps nulls of optional fields to absent at every depth and pairs back to records", { timeout: 60_000 }, () => {
    const restored = fromStrictArguments(probe.inputSchema, {
      path: "a.txt",
      limit: null,
      label: null,
      note: null,
      mode: null,
      options: { depth: null, follow: null, tags: ["x"] },
      items: [{ name: "x", weight: null }, { name: "y", weight: 3 }],
      env: [{ key: "CI", value: "1" }, { key: "LANG", value: "C" }],
    });
    assert.deepEqual(restored, {
      path: "a.txt",
      note: null,
      // `mode` accepts null itself, so null is kept as the value, not dropped.
      mode: null,
      options: { tags: ["x"] },
      items: [{ name: "x" }, { name: "y", weight: 3 }],
      env: { CI: "1", LANG: "C" },
    });
  });

  test("a union of arrays: the member whose items the values fit, not the first array member", {
    timeout: 60_000,
  }, async () => {
    // A list of names or a list of entries: strict mode sends an entry's optional `tag` as null, which only the
    // second member's items take; mapping it by the first (strings) left the null and refused a valid answer.
    const targets = tool({
      name: "targets",
      description: "Targets.",
      input: v.object({
        target: v.union([v.array(v.string()), v.array(v.object({ name: v.string(), tag: v.optional(v.string()) }))]),
      }),
      run: (args) => args,
    });
    const strictTargets = toStrictSchema(targets.inputSchema, "targets");
    const answer = { target: [{ name: "a", tag: null }, { name: "b", tag: "t" }] };
    assert.equal(ajv.validate(strictTargets, answer), true);
    assert.deepEqual(fromStrictArguments(targets.inputSchema, answer), {
      target: [{ name: "a" }, { name: "b", tag: "t" }],
    });
    assert.deepEqual(fromStrictArguments(targets.inputSchema, { target: ["a", "b"] }), { target: ["a", "b"] });
    const box = new ToolBox().register(targets);
    await withSession(async (session) => {
      const result = await box.call(session, "targets", restoreCall(box, { name: "targets", args: answer }).args);
      assert.equal(result.status, "success", result.error);
      assert.deepEqual(result.output, { target: [{ name: "a" }, { name: "b", tag: "t" }] });
    });
  });

  test("a map's key sent twice is refused, not one of its values dropped", { timeout: 60_000 }, async () => {
    // The {key, value} list strict mode (and Gemini) sends for a map can name a key twice; Object.fromEntries kept
    // the last value, and the call succeeded with the first one gone.
    const box = new ToolBox().register(probe);
    const twice = [{ key: "CI", value: "1" }, { key: "LANG", value: "C" }, { key: "CI", value: "0" }];
    const answer = {
      path: "a.txt",
      limit: null,
      label: null,
      note: null,
      mode: null,
      options: null,
      items: [],
      env: twice,
    };
    assert.equal(ajv.validate(strict, answer), true);
    assert.deepEqual((fromStrictArguments(probe.inputSchema, answer) as { env: unknown }).env, twice);
    await withSession(async (session) => {
      received.length = 0;
      const { results } = await runOpenAIChatToolCalls(box, session, {
        choices: [{
          message: {
            tool_calls: [{
              id: "c1",
              type: "function",
              function: { name: "probe", arguments: JSON.stringify(answer) },
            }],
          },
        }],
      });
      assert.equal(results[0].status, "error");
      assert.equal(results[0].errorCode, "invalid_arguments");
      assert.match(results[0].error!, /env/);
      assert.deepEqual(received, []);
    });
  });

  test("a `__proto__` the model sends stays an argument under Node's accessor, and is refused as one", {
    timeout: 60_000,
  }, async () => {
    // On Node, `out[key] = value` with the key `__proto__` set the restored object's prototype: the unknown-argument
    // check saw no such key and valibot read `offset` through the prototype, so a call the pipeline refuses when
    // made directly ran with the smuggled value when it came through the OpenAI or Gemini dialects.
    const ran: unknown[] = [];
    const read = tool({
      name: "read",
      description: "Read.",
      input: v.object({ path: v.string(), offset: v.optional(v.number(), 0) }),
      run: (args) => void ran.push(args),
    });
    const box = new ToolBox().register(read);
    const sent = '{"path":"a.txt","__proto__":{"offset":7}}';
    await withProtoAccessor(async () => {
      const restored = fromStrictArguments(read.inputSchema, JSON.parse(sent)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(restored), ["path", "__proto__"]);
      assert.equal(Object.getPrototypeOf(restored), Object.prototype);
      await withSession(async (session) => {
        const { results } = await runOpenAIChatToolCalls(box, session, {
          choices: [{
            message: { tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: sent } }] },
          }],
        });
        assert.equal(results[0].status, "error");
        assert.match(results[0].error!, /__proto__: unexpected argument/);
      });
    });
    assert.deepEqual(ran, []);
  });

  test("leaves what it does not recognise for validation to judge", { timeout: 60_000 }, () => {
    assert.deepEqual(fromStrictArguments(probe.inputSchema, { path: null, extra: null }), { path: null, extra: null });
    assert.equal(fromStrictArguments(probe.inputSchema, "text"), "text");
  });

  test("round trip through the pipeline: the tool sees what it would have seen without strict mode", {
    timeout: 60_000,
  }, async () => {
    const box = new ToolBox().register(probe);
    await withSession(async (session) => {
      received.length = 0;
      const sent = JSON.stringify({
        path: "a.txt",
        limit: null,
        label: "l",
        note: null,
        mode: "slow",
        options: { depth: null, follow: null, tags: null },
        items: [{ name: "x", weight: null }],
        env: [{ key: "CI", value: "1" }],
      });
      assert.equal(ajv.validate(strict, JSON.parse(sent)), true);
      const result = await box.call(session, "probe", restoreCall(box, { name: "probe", args: sent }).args);
      assert.equal(result.status, "success", result.error);
      const direct = await box.call(session, "probe", {
        path: "a.txt",
        label: "l",
        note: null,
        mode: "slow",
        options: {},
        items: [{ name: "x" }],
        env: { CI: "1" },
      });
      assert.equal(direct.status, "success", direct.error);
      assert.deepEqual(received[0], received[1]);
      assert.deepEqual(received[0], {
        path: "a.txt",
        limit: 100,
        label: "l",
        note: null,
        mode: "slow",
        options: { depth: 2 },
        items: [{ name: "x", weight: 1 }],
        env: { CI: "1" },
      });
    });
  });

  test("an invalid strict answer still fails validation with the path", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register(probe);
    await withSession(async (session) => {
      const args = restoreCall(box, { name: "probe", args: '{"path":"a","note":null,"items":[{"name":3}]}' }).args;
      const result = await box.call(session, "probe", args);
      assert.equal(result.errorCode, "invalid_arguments");
      assert.match(result.error!, /items\[0\]\.name: expected string/);
    });
  });
});

// zod writes an optional, described or defaulted schema that has an id (`.meta({ id })`) or is recursive as
// `{ allOf: [{ $ref }], description }`, the draft-07 way to give a `$ref` siblings. Strict mode and Gemini take no
// allOf, and strict mode refuses a `$ref` with siblings ("$ref cannot have keywords {'description'}").
describe("zod's one-member allOf around a $ref", () => {
  const Address = z.object({ street: z.string(), zip: z.string().optional() }).meta({ id: "Address" });
  const Tree = z.object({
    name: z.string(),
    get sub() {
      return Tree.optional();
    },
  });
  const ship = tool({
    name: "ship",
    description: "Ship a parcel.",
    input: z.object({ home: Address.describe("Where it goes"), work: Address.optional(), tree: Tree.optional() }),
    run: (args) => JSON.stringify(args),
  });

  // Every node of a strict schema: no allOf, a $ref alone, every object closed with all its properties required.
  function assertStrict(node: unknown, path: string): void {
    if (typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) return node.forEach((n, i) => assertStrict(n, `${path}/${i}`));
    const s = node as Record<string, unknown>;
    assert.equal("allOf" in s, false, `${path}: allOf`);
    if ("$ref" in s) assert.deepEqual(Object.keys(s), ["$ref"], `${path}: $ref with siblings`);
    if (s.properties) {
      assert.equal(s.additionalProperties, false, `${path}: open object`);
      assert.deepEqual(s.required, Object.keys(s.properties as object), `${path}: optional property`);
    }
    for (const [key, value] of Object.entries(s)) assertStrict(value, `${path}/${key}`);
  }

  test("strict mode and Gemini render it as the schema it wraps", { timeout: 60_000 }, () => {
    assert.match(JSON.stringify(ship.inputSchema), /"allOf":\[\{"\$ref"/);
    const strict = toStrictSchema(ship.inputSchema, "ship");
    assertStrict(strict, "");
    assert.equal((strict.properties!.home as JsonSchema).description, "Where it goes");
    // Gemini inlines references, so a recursive one stays refused; the others are the objects they wrap.
    const flat = tool({
      name: "ship_flat",
      description: "Ship a parcel.",
      input: z.object({ home: Address.describe("Where it goes"), work: Address.optional() }),
      run: () => "",
    });
    const gemini = JSON.stringify(geminiTools([flat]));
    assert.doesNotMatch(gemini, /allOf|\$ref/);
    assert.match(gemini, /"home":\{"type":"OBJECT","properties":\{"street"/);
  });

  test("a strict answer's nulls inside it are mapped back, and the call runs", { timeout: 60_000 }, async () => {
    const strict = toStrictSchema(ship.inputSchema, "ship");
    const answer = {
      home: { street: "a", zip: null },
      work: { street: "b", zip: null },
      tree: { name: "t", sub: { name: "u", sub: null } },
    };
    assert.equal(ajv.validate(strict, answer), true, JSON.stringify(ajv.errors));
    const box = new ToolBox().register(ship);
    await withSession(async (session) => {
      const { results } = await runOpenAIChatToolCalls(box, session, {
        tool_calls: [{ id: "c1", type: "function", function: { name: "ship", arguments: JSON.stringify(answer) } }],
      });
      assert.equal(results[0].status, "success", results[0].error);
      assert.deepEqual(JSON.parse(results[0].output as string), {
        home: { street: "a" },
        work: { street: "b" },
        tree: { name: "t", sub: { name: "u" } },
      });
    });
  });

  test("a $ref with a description is written in place, a recursive one stays a bare $ref", { timeout: 60_000 }, () => {
    const strict = toStrictSchema({
      type: "object",
      properties: { a: { $ref: "#/$defs/A", description: "the a" } },
      required: ["a"],
      $defs: {
        A: {
          type: "object",
          properties: { x: { type: "string" }, next: { $ref: "#/$defs/A", description: "the next" } },
          required: ["x"],
        },
      },
    }, "linked");
    assertStrict(strict, "");
    assert.equal((strict.properties!.a as JsonSchema).description, "the a");
    // Inside the written-out A, the optional recursive next stays a $ref, its description before the null note.
    const next = (strict.properties!.a as JsonSchema).properties!.next as JsonSchema;
    assert.deepEqual(next, {
      anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }],
      description: "the next (null when not needed)",
    });
    assert.equal(ajv.validate(strict, { a: { x: "1", next: { x: "2", next: null } } }), true);
    assert.equal(ajv.validate(strict, { a: { x: "1", next: { x: 2, next: null } } }), false);
  });
});

/**
 * Runs `body` with Node's `Object.prototype.__proto__` accessor (Deno's stands in for it and only reports an
 * assignment), then puts back whatever was there.
 */
async function withProtoAccessor(body: () => Promise<void>): Promise<void> {
  const had = Object.getOwnPropertyDescriptor(Object.prototype, "__proto__");
  Object.defineProperty(Object.prototype, "__proto__", {
    configurable: true,
    get(this: object) {
      return Object.getPrototypeOf(this);
    },
    set(this: object, proto: unknown) {
      if ((typeof proto === "object" && proto !== null) || typeof proto === "function") {
        Object.setPrototypeOf(this, proto as object);
      }
    },
  });
  try {
    await body();
  } finally {
    if (had) Object.defineProperty(Object.prototype, "__proto__", had);
    else delete (Object.prototype as Record<string, unknown>).__proto__;
  }
}

describe("OpenAI's limits of a strict schema", () => {
  test("a schema over one is refused while the tools are built; strict auto sends it non-strict", {
    timeout: 60_000,
  }, () => {
    // Before: each rendered whole, and OpenAI answers such a request with 400 ("... levels of nesting exceeds limit").
    const nested = (levels: number) => {
      let schema: v.GenericSchema = v.string();
      for (let i = 0; i < levels; i++) schema = v.object({ n: schema });
      return schema as v.ObjectSchema<v.ObjectEntries, undefined>;
    };
    const make = (name: string, input: v.ObjectSchema<v.ObjectEntries, undefined>) =>
      tool({ name, description: "Limits.", input, run: () => "" });
    const refused: [AnyTool, RegExp][] = [
      [make("deep", nested(11)), /11 levels of object nesting \(at most 10\)/],
      [
        make("wide", v.object(Object.fromEntries(Array.from({ length: 5001 }, (_, i) => [`p${i}`, v.string()])))),
        /5001 object properties in all/,
      ],
      [
        make("many", v.object({ e: v.picklist(Array.from({ length: 1001 }, (_, i) => `v${i}`) as [string]) })),
        /1001 enum values in all/,
      ],
      [
        make(
          "long",
          v.object({ e: v.picklist(Array.from({ length: 300 }, (_, i) => `${i}`.padStart(60, "x")) as [string]) }),
        ),
        /an enum of 300 strings totalling 18000 characters/,
      ],
      // A map is sent as a list of {key, value} objects: a level of its own.
      [make("mapped", v.object({ m: v.record(v.string(), nested(9)) })), /11 levels of object nesting/],
    ];
    for (const [t, reason] of refused) {
      assert.throws(() => toStrictSchema(t.inputSchema, t.name), (error: SchemaDialectError) => {
        assert.ok(error instanceof SchemaDialectError, String(error));
        assert.equal(error.toolName, t.name);
        assert.match(error.message, reason);
        return true;
      });
    }
    // Ten levels, 1000 enum values, and the OpenAI tools with strict "auto" (the plain schema) pass.
    toStrictSchema(make("ten", nested(10)).inputSchema, "ten");
    const thousand = v.picklist(Array.from({ length: 1000 }, (_, i) => `v${i}`) as [string]);
    toStrictSchema(make("thousand", v.object({ e: thousand })).inputSchema, "thousand");
    const auto = openAIChatTools(refused.map(([t]) => t), { strict: "auto" });
    assert.deepEqual(auto.map((t) => t.function.strict), refused.map(() => false));
  });
});

describe("a union's member chosen by the value's shape at every depth", () => {
  // The member was chosen by the top-level keys only: { a: { k: "two", n: null } } fitted the first member (it has
  // `a`), the null of the second member's optional `n` was left in, and validation refused what the advertised schema
  // allows ("Expected number but received null").
  const nested = tool({
    name: "nested",
    description: "Two shapes told apart one level down.",
    input: v.object({
      choice: v.union([
        v.object({ a: v.object({ k: v.literal("one") }) }),
        v.object({ a: v.object({ k: v.literal("two"), n: v.optional(v.number()) }) }),
      ]),
      // The same inside a map's values.
      byName: v.optional(v.record(
        v.string(),
        v.union([
          v.record(v.string(), v.object({ k: v.literal("x") })),
          v.record(v.string(), v.object({ k: v.literal("y"), n: v.optional(v.string()) })),
        ]),
      )),
    }),
    run: (args) => args,
  });
  const answer = {
    choice: { a: { k: "two", n: null } },
    byName: [{ key: "m", value: [{ key: "i", value: { k: "y", n: null } }] }],
  };
  const expected = { choice: { a: { k: "two" } }, byName: { m: { i: { k: "y" } } } };

  test("the strict schema allows the answer, and the pipeline takes it", { timeout: 60_000 }, async () => {
    assert.equal(ajv.validate(toStrictSchema(nested.inputSchema, "nested"), answer), true, "advertised");
    assert.deepEqual(fromStrictArguments(nested.inputSchema, answer), expected);
    const box = new ToolBox().register(nested);
    await withSession(async (session) => {
      const { results } = await runOpenAIChatToolCalls(box, session, {
        choices: [{
          message: {
            tool_calls: [{
              id: "c1",
              type: "function",
              function: { name: "nested", arguments: JSON.stringify(answer) },
            }],
          },
        }],
      });
      assert.equal(results[0].status, "success", results[0].error);
      assert.deepEqual(results[0].output, expected);
      // Gemini sends the same encoding of maps; its optional `n` may be left out, which was already taken.
      const gemini = await runGeminiToolCalls(box, session, {
        candidates: [{ content: { parts: [{ functionCall: { name: "nested", args: answer } }] } }],
      });
      assert.equal(gemini.results[0].status, "success", gemini.results[0].error);
      assert.deepEqual(gemini.results[0].output, expected);
    });
  });

  test("judging members at every depth stays linear in a recursive union", { timeout: 60_000 }, async () => {
    // Two members that share a recursive property: a value that fits neither only at its bottom was judged again at
    // every level, 2^depth times (22 levels took 11 s of one core, 64 would never end).
    type Node = { k?: Node; x?: string };
    const node: v.GenericSchema<Node> = v.union([
      v.object({ k: v.optional(v.lazy(() => node)) }),
      v.object({ k: v.optional(v.lazy(() => node)), x: v.optional(v.string()) }),
    ]);
    const deep = tool({ name: "deep", description: "Nested.", input: v.object({ root: node }), run: () => "ok" });
    toStrictSchema(deep.inputSchema, "deep");
    let value: Record<string, unknown> = { zzz: 1 };
    for (let i = 0; i < 22; i++) value = { k: value };
    const started = performance.now();
    assert.deepEqual(fromStrictArguments(deep.inputSchema, { root: value }), { root: value });
    assert.ok(performance.now() - started < 2_000, `${performance.now() - started} ms`);
    let good: Record<string, unknown> = { x: "leaf", k: null };
    for (let i = 0; i < 20; i++) good = { k: good, x: null };
    const box = new ToolBox().register(deep);
    await withSession(async (session) => {
      const args = restoreCall(box, { name: "deep", args: { root: good } }).args;
      assert.equal((await box.call(session, "deep", args)).status, "success");
    });
  });

  test("a value that fits no member is left for validation to refuse", { timeout: 60_000 }, async () => {
    const wrong = { choice: { a: { k: "three", n: null } } };
    const box = new ToolBox().register(nested);
    await withSession(async (session) => {
      const result = await box.call(session, "nested", restoreCall(box, { name: "nested", args: wrong }).args);
      assert.equal(result.status, "error");
      assert.equal(result.errorCode, "invalid_arguments");
    });
  });
});

describe("valibot's minute-precision date-time and time", () => {
  // valibot's converter wrote `format: "date-time"` for v.isoDateTime() and `format: "time"` for v.isoTime(), which
  // take "2024-01-01T10:30" and "10:30" only; a model held to the format (strict mode enforces it) sends
  // "2024-01-01T10:30:00Z" or "10:30:00Z", and every such value was refused.
  const when = tool({
    name: "when",
    description: "Schedules.",
    input: v.object({ at: v.pipe(v.string(), v.isoDateTime()), daily: v.optional(v.pipe(v.string(), v.isoTime())) }),
    output: v.object({ at: v.pipe(v.string(), v.isoDateTime()) }),
    run: (args) => ({ at: args.at }),
  });
  const advertised = (schema: JsonSchema | GeminiSchema | undefined) => schema as { format?: string; pattern?: string };

  test("every dialect advertises the pattern the validation holds, not the RFC 3339 format", {
    timeout: 60_000,
  }, async () => {
    const strictProps = toStrictSchema(when.inputSchema, "when").properties!;
    const geminiProps = geminiTools([when])[0].functionDeclarations[0].parameters!.properties!;
    const box = new ToolBox().register(when);
    for (
      const [name, accepted, refused] of [
        ["at", "2024-01-01T10:30", "2024-01-01T10:30:00Z"],
        ["daily", "10:30", "10:30:00Z"],
      ] as const
    ) {
      for (
        const schema of [when.inputSchema.properties![name], strictProps[name], geminiProps[name]].map(advertised)
      ) {
        assert.equal(schema.format, undefined, `${name}: ${JSON.stringify(schema)}`);
        const pattern = new RegExp(schema.pattern!, "u");
        assert.equal(pattern.test(accepted), true, `${name} advertises ${accepted}`);
        assert.equal(pattern.test(refused), false, `${name} does not advertise ${refused}`);
      }
      await withSession(async (session) => {
        const args = name === "at" ? { at: accepted } : { at: "2024-01-01T10:30", daily: accepted };
        assert.equal((await box.call(session, "when", args)).status, "success");
        const wrong = name === "at" ? { at: refused } : { at: "2024-01-01T10:30", daily: refused };
        assert.equal((await box.call(session, "when", wrong)).status, "error");
      });
    }
    const output = outputJsonSchema(v.object({ at: v.pipe(v.string(), v.isoDateTime()) }));
    assert.equal(advertised(output.properties!.at).format, undefined, "the output schema too");
    assert.equal(typeof advertised(output.properties!.at).pattern, "string");
    // A timestamp (seconds and an offset) keeps its format: it takes the RFC 3339 date-times a model writes.
    const stamp = tool({
      name: "stamp",
      description: "Stamps.",
      input: v.object({ at: v.pipe(v.string(), v.isoTimestamp()) }),
      run: () => "",
    });
    assert.equal(stamp.inputSchema.properties!.at.format, "date-time");
  });
});
