// Typed outputs: a tool's declared `output` (valibot) checks its JSON output on
// the way out, whole and before any cut; a mismatch is `invalid_output`, the
// tool's fault, naming the path, and the output is never passed on.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import fc from "fast-check";
import { Ajv } from "ajv";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { checkOutput, outputCheckedAgainst } from "../../core/_call_output_schema.ts";
import { isObjectJsonSchema, outputJsonSchema } from "../../core/schema.ts";
import { ERROR_CODES } from "../../core/error_codes.ts";
import { withSession } from "./_helpers.ts";

const entry = v.strictObject({ name: v.string(), size: v.pipe(v.number(), v.integer(), v.minValue(0)) });
const listing = v.strictObject({ files: v.array(entry), truncated: v.boolean() });

const lister = (output: unknown) =>
  tool({
    name: "lister",
    description: "Lists.",
    input: v.object({}),
    output: listing,
    readOnly: true,
    retry: { maxAttempts: 3, backoffMs: 1 },
    run: () => output,
  });

describe("declared outputs", () => {
  test("a matching output passes unchanged", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const output = { files: [{ name: "a", size: 1 }], truncated: false };
      const r = await new ToolBox().register(lister(output)).call(session, "lister", {});
      assert.equal(r.status, "success");
      assert.deepEqual(r.output, output);
    });
  });

  test("a mismatch is invalid_output, the tool's fault, naming the path; never retried, never passed on", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const bad = { files: [{ name: "a", size: 1 }, { name: "b", size: "2" }], truncated: false };
      const r = await new ToolBox().register(lister(bad)).call(session, "lister", {});
      assert.equal(r.status, "error");
      assert.equal(r.errorCode, "invalid_output");
      assert.equal(r.errorKind, "execution");
      assert.equal(r.recoverable, false);
      assert.equal(r.attempts, 1);
      assert.equal(r.output, null);
      const details = r.details as { path: string; issues: { path: string }[] };
      assert.equal(details.path, "files[1].size");
      assert.match(r.error!, /lister .*files\[1\]\.size/);
      assert.equal(ERROR_CODES.invalid_output.kind, "execution");
    });
  });

  test(
    "unknown keys of a strict object, a missing key and a wrong root are mismatches",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        for (
          const [bad, path] of [
            [{ files: [], truncated: false, extra: 1 }, "extra"],
            [{ files: [] }, "truncated"],
            ["text", ""],
            [undefined, ""],
          ] as const
        ) {
          const r = await new ToolBox().register(lister(bad)).call(session, "lister", {});
          assert.equal(r.errorCode, "invalid_output", JSON.stringify(bad));
          assert.equal((r.details as { path: string }).path, path, JSON.stringify(bad));
        }
      });
    },
  );

  test(
    "the message quotes a bounded piece of a refused value, never the whole of it",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const r = await new ToolBox().register(lister({ files: "x".repeat(100_000), truncated: false }))
          .call(session, "lister", {});
        assert.equal(r.errorCode, "invalid_output");
        assert.ok(r.error!.length < 600, `${r.error!.length} characters`);
        assert.ok(JSON.stringify(r.details).length < 2_000);
      });
    },
  );

  test("the JSON form is checked: a Date is its ISO string", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(tool({
        name: "when",
        description: "When.",
        input: v.object({}),
        output: v.strictObject({ at: v.pipe(v.string(), v.isoTimestamp()) }),
        run: () => ({ at: new Date(0) }),
      }));
      const r = await box.call(session, "when", {});
      assert.equal(r.status, "success", r.error);
      assert.deepEqual(r.output, { at: "1970-01-01T00:00:00.000Z" });
    });
  });

  test(
    "the whole output is checked before the cut: a mismatch past the cap is not hidden by it",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const files = Array.from({ length: 500 }, (_, i) => ({ name: `file-${i}`, size: i }));
        const box = new ToolBox({ maxOutputChars: 1_000 });
        box.register(lister({ files: [...files, { name: "last", size: -1 }], truncated: false }));
        const bad = await box.call(session, "lister", {});
        assert.equal(bad.errorCode, "invalid_output");
        assert.equal((bad.details as { path: string }).path, "files[500].size");
        assert.equal(session.artifacts.list().length, 0, "nothing of a refused output is stored");

        const good = await new ToolBox({ maxOutputChars: 1_000 }).register(lister({ files, truncated: false }))
          .call(session, "lister", {});
        assert.equal(good.status, "success");
        assert.equal(good.truncated, true);
        const whole = JSON.parse(new TextDecoder().decode(await session.artifacts.get(good.artifacts[0].id)));
        assert.equal(checkOutput("lister", listing, whole), undefined);
      });
    },
  );

  test("an output given by a before-call hook is checked too", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox().register(lister({ files: [], truncated: false }));
      box.beforeToolCall(() => ({ output: { files: "cached" } }));
      const r = await box.call(session, "lister", {});
      assert.equal(r.errorCode, "invalid_output");
      assert.equal((r.details as { path: string }).path, "files");
    });
  });

  test("an async schema is awaited", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const output = v.pipeAsync(
        v.strictObject({ n: v.number() }),
        v.checkAsync(async (o) => (await Promise.resolve(o.n)) > 0, "n must be positive"),
      );
      const make = (n: number) =>
        tool({ name: "positive", description: "P.", input: v.object({}), output, run: () => ({ n }) });
      assert.equal((await new ToolBox().register(make(1)).call(session, "positive", {})).status, "success");
      const r = await new ToolBox().register(make(-1)).call(session, "positive", {});
      assert.equal(r.errorCode, "invalid_output");
      assert.match(r.error!, /n must be positive/);
    });
  });

  test(
    "class tools declare output the same way; one that is not a valibot schema fails closed",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        class Stat {
          name = "stat";
          description = "Stat.";
          inputSchema = { type: "object", properties: {}, additionalProperties: false };
          constructor(readonly output: unknown, readonly value: unknown) {}
          execute() {
            return this.value;
          }
        }
        const schema = v.strictObject({ size: v.number() });
        const box = new ToolBox().register(new Stat(schema, { size: 1 }) as never);
        assert.equal((await box.call(session, "stat", {})).status, "success");
        box.register(Object.assign(new Stat(schema, { size: "1" }), { override: true }) as never);
        assert.equal((await box.call(session, "stat", {})).errorCode, "invalid_output");
        box.register(Object.assign(new Stat({ type: "object" }, { size: 1 }), { override: true }) as never);
        const r = await box.call(session, "stat", {});
        assert.equal(r.errorCode, "invalid_output");
        assert.match(r.error!, /not a Standard Schema/);
      });
    },
  );

  test("tool() refuses an output that is not a schema, or that JSON Schema cannot express", { timeout: 60_000 }, () => {
    const define = (output: unknown) =>
      tool({ name: "t", description: "T.", input: v.object({}), output: output as never, run: () => ({}) });
    assert.throws(() => define({ type: "object" }), /Tool t: output must be a valibot, zod 4 or ArkType schema/);
    assert.throws(() => define(v.strictObject({ f: v.function() })), /Tool t: its output cannot be advertised/);
    assert.throws(() => define(v.map(v.string(), v.number())), /Tool t: its output cannot be advertised/);
    define(v.string());
    define(v.array(v.strictObject({ a: v.string() })));
    define(v.union([v.strictObject({ a: v.string() }), v.strictObject({ b: v.number() })]));
    define(v.variant("kind", [v.strictObject({ kind: v.literal("a") }), v.strictObject({ kind: v.literal("b") })]));
  });

  test("a union or variant of objects is an object schema at its root; a string is not", { timeout: 60_000 }, () => {
    const union = outputJsonSchema(v.union([v.strictObject({ a: v.string() }), v.strictObject({ b: v.number() })]));
    assert.equal(union.type, "object");
    assert.equal(isObjectJsonSchema(union), true);
    assert.equal(isObjectJsonSchema(outputJsonSchema(v.string())), false);
    assert.equal(isObjectJsonSchema(outputJsonSchema(v.union([v.strictObject({}), v.string()]))), false);
  });
});

