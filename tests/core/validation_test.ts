import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  closeObjects,
  formatIssues,
  MAX_VALIDATION_MESSAGE,
  validateWithJsonSchema,
  validateWithValibot,
} from "../../core/validation.ts";
import { z } from "zod";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../core/toolbox.ts";
import { withSession } from "./_helpers.ts";

const listDir = v.object({
  path: v.string(),
  details: v.optional(v.boolean(), false),
});

function issuesOf(outcome: ReturnType<typeof validateWithValibot>) {
  assert.equal(outcome.ok, false, "expected validation to fail");
  return (outcome as { issues: { path: string; message: string }[] }).issues;
}

describe("valibot validation", () => {
  test("defaults apply before the tool sees the input", { timeout: 60_000 }, () => {
    assert.deepEqual(validateWithValibot(listDir, { path: "." }), { ok: true, value: { path: ".", details: false } });
  });

  test("no implicit conversion: '3' is not a number, 'true' not a boolean", { timeout: 60_000 }, () => {
    const schema = v.object({ n: v.number(), b: v.boolean() });
    const issues = issuesOf(validateWithValibot(schema, { n: "3", b: "true" }));
    assert.deepEqual(issues, [
      { path: "n", message: 'expected number, received "3"' },
      { path: "b", message: 'expected boolean, received "true"' },
    ]);
  });

  test("unknown keys are rejected at every level", { timeout: 60_000 }, () => {
    const schema = v.object({ a: v.object({ b: v.array(v.object({ c: v.string() })) }) });
    const issues = issuesOf(validateWithValibot(schema, { a: { b: [{ c: "x", d: 1 }], e: 2 }, f: 3 }));
    assert.deepEqual(issues.map((i) => i.path).sort(), ["a.b[0].d", "a.e", "f"]);
    assert.ok(issues.every((i) => i.message === "unexpected argument"));
  });

  test(
    "arrays and unions of plain values hold no keys; arrays of objects are still walked",
    { timeout: 60_000 },
    () => {
      const flat = v.object({
        paths: v.array(v.string()),
        mode: v.optional(v.union([v.string(), v.array(v.number())])),
      });
      assert.equal(validateWithValibot(flat, { paths: ["a"], mode: [1] }).ok, true);
      assert.deepEqual(issuesOf(validateWithValibot(flat, { paths: ["a"], x: 1 })).map((i) => i.path), ["x"]);
      const nested = v.object({
        paths: v.array(v.string()),
        items: v.array(v.union([v.string(), v.object({ c: v.string() })])),
      });
      const issues = issuesOf(validateWithValibot(nested, { paths: ["a"], items: ["s", { c: "x", d: 1 }], e: 2 }));
      assert.deepEqual(issues.map((i) => i.path).sort(), ["e", "items[1].d"]);
    },
  );

  test(
    "an unexpected key that is empty, long or holds a control character is named quoted",
    { timeout: 60_000 },
    () => {
      // A 2,000-character key left no issue in the capped message ("Invalid arguments for list_dir: ; … (1 more)").
      const long = "z".repeat(2000);
      const args = { path: ".", [long]: 1, "": 2, "a\nb": 3 };
      const jsonSchema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
      for (const outcome of [validateWithValibot(listDir, args), validateWithJsonSchema(jsonSchema, args)]) {
        const issues = issuesOf(outcome);
        assert.deepEqual(issues.map((i) => i.path).sort(), [`"${"z".repeat(57)}..."`, '""', '"a\\nb"'].sort());
        const message = formatIssues("list_dir", issues);
        assert.match(message, /^Invalid arguments for list_dir: "z{57}\.\.\.": unexpected argument/);
        assert.ok(message.length <= MAX_VALIDATION_MESSAGE);
      }
      // A first issue too long for the cap is cut, never dropped.
      const cut = formatIssues("list_dir", [{ path: "a".repeat(3000), message: "unexpected argument" }]);
      assert.match(cut, /^Invalid arguments for list_dir: a{100,}…$/);
      assert.ok(cut.length <= MAX_VALIDATION_MESSAGE);
    },
  );

  test("looseObject and objectWithRest admit unknown keys; strictObject reports them once", { timeout: 60_000 }, () => {
    assert.equal(validateWithValibot(v.looseObject({ a: v.string() }), { a: "x", extra: 1 }).ok, true);
    assert.equal(validateWithValibot(v.object({ o: v.looseObject({}) }), { o: { z: 1 } }).ok, true);
    assert.equal(validateWithValibot(v.objectWithRest({ a: v.string() }, v.number()), { a: "x", n: 2 }).ok, true);
    const strict = issuesOf(validateWithValibot(v.strictObject({ a: v.string() }), { a: "x", extra: 1 }));
    assert.equal(strict.length, 1);
    assert.equal(strict[0].path, "extra");
  });

  test("unions judge unknown keys by the member that accepts the value", { timeout: 60_000 }, () => {
    const schema = v.object({
      u: v.union([v.object({ kind: v.literal("a"), a: v.string() }), v.object({ kind: v.literal("b") })]),
    });
    assert.equal(validateWithValibot(schema, { u: { kind: "a", a: "x" } }).ok, true);
    assert.deepEqual(issuesOf(validateWithValibot(schema, { u: { kind: "b", a: "x" } })).map((i) => i.path), ["u.a"]);
  });

  test("array-as-string: JSON text and comma lists become arrays, optional arrays too", { timeout: 60_000 }, () => {
    const schema = v.object({ tags: v.array(v.string()), more: v.optional(v.array(v.string())) });
    assert.deepEqual(validateWithValibot(schema, { tags: '["a","b"]', more: "c, d" }), {
      ok: true,
      value: { tags: ["a", "b"], more: ["c", "d"] },
    });
    assert.deepEqual(validateWithValibot(schema, { tags: "solo" }), { ok: true, value: { tags: ["solo"] } });
    const numbers = v.object({ n: v.nullable(v.array(v.number())) });
    assert.deepEqual(validateWithValibot(numbers, { n: "[1, 2]" }), { ok: true, value: { n: [1, 2] } });
    // Items are still validated strictly after the split.
    assert.equal(validateWithValibot(numbers, { n: "1, 2" }).ok, false);
  });

  test("a union with a plain string member is left alone", { timeout: 60_000 }, () => {
    const schema = v.object({ u: v.union([v.string(), v.array(v.string())]) });
    assert.deepEqual(validateWithValibot(schema, { u: "a, b" }), { ok: true, value: { u: "a, b" } });
  });

  test("nullable admits null, optional may be absent, picklist is an enum", { timeout: 60_000 }, () => {
    const schema = v.object({ n: v.nullable(v.number()), o: v.optional(v.string()), p: v.picklist(["x", "y"]) });
    assert.deepEqual(validateWithValibot(schema, { n: null, p: "x" }), { ok: true, value: { n: null, p: "x" } });
    const issues = issuesOf(validateWithValibot(schema, { n: null, p: "z" }));
    assert.equal(issues[0].path, "p");
    assert.match(issues[0].message, /expected "x" \| "y", received "z"/);
  });

  test("a missing required argument is named", { timeout: 60_000 }, () => {
    assert.deepEqual(issuesOf(validateWithValibot(listDir, {})), [{
      path: "path",
      message: "missing required argument",
    }]);
  });
});

