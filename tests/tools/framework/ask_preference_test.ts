import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ToolBox } from "../../../toolbox.ts";
import type { ChoiceRequest } from "../../../core/host.ts";
import { autoHost, callbackHost } from "../../../policy/hosts.ts";
import { frameworkTools } from "../../../tools/framework/mod.ts";
import { withSession } from "../../core/_helpers.ts";

const box = new ToolBox().register(...frameworkTools());

function personAnswering(answer: string | ((request: ChoiceRequest) => string)) {
  const asked: ChoiceRequest[] = [];
  const host = callbackHost({
    choose: (request) => {
      asked.push(request);
      return (typeof answer === "function" ? answer(request) : answer) as typeof request.defaultChoice;
    },
  });
  return { host, asked };
}

describe("ask_preference", () => {
  test("asks a person with the choices and the default, and returns the answer", { timeout: 60_000 }, async () => {
    const { host, asked } = personAnswering("spaces");
    await withSession(async (session) => {
      const result = await box.call(session, "ask_preference", {
        question: "Tabs or spaces?",
        choices: ["tabs", "spaces"],
        default_choice: "tabs",
      });
      assert.deepEqual(result.output, { choice: "spaces", extra: false, source: "user" });
      assert.equal(asked.length, 1);
      assert.equal(asked[0].message, "Tabs or spaces?");
      assert.deepEqual(asked[0].options.map((o) => o.value), ["tabs", "spaces"]);
      assert.equal(asked[0].defaultChoice, "tabs");
      assert.equal(asked[0].requirePerson, true);
      assert.equal(asked[0].allowExtra, false);
    }, { host });
  });

  test("autoConfirm never answers it: the person is still asked", { timeout: 60_000 }, async () => {
    const { host, asked } = personAnswering((request) => request.options[1].value);
    await withSession(async (session) => {
      const result = await box.call(session, "ask_preference", { question: "Which?", choices: ["a", "b"] });
      assert.equal((result.output as { choice: string }).choice, "b");
      assert.equal(asked.length, 1);
      assert.equal(asked[0].defaultChoice, "a");
    }, { host, autoConfirm: true });
  });

  test("with nobody to ask it is refused, not answered by default", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const result = await box.call(session, "ask_preference", { question: "Which?", choices: ["a", "b"] });
      assert.equal(result.status, "skipped");
      assert.equal(result.errorCode, "permission_denied");
    }, { host: autoHost(), autoConfirm: true });
  });

  test("a default outside the choices is an error and nobody is asked", { timeout: 60_000 }, async () => {
    const { host, asked } = personAnswering("a");
    await withSession(async (session) => {
      const result = await box.call(session, "ask_preference", {
        question: "Which?",
        choices: ["a", "b"],
        default_choice: "c",
      });
      assert.equal(result.errorCode, "invalid_arguments");
      assert.match(result.error!, /default_choice "c" is not one of the choices/);
      const dupes = await box.call(session, "ask_preference", { question: "Which?", choices: ["a", "a"] });
      assert.equal(dupes.errorCode, "invalid_arguments");
      assert.equal(asked.length, 0);
    }, { host });
  });

  test("allow_extra lets the person answer in their own words", { timeout: 60_000 }, async () => {
    const { host, asked } = personAnswering("call it toolfence");
    await withSession(async (session) => {
      const result = await box.call(session, "ask_preference", {
        question: "Name?",
        choices: ["fence", "gate"],
        allow_extra: true,
      });
      assert.deepEqual(result.output, { choice: "call it toolfence", extra: true, source: "user" });
      assert.equal(asked[0].allowExtra, true);
    }, { host });
  });
});
