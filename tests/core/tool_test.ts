import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { isTool, tool } from "../../core/tool.ts";

describe("tool()", () => {
  test("object form keeps name, description verbatim, metadata and a JSON Schema", { timeout: 60_000 }, () => {
    const description =
      "List the contents of a directory.\nReturns names; with details also sizes.\n  * indented: kept";
    const t = tool({
      name: "list_dir",
      description,
      input: v.object({
        path: v.pipe(v.string(), v.description("Directory, relative to the workspace")),
        details: v.optional(v.boolean(), false),
      }),
      readOnly: true,
      timeoutMs: 500,
      permissions: ["read"],
      run: () => [],
    });
    assert.equal(t.name, "list_dir");
    assert.equal(t.description, description);
    assert.equal(t.readOnly, true);
    assert.equal(t.timeoutMs, 500);
    assert.deepEqual(t.permissions, ["read"]);
    assert.deepEqual(t.inputSchema, {
      type: "object",
      properties: {
        path: { type: "string", description: "Directory, relative to the workspace" },
        details: { type: "boolean", default: false },
      },
      required: ["path"],
      additionalProperties: false,
    });
  });

  test("function form takes the function's name unless one is given", { timeout: 60_000 }, () => {
    const t = tool(function shout({ text }: { text: string }) {
      return text.toUpperCase();
    }, { description: "Shout.", input: v.object({ text: v.string() }) });
    assert.equal(t.name, "shout");
    const named = tool(() => 1, { name: "one", description: "One.", input: v.object({}) });
    assert.equal(named.name, "one");
  });

  test("names outside ^[a-zA-Z0-9_-]{1,64}$ are refused at definition time", { timeout: 60_000 }, () => {
    for (const name of ["", "has space", "dot.name", "a".repeat(65), "ünï", "slash/x"]) {
      assert.throws(
        () => tool({ name, description: "d", input: v.object({}), run: () => 1 }),
        /Invalid tool name/,
        name,
      );
    }
    assert.doesNotThrow(() => tool({ name: "a".repeat(64), description: "d", input: v.object({}), run: () => 1 }));
    assert.doesNotThrow(() => tool({ name: "A-b_9", description: "d", input: v.object({}), run: () => 1 }));
  });

  test("input must be an object schema", { timeout: 60_000 }, () => {
    assert.throws(
      // deno-lint-ignore no-explicit-any
      () => tool({ name: "x", description: "d", input: v.string() as any, run: () => 1 }),
      /input must be an object schema: valibot/,
    );
  });

  test("a schema JSON Schema cannot express is refused at definition time", { timeout: 60_000 }, () => {
    assert.throws(
      () => tool({ name: "x", description: "d", input: v.object({ when: v.date() }), run: () => 1 }),
      /cannot be expressed as JSON Schema/,
    );
  });

  test("looseObject stays open in the JSON Schema, object is closed at every level", { timeout: 60_000 }, () => {
    const t = tool({
      name: "nested",
      description: "d",
      input: v.object({ inner: v.object({ a: v.string() }), open: v.looseObject({ b: v.string() }) }),
      run: () => 1,
    });
    const props = t.inputSchema.properties!;
    assert.equal(props.inner.additionalProperties, false);
    assert.equal(props.open.additionalProperties, undefined);
  });

  test("isTool recognises class tools and rejects look-alikes", { timeout: 60_000 }, () => {
    class Echo {
      name = "echo";
      description = "Echo.";
      inputSchema = { type: "object", properties: { text: { type: "string" } } };
      execute(args: { text: string }) {
        return args.text;
      }
    }
    assert.equal(isTool(new Echo()), true);
    assert.equal(isTool({ name: "bad name", description: "", inputSchema: {}, execute() {} }), false);
    assert.equal(isTool({ name: "x", description: "", inputSchema: {} }), false);
    assert.equal(isTool(null), false);
  });
});
