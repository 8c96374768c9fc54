// A private file of /etc made and removed between two commands (visudo's and useradd's work files are such) leaves
// the masks looked up before it went: bubblewrap then failed to mount over the missing entry, and every command with
// it, until the masks were looked up again 10 s later. In a file of its own, so that this process's first look at
// the masks sees the planted file.

import { test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed as run } from "./_sandbox_run.ts";
import { etcWritable } from "../_etc.ts";

const status = await bubblewrapStatus();

test("a private file of /etc removed after the masks were looked up does not fail the next command", {
  timeout: 60_000,
  skip: (status.path === undefined && `bubblewrap is unavailable here: ${status.reason}`) ||
    (!(await etcWritable()) && "/etc is not writable"),
}, async () => {
  const etc = await fsp.mkdtemp("/etc/toolfence-transient-");
  const workdir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-transient-"));
  const env = { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" };
  const sandboxed = async (script: string) => {
    const command = await sandboxArgv(["bash", "-c", script], { workdir, writable: [workdir], mode: "required" });
    const ran = await run(command, env);
    await command.release();
    return ran;
  };
  try {
    await fsp.chmod(etc, 0o755);
    await fsp.writeFile(path.join(etc, "work.tmp"), "PRIVATE", { mode: 0o600 });
    const first = await sandboxed(`cat ${etc}/work.tmp; echo first`);
    assert.doesNotMatch(first.stdout, /PRIVATE/, "the private file was read");
    assert.match(first.stdout, /first/, JSON.stringify(first));
    await fsp.rm(path.join(etc, "work.tmp"));
    const second = await sandboxed("echo second");
    assert.match(second.stdout, /second/, JSON.stringify(second));
  } finally {
    await fsp.rm(etc, { recursive: true, force: true });
    await fsp.rm(workdir, { recursive: true, force: true });
  }
});