describe("outputJsonSchema says what the check accepts", () => {
  const schemas = {
    strict: v.strictObject({
      name: v.string(),
      size: v.pipe(v.number(), v.integer(), v.minValue(0)),
      note: v.optional(v.string()),
      sha256: v.nullable(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
      kind: v.picklist(["file", "dir"]),
      tags: v.array(v.string()),
    }),
    plain: v.object({ a: v.number(), b: v.optional(v.boolean()) }),
    text: v.pipe(v.string(), v.regex(/^Clicked e\d+\./)),
    loose: v.looseObject({ a: v.literal(true) }),
    variant: v.variant("status", [
      v.strictObject({ status: v.literal("ok"), value: v.number() }),
      v.strictObject({ status: v.literal("failed"), reason: v.string() }),
    ]),
  };
  const ajv = new Ajv({ strict: false, allErrors: false });

  // JSON values near the schemas: the right keys with values of any JSON type, and others.
  const leaf = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.constantFrom("file", "dir", "ok", "failed", "0".repeat(64), "f".repeat(64), "Clicked e12. Now at x"),
    fc.integer({ min: -3, max: 3 }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -10, max: 10 }),
    fc.boolean(),
    fc.constant(null),
  );
  const key = fc.constantFrom("name", "size", "note", "sha256", "kind", "tags", "a", "b", "status", "value", "reason");
  const value = fc.letrec((tie) => ({
    json: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("json"), { maxLength: 3 }), tie("object")),
    object: fc.dictionary(key, tie("json"), { maxKeys: 7 }),
  })).json;

  for (const [name, schema] of Object.entries(schemas)) {
    test(`${name}: valibot and ajv agree on generated JSON`, { timeout: 60_000 }, () => {
      const validate = ajv.compile(outputJsonSchema(schema));
      fc.assert(
        fc.property(value, (candidate) => {
          const json = JSON.parse(JSON.stringify(candidate));
          assert.equal(checkOutput(name, schema, json) === undefined, validate(json), JSON.stringify(json));
        }),
        { numRuns: 2_000 },
      );
    });
  }
});