describe("JSON Schema validation (class tools)", () => {
  const schema = {
    type: "object",
    properties: {
      path: { type: "string" },
      details: { type: "boolean", default: false },
      tags: { type: "array", items: { type: "string" } },
      mode: { enum: ["a", "b"] },
      nested: { type: "object", properties: { x: { type: "number" } } },
      either: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
    },
    required: ["path"],
  };

  test("valid input gets its defaults", { timeout: 60_000 }, () => {
    assert.deepEqual(validateWithJsonSchema(schema, { path: "." }), { ok: true, value: { path: ".", details: false } });
  });

  test("same strictness: no coercion, unknown keys at every level, missing keys", { timeout: 60_000 }, () => {
    const outcome = validateWithJsonSchema(schema, { details: "yes", nested: { x: "1", y: 2 }, extra: true });
    assert.equal(outcome.ok, false);
    const issues = (outcome as { issues: { path: string; message: string }[] }).issues;
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    assert.equal(byPath["path"], "missing required argument");
    assert.equal(byPath["details"], 'expected boolean, received "yes"');
    assert.equal(byPath["nested.x"], 'expected number, received "1"');
    assert.equal(byPath["nested.y"], "unexpected argument");
    assert.equal(byPath["extra"], "unexpected argument");
  });

  test("array-as-string and the plain-string-union exception apply", { timeout: 60_000 }, () => {
    assert.deepEqual(validateWithJsonSchema(schema, { path: ".", tags: "a, b", either: "c, d" }), {
      ok: true,
      value: { path: ".", details: false, tags: ["a", "b"], either: "c, d" },
    });
  });

  test(
    "explicit additionalProperties: true stays open; the caller's schema is not mutated",
    { timeout: 60_000 },
    () => {
      const open = { type: "object", properties: {}, additionalProperties: true };
      assert.equal(validateWithJsonSchema(open, { any: 1 }).ok, true);
      assert.equal(open.additionalProperties, true);
      const closed = closeObjects({ type: "object", properties: { a: { type: "object" } } });
      assert.equal(closed.additionalProperties, false);
      assert.equal((closed.properties!.a as { additionalProperties: boolean }).additionalProperties, false);
    },
  );

  test("the caller's arguments are not mutated by defaults", { timeout: 60_000 }, () => {
    const args = { path: "." };
    validateWithJsonSchema(schema, args);
    assert.deepEqual(args, { path: "." });
  });
});

