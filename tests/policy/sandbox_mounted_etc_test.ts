// The private entries of a file system mounted below /etc (a container's secret volume at /etc/app, a tmpfs of keys)
// are masked like those of /etc itself: the sandbox binds /etc whole, its mounts included. Until 2026-12-06 the look
// for them was `find -xdev`, which never entered such a mount, and a command of a server run as root read a 0600 key
// there while the same key beside it, on /etc's own file system, was masked. In a file of its own, so that this
// process's first look at the masks (kept 10 s) sees the planted mount; it needs root (to mount) and is skipped
// elsewhere.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed as run } from "./_sandbox_run.ts";

const status = await bubblewrapStatus();

// How long a process keeps the masks it looked up (internal/sandbox_mounts.ts, 10 s), and a margin.
const MASK_LOOKS_KEPT_MS = 10_500;

// A fresh folder below /etc with a tmpfs mounted on it, or why not.
async function mountedFolder(): Promise<string> {
  if (status.path === undefined) throw new Error(`bubblewrap is unavailable here: ${status.reason}`);
  const dir = await fsp.mkdtemp("/etc/toolfence-mounted-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0755", "toolfence-test", dir], { stdio: "ignore" });
    return dir;
  } catch (error) {
    await fsp.rmdir(dir);
    throw error;
  }
}

const mounted = await mountedFolder().catch((error) => error as Error);

test("a private file or folder on a file system mounted below /etc is masked", {
  timeout: 60_000,
  skip: mounted instanceof Error && `no tmpfs can be mounted below /etc here: ${mounted.message}`,
}, async () => {
  const dir = mounted as string;
  const workdir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-mounted-etc-"));
  try {
    await fsp.writeFile(path.join(dir, "key.pem"), "MOUNTED-FILE-SECRET\n", { mode: 0o600 });
    await fsp.writeFile(path.join(dir, "public.conf"), "port=5432\n", { mode: 0o644 });
    await fsp.mkdir(path.join(dir, "keys"), { mode: 0o700 });
    await fsp.writeFile(path.join(dir, "keys", "k.pem"), "MOUNTED-FOLDER-SECRET\n", { mode: 0o644 });
    await fsp.chmod(path.join(dir, "keys"), 0o700);
    const script = `cat ${dir}/key.pem ${dir}/keys/k.pem ${dir}/public.conf 2>&1; echo done`;
    const command = await sandboxArgv(["bash", "-c", script], { workdir, writable: [workdir], mode: "required" });
    const ran = await run(command, { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });
    await command.release();
    assert.doesNotMatch(ran.stdout, /MOUNTED-FILE-SECRET/, "a 0600 file on the mount was read");
    assert.doesNotMatch(ran.stdout, /MOUNTED-FOLDER-SECRET/, "a 0700 folder on the mount was entered");
    assert.match(ran.stdout, /port=5432\n/, JSON.stringify(ran));
    assert.match(ran.stdout, /done\n$/);
  } finally {
    // As in sandbox_local_etc_test: public first, so that no look of another process lists the entries from then
    // on, and gone once every look that may have listed them is stale.
    for (const entry of ["keys", "key.pem"]) await fsp.chmod(path.join(dir, entry), 0o755).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, MASK_LOOKS_KEPT_MS));
    execFileSync("umount", [dir], { stdio: "ignore" });
    await fsp.rmdir(dir);
    await fsp.rm(workdir, { recursive: true, force: true });
  }
});
