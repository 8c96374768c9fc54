// A result's error message and hint reach the model as its output does, and are held to the output's cap the same
// way: their head and tail, with the cut said. The cap held for outputs only: grep's refusal of an invalid pattern
// of 1 MB quoted it whole (1,000,157 characters to the model), as did the refusal of an unknown tool's name, a tool's
// own error of 5 MB and a returned failure's hint, past the 40,000 characters of any output; a model's context (and
// its API's limit on a request) took them all, and every later request of the conversation with them.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { fail } from "../../core/failure.ts";
import { ToolError } from "../../core/errors.ts";
import { DEFAULT_MAX_OUTPUT_CHARS } from "../../core/executor.ts";
import { toModelText } from "../../core/result.ts";
import { BUILTIN_GROUPS } from "../../tools/groups.ts";
import { withSession } from "./_helpers.ts";

const BIG = 1_000_000;

describe("error messages and hints are held to the output's cap", () => {
  test("built-in refusals, unknown tools, thrown errors and returned failures", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const box = new ToolBox({ groups: BUILTIN_GROUPS }).withDefaults("search").register(
        tool({
          name: "thrower",
          description: "Throws.",
          input: v.object({}),
          readOnly: true,
          run: () => {
            throw new Error(`head ${"x".repeat(BIG)} tail`);
          },
        }),
        tool({
          name: "hinted",
          description: "Fails with a long hint.",
          input: v.object({}),
          readOnly: true,
          run: () => {
            throw new ToolError("short", { code: "tool_error", recoveryHint: `begin ${"h".repeat(BIG)} end` });
          },
        }),
        tool({
          name: "failer",
          description: "Returns a failure.",
          input: v.object({}),
          readOnly: true,
          run: () => fail(`start ${"y".repeat(BIG)} finish`, { code: "tool_error", output: "out" }),
        }),
      );
      const results = [
        await box.call(session, "grep", { pattern: `(${"Q".repeat(BIG)}` }),
        await box.call(session, `nope${"n".repeat(BIG)}`, {}),
        await box.call(session, "thrower", {}),
        await box.call(session, "hinted", {}),
        await box.call(session, "failer", {}),
      ];
      assert.deepEqual(results.map((r) => r.errorCode), [
        "invalid_pattern",
        "unknown_tool",
        "tool_error",
        "tool_error",
        "tool_error",
      ]);
      for (const result of results) {
        assert.ok(result.error!.length <= DEFAULT_MAX_OUTPUT_CHARS, `${result.errorCode}: ${result.error!.length}`);
        assert.ok((result.recoveryHint ?? "").length <= DEFAULT_MAX_OUTPUT_CHARS);
        assert.ok(toModelText(result).length <= 3 * DEFAULT_MAX_OUTPUT_CHARS, String(toModelText(result).length));
      }
      // Head and tail kept, the cut said.
      assert.match(results[2].error!, /^head x+\n\[\.\.\. \d+ characters of this message omitted \.\.\.\]\nx+ tail$/);
      assert.match(results[3].recoveryHint!, /^begin h+\n\[\.\.\. \d+ characters of this message omitted/);
      assert.match(results[4].error!, / finish$/);
      assert.equal(results[4].output, "out");
    });
  });

  test(
    "a tool whose own cap is small still has its messages read whole up to a floor",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const box = new ToolBox().register(tool({
          name: "terse",
          description: "Short outputs.",
          input: v.object({ n: v.number() }),
          readOnly: true,
          maxOutputChars: 100,
          run: () => {
            throw new Error(`a reason of some length: ${"r".repeat(500)}`);
          },
        }));
        const thrown = await box.call(session, "terse", { n: 1 });
        assert.equal(thrown.error, `a reason of some length: ${"r".repeat(500)}`);
        const invalid = await box.call(session, "terse", { n: "one", extra: 1 });
        assert.equal(invalid.errorCode, "invalid_arguments");
        assert.doesNotMatch(invalid.error!, /omitted/);
      });
    },
  );
});