describe("formatIssues", () => {
  test("names the tool, each path and what was wrong", { timeout: 60_000 }, () => {
    assert.equal(
      formatIssues("list_dir", [
        { path: "details", message: 'expected boolean, received "yes"' },
        { path: "extra", message: "unexpected argument" },
      ]),
      'Invalid arguments for list_dir: details: expected boolean, received "yes"; extra: unexpected argument',
    );
  });

  test("is capped in length and says how many issues were left out", { timeout: 60_000 }, () => {
    const issues = Array.from({ length: 200 }, (_, i) => ({ path: `field${i}`, message: "unexpected argument" }));
    const text = formatIssues("t", issues);
    assert.ok(text.length <= MAX_VALIDATION_MESSAGE);
    assert.match(text, /… \(\d+ more\)$/);
  });
});

describe("keys a schema library drops without an issue", () => {
  // valibot's records and open objects drop `__proto__`, `constructor` and `prototype`, zod's `__proto__`, and
  // return a value without them: the call succeeded and the tool ran with less than the model sent.
  const ran: string[] = [];
  const text = '{"m":{"__proto__":"x","constructor":"c","prototype":"p","a":"b"},"list":[{"__proto__":"y"}]}';
  const tools = [
    tool({
      name: "v_record",
      description: "x",
      input: v.object({ m: v.record(v.string(), v.string()), list: v.array(v.looseObject({})) }),
      run: () => void ran.push("ran"),
    }),
    tool({
      name: "z_record",
      description: "x",
      input: z.object({ m: z.record(z.string(), z.string()), list: z.array(z.looseObject({})) }),
      run: () => void ran.push("ran"),
    }),
  ];

  test("the call is refused naming each key, and the tool does not run", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register(...tools);
    await withSession(async (session) => {
      for (const t of tools) {
        const result = await box.call(session, t.name, text);
        assert.equal(result.status, "error", t.name);
        assert.equal(result.errorCode, "invalid_arguments");
        assert.match(result.error!, /m\.__proto__: the tool's schema library drops this key/);
        assert.match(result.error!, /list\[0\]\.__proto__/);
      }
      assert.deepEqual(ran, []);
      const valibot = await box.call(session, "v_record", text);
      assert.match(valibot.error!, /m\.constructor: .*m\.prototype: /);
    });
  });

  test("every other key is passed as it was sent", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register(...tools);
    await withSession(async (session) => {
      for (const t of tools) {
        const result = await box.call(session, t.name, '{"m":{"a":"b","proto":"c"},"list":[{"k":1}]}');
        assert.equal(result.status, "success", t.name);
      }
    });
  });
});

