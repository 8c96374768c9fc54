// A command whose sandbox bubblewrap fails to make, because a path its mounts were planned on went meanwhile, starts
// again once on a new look at the machine: nothing of it ran the first time. Before, such a command failed with
// bubblewrap's own error: in CI, another test removed the ssh host key it had planted in /etc/ssh between a command's
// look at the masks (kept 10 s) and its start, and `echo 5 >> f` ended "bwrap: Can't create file at
// /etc/ssh/ssh_host_toolfence23846_key: Read-only file system". Here the caller's home folder, which every shell
// command's sandbox covers with a private tmpfs, is removed after the look: deterministic, as the home is not looked
// at again before the start. In a file of its own: HOME is process-wide.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Session } from "../../policy/session.ts";
import { callbackHost } from "../../policy/hosts.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { ToolBox } from "../../toolbox.ts";
import { cmdTools } from "../../tools/cmd/mod.ts";
import { etcWritable } from "../_etc.ts";

const status = await bubblewrapStatus();

const skip = (status.path === undefined && `bubblewrap is unavailable here: ${status.reason}`) ||
  (!(await etcWritable()) && "/etc is not writable");
const box = new ToolBox().register(...cmdTools());
let workdir: string;
let etc: string;
let session: Session;
const home = process.env.HOME;

before(async () => {
  workdir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-setup-retry-")));
  session = new Session({
    workspace: workdir,
    sandbox: "required",
    host: callbackHost({ confirm: () => true, choose: (request) => request.defaultChoice }),
  });
});

after(async () => {
  await session.close();
  await fsp.rm(workdir, { recursive: true, force: true });
  if (etc !== undefined) await fsp.rm(etc, { recursive: true, force: true });
});

test("a home folder removed after the sandbox's look does not fail the next command", {
  timeout: 60_000,
  skip,
}, async () => {
  // The home folder lies where the sandbox shows the host read-only (/etc), so that bubblewrap cannot make its mount
  // point once it is gone; only root may make it there.
  etc = await fsp.mkdtemp("/etc/toolfence-setup-retry-");
  await fsp.chmod(etc, 0o755);
  const gone = path.join(etc, "home");
  await fsp.mkdir(gone, { mode: 0o755 });
  process.env.HOME = gone;
  let second;
  try {
    const first = await box.call(session, "bash", { command: "echo first > first.txt; echo first" });
    assert.equal(first.status, "success", JSON.stringify(first.output));
    await fsp.rm(gone, { recursive: true });
    // Within the 10 s the look at the masks is kept.
    second = await box.call(session, "bash", { command: "echo second >> first.txt; echo second" });
  } finally {
    if (home === undefined) delete process.env.HOME;
    else process.env.HOME = home;
  }
  assert.equal(second.status, "success", JSON.stringify(second.output));
  const output = second.output as { stdout: string; stderr: string; exit_code: number };
  assert.equal(output.stdout, "second\n");
  assert.equal(output.stderr, "", "bubblewrap's failure is not part of the command's output");
  // Once: the line ran a single time.
  assert.equal(await fsp.readFile(path.join(workdir, "first.txt"), "utf8"), "first\nsecond\n");
  // And what it changed is reported. Before, the first attempt's release looked at the workspace for the protected
  // paths it made (none: it never ran), which closed the command's window before the command ran in its second
  // sandbox: its change report was empty, and the change reported nowhere (workspace_changes_test, CI run ci13).
  assert.deepEqual(second.filesystemChanges.map((change) => `${change.change} ${change.path}`), [
    "modified first.txt",
  ]);
});

test("the sandbox's ready line never reaches a command's output", { timeout: 60_000, skip }, async () => {
  const result = await box.call(session, "bash", {
    command: "echo err >&2; printf 'toolfence:sandbox-ready' >&2; echo out",
  });
  assert.equal(result.status, "success", JSON.stringify(result.output));
  const output = result.output as { stdout: string; stderr: string };
  assert.equal(output.stdout, "out\n");
  assert.equal(output.stderr, "err\ntoolfence:sandbox-ready");
});

test("a command that prints bubblewrap's failure and the ready line itself, then fails, runs once", {
  timeout: 60_000,
  skip,
}, async () => {
  const result = await box.call(session, "bash", {
    command: "echo run >> runs.txt; printf 'bwrap: Can'\\''t mkdir /etc/x: Read-only file system\\n' >&2; " +
      "printf '\\000toolfence:sandbox-ready\\000' >&2; exit 1",
  });
  assert.equal(result.status, "error", JSON.stringify(result.output));
  const output = result.output as { stderr: string; exit_code: number };
  assert.equal(output.exit_code, 1);
  assert.equal(output.stderr, "bwrap: Can't mkdir /etc/x: Read-only file system\n\0toolfence:sandbox-ready\0");
  assert.equal(await fsp.readFile(path.join(workdir, "runs.txt"), "utf8"), "run\n");
});
