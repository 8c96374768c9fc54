import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { type AnyTool, isTool, tool, type ToolMetadata, type ToolNeeds } from "../../core/tool.ts";
import { ToolBox } from "../../core/toolbox.ts";
import { EFFECTS } from "../../core/effects.ts";
import { effectsOf, permissionsOf } from "../../core/_tool_declaration.ts";

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
    // Keyed by name in the tool sets of the AI SDK and Mastra adapters, where Node's `set["__proto__"] = tool`
    // sets the set's prototype: the tool was listed and never offered.
    assert.throws(
      () => tool({ name: "__proto__", description: "d", input: v.object({}), run: () => 1 }),
      /Invalid tool name "__proto__".*not __proto__/,
    );
    assert.doesNotThrow(() => tool({ name: "__proto__x", description: "d", input: v.object({}), run: () => 1 }));
    assert.doesNotThrow(() => tool({ name: "constructor", description: "d", input: v.object({}), run: () => 1 }));
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

// One declaration of what a tool touches: `needs`. The permissions, effects and
// readOnly flag follow from it; a stated field that says more than `needs` is refused.
const input = v.object({});
const define = (metadata: ToolMetadata<Record<string, never>>) =>
  tool({ name: "probe", description: "A probe.", input, ...metadata, run: () => "ok" });

