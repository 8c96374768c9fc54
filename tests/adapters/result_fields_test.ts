// The result's developer fields (effects, recovery, provenance, metadata) never reach a model, in any dialect;
// a failed command's output does.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { fail } from "../../core/failure.ts";
import { openAIChatResultMessages, openAIResponsesResultItems } from "../../adapters/openai.ts";
import { anthropicResultMessage } from "../../adapters/anthropic.ts";
import { geminiResultContent } from "../../adapters/gemini.ts";
import { withSession } from "../core/_helpers.ts";

test("effects, recovery fields, provenance and metadata stay out of every provider's result message", {
  timeout: 60_000,
}, async () => {
  await withSession(async (session) => {
    const box = new ToolBox().register(tool({
      name: "writer",
      description: "d",
      input: v.object({ ok: v.boolean() }),
      effects: ["writes_files"],
      run: ({ ok }, ctx) => {
        ctx.metadata.secretNote = "SECRET-METADATA";
        return ok ? { wrote: "a.txt" } : fail("disk said no", { output: { stderr: "MODEL-READS-THIS" } });
      },
    }));
    const { results } = await box.callMany(session, [
      { name: "writer", args: { ok: true }, callId: "c1", idempotencyKey: "KEY-123" },
      { name: "writer", args: { ok: false }, callId: "c2" },
    ]);
    assert.ok(results.every((r) => r.provenance && r.attemptId && r.declaredEffects && r.normalizedRequest));
    const messages = JSON.stringify([
      openAIChatResultMessages(results, []),
      openAIResponsesResultItems(results, []),
      anthropicResultMessage(results, []),
      geminiResultContent(results, []),
    ]);
    for (
      const leak of [
        session.id,
        results[0].provenance!.definitionSha256,
        "SECRET-METADATA",
        "KEY-123",
        "declaredEffects",
        "writes_files",
        "effectState",
        "reconciliationRequired",
        "retryDisposition",
        "normalizedRequest",
        "attemptId",
      ]
    ) assert.ok(!messages.includes(leak), `a model would read ${leak}`);
    assert.match(messages, /MODEL-READS-THIS/);
    assert.match(messages, /disk said no/);
    assert.match(messages, /a\.txt/);
  });
});
