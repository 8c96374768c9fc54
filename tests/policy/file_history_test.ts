// Checkpoints and undo in the real workspace (Session.createCheckpoint,
// restoreCheckpoint, undoCalls): exact bytes and modes back after edit_file,
// write_file, apply_patch, move and delete; refusals that name the file when
// it was changed since (by a later call, by another process, inside a folder
// a call created), and that change nothing; a history kept on disk that a
// second process restores from; a writer racing an undo.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import process from "node:process";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { openFence } from "../../policy/fence.ts";
import { ToolError } from "../../core/errors.ts";
import { diskState } from "../tools/_file_changes.ts";
import { exited } from "../_exited.ts";
import { IS_DENO } from "../_runtime.ts";

let root: string;
let workdir: string;
const box = new ToolBox().withDefaults("fs", "patch");

before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-undo-")));
});

after(async () => {
  await fsp.rm(root, { recursive: true, force: true });
});

let counter = 0;

async function fresh(): Promise<{ session: Session; call: (name: string, args: unknown) => Promise<string> }> {
  workdir = path.join(root, `W${++counter}`);
  await fsp.mkdir(path.join(workdir, "src"), { recursive: true });
  await fsp.writeFile(path.join(workdir, "src", "main.ts"), "export const a = 1;\r\nexport const b = 2;\r\n");
  await fsp.chmod(path.join(workdir, "src", "main.ts"), 0o640);
  await fsp.writeFile(path.join(workdir, "tool.sh"), "#!/bin/sh\necho tool\n");
  await fsp.chmod(path.join(workdir, "tool.sh"), 0o755);
  await fsp.writeFile(path.join(workdir, "data.bin"), new Uint8Array([0xef, 0xbb, 0xbf, 0, 1, 2, 0xff, 0xfe]));
  await fsp.chmod(path.join(workdir, "data.bin"), 0o600);
  await fsp.symlink("src/main.ts", path.join(workdir, "link"));
  const session = new Session({ workspace: workdir, autoConfirm: true, fence: openFence() });
  const call = async (name: string, args: unknown) => {
    const callId = `call-${name}-${++counter}`;
    const result = await box.call(session, name, args, { callId });
    assert.equal(result.status, "success", `${name}: ${result.error}`);
    assert.ok(result.filesystemChanges.length > 0, `${name} changed something`);
    return callId;
  };
  return { session, call };
}

function snapshot(): Record<string, unknown> {
  return Object.fromEntries(diskState(workdir));
}

async function refusal(promise: Promise<unknown>, code: string, mentions: string): Promise<ToolError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof ToolError, `expected a ToolError, got ${error}`);
  assert.equal(error.code, code, error.message);
  assert.ok(error.message.includes(mentions), `${error.message} names ${mentions}`);
  return error;
}

describe("undo restores exact bytes and modes", { concurrency: false }, () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["edit_file", "edit_file", { path: "src/main.ts", old_text: "a = 1", new_text: "a = 100" }],
    ["write_file over an existing file", "write_file", { path: "data.bin", content: "text now\n" }],
    ["write_file of a new file in new folders", "write_file", { path: "docs/x/new.md", content: "new\n" }],
    ["apply_patch", "apply_patch", {
      patch: "*** Begin Patch\n*** Add File: added.txt\n+added\n*** Update File: tool.sh\n*** Move to: bin/tool.sh\n" +
        "@@\n-echo tool\n+echo moved\n*** Delete File: src/main.ts\n*** End Patch\n",
    }],
    ["move of a file onto another", "move", { src: "tool.sh", dst: "data.bin" }],
    ["move of a folder", "move", { src: "src", dst: "lib/src" }],
    ["delete of a file", "delete", { path: "data.bin" }],
    ["delete of a symlink", "delete", { path: "link" }],
    ["delete of a folder", "delete", { path: "src", recursive: true }],
    ["copy of a folder", "copy", { src: "src", dst: "src2" }],
    ["mkdir", "mkdir", { path: "a/b" }],
  ];
  for (const [title, name, args] of cases) {
    test(`${title}: undoCalls puts every byte and mode back`, { timeout: 60_000 }, async () => {
      const { session, call } = await fresh();
      const initial = snapshot();
      const id = await call(name, args);
      assert.notDeepEqual(snapshot(), initial);
      const report = await session.undoCalls([id]);
      assert.ok(report.reverted.length > 0);
      assert.deepEqual(snapshot(), initial);
      // Undone once: the same call cannot be undone twice into a different state.
      await session.undoCalls([id]);
      assert.deepEqual(snapshot(), initial);
      await session.close();
    });
  }

  test("a checkpoint restores a whole sequence of calls", { timeout: 60_000 }, async () => {
    const { session, call } = await fresh();
    const initial = snapshot();
    const checkpoint = session.createCheckpoint("before the edits");
    await call("edit_file", { path: "src/main.ts", old_text: "b = 2", new_text: "b = 3" });
    await call("write_file", { path: "src/main.ts", content: "replaced\n" });
    await call("copy", { src: "src", dst: "copy" });
    await call("move", { src: "copy/main.ts", dst: "moved.ts" });
    await call("delete", { path: "tool.sh" });
    const middle = session.createCheckpoint();
    const atMiddle = snapshot();
    await call("write_file", { path: "tool.sh", content: "again\n" });
    await session.restoreCheckpoint(middle.id);
    assert.deepEqual(snapshot(), atMiddle);
    await session.restoreCheckpoint(checkpoint.id);
    assert.deepEqual(snapshot(), initial);
    assert.deepEqual(session.history.checkpoints().map((c) => c.label), ["before the edits", undefined]);
    await session.close();
  });
});