describe("outputCheckedAgainst", () => {
  const SIZE = v.strictObject({ size: v.number() });
  const sized = () =>
    tool({ name: "sized", description: "Sized.", input: v.object({}), output: SIZE, run: () => ({ size: 1 }) });

  test("is true for a result the pipeline finished with the output it checked", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const result = await new ToolBox().register(sized()).call(session, "sized", {});
      assert.equal(result.status, "success");
      assert.equal(outputCheckedAgainst(result, SIZE), true);
      // Against another schema, or for a copy of the result, it was not checked.
      assert.equal(outputCheckedAgainst(result, v.strictObject({ size: v.number() })), false);
      assert.equal(outputCheckedAgainst({ ...result }, SIZE), false);
    });
  });

  test("is false once an after-call hook has seen the result, or for a tool without output", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session) => {
      const hooked = new ToolBox().register(sized());
      hooked.afterToolCall(() => undefined);
      assert.equal(outputCheckedAgainst(await hooked.call(session, "sized", {}), SIZE), false);
      session.hooks.after.push(() => undefined);
      assert.equal(outputCheckedAgainst(await new ToolBox().register(sized()).call(session, "sized", {}), SIZE), false);
      const plain = tool({ name: "plain", description: "Plain.", input: v.object({}), run: () => ({ size: 1 }) });
      assert.equal(outputCheckedAgainst(await new ToolBox().register(plain).call(session, "plain", {}), SIZE), false);
    });
  });
});