describe("validation work is bounded in the depth of a recursive schema's value", () => {
  // A node that is a union of object shapes, recursive through v.lazy / z.lazy / $ref: each member judged the whole
  // subtree again at every level, 2^depth runs (18 levels took 6 s through toolbox.call and 8 s through MCP
  // tools/call; zod's and class tools' Ajv pass 34 s and 20 s with an invalid bottom).
  type Node = { kind: string; child?: Node };
  const valibotNode: v.GenericSchema<Node> = v.union([
    v.object({ kind: v.literal("a"), child: v.optional(v.lazy(() => valibotNode)) }),
    v.object({ kind: v.literal("b"), child: v.optional(v.lazy(() => valibotNode)) }),
  ]);
  // The same node with the shared property first: a member judges the child before the kind that rules it out.
  const childFirst: v.GenericSchema<Node> = v.union([
    v.object({ child: v.optional(v.lazy(() => childFirst)), kind: v.literal("a") }),
    v.object({ child: v.optional(v.lazy(() => childFirst)), kind: v.literal("b") }),
  ]);
  const zodNode: z.ZodType<Node> = z.lazy(() =>
    z.union([
      z.object({ kind: z.literal("a"), child: zodNode.optional() }),
      z.object({ kind: z.literal("b"), child: zodNode.optional() }),
    ])
  );
  const jsonNode = (first: "child" | "kind") => {
    const member = (kind: string) => ({
      type: "object",
      properties: first === "child"
        ? { child: { $ref: "#/$defs/node" }, kind: { const: kind } }
        : { kind: { const: kind }, child: { $ref: "#/$defs/node" } },
      required: ["kind"],
    });
    return {
      type: "object",
      properties: { root: { $ref: "#/$defs/node" } },
      required: ["root"],
      $defs: { node: { anyOf: [member("a"), member("b")] } },
    };
  };
  const box = new ToolBox().register(
    tool({ name: "valibot_node", description: "V.", input: v.object({ root: valibotNode }), run: () => "ok" }),
    tool({ name: "child_first", description: "V.", input: v.object({ root: childFirst }), run: () => "ok" }),
    tool({ name: "zod_node", description: "Z.", input: z.object({ root: zodNode }), run: () => "ok" }),
    { name: "json_node", description: "J.", inputSchema: jsonNode("kind"), execute: () => "ok" },
    { name: "json_child_first", description: "J.", inputSchema: jsonNode("child"), execute: () => "ok" },
  );
  const chain = (depth: number, bottom: string): Node => {
    let node: Node = { kind: bottom };
    for (let i = 0; i < depth; i++) node = { kind: "b", child: node };
    return node;
  };

  test(
    "valid and invalid values of 10 to 40 levels are judged in well under a second",
    { timeout: 120_000 },
    async () => {
      await withSession(async (session) => {
        for (const name of ["valibot_node", "child_first", "zod_node", "json_node", "json_child_first"]) {
          for (const depth of [10, 14, 18, 24, 40]) {
            const started = performance.now();
            const valid = await box.call(session, name, { root: chain(depth, "a") });
            const invalid = await box.call(session, name, { root: chain(depth, "c") });
            const ms = performance.now() - started;
            assert.ok(ms < 1_500, `${name} at depth ${depth}: ${Math.round(ms)} ms`);
            assert.equal(invalid.status, "error", `${name} ${depth}`);
            assert.ok(
              invalid.errorCode === "invalid_arguments" || invalid.errorCode === "arguments_too_complex",
              `${name} ${depth}: ${invalid.errorCode}`,
            );
            // The valibot members are remembered per value, so a valid value passes at any depth; Ajv keeps no memo,
            // and a schema judging the child before the kind may refuse it at the budget, never run on.
            if (name !== "json_child_first") assert.equal(valid.status, "success", `${name} ${depth}: ${valid.error}`);
            else if (valid.status !== "success") assert.equal(valid.errorCode, "arguments_too_complex");
          }
        }
      });
    },
  );

  test("work grows at most polynomially: doubling the depth far less than squares the time", {
    timeout: 120_000,
  }, () => {
    const schema = v.object({ root: childFirst });
    const time = (depth: number) => {
      const started = performance.now();
      for (let i = 0; i < 5; i++) validateWithValibot(schema, { root: chain(depth, i % 2 ? "a" : "c") });
      return performance.now() - started;
    };
    time(50);
    const at200 = time(200);
    const at400 = time(400);
    assert.ok(at400 < 1_000, `400 levels: ${at400} ms`);
    assert.ok(at400 < at200 * 8 + 50, `200 levels ${at200} ms, 400 levels ${at400} ms`);
  });

  test("a JSON Schema whose members differ only deep down fails closed at the budget, naming limit and path", {
    timeout: 60_000,
  }, async () => {
    // No property tells the members apart: Ajv judges the whole value under both, at every level.
    const schema = {
      type: "object",
      properties: { root: { $ref: "#/$defs/node" } },
      required: ["root"],
      $defs: {
        node: {
          anyOf: [
            { type: "object", properties: { k: { $ref: "#/$defs/node" }, x: { type: "string" } } },
            { type: "object", properties: { k: { $ref: "#/$defs/node" }, y: { type: "number" } } },
          ],
        },
      },
    };
    let value: Record<string, unknown> = { x: 1 };
    for (let i = 0; i < 30; i++) value = { k: value };
    const started = performance.now();
    const outcome = validateWithJsonSchema(schema, { root: value });
    assert.ok(performance.now() - started < 1_000, `${performance.now() - started} ms`);
    assert.equal(outcome.ok, false);
    assert.ok(!outcome.ok && outcome.code === "arguments_too_complex", JSON.stringify(outcome));
    assert.match(outcome.issues[0].path, /^root(\.k)+(\.x)?$/);
    assert.match(outcome.issues[0].message, /validation stopped after \d+ steps here/);
    const box = new ToolBox().register({ name: "same", description: "S.", inputSchema: schema, execute: () => "ok" });
    await withSession(async (session) => {
      const result = await box.call(session, "same", { root: value });
      assert.equal(result.status, "error");
      assert.equal(result.errorCode, "arguments_too_complex");
      assert.match(String(result.error), /^Invalid arguments for same: root\.k.*: validation stopped after \d+ steps/);
    });
  });

  test("arguments nested past the depth limit are refused before any validator recurses", {
    timeout: 60_000,
  }, async () => {
    // Before: 20,000 levels made box.call itself reject (a stack overflow in valibot's run, the unknown-key walk or
    // structuredClone), breaking the promise that a call settles as a result.
    await withSession(async (session) => {
      for (const name of ["valibot_node", "zod_node", "json_node"]) {
        assert.equal((await box.call(session, name, { root: chain(62, "a") })).status, "success", name);
        for (const depth of [64, 3_000, 20_000]) {
          const result = await box.call(session, name, { root: chain(depth, "a") });
          assert.equal(result.status, "error", `${name} ${depth}`);
          assert.equal(result.errorCode, "arguments_too_complex", `${name} ${depth}`);
          assert.match(
            String(result.error),
            /^Invalid arguments for \w+: root\.child\.child.*: nested more than 64 levels deep/,
          );
          const issue = (result.details as { issues: { path: string }[] }).issues[0];
          assert.ok(issue.path.length <= 200, issue.path);
        }
      }
    });
  });

  test("every recursive valibot shape is judged in bounded work at 40 levels", { timeout: 120_000 }, () => {
    type M = { k?: M; x?: string; kind?: unknown; child?: M };
    // A getter that builds the union anew on each call: its lazy nodes are new each time, remembered by the getter.
    const fresh = (): v.GenericSchema<M> =>
      v.union([
        v.object({ child: v.optional(v.lazy(fresh)), kind: v.literal("a") }),
        v.object({ child: v.optional(v.lazy(fresh)), kind: v.literal("b") }),
      ]);
    const freshSame = (): v.GenericSchema<M> =>
      v.union([
        v.object({ k: v.optional(v.lazy(freshSame)) }),
        v.object({ k: v.optional(v.lazy(freshSame)), x: v.optional(v.string()) }),
      ]);
    const variantNode: v.GenericSchema<M> = v.variant("kind", [
      v.object({ kind: v.literal("b"), child: v.optional(v.lazy(() => variantNode)), x: v.optional(v.literal("1")) }),
      v.object({ kind: v.literal("b"), child: v.optional(v.lazy(() => variantNode)), x: v.optional(v.literal("2")) }),
    ]);
    const piped: v.GenericSchema<M> = v.pipe(
      v.union([
        v.object({ child: v.optional(v.lazy(() => piped)), kind: v.literal("a") }),
        v.object({ child: v.optional(v.lazy(() => piped)), kind: v.literal("b") }),
      ]),
      v.check(() => true),
    );
    // Each member reports the other's issues again: 2^depth issues, which only the budget bounds.
    const intersected: v.GenericSchema<M> = v.intersect([
      v.object({ kind: v.string(), child: v.optional(v.lazy(() => intersected)) }),
      v.looseObject({ child: v.optional(v.lazy(() => intersected)) }),
    ]);
    const down = (key: "k" | "child", bottom: M) => {
      let node = bottom;
      for (let i = 0; i < 40; i++) node = key === "k" ? { k: node } : { child: node, kind: "b" };
      return node;
    };
    const table: [string, v.GenericSchema<M>, M, M][] = [
      ["fresh", fresh(), down("child", { kind: "a" }), down("child", { kind: "c" })],
      ["freshSame", freshSame(), down("k", { x: "1" }), down("k", { zzz: 1 } as M)],
      ["variant", variantNode, down("child", { kind: "b", x: "2" }), down("child", { kind: "b", x: "3" })],
      ["pipe", piped, down("child", { kind: "a" }), down("child", { kind: "c" })],
      ["intersect", intersected, down("child", { kind: "a" }), down("child", { kind: 3 })],
    ];
    for (const [name, node, valid, invalid] of table) {
      const schema = v.object({ root: node });
      const started = performance.now();
      const good = validateWithValibot(schema, { root: valid });
      const bad = validateWithValibot(schema, { root: invalid });
      const ms = performance.now() - started;
      assert.ok(ms < 1_500, `${name}: ${Math.round(ms)} ms`);
      assert.equal(good.ok, true, `${name}: ${JSON.stringify(good).slice(0, 300)}`);
      assert.equal(bad.ok, false, name);
      if (name === "intersect") assert.ok(!bad.ok && bad.code === "arguments_too_complex", name);
      if (name === "freshSame") {
        assert.match(JSON.stringify(bad), /"root(\.k){40}\.zzz","message":"unexpected argument"/);
      }
    }
  });

  test("unknown keys under a v.lazy are refused at every depth, in linear time", { timeout: 60_000 }, () => {
    type M = { k?: M; x?: string };
    const node: v.GenericSchema<M> = v.union([
      v.object({ k: v.optional(v.lazy(() => node)) }),
      v.object({ k: v.optional(v.lazy(() => node)), x: v.optional(v.string()) }),
    ]);
    let value: Record<string, unknown> = { zzz: 1 };
    for (let i = 0; i < 40; i++) value = { k: value };
    const started = performance.now();
    const outcome = validateWithValibot(v.object({ root: node }), { root: value });
    assert.ok(performance.now() - started < 1_000);
    assert.deepEqual(outcome, {
      ok: false,
      issues: [{ path: `root${".k".repeat(40)}.zzz`, message: "unexpected argument" }],
    });
  });
});

