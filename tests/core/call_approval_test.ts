// A call's `approval` option: the answer a framework's own approval flow gave.
// With it the session is not asked about the tool's `needsApproval`; it never
// answers for the policy's own questions, and a tool that needs no approval
// ignores it.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../core/toolbox.ts";
import { callbackHost } from "../../policy/hosts.ts";
import { withSession } from "./_helpers.ts";

function fixture() {
  const ran: string[] = [];
  const asked: string[] = [];
  const host = callbackHost({
    choose: (request) => {
      asked.push(request.title);
      return request.defaultChoice;
    },
  });
  const box = new ToolBox().register(
    tool({
      name: "deploy",
      description: "Deploy.",
      input: v.object({ service: v.string() }),
      needsApproval: true,
      run: ({ service }) => {
        ran.push(service);
        return `deployed ${service}`;
      },
    }),
    tool({
      name: "write_note",
      description: "Overwrite a note in the workspace.",
      input: v.object({}),
      needsApproval: true,
      run: async (_args, ctx) => {
        const note = await ctx.policy.files.resolve("note.txt", { access: "write" });
        await ctx.policy.files.authorize(note, "overwrite", ctx.signal);
        ran.push("note");
        return "written";
      },
    }),
  );
  return { ran, asked, host, box };
}

describe("the approval call option", () => {
  test("an approval given runs the call without asking the session, and is recorded as the person's", {
    timeout: 60_000,
  }, async () => {
    const { ran, asked, host, box } = fixture();
    await withSession(async (session) => {
      const result = await box.call(session, "deploy", { service: "web" }, {
        approval: { choice: true, source: "user" },
      });
      assert.equal(result.status, "success");
      assert.equal(result.metadata.approval, "user");
      assert.deepEqual(ran, ["web"]);
      assert.deepEqual(asked, []);
    }, { host });
  });

  test("a refusal given ends the call not_approved without running it or asking", { timeout: 60_000 }, async () => {
    const { ran, asked, host, box } = fixture();
    await withSession(async (session) => {
      const result = await box.call(session, "deploy", { service: "db" }, {
        approval: { choice: false, source: "user" },
      });
      assert.equal(result.errorCode, "not_approved");
      assert.deepEqual(ran, []);
      assert.deepEqual(asked, []);
    }, { host });
  });

  test("without it the session is asked, as before", { timeout: 60_000 }, async () => {
    const { ran, asked, host, box } = fixture();
    await withSession(async (session) => {
      const result = await box.call(session, "deploy", { service: "web" });
      assert.equal(result.status, "success");
      assert.deepEqual(asked, ["Approve tool call"]);
      assert.deepEqual(ran, ["web"]);
    }, { host });
  });

  test("it never answers the policy's own questions", { timeout: 60_000 }, async () => {
    const { asked, host, box } = fixture();
    await withSession(async (session, dir) => {
      await writeFile(join(dir, "note.txt"), "old\n");
      const result = await box.call(session, "write_note", {}, { approval: { choice: true, source: "user" } });
      // The approval answers needsApproval; overwriting a file is still the policy's question to the host.
      assert.equal(result.status, "success", JSON.stringify(result));
      assert.equal(asked.length, 1);
      assert.notEqual(asked[0], "Approve tool call");
    }, { host });
  });

  test("invalid arguments are refused before any approval is used", { timeout: 60_000 }, async () => {
    const { ran, host, box } = fixture();
    await withSession(async (session) => {
      const result = await box.call(session, "deploy", { service: 5 }, { approval: { choice: true, source: "user" } });
      assert.equal(result.errorCode, "invalid_arguments");
      assert.deepEqual(ran, []);
    }, { host });
  });
});
