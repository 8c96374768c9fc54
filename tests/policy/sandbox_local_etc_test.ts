// The private entries of /usr/local/etc (the configuration of what was installed under /usr/local: a service's own
// config with its password, the global npmrc) are masked like those of /etc: the read view shows /usr whole, and a
// command of a server run as root read a 0600 root file there. In a file of its own, so that this process's first
// look at the masks sees the planted entries.

import { test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed as run } from "./_sandbox_run.ts";

const status = await bubblewrapStatus();
const LOCAL_ETC = "/usr/local/etc";

async function localEtcWritable(): Promise<boolean> {
  try {
    await fsp.mkdir(LOCAL_ETC, { recursive: true });
    await fsp.rm(await fsp.mkdtemp(path.join(LOCAL_ETC, "toolfence-probe-")), { recursive: true });
    return true;
  } catch {
    return false;
  }
}

test("the private files and folders of /usr/local/etc are masked; what others may read stays readable", {
  timeout: 60_000,
  skip: (status.path === undefined && `bubblewrap is unavailable here: ${status.reason}`) ||
    (!(await localEtcWritable()) && `${LOCAL_ETC} is not writable`),
}, async () => {
  const planted = await fsp.mkdtemp(path.join(LOCAL_ETC, "toolfence-service-"));
  const workdir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-local-etc-"));
  try {
    await fsp.chmod(planted, 0o755);
    await fsp.writeFile(path.join(planted, "db.conf"), "password=LOCAL-ETC-FILE-SECRET\n", { mode: 0o600 });
    await fsp.writeFile(path.join(planted, "public.conf"), "port=5432\n", { mode: 0o644 });
    await fsp.mkdir(path.join(planted, "keys"), { mode: 0o700 });
    await fsp.writeFile(path.join(planted, "keys", "key.pem"), "LOCAL-ETC-FOLDER-SECRET\n", { mode: 0o644 });
    await fsp.chmod(path.join(planted, "keys"), 0o700);
    const script = `cat ${planted}/db.conf ${planted}/keys/key.pem ${planted}/public.conf 2>&1; echo done`;
    const command = await sandboxArgv(["bash", "-c", script], { workdir, writable: [workdir], mode: "required" });
    const ran = await run(command, { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });
    await command.release();
    assert.doesNotMatch(ran.stdout, /LOCAL-ETC-FILE-SECRET/, "the 0600 file was read");
    assert.doesNotMatch(ran.stdout, /LOCAL-ETC-FOLDER-SECRET/, "the 0700 folder was entered");
    assert.match(ran.stdout, /port=5432\ndone\n$/, JSON.stringify(ran));
  } finally {
    await fsp.rm(planted, { recursive: true, force: true });
    await fsp.rm(workdir, { recursive: true, force: true });
  }
});