describe("needs: the one declaration", () => {
  test("permissions, effects and readOnly are derived from needs", { timeout: 60_000 }, () => {
    const reader = define({ needs: { read: ["workspace"] } });
    assert.deepEqual(reader.permissions, ["read"]);
    assert.deepEqual(reader.effects, ["reads"]);
    assert.equal(reader.readOnly, true);

    const writer = define({ needs: { read: ["workspace"], write: ["workspace"] } });
    assert.deepEqual(writer.permissions, ["read", "write"]);
    assert.deepEqual(writer.effects, ["reads", "writes_files"]);
    assert.equal(writer.readOnly, false);

    const shell = define({ needs: { run: ["bash"], signal: true, env: ["PATH"], net: ["example.com"] } });
    assert.deepEqual(shell.permissions, ["run", "env", "net"]);
    assert.deepEqual(shell.effects, ["reads", "runs_processes", "network"]);
    assert.equal(shell.readOnly, false);

    const clock = define({ needs: {} });
    assert.deepEqual(clock.permissions, []);
    assert.deepEqual(clock.effects, []);
    assert.equal(clock.readOnly, true);
  });

  test("stopping processes is the run permission", { timeout: 60_000 }, () => {
    assert.deepEqual(define({ needs: { signal: true } }).permissions, ["run"]);
  });

  test("a stated field equal to the derived one, or narrower, is kept", { timeout: 60_000 }, () => {
    // A tool that follows jobs another tool starts holds that tool's grants but only reads.
    const follower = define({ needs: { run: ["bash"], read: ["temp"] }, effects: ["reads"] });
    assert.deepEqual(follower.effects, ["reads"]);
    assert.equal(follower.readOnly, true);
    assert.deepEqual(follower.permissions, ["run", "read"], "the permissions are those of needs");
    const checker = define({ needs: { run: ["deno"], write: ["temp"] }, effects: ["runs_processes"], readOnly: true });
    assert.equal(checker.readOnly, true, "a program run only to read may be read-only");
    assert.deepEqual(define({ needs: { read: ["workspace"] }, permissions: ["read"] }).permissions, ["read"]);
    // Reading what the session holds needs no grant.
    assert.deepEqual(define({ needs: {}, effects: ["reads"] }).effects, ["reads"]);
    // A program may do anything a program can.
    assert.deepEqual(define({ needs: { run: ["bash"] }, effects: ["network"] }).effects, ["network"]);
  });

  test("a typo in permissions is refused with the valid names", { timeout: 60_000 }, () => {
    assert.throws(
      () => define({ permissions: ["reed"] as never }),
      (e: Error) =>
        e instanceof TypeError && /unknown permission "reed"/.test(e.message) &&
        e.message.includes(`"run", "read", "write", "sys", "env", "net"`),
    );
    assert.throws(() => define({ needs: { read: ["workspace"] }, permissions: ["wirte"] as never }), /"wirte"/);
    assert.throws(() => define({ permissions: "read" as never }), /permissions must be an array of/);
  });

  test("a stated field that says more than needs is refused, naming the fix", { timeout: 60_000 }, () => {
    assert.throws(
      () => define({ needs: { read: ["workspace"] }, permissions: ["read", "write"] }),
      /permissions "write" contradict its needs, which grant "read"; add the targets to needs \(e\.g\. needs\.write\)/,
    );
    assert.throws(
      () => define({ needs: { read: ["workspace"] }, effects: ["reads", "writes_files"] }),
      /effects "writes_files" contradict its needs, which allow "reads"/,
    );
    assert.throws(
      () => define({ needs: { net: ["example.com"] }, readOnly: true }),
      /readOnly contradicts its effects "network"/,
    );
    assert.throws(() => define({ needs: {}, effects: ["network"] }), /which allow none/);
  });

  test("without needs, stated fields are kept as they are and unstated ones stay unstated", { timeout: 60_000 }, () => {
    const coarse = define({ permissions: ["read", "net"], readOnly: true });
    assert.deepEqual(coarse.permissions, ["read", "net"]);
    assert.equal(coarse.readOnly, true);
    assert.equal(coarse.effects, undefined, "undeclared effects stay no_effect_declared");
    const bare = define({});
    assert.equal("permissions" in bare, false);
    assert.equal("readOnly" in bare, false);
  });

  test("a class tool is held to its needs when registered", { timeout: 60_000 }, () => {
    class Writer {
      name = "writer";
      description = "Writes.";
      inputSchema = { type: "object", properties: {} };
      needs: ToolNeeds = { read: ["workspace"] };
      permissions = ["read", "write"] as const;
      execute() {
        return "ok";
      }
    }
    assert.throws(() => new ToolBox().register(new Writer()), /Tool writer: permissions "write" contradict its needs/);
    class Typo extends Writer {
      override permissions = ["raed"] as never;
    }
    assert.throws(() => new ToolBox().register(new Typo()), /unknown permission "raed"/);
    class Fine extends Writer {
      override permissions = ["read"] as never;
    }
    assert.equal(new ToolBox().register(new Fine()).get("writer")?.name, "writer");
  });

  test("generated needs: what is derived always satisfies its own check", { timeout: 60_000 }, () => {
    const kinds = ["run", "read", "write", "sys", "env", "net"] as const;
    let seed = 28;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 500; i++) {
      const needs: Record<string, unknown> = {};
      for (const kind of kinds) if (next() < 0.4) needs[kind] = next() < 0.2 ? [] : ["x"];
      if (next() < 0.2) needs.signal = true;
      const t = define({ needs: needs as ToolNeeds });
      assert.deepEqual(t.permissions, permissionsOf(needs as ToolNeeds));
      assert.deepEqual(t.effects, effectsOf(needs as ToolNeeds));
      for (const p of t.permissions!) {
        assert.ok(
          p === "run" ? needs.signal === true || (needs.run as string[]).length > 0 : (needs[p] as []).length > 0,
        );
      }
      assert.equal(t.readOnly, t.effects!.every((e) => e === "reads"));
      assert.deepEqual([...t.effects!], EFFECTS.filter((e) => t.effects!.includes(e)), "effects in a stable order");
      // Stating back what was derived is always accepted.
      define({ needs: needs as ToolNeeds, permissions: t.permissions, effects: t.effects, readOnly: t.readOnly });
    }
  });
});

// A tool's `permissions` list is checked when the tool is made and when it is
// registered: a misspelled entry is refused, naming it and the valid ones.
describe("a tool's permissions", () => {
  test("a misspelled entry is refused, naming it and the valid ones", { timeout: 60_000 }, () => {
    assert.throws(
      () =>
        tool({
          name: "typo",
          description: "d",
          input: v.object({}),
          run: () => 1,
          permissions: ["read", "wirte"] as never,
        }),
      (error: Error) =>
        /"wirte"/.test(error.message) &&
        ["read", "write", "run", "net", "env", "sys"].every((name) => error.message.includes(`"${name}"`)),
    );
    // A class tool from plain JavaScript, where nothing checks the list's type.
    const classTool = (permissions: unknown) =>
      ({
        name: "typo",
        description: "d",
        inputSchema: { type: "object", properties: {} },
        permissions,
        execute: () => 1,
      }) as unknown as AnyTool;
    assert.throws(() => new ToolBox().register(classTool(["exec"])), /"exec"/);
    assert.throws(() => new ToolBox().register(classTool("read")), /must be an array/);
    assert.doesNotThrow(() => new ToolBox().register(classTool(["read", "net"])));
  });
});
