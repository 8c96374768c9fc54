// Registry operations of Flux (has, get, remove, clear, register_many, register([...])) and qitos
// (register(item, name, meta), auto_short_aliases), and aliases in every dialect.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { type AnyTool, tool } from "../../core/tool.ts";
import { ToolNameConflictError, UsageError } from "../../core/errors.ts";
import { jsonSchemaDialect } from "../../core/dialects.ts";
import { PROVIDER_DIALECTS } from "../../adapters/dialects.ts";
import { withSession } from "./_helpers.ts";

const echo = tool({
  name: "echo",
  description: "Echo.",
  input: v.object({ text: v.string() }),
  readOnly: true,
  run: ({ text }, ctx) => `${ctx.toolName}:${text}`,
});
const shout = tool({
  name: "shout",
  description: "Shout.",
  input: v.object({ text: v.string() }),
  run: ({ text }) => text.toUpperCase(),
});

class Counter {
  name = "counter";
  description = "Count calls.";
  inputSchema = { type: "object", properties: {} };
  count = 0;
  execute() {
    return ++this.count;
  }
}

/** The tool names a dialect's rendering holds, wherever the dialect puts them. */
function renderedNames(rendered: unknown[]): string[] {
  const text = JSON.stringify(rendered);
  return [...text.matchAll(/"name":"([a-zA-Z0-9_-]+)"/g)].map((m) => m[1]);
}

