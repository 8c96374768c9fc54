import { describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { ToolNameConflictError, UsageError } from "../../core/errors.ts";
import { ToolBox as CoreToolBox } from "../../core/toolbox.ts";
import { openFence } from "../../policy/fence.ts";
import type { Fence } from "../../core/fence.ts";
import type { Session } from "../../policy/session.ts";

const make = (name: string, extra: Partial<Parameters<typeof tool>[0]> = {}) =>
  tool({ name, description: `The ${name} tool.`, input: v.object({}), run: () => name, ...extra });

describe("ToolBox registration", () => {
  test("a second tool with the same name conflicts unless either side overrides", { timeout: 60_000 }, () => {
    const box = new ToolBox().register(make("a"));
    assert.throws(() => box.register(make("a")), ToolNameConflictError);
    box.register(make("a", { override: true, description: "replacement" }));
    assert.equal(box.get("a")!.description, "replacement");
    // The override wins whichever came first (xun: an override registered before the built-ins stays).
    const box2 = new ToolBox().register(make("b", { override: true, description: "mine" }));
    box2.register(make("b", { description: "newer" }));
    assert.equal(box2.get("b")!.description, "mine");
    box2.register(make("b", { override: true, description: "my second" }));
    assert.equal(box2.get("b")!.description, "my second", "of two overrides, the later");
  });

  test("_XUN_INFO_TOOL_OVERRIDE=1 prints each override decided; unset, nothing", { timeout: 60_000 }, () => {
    const lines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => lines.push(String(chunk)) > 0) as unknown as typeof write;
    try {
      process.env._XUN_INFO_TOOL_OVERRIDE = "1";
      new ToolBox().register(make("c", { override: true })).register(make("c")).register(
        make("c", { override: true }),
      );
      delete process.env._XUN_INFO_TOOL_OVERRIDE;
      new ToolBox().register(make("d", { override: true })).register(make("d"));
    } finally {
      process.stderr.write = write;
      delete process.env._XUN_INFO_TOOL_OVERRIDE;
    }
    assert.deepEqual(lines, [
      'toolfence: tool override: kept the override of "c" over a later tool of that name\n',
      'toolfence: tool override: "c" was replaced by an override\n',
    ]);
  });

  test(
    "an override registered before withDefaults() is not replaced by the built-in",
    { timeout: 60_000 },
    async () => {
      await import("../../tools/mod.ts");
      const box = new ToolBox().register(make("read_file", { override: true, description: "my read_file" }));
      box.withDefaults("fs");
      assert.equal(box.get("read_file")!.description, "my read_file");
      assert.ok(box.get("write_file"), "the rest of the group is there");
    },
  );

  test("register refuses things that are not tools", { timeout: 60_000 }, () => {
    // deno-lint-ignore no-explicit-any
    assert.throws(() => new ToolBox().register({ name: "x" } as any), /Not a tool/);
  });

  test("box.tool defines and registers in one step", { timeout: 60_000 }, () => {
    const box = new ToolBox();
    const t = box.tool({ name: "add", description: "d", input: v.object({ a: v.number() }), run: ({ a }) => a });
    assert.equal(box.get("add"), t);
  });

  test("disable hides by fnmatch wildcard without deleting; enable shows again", { timeout: 60_000 }, () => {
    const box = new ToolBox().register(make("browser_open"), make("browser_click"), make("read_file"));
    box.disable("browser_*");
    assert.deepEqual(box.list({ fence: openFence() }).map((t) => t.name), ["read_file"]);
    assert.ok(box.get("browser_open"), "disabled tools stay registered");
    box.enable("browser_c?ick");
    assert.deepEqual(box.list({ fence: openFence() }).map((t) => t.name), ["browser_click", "read_file"]);
  });

  test("disableSubagents only touches the sub-agent tools", { timeout: 60_000 }, () => {
    const box = new ToolBox().register(make("agent_run"), make("agent_run_parallel"), make("agent_other"));
    box.disableSubagents();
    assert.deepEqual(box.list({ fence: openFence() }).map((t) => t.name), ["agent_other"]);
    box.enableSubagents();
    assert.equal(box.list({ fence: openFence() }).length, 3);
  });

  test("list filters by model capabilities", { timeout: 60_000 }, () => {
    const box = new ToolBox().register(make("look", { requires: ["vision"] }), make("plain"));
    assert.deepEqual(box.list({ fence: openFence() }).map((t) => t.name), ["plain"]);
    assert.deepEqual(box.list({ capabilities: ["vision"], fence: openFence() }).map((t) => t.name), ["look", "plain"]);
  });

  test("list hides tools whose permissions the fence closes entirely", { timeout: 60_000 }, () => {
    const noRun: Fence = {
      query: (p) => ({ allowed: p !== "run", flag: p === "run" ? "--allow-run" : undefined }),
      closedEntirely: (p) => p === "run",
    };
    const box = new ToolBox().register(make("bash", { permissions: ["run"] }), make("read", { permissions: ["read"] }));
    assert.deepEqual(box.list({ fence: noRun }).map((t) => t.name), ["read"]);
  });

  test("listed(name) is the tool exactly when list() would offer it, by name or alias", { timeout: 60_000 }, () => {
    const noRun: Fence = {
      query: (p) => ({ allowed: p !== "run", flag: p === "run" ? "--allow-run" : undefined }),
      closedEntirely: (p) => p === "run",
    };
    const box = new ToolBox().register(
      make("look", { requires: ["vision"] }),
      make("bash", { permissions: ["run"] }),
      make("read", { permissions: ["read"] }),
      make("off"),
    ).alias("cat", "read").disable("off");
    for (const options of [{ fence: noRun }, { fence: openFence() }, { capabilities: ["vision"], fence: noRun }]) {
      const offered = box.list(options).map((t) => t.name);
      for (const name of ["look", "bash", "read", "off", "missing"]) {
        assert.equal(box.listed(name, options)?.name, offered.includes(name) ? name : undefined, `${name}`);
      }
      assert.equal(box.listed("cat", options)?.name, "read");
    }
  });

  test("clone copies the table and disabled set but shares tool objects", { timeout: 60_000 }, () => {
    const a = make("a");
    const box = new ToolBox().register(a, make("b")).disable("b");
    const copy = box.clone();
    copy.register(make("c")).enable("b");
    assert.equal(copy.get("a"), a);
    assert.equal(box.get("c"), undefined);
    assert.equal(box.isEnabled("b"), false);
    assert.equal(copy.isEnabled("b"), true);
  });

  test("withDefaults registers named groups and explains unknown ones", { timeout: 60_000 }, () => {
    const groups = { test_group: () => [make("from_group")] };
    const box = new CoreToolBox({ groups }).withDefaults("test_group");
    assert.ok(box.get("from_group"));
    assert.throws(
      () => new CoreToolBox({ groups }).withDefaults("no_such_group"),
      /Unknown tool group "no_such_group"/,
    );
    assert.throws(() => new CoreToolBox().withDefaults("fs"), /known groups: none/);
  });

  test("the core's toolbox knows no built-ins; the umbrella's is the same class with them wired in", {
    timeout: 60_000,
  }, () => {
    const core = new CoreToolBox();
    assert.deepEqual(core.withDefaults().list(), []);
    assert.throws(() => core.withSubagents(() => undefined), UsageError);
    assert.throws(() => core.schemas("anthropic"), /Unknown dialect "anthropic"; known: none/);
    const wired = new ToolBox().withDefaults("system");
    assert.ok(wired instanceof CoreToolBox);
    assert.ok(wired.clone() instanceof ToolBox, "a clone keeps the subclass and its wiring");
    assert.deepEqual(wired.clone().list().map((t) => t.name), ["system_info", "datetime", "sleep"]);
    assert.equal((wired.schemas("anthropic") as { name: string }[]).length, 3);
  });

  test("a dialect is a value: schemas(dialect) renders with it, no registration", { timeout: 60_000 }, () => {
    const box = new CoreToolBox().register(make("a"), make("b"));
    const namesOnly = { name: "names-only", render: (tools: readonly { name: string }[]) => tools.map((t) => t.name) };
    assert.deepEqual(box.schemas(namesOnly), ["a", "b"]);
  });

  test(
    "schemas('json-schema') renders name, description, inputSchema; unknown dialects are named",
    { timeout: 60_000 },
    () => {
      const box = new ToolBox().register(
        tool({
          name: "x",
          description: "X.",
          input: v.object({ a: v.pipe(v.string(), v.description("An a")) }),
          run: () => 1,
        }),
      );
      assert.deepEqual(box.schemas("json-schema", { fence: openFence() }), [{
        name: "x",
        description: "X.",
        inputSchema: {
          type: "object",
          properties: { a: { type: "string", description: "An a" } },
          required: ["a"],
          additionalProperties: false,
        },
      }]);
      assert.throws(() => box.schemas("klingon"), /Unknown dialect "klingon"/);
    },
  );

  test("call without a session is a programming error that throws", { timeout: 60_000 }, () => {
    const box = new ToolBox().register(make("a"));
    // deno-lint-ignore no-explicit-any
    assert.throws(() => box.call(undefined as any, "a", {}), UsageError);
    // deno-lint-ignore no-explicit-any
    assert.throws(() => box.callMany({} as any as Session, []), UsageError);
  });
});
