// withSubagents() without a getter (xun's default provider): each sub-agent is
// the session's model in a conversation with a copy of the toolbox, driven
// here by a scripted model provider; a session without a model fails
// `no_model`, saying how to give one.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { withSession } from "../../core/_helpers.ts";
import { lastToolResult, ScriptedModel } from "./_scripted_model.ts";

describe("withSubagents() without a getter", () => {
  test("the session's model runs the sub-agent with the toolbox's tools in a child session", {
    timeout: 60_000,
  }, async () => {
    const box = new ToolBox().withDefaults("fs").withSubagents();
    const model = new ScriptedModel([
      () => ({ toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "notes.txt" } }] }),
      (request) => ({ text: `the notes say: ${JSON.parse(lastToolResult(request)).content.trim()}` }),
    ]);
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "notes.txt"), "ship on friday\n");
      const result = await box.call(session, "agent_run", { task: "What do the notes say?", name: "reader" });
      assert.equal(result.status, "success", result.error);
      assert.deepEqual(result.output, { name: "reader", output: "the notes say: ship on friday" });
      const [first, second] = model.requests;
      assert.deepEqual(first.messages, [{ role: "user", content: "What do the notes say?" }]);
      assert.match(first.system, /sub-agent/);
      const names = first.tools.map((t) => t.name);
      assert.ok(names.includes("read_file") && names.includes("write_file"), names.join(","));
      assert.ok(names.includes("agent_run"), "a sub-agent below the depth limit may delegate");
      assert.equal(second.messages.length, 3);
      assert.equal(second.messages[2].role, "tool");
    }, { model });
  });

  test("its tool calls go through the policy like any other call", { timeout: 60_000 }, async () => {
    const box = new ToolBox().withDefaults("fs").withSubagents();
    const model = new ScriptedModel([
      () => ({ toolCalls: [{ id: "w", name: "write_file", arguments: { path: "../escape.txt", content: "x" } }] }),
      (request) => ({ text: lastToolResult(request) }),
    ]);
    await withSession(async (session, dir) => {
      const result = await box.call(session, "agent_run", { task: "write outside" });
      assert.equal(result.status, "success", result.error);
      assert.match((result.output as { output: string }).output, /outside_workspace/);
      await assert.rejects(readFile(path.join(dir, "..", "escape.txt")));
    }, { model });
  });

  test("agent_run_parallel runs one conversation per task", { timeout: 60_000 }, async () => {
    const box = new ToolBox().withDefaults("system").withSubagents();
    const model = new ScriptedModel([
      (request) => ({ text: `done: ${(request.messages[0] as { content: string }).content}` }),
      (request) => ({ text: `done: ${(request.messages[0] as { content: string }).content}` }),
    ]);
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run_parallel", { tasks: ["a", "b"] });
      assert.equal(result.status, "success", result.error);
      const { results } = result.output as { results: { status: string; output: string }[] };
      assert.deepEqual(results.map((r) => r.output).sort(), ["done: a", "done: b"]);
    }, { model });
  });

  test("a session without a model fails no_model, saying how to give one", { timeout: 60_000 }, async () => {
    const box = new ToolBox().withDefaults("system").withSubagents();
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run", { task: "anything" });
      assert.equal(result.errorCode, "no_model");
      assert.match(result.error!, /new Session\(\{ model \}\)/);
      assert.match(result.error!, /withSubagents\(getter\)/);
      const parallel = await box.call(session, "agent_run_parallel", { tasks: ["x"] });
      assert.match(JSON.stringify(parallel.output), /new Session\(\{ model \}\)/);
    });
  });

  test("a model that never stops calling tools is given up with subagent_failed", { timeout: 60_000 }, async () => {
    const box = new ToolBox().withDefaults("system").withSubagents();
    const endless = new ScriptedModel(
      Array.from({ length: 40 }, (_, i) => () => ({ toolCalls: [{ id: `t${i}`, name: "datetime", arguments: {} }] })),
    );
    await withSession(async (session) => {
      const result = await box.call(session, "agent_run", { task: "loop" });
      assert.equal(result.errorCode, "subagent_failed");
      assert.match(result.error!, /did not answer within 30 turns/);
      assert.equal(endless.requests.length, 30);
    }, { model: endless });
  });
});
