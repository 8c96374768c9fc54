// The console host and its queue, without a browser: answers by tenant, what
// a question carries (tool, command, rule, reasons, a write's texts), the end
// of a question when its call is cancelled or nobody answers (no waiter left),
// and the race with the MCP client's elicitation.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { type ChoiceOutcome, type Host, ToolError } from "../../core/mod.ts";
import { Session } from "../../policy/mod.ts";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { consoleHost, MemoryQuestionQueue } from "../../adapters/mcp/console/mod.ts";

const OPTIONS = [{ value: "once", label: "Allow" }, { value: "deny", label: "Deny" }];

function question(tenant: string) {
  return { tenant, title: "Command confirmation", message: "Run it?", options: OPTIONS, defaultChoice: "deny" };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("the question queue", () => {
  test("a tenant sees and answers only its own questions", { timeout: 60_000 }, async () => {
    const queue = new MemoryQuestionQueue();
    const changes: string[] = [];
    const stop = queue.watch("alice", () => changes.push("alice"));
    const asked = queue.ask(question("alice"), new AbortController().signal);
    const [mine] = queue.pending("alice");
    assert.deepEqual(queue.pending("bob"), []);
    assert.equal(queue.answer("bob", mine.id, "once"), "unknown");
    assert.equal(queue.answer("alice", mine.id, "always"), "invalid_choice");
    assert.equal(queue.answer("alice", mine.id, "once"), true);
    assert.equal(await asked, "once");
    assert.equal(queue.answer("alice", mine.id, "once"), "unknown", "an answered question is gone");
    assert.deepEqual(changes, ["alice", "alice"]);
    stop();
  });

  test("a question whose call is cancelled leaves the queue, whatever the interleaving", {
    timeout: 30_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("answer", "abort", "other"), { minLength: 1, maxLength: 12 }),
        async (steps) => {
          const queue = new MemoryQuestionQueue();
          const controllers = steps.map(() => new AbortController());
          const answers = controllers.map((c) =>
            queue.ask(question("alice"), c.signal).then(() => "answered", () => "aborted")
          );
          const ids = queue.pending("alice").map((q) => q.id);
          steps.forEach((step, i) => {
            if (step === "answer") queue.answer("alice", ids[i], "deny");
            else if (step === "abort") controllers[i].abort(new Error("cancelled"));
            else assert.equal(queue.answer("bob", ids[i], "deny"), "unknown");
          });
          for (const c of controllers) c.abort(new Error("the call ended"));
          const settled = await Promise.all(answers);
          steps.forEach((step, i) => assert.equal(settled[i], step === "answer" ? "answered" : "aborted"));
          assert.deepEqual(queue.pending("alice"), []);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("the console host", () => {
  test("a person's answer counts as a person's; a yes/no question has yes and no", { timeout: 60_000 }, async () => {
    const queue = new MemoryQuestionQueue();
    const host = consoleHost(queue, "alice");
    const asked = host.confirm({ title: "Deploy", message: "Deploy now?", defaultChoice: false });
    const [pending] = queue.pending("alice");
    assert.deepEqual(pending.options.map((o) => o.value), ["yes", "no"]);
    assert.equal(pending.defaultChoice, "no");
    queue.answer("alice", pending.id, "yes");
    assert.deepEqual(await asked, { choice: true, source: "user" });
  });

  test("nobody answering within the time ends the question with question_unanswered", { timeout: 60_000 }, async () => {
    const queue = new MemoryQuestionQueue();
    const host = consoleHost(queue, "alice", { timeoutMs: 50 });
    await assert.rejects(
      host.choose({ title: "Write permission", message: "Write a?", options: OPTIONS, defaultChoice: "deny" }),
      (error: unknown) => error instanceof ToolError && error.code === "question_unanswered",
    );
    assert.deepEqual(queue.pending("alice"), []);
  });

  test("a cancelled call withdraws its question", { timeout: 60_000 }, async () => {
    const queue = new MemoryQuestionQueue();
    const host = consoleHost(queue, "alice");
    const cancel = new AbortController();
    const asked = host.choose({ title: "T", message: "M", options: OPTIONS, defaultChoice: "deny" }, cancel.signal);
    assert.equal(queue.pending("alice").length, 1);
    cancel.abort(new Error("the client cancelled"));
    await assert.rejects(asked, /the client cancelled/);
    assert.deepEqual(queue.pending("alice"), []);
  });

  test("a call whose time runs out while its question waits ends as timed out, and the question leaves", {
    timeout: 30_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-console-timeout-"));
    const queue = new MemoryQuestionQueue();
    const session = new Session({ workspace: dir, host: consoleHost(queue, "alice"), sandbox: "off" });
    try {
      await writeFile(join(dir, "notes.txt"), "one\n");
      const asked = new Promise<void>((resolve) => {
        const stop = queue.watch("alice", () => {
          if (queue.pending("alice").length > 0) stop(), resolve();
        });
      });
      const result = new ToolBox().withDefaults("fs").call(
        session,
        "write_file",
        { path: "notes.txt", content: "two\n" },
        { timeoutMs: 1_500 },
      );
      await asked;
      const ended = await result;
      assert.equal(ended.status, "timed_out");
      assert.deepEqual(queue.pending("alice"), []);
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("with elicitation: the first answer that counts wins and the other question is withdrawn", {
    timeout: 60_000,
  }, async () => {
    const queue = new MemoryQuestionQueue();
    let answerClient!: (outcome: ChoiceOutcome<string>) => void;
    let clientSignal: AbortSignal | undefined;
    const elicitation: Host = {
      choose: <T extends string>(_request: unknown, signal?: AbortSignal) => {
        clientSignal = signal;
        return new Promise<ChoiceOutcome<T>>((resolve) => (answerClient = resolve as typeof answerClient));
      },
      confirm: () => Promise.reject(new ToolError("cannot ask", { code: "permission_denied" })),
    };
    const host = consoleHost(queue, "alice", { elicitation });
    // The client answers first: the console's question leaves the page.
    const first = host.choose({ title: "T", message: "M", options: OPTIONS, defaultChoice: "deny" });
    await until(() => answerClient !== undefined);
    answerClient({ choice: "once", source: "client" });
    assert.deepEqual(await first, { choice: "once", source: "client" });
    assert.deepEqual(queue.pending("alice"), []);
    // The person answers first: the client's elicitation is cancelled.
    const second = host.choose({ title: "T", message: "M", options: OPTIONS, defaultChoice: "deny" });
    await until(() => queue.pending("alice").length === 1);
    queue.answer("alice", queue.pending("alice")[0].id, "deny");
    assert.deepEqual(await second, { choice: "deny", source: "user" });
    assert.equal(clientSignal?.aborted, true);
    // A client that cannot ask is no answer: the console still waits, and answers.
    const third = host.confirm({ title: "T", message: "M", defaultChoice: false });
    await until(() => queue.pending("alice").length === 1);
    queue.answer("alice", queue.pending("alice")[0].id, "no");
    assert.deepEqual(await third, { choice: false, source: "user" });
    // Only a person may answer: the client's answer does not end the question.
    const fourth = host.choose({
      title: "Protected path",
      message: "M",
      options: OPTIONS,
      defaultChoice: "deny",
      requirePerson: true,
    });
    await until(() => queue.pending("alice").length === 1);
    answerClient({ choice: "once", source: "client" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(queue.pending("alice").length, 1);
    queue.answer("alice", queue.pending("alice")[0].id, "deny");
    assert.deepEqual(await fourth, { choice: "deny", source: "user" });
  });

  test("a question carries the tool, the command, policy explain's reasons and a write's texts", {
    timeout: 30_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-console-host-"));
    const queue = new MemoryQuestionQueue();
    const session = new Session({ workspace: dir, host: consoleHost(queue, "alice"), sandbox: "off" });
    const box = new ToolBox().withDefaults("fs", "cmd");
    // A failed assertion must not leave a call waiting for an answer.
    const ending = new AbortController();
    try {
      const command = box.call(session, "bash", { command: "touch made.txt" }, { callId: "c1", signal: ending.signal });
      await until(() => queue.pending("alice").length === 1);
      const [asked] = queue.pending("alice");
      assert.equal(asked.about?.tool, "bash");
      assert.equal(asked.about?.callId, "c1");
      assert.equal(asked.about?.command, "touch made.txt");
      assert.ok(
        asked.about?.reasons?.some((r) => /`touch` is not on the allowlist/.test(r)),
        String(asked.about?.reasons),
      );
      // Without a place to save rules, a command's question is yes or no.
      assert.equal(queue.answer("alice", asked.id, "no"), true);
      assert.equal((await command).status, "skipped");

      await writeFile(join(dir, "notes.txt"), "one\n");
      const write = box.call(session, "write_file", { path: "notes.txt", content: "two\n" }, { signal: ending.signal });
      await until(() => queue.pending("alice").length === 1);
      const [overwrite] = queue.pending("alice");
      assert.equal(overwrite.about?.tool, "write_file");
      assert.equal(overwrite.about?.path, join(dir, "notes.txt"));
      assert.equal(overwrite.about?.before, "one\n");
      assert.equal(overwrite.about?.after, "two\n");
      assert.equal(queue.answer("alice", overwrite.id, "once"), true);
      assert.equal((await write).status, "success");
    } finally {
      ending.abort(new Error("the test ended"));
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