describe("undo refuses, naming the file, and changes nothing", { concurrency: false }, () => {
  test("a file changed since by another process", { timeout: 60_000 }, async () => {
    const { session, call } = await fresh();
    const id = await call("edit_file", { path: "src/main.ts", old_text: "a = 1", new_text: "a = 2" });
    await fsp.appendFile(path.join(workdir, "src", "main.ts"), "// by hand\n");
    const now = snapshot();
    await refusal(session.undoCalls([id]), "undo_conflict", "src/main.ts");
    assert.deepEqual(snapshot(), now);
    await session.close();
  });

  test("only the mode changed since", { timeout: 60_000 }, async () => {
    const { session, call } = await fresh();
    const id = await call("write_file", { path: "tool.sh", content: "#!/bin/sh\n" });
    await fsp.chmod(path.join(workdir, "tool.sh"), 0o700);
    await refusal(session.undoCalls([id]), "undo_conflict", "tool.sh");
    await session.close();
  });

  test("a file changed since by a later call: that call is named", { timeout: 60_000 }, async () => {
    const { session, call } = await fresh();
    const first = await call("edit_file", { path: "src/main.ts", old_text: "a = 1", new_text: "a = 2" });
    const second = await call("edit_file", { path: "src/main.ts", old_text: "a = 2", new_text: "a = 3" });
    const now = snapshot();
    await refusal(session.undoCalls([first]), "undo_conflict", second);
    assert.deepEqual(snapshot(), now);
    // Both together, newest first, is fine.
    const initial = snapshot();
    await session.undoCalls([first, second]);
    assert.notDeepEqual(snapshot(), initial);
    assert.equal(
      await fsp.readFile(path.join(workdir, "src", "main.ts"), "utf8"),
      "export const a = 1;\r\nexport const b = 2;\r\n",
    );
    await session.close();
  });

  test(
    "a deleted file put back by another process; a moved file's source taken again",
    { timeout: 60_000 },
    async () => {
      const { session, call } = await fresh();
      const deleted = await call("delete", { path: "data.bin" });
      await fsp.writeFile(path.join(workdir, "data.bin"), "someone else's\n");
      await refusal(session.undoCalls([deleted]), "undo_conflict", "data.bin");
      const moved = await call("move", { src: "tool.sh", dst: "t.sh" });
      await fsp.writeFile(path.join(workdir, "tool.sh"), "new one\n");
      await refusal(session.undoCalls([moved]), "undo_conflict", "tool.sh");
      await session.close();
    },
  );

  test("a file created since inside a folder the call created", { timeout: 60_000 }, async () => {
    const { session, call } = await fresh();
    const id = await call("write_file", { path: "gen/out.txt", content: "x\n" });
    await fsp.writeFile(path.join(workdir, "gen", "other.txt"), "not the call's\n");
    const now = snapshot();
    await refusal(session.undoCalls([id]), "undo_conflict", "gen/other.txt");
    assert.deepEqual(snapshot(), now);
    await session.close();
  });

  test("an unknown call id; an unknown checkpoint; a change without a before-image", { timeout: 60_000 }, async () => {
    const { session, call } = await fresh();
    await refusal(session.undoCalls(["never-made"]), "undo_unavailable", "never-made");
    await refusal(session.restoreCheckpoint("cp-nope"), "unknown_checkpoint", "cp-nope");
    const small = new Session({
      workspace: workdir,
      autoConfirm: true,
      fence: openFence(),
      history: { maxImageBytes: 4 },
    });
    const result = await box.call(small, "write_file", { path: "tool.sh", content: "x" }, { callId: "big" });
    assert.equal(result.status, "success");
    await refusal(small.undoCalls(["big"]), "undo_unavailable", "tool.sh");
    await small.close();
    void call;
    await session.close();
  });
});