describe("registry operations", () => {
  test("has, get, remove, clear, registerMany and register([...])", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register([echo, shout]);
    assert.deepEqual(box.list().map((t) => t.name), ["echo", "shout"]);
    assert.equal(box.has("echo"), true);
    assert.equal(box.has("nope"), false);
    assert.equal(box.get("shout"), shout);
    box.disable("shout");
    assert.equal(box.has("shout"), true, "a disabled tool is still registered");
    assert.equal(box.remove("shout"), true);
    assert.equal(box.remove("shout"), false);
    assert.equal(box.has("shout"), false);
    assert.equal(box.isEnabled("shout"), false);
    await withSession(async (session) => {
      assert.equal((await box.call(session, "shout", { text: "x" })).errorCode, "unknown_tool");
      box.registerMany(new Set([shout]));
      assert.equal((await box.call(session, "shout", { text: "x" })).output, "X", "re-registered, enabled again");
      assert.equal(box.clear(), box);
      assert.deepEqual(box.list(), []);
      assert.equal((await box.call(session, "echo", { text: "x" })).errorCode, "unknown_tool");
    });
    assert.throws(() => new ToolBox().register([echo, { name: "bad" } as unknown as AnyTool]), TypeError);
    assert.throws(() => new ToolBox().register(echo, [echo]), ToolNameConflictError);
  });

  test(
    "register(tool, name, meta) registers a copy under another name; the original is unchanged",
    { timeout: 60_000 },
    async () => {
      const counter = new Counter();
      const box = new ToolBox().register(counter as unknown as AnyTool)
        .register(counter as unknown as AnyTool, "tally", { readOnly: true, timeoutMs: 500 })
        .register(echo, "say");
      const tally = box.get("tally")!;
      assert.deepEqual([tally.name, tally.readOnly, tally.timeoutMs, tally.description], [
        "tally",
        true,
        500,
        "Count calls.",
      ]);
      assert.deepEqual([counter.name, (counter as Partial<AnyTool>).readOnly], ["counter", undefined]);
      await withSession(async (session) => {
        assert.equal((await box.call(session, "counter", {})).output, 1);
        const r = await box.call(session, "tally", {});
        assert.deepEqual([r.output, r.toolName], [2, "tally"], "the class tool's own state, through the copy");
        assert.equal((await box.call(session, "say", { text: "hi" })).output, "say:hi");
      });
      assert.throws(() => box.register(echo, "bad name"), TypeError);
      assert.throws(() => box.register(echo, "x", { execute: () => 1 } as never), /meta cannot set execute/);
      assert.throws(() => box.register(echo, "say"), ToolNameConflictError);
      assert.throws(() => box.register(echo, "y", { effects: ["everything"] } as never), /effects must be/);
    },
  );

  test("an alias resolves to the same tool and appears in no dialect", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register(echo, shout).alias("repeat", "echo");
    assert.equal(box.get("repeat"), echo);
    assert.equal(box.has("repeat"), true);
    assert.deepEqual(box.aliases(), { repeat: "echo" });
    for (const dialect of [jsonSchemaDialect, ...Object.values(PROVIDER_DIALECTS)]) {
      const names = renderedNames(box.schemas(dialect));
      assert.deepEqual(names.filter((n) => n === "echo"), ["echo"], dialect.name);
      assert.ok(!names.includes("repeat"), `${dialect.name} lists the alias`);
    }
    await withSession(async (session) => {
      const r = await box.call(session, "repeat", { text: "a" });
      assert.deepEqual([r.status, r.output, r.toolName, r.metadata.calledAs], ["success", "echo:a", "echo", "repeat"]);
      const batch = await box.callMany(session, [{ name: "repeat", args: { text: "b" } }, {
        name: "echo",
        args: { text: "c" },
      }]);
      assert.deepEqual(batch.results.map((x) => x.output), ["echo:b", "echo:c"]);
      box.disable("echo");
      const disabled = await box.call(session, "repeat", { text: "a" });
      assert.equal(disabled.errorCode, "tool_disabled", "disabling a tool disables its aliases");
      box.enable("echo");
      box.remove("repeat");
      assert.equal(box.has("echo"), false, "removing by alias removes the tool");
      assert.equal(box.has("repeat"), false);
    });
    assert.throws(() => new ToolBox().register(echo).alias("x", "nope"), UsageError);
    assert.throws(() => new ToolBox().register(echo, shout).alias("shout", "echo"), ToolNameConflictError);
    assert.throws(
      () => new ToolBox().register(echo, shout).alias("a", "echo").alias("a", "shout"),
      ToolNameConflictError,
    );
  });

  test("a registered name wins over an alias of the same name", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register(echo).alias("shout", "echo").register(shout);
    assert.deepEqual(box.aliases(), {});
    await withSession(async (session) => {
      assert.equal((await box.call(session, "shout", { text: "a" })).output, "A");
    });
  });

  test(
    "autoShortAliases gives namespaced tools their short name while it is unambiguous",
    { timeout: 60_000 },
    async () => {
      const named = (name: string) =>
        tool({ name, description: name, input: v.object({}), run: (_a, ctx) => ctx.toolName });
      const box = new ToolBox({ autoShortAliases: true }).register(
        named("github__create_issue"),
        named("fs__read"),
        named("git__read"),
        named("local__list"),
        named("list"),
      );
      assert.deepEqual(box.aliases(), { create_issue: "github__create_issue" });
      for (const dialect of [jsonSchemaDialect, ...Object.values(PROVIDER_DIALECTS)]) {
        const names = renderedNames(box.schemas(dialect));
        assert.ok(!names.includes("create_issue"), dialect.name);
        assert.equal(names.filter((n) => n === "github__create_issue").length, 1, dialect.name);
      }
      await withSession(async (session) => {
        assert.equal((await box.call(session, "create_issue", {})).output, "github__create_issue");
        assert.equal((await box.call(session, "list", {})).output, "list", "a real tool wins");
        assert.equal((await box.call(session, "read", {})).errorCode, "unknown_tool", "ambiguous: no alias");
        box.remove("git__read");
        assert.equal((await box.call(session, "read", {})).output, "fs__read", "unambiguous once the other is gone");
      });
      assert.deepEqual(new ToolBox().register(named("github__create_issue")).aliases(), {}, "off by default");
    },
  );
});
