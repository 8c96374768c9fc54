// The process door reports what a shell command changed in the workspace
// itself: it takes the "before" image right before the spawn, and the run's
// outcome gives the changes (recorded in the call's result), once; a tool
// cannot start a shell line without naming the call the changes go to.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as v from "valibot";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import type { FileChange } from "../../core/effects.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { execFile } from "node:child_process";

const hasBwrap = (await bubblewrapStatus()).path !== undefined;
let workdir: string;
let session: Session;
before(async () => {
  workdir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-door-changes-")));
  await fsp.writeFile(path.join(workdir, "old.txt"), "old\n");
  session = new Session({ workspace: workdir, autoConfirm: true });
});
after(async () => {
  await session.close();
  await fsp.rm(workdir, { recursive: true, force: true });
});

// A tool that starts a shell line through the door and returns the door's change reports (twice).
const runner = tool({
  name: "door_run",
  description: "Runs a line through the process door.",
  input: v.object({ command: v.string() }),
  effects: ["runs_processes", "writes_files"],
  recordsFileChanges: true,
  async run({ command }, ctx) {
    const started = await ctx.policy.processes.start({
      kind: "shell",
      command,
      call: ctx,
      maxOutputBytes: 1 << 20,
      outputFolder: "door-test",
    }, ctx.signal);
    await started.process.exited;
    const first: FileChange[] = await started.changes();
    const again: FileChange[] = await started.changes();
    return { first: first.map((c) => `${c.change} ${c.path}`), again: again.length };
  },
});

describe("the process door reports a command's changes", () => {
  test("created, modified and deleted files come in the run's outcome and the call's result, once", {
    timeout: 60_000,
  }, async () => {
    const box = new ToolBox().register(runner);
    const result = await box.call(session, "door_run", {
      command: "printf new > new.txt && printf changed > old.txt && mkdir -p d && printf x > d/x.txt",
    });
    assert.equal(result.status, "success", JSON.stringify(result));
    const output = result.output as { first: string[]; again: number };
    assert.deepEqual(output.first, ["created d", "created d/x.txt", "created new.txt", "modified old.txt"]);
    assert.equal(output.again, 0);
    const recorded = (result.filesystemChanges ?? []).map((c) => `${c.change} ${c.path}`).sort();
    assert.deepEqual(recorded, output.first.slice().sort());
  });
});

describe("the sandbox's own mount points are not a command's changes", () => {
  test("in a git checkout, a writing line reports what it wrote, never the protected paths' placeholders", {
    timeout: 60_000,
    skip: !hasBwrap,
  }, async () => {
    // `git init` leaves protected paths missing (.git/config.worktree among them): the sandbox makes a placeholder
    // for each, read-only inside, and removes it after the command. The comparison saw one in its before snapshot
    // and none after, and every writing command in a checkout reported `.git/config.worktree` deleted.
    const checkout = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-door-git-")));
    const own = new Session({ workspace: checkout, autoConfirm: true });
    try {
      await new Promise<void>((resolve, reject) =>
        execFile("git", ["init", "-q"], { cwd: checkout }, (error) => error ? reject(error) : resolve())
      );
      const box = new ToolBox().register(runner);
      for (const command of ["printf a > a.txt", "printf b > b.txt && rm a.txt"]) {
        const result = await box.call(own, "door_run", { command });
        assert.equal(result.status, "success", JSON.stringify(result));
        const { first } = result.output as { first: string[] };
        assert.deepEqual(first, command.includes("rm") ? ["created b.txt", "deleted a.txt"] : ["created a.txt"]);
      }
    } finally {
      await own.close();
      await fsp.rm(checkout, { recursive: true, force: true });
    }
  });
});