describe("a history on disk", { concurrency: false }, () => {
  test("another session (a later process) restores a checkpoint from it", { timeout: 60_000 }, async () => {
    const { session } = await fresh();
    await session.close();
    const dir = path.join(root, `history-${counter}`);
    const initial = snapshot();
    const first = new Session({ workspace: workdir, autoConfirm: true, fence: openFence(), history: { dir } });
    const checkpoint = first.createCheckpoint();
    for (
      const [name, args] of [
        ["edit_file", { path: "src/main.ts", old_text: "a = 1", new_text: "a = 9" }],
        ["delete", { path: "data.bin" }],
        ["move", { src: "tool.sh", dst: "bin/tool" }],
      ] as const
    ) {
      assert.equal((await box.call(first, name, args)).status, "success");
    }
    await first.close();
    const second = new Session({ workspace: workdir, fence: openFence(), history: { dir } });
    await second.restoreCheckpoint(checkpoint.id);
    assert.deepEqual(snapshot(), initial);
    await second.close();
  });

  test("refused inside the workspace, where the agent could forge it", { timeout: 60_000 }, async () => {
    const { session } = await fresh();
    await session.close();
    assert.throws(
      () => new Session({ workspace: workdir, fence: openFence(), history: { dir: path.join(workdir, ".history") } }),
      (e: unknown) => e instanceof ToolError && e.message.includes("inside"),
    );
  });

  test("a forged journal naming a path outside the workspace is refused", { timeout: 60_000 }, async () => {
    const { session } = await fresh();
    await session.close();
    const dir = path.join(root, `forged-${counter}`);
    await fsp.mkdir(dir);
    const outside = path.join(root, `victim-${counter}.txt`);
    await fsp.writeFile(outside, "victim\n");
    const state = { type: "file", size: 7, sha256: null, mode: 0o644 };
    const lines = [
      { checkpoint: { id: "cp-x", seq: 1, createdAt: new Date().toISOString() } },
      {
        entry: {
          seq: 1,
          toolName: "write_file",
          change: { path: path.relative(workdir, outside), change: "created", before: null, after: state },
        },
      },
    ];
    await fsp.writeFile(path.join(dir, "journal.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const victim = new Session({ workspace: workdir, fence: openFence(), history: { dir } });
    await refusal(victim.restoreCheckpoint("cp-x"), "outside_workspace", "not within the workspace");
    assert.equal(await fsp.readFile(outside, "utf8"), "victim\n");
    await victim.close();
  });
});

describe("a writer racing an undo", () => {
  test(
    "each round the file ends as the writer left it or exactly as before the edit, never torn",
    { timeout: 60_000 },
    async () => {
      const { session } = await fresh();
      const file = path.join(workdir, "src", "main.ts");
      const original = await fsp.readFile(file);
      let refused = 0;
      let undone = 0;
      for (let round = 0; round < 12; round++) {
        await fsp.writeFile(file, original);
        await fsp.chmod(file, 0o640);
        const callId = `race-${round}`;
        const edited = await box.call(session, "edit_file", {
          path: "src/main.ts",
          old_text: "a = 1",
          new_text: `a = ${round}0`,
        }, {
          callId,
        });
        assert.equal(edited.status, "success");
        const racer = spawn(process.execPath, [
          ...(IS_DENO ? ["eval"] : ["-e"]),
          `require("node:fs").writeFileSync(${JSON.stringify(file)}, "racer ${round}\\n")`,
        ], { stdio: "ignore" });
        const racerExit = exited(racer);
        const outcome = await session.undoCalls([callId]).then(() => "undone", (e: ToolError) => e.code);
        await racerExit;
        const content = await fsp.readFile(file, "utf8");
        assert.ok(
          content === `racer ${round}\n` || content === original.toString(),
          `round ${round}: ${JSON.stringify(content)} (${outcome})`,
        );
        if (outcome === "undone") undone++;
        else {
          assert.equal(outcome, "undo_conflict");
          refused++;
        }
      }
      assert.equal(undone + refused, 12);
      await session.close();
    },
  );
});
