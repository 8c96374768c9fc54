// The process door's own files lie in the session temp dir (a command's output
// files, a checker's private folder), which the commands may change: a folder
// of them that a command made a link to somewhere outside is refused, never
// followed, so that no output is written out of the workspace.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as v from "valibot";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { tool } from "../../core/tool.ts";
import { callbackHost } from "../../policy/hosts.ts";

let workdir: string;
let outside: string;
let session: Session;
before(async () => {
  workdir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-door-files-")));
  outside = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-door-files-outside-")));
  // The program runs without the sandbox only with a person's yes: this host gives it.
  session = new Session({
    workspace: workdir,
    sandbox: "off",
    host: callbackHost({ confirm: () => true, choose: (request) => request.defaultChoice }),
  });
});
after(async () => {
  await session.close();
  await fsp.rm(workdir, { recursive: true, force: true });
  await fsp.rm(outside, { recursive: true, force: true });
});

// Starts a shell line or /bin/echo through the door, with its output in `folder` of the temp dir.
const runner = tool({
  name: "door_start",
  description: "Starts a process through the process door.",
  input: v.object({ kind: v.picklist(["shell", "program"]), folder: v.string() }),
  effects: ["runs_processes"],
  async run({ kind, folder }, ctx) {
    const started = kind === "shell"
      ? await ctx.policy.processes.start({
        kind,
        command: "echo OUTPUT",
        call: ctx,
        maxOutputBytes: 1 << 20,
        outputFolder: folder,
      }, ctx.signal)
      : await ctx.policy.processes.start({
        kind,
        argv: ["/bin/echo", "OUTPUT"],
        cwd: ctx.workspace.workdir,
        unconfined: "ask",
        maxOutputBytes: 1 << 20,
        outputFolder: folder,
      }, ctx.signal);
    await started.gone;
    return "started";
  },
});

describe("the process door's files in the session temp dir", () => {
  for (
    const [kind, folder, link] of [
      // Output folders lie in output/ (read-only inside a shell command's sandbox, but writable without it).
      ["shell", "door-out", "output/door-out"],
      ["program", "door-out-2", "output/door-out-2"],
      ["shell", "door-out-4", "output"],
      // A program's private folder (a checker's cache) is made under checks/.
      ["program", "door-out-3", "checks"],
    ] as const
  ) {
    test(`a ${kind} start refuses ${link} made a link out of the workspace`, { timeout: 60_000 }, async () => {
      const box = new ToolBox().register(runner);
      const temp = await session.workspace.tempDir();
      await fsp.rm(path.join(temp, link), { recursive: true, force: true });
      await fsp.mkdir(path.dirname(path.join(temp, link)), { recursive: true });
      // What `ln -s <outside> "$TMPDIR/<folder>"` in a command does.
      await fsp.symlink(outside, path.join(temp, link));
      try {
        const result = await box.call(session, "door_start", { kind, folder });
        assert.equal(result.errorCode, "path_changed", JSON.stringify(result));
        assert.deepEqual(await fsp.readdir(outside), [], "nothing was made outside");
      } finally {
        await fsp.unlink(path.join(temp, link));
      }
      // With the link gone the door makes its folder and runs.
      assert.equal((await box.call(session, "door_start", { kind, folder })).status, "success");
    });
  }
});
