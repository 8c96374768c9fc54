// The core alone: `new SessionBase()` calls a tool that works on its
// arguments, and refuses every file, process and question with a message that
// names the way to a workspace policy. `box.list(session)` lists what that
// session can call, and `new Session()` without a workspace says what it needs.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import * as v from "valibot";
import { SessionBase } from "../../core/session.ts";
import { ToolBox } from "../../core/toolbox.ts";
import { tool } from "../../core/tool.ts";
import { BUILTIN_GROUPS } from "../../tools/mod.ts";
import { Session } from "../../policy/session.ts";
import { UsageError } from "../../core/errors.ts";

const shout = tool({
  name: "shout",
  description: "Upper-case a text.",
  input: v.object({ text: v.string() }),
  run: ({ text }) => text.toUpperCase(),
});

describe("new SessionBase() with no parts", () => {
  test("calls a tool that touches nothing, and validates its arguments", { timeout: 30_000 }, async () => {
    const session = new SessionBase();
    try {
      const box = new ToolBox().register(shout);
      const ok = await box.call(session, "shout", { text: "core only" });
      assert.equal(ok.status, "success");
      assert.equal(ok.output, "CORE ONLY");
      const bad = await box.call(session, "shout", { text: 1 });
      assert.equal(bad.errorCode, "invalid_arguments");
    } finally {
      await session.close();
    }
  });

  test("refuses every file, process and question, naming Session", { timeout: 60_000 }, async () => {
    const session = new SessionBase();
    const box = new ToolBox({ groups: BUILTIN_GROUPS }).withDefaults("fs", "patch", "cmd", "framework");
    const calls: [string, Record<string, unknown>][] = [
      ["read_file", { path: "/etc/hostname" }],
      ["list_dir", { path: "." }],
      ["write_file", { path: "x.txt", content: "x" }],
      ["delete", { path: "x.txt" }],
      ["temp_dir", {}],
      ["edit_file", { path: "x.txt", old_text: "a", new_text: "b" }],
      ["bash", { command: "echo leaked" }],
      ["ask_preference", { question: "Which?", options: ["a", "b"] }],
    ];
    try {
      for (const [name, args] of calls) {
        const result = await box.call(session, name, args);
        assert.notEqual(result.status, "success", `${name} ran: ${JSON.stringify(result.output)}`);
        assert.ok(!JSON.stringify(result.output ?? "").includes("leaked"), name);
        if (result.errorCode === "permission_denied") assert.match(result.error!, /Session from @toolfence\/policy/);
        else assert.equal(result.errorKind, "semantic", `${name}: ${result.errorCode} ${result.error}`);
      }
    } finally {
      await session.close();
    }
  });

  test("a policy that is not a function is a usage error", { timeout: 60_000 }, () => {
    assert.throws(() => new SessionBase({ policy: {} as never }), UsageError);
  });
});

describe("box.list(session)", () => {
  test(
    "is box.list({ session }): only what the session's capabilities allow",
    { timeout: 30_000 },
    async () => {
      const session = new Session({ workspace: process.cwd(), capabilities: [] });
      const seeing = new Session({ workspace: process.cwd(), capabilities: ["vision"] });
      try {
        const box = new ToolBox({ groups: BUILTIN_GROUPS }).withDefaults("fs");
        const names = (s: SessionBase) => box.list(s).map((t) => t.name);
        assert.deepEqual(names(session), box.list({ session }).map((t) => t.name));
        assert.ok(!names(session).includes("request_image"), "a tool needing vision is not listed without it");
        assert.ok(names(seeing).includes("request_image"), "the session's own capabilities count");
      } finally {
        await session.close();
        await seeing.close();
      }
    },
  );
});

describe("new Session() without a workspace", () => {
  test("is a usage error that shows the call, not a TypeError", { timeout: 60_000 }, () => {
    for (const given of [undefined, {}, { workspace: 3 }]) {
      assert.throws(
        () => new Session(given as never),
        (error: Error) => error instanceof UsageError && /new Session\(\{ workspace: /.test(error.message),
      );
    }
  });
});

describe("SessionBase.close", () => {
  test("a second close waits for the cleanups the first one started", { timeout: 30_000 }, async () => {
    // The MCP server closes its session when the transport closes and again when it shuts down; the second caller
    // returned at once, so `serve` exited in the middle of a browser's cleanup and left its folder behind.
    const session = new SessionBase();
    const order: string[] = [];
    let finish!: () => void;
    session.onClose(() => new Promise<void>((resolve) => (finish = resolve)).then(() => order.push("cleanup ended")));
    const first = session.close();
    const second = session.close().then(() => order.push("second close returned"));
    assert.equal(session.closed, true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(order, [], "nothing returns while a cleanup runs");
    finish();
    await Promise.all([first, second]);
    assert.deepEqual(order, ["cleanup ended", "second close returned"]);
  });

  test("a failed cleanup fails every close, and the others still run", { timeout: 30_000 }, async () => {
    const session = new SessionBase();
    let ran = false;
    session.onClose(() => ran = true);
    session.onClose(() => Promise.reject(new Error("cleanup failed")));
    await assert.rejects(session.close(), AggregateError);
    await assert.rejects(session.close(), AggregateError);
    assert.equal(ran, true);
  });
});