describe("async valibot schemas", () => {
  test("an async schema, or an async member of a sync one, is refused: never run with what the model sent", {
    timeout: 60_000,
  }, async () => {
    // Before: valibot's run gave a promise (or a member's promise where its outcome goes), which has no issues, so
    // the call succeeded and the tool ran with undefined (or unchecked) arguments.
    const ran: unknown[] = [];
    const box = new ToolBox().register(
      tool({
        name: "all_async",
        description: "A.",
        input: v.objectAsync({ n: v.number() }) as unknown as v.GenericSchema<{ n: number }>,
        run: (args) => {
          ran.push(args);
          return "ran";
        },
      }),
      tool({
        name: "member_async",
        description: "M.",
        input: v.object({
          // Typed as sync: a schema built at run time (or in plain JavaScript) is not checked by the compiler.
          inner: v.objectAsync({ s: v.string() }) as unknown as v.GenericSchema<{ s: string }>,
        }) as unknown as v.GenericSchema<{ inner: { s: string } }>,
        run: (args) => {
          ran.push(args);
          return "ran";
        },
      }),
    );
    await withSession(async (session) => {
      for (
        const [name, args] of [["all_async", { n: "not a number" }], ["member_async", { inner: { s: 3 } }]] as const
      ) {
        const result = await box.call(session, name, args);
        assert.equal(result.status, "error", `${name}: ${result.status}`);
        assert.equal(result.errorCode, "invalid_arguments");
        assert.match(String(result.error), /validates asynchronously, which toolfence refuses/);
      }
    });
    assert.deepEqual(ran, []);
  });
});
