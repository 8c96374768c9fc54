// The model risk assessor (xun's "command risk assessment" sub-agent), opt-in,
// driven by a scripted model provider: it is asked only when the rules are
// unsure, after the policy rules, never over a deny or a reject; it has
// read-only tools; its allow runs the command, its reject and unreadable
// answers ask (refused here: nobody can be asked).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { type RiskAssessor, rulesRiskAssessor } from "../../../policy/shell/risk.ts";
import { modelRiskAssessor } from "../../../tools/agents/model_risk_assessor.ts";
import { writeFileTool } from "../../../tools/fs/write_file.ts";
import { withSession } from "../../core/_helpers.ts";
import { lastToolResult, ScriptedModel } from "./_scripted_model.ts";

const box = new ToolBox().withDefaults("cmd");
const verdict = (decision: string, reason: string, kind = "create_file") => () => ({
  text: `Here is my answer: ${JSON.stringify({ decision, reason, kind })}`,
});

async function exists(file: string): Promise<boolean> {
  return await stat(file).then(() => true, () => false);
}

describe("modelRiskAssessor", () => {
  test("a command the rules are unsure of runs when the model, having looked, allows it", {
    timeout: 60_000,
  }, async () => {
    const model = new ScriptedModel([
      () => ({ toolCalls: [{ id: "l", name: "list_dir", arguments: { path: "." } }] }),
      (request) => {
        assert.match(lastToolResult(request), /plan\.txt/, "the tool's result reached the model");
        return verdict("allow", "touch only creates an empty file in the workspace")();
      },
    ]);
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "plan.txt"), "plan\n");
      const result = await box.call(session, "bash", { command: "touch made.txt" });
      assert.equal(result.status, "success", result.error);
      assert.ok(await exists(path.join(dir, "made.txt")));
      const [first] = model.requests;
      assert.match(first.messages[0].content, /"touch made\.txt"/);
      assert.match(first.messages[0].content, /not on the allowlist/);
      assert.deepEqual(first.tools.map((t) => t.name).sort(), ["file_info", "glob", "grep", "list_dir", "read_file"]);
    }, { model, assessor: modelRiskAssessor() });
  });

  test("the model's reject asks (and is refused where nobody can answer)", { timeout: 60_000 }, async () => {
    const model = new ScriptedModel([verdict("reject", "it overwrites the build", "destroy_data")]);
    await withSession(async (session, dir) => {
      const result = await box.call(session, "bash", { command: "touch made.txt" });
      assert.equal(result.errorCode, "permission_denied");
      assert.match(result.error!, /the model judged: it overwrites the build/);
      assert.equal(await exists(path.join(dir, "made.txt")), false);
    }, { model, assessor: modelRiskAssessor() });
  });

  test("the rules' reject is never lifted, and the model is not even asked", { timeout: 60_000 }, async () => {
    const model = new ScriptedModel([verdict("allow", "fine")]);
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "keep.txt"), "keep\n");
      const result = await box.call(session, "bash", { command: "rm -rf keep.txt" });
      assert.equal(result.errorCode, "permission_denied");
      assert.equal(await readFile(path.join(dir, "keep.txt"), "utf8"), "keep\n");
      assert.equal(model.requests.length, 0);
    }, { model, assessor: modelRiskAssessor() });
  });

  // Stopped while the rules looked: the model's run listened for the stop only after their look, so a stop during it
  // (an event fired once, before the listener) was missed, and the model was asked and its answer acted on.
  test("a call stopped while the rules look never asks the model, and runs nothing", { timeout: 60_000 }, async () => {
    const model = new ScriptedModel([verdict("allow", "fine")]);
    const stop = new AbortController();
    const rules: RiskAssessor = {
      // Rules of the user's that do not look at the signal (the default ones stop at it).
      assess: async (command, check) => {
        stop.abort(new Error("the user stopped the run"));
        await new Promise((resolve) => setTimeout(resolve, 50));
        return await rulesRiskAssessor.assess(command, check);
      },
    };
    await withSession(async (session, dir) => {
      const result = await box.call(session, "bash", { command: "touch made.txt" }, { signal: stop.signal });
      assert.equal(result.status, "cancelled", JSON.stringify(result));
      assert.equal(model.requests.length, 0, "the model was not asked");
      assert.equal(await exists(path.join(dir, "made.txt")), false);
    }, { model, assessor: modelRiskAssessor({ rules }) });
  });

  test("a policy deny rule settles it before any assessor", { timeout: 60_000 }, async () => {
    const model = new ScriptedModel([verdict("allow", "fine")]);
    // Command rules do not depend on the root the rules were loaded for.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { deny: ["touch"] } } }], "/");
    await withSession(async (session, dir) => {
      const result = await box.call(session, "bash", { command: "touch made.txt" });
      assert.equal(result.errorCode, "permission_denied");
      assert.match(result.error!, /denied by the/);
      assert.equal(await exists(path.join(dir, "made.txt")), false);
    }, { model, assessor: modelRiskAssessor(), rules });
    assert.equal(model.requests.length, 0);
  });

  test("an answer that is not a verdict, or a model that fails, leaves the rules' unsure: it asks", {
    timeout: 60_000,
  }, async () => {
    for (
      const turn of [
        () => ({ text: "I think it is fine, go ahead" }),
        () => ({ text: '{"decision": "sure", "reason": "x"}' }),
        () => ({ text: '{"decision": "allow"}' }),
      ]
    ) {
      const model = new ScriptedModel([turn]);
      await withSession(async (session, dir) => {
        const result = await box.call(session, "bash", { command: "touch made.txt" });
        assert.equal(result.errorCode, "permission_denied", JSON.stringify(turn()));
        assert.match(result.error!, /answer could not be read/);
        assert.equal(await exists(path.join(dir, "made.txt")), false);
      }, { model, assessor: modelRiskAssessor() });
    }
    const broken = new ScriptedModel([]);
    await withSession(async (session) => {
      const result = await box.call(session, "bash", { command: "touch made.txt" });
      assert.equal(result.errorCode, "permission_denied");
      assert.match(result.error!, /could not judge it: the script has no more turns/);
    }, { model: broken, assessor: modelRiskAssessor() });
  });

  test("the model's tools only read: a write it asks for is unknown to it", { timeout: 60_000 }, async () => {
    const model = new ScriptedModel([
      () => ({ toolCalls: [{ id: "w", name: "write_file", arguments: { path: "planted.txt", content: "x" } }] }),
      (request) => {
        assert.match(lastToolResult(request), /unknown_tool|not found|no tool/i);
        return verdict("unsure", "could not check")();
      },
    ]);
    await withSession(async (session, dir) => {
      const result = await box.call(session, "bash", { command: "touch made.txt" });
      assert.equal(result.errorCode, "permission_denied");
      assert.equal(await exists(path.join(dir, "planted.txt")), false);
    }, { model, assessor: modelRiskAssessor() });
    assert.throws(() => modelRiskAssessor({ tools: [writeFileTool] }), /read-only tools only; write_file/);
  });

  test("opted in without a model: no_model, saying how to give one", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const result = await box.call(session, "bash", { command: "touch made.txt" });
      assert.equal(result.errorCode, "no_model");
      assert.match(result.error!, /new Session\(\{ model \}\)/);
    }, { assessor: modelRiskAssessor() });
  });
});
