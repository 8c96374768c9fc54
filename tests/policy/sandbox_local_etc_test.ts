// The private entries of /usr/local/etc (the configuration of what was installed under /usr/local: a service's own
// config with its password, the global npmrc) and /usr/etc are masked like those of /etc: the read view shows /usr
// whole, and a command of a server run as root read a 0600 root file there. In a file of its own, so that this
// process's first look at the masks (kept 10 s) sees the planted entries.

import { test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed as run } from "./_sandbox_run.ts";

const status = await bubblewrapStatus();
const FOLDERS = ["/usr/local/etc", "/usr/etc"];

// Whether `folder` can be written here (made if missing: then `made` says so, and the test removes it after).
async function writable(folder: string): Promise<{ folder: string; made: boolean } | undefined> {
  try {
    const made = await fsp.stat(folder).then(() => false, () => true);
    await fsp.mkdir(folder, { recursive: true });
    await fsp.rm(await fsp.mkdtemp(path.join(folder, "toolfence-probe-")), { recursive: true });
    return { folder, made };
  } catch {
    return undefined;
  }
}

// How long a process keeps the masks it looked up (internal/sandbox_mounts.ts, 10 s), and a margin.
const MASK_LOOKS_KEPT_MS = 10_500;

// Every entry under `dir` readable by others.
async function makePublic(dir: string): Promise<void> {
  for (const entry of await fsp.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])) {
    const full = path.join(entry.parentPath, entry.name);
    await fsp.chmod(full, entry.isDirectory() ? 0o755 : 0o644).catch(() => {});
  }
  await fsp.chmod(dir, 0o755).catch(() => {});
}

const usable = status.path === undefined
  ? []
  : (await Promise.all(FOLDERS.map(writable))).filter((f) => f !== undefined);

test("the private files and folders of /usr/local/etc and /usr/etc are masked; what others may read stays readable", {
  timeout: 60_000,
  skip: (status.path === undefined && `bubblewrap is unavailable here: ${status.reason}`) ||
    (usable.length === 0 && `${FOLDERS.join(" and ")} are not writable`),
}, async () => {
  const workdir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-local-etc-"));
  const planted: string[] = [];
  try {
    for (const { folder } of usable) {
      const dir = await fsp.mkdtemp(path.join(folder, "toolfence-service-"));
      planted.push(dir);
      await fsp.chmod(dir, 0o755);
      await fsp.writeFile(path.join(dir, "db.conf"), `password=FILE-SECRET ${folder}\n`, { mode: 0o600 });
      await fsp.writeFile(path.join(dir, "public.conf"), `port=5432 ${folder}\n`, { mode: 0o644 });
      await fsp.mkdir(path.join(dir, "keys"), { mode: 0o700 });
      await fsp.writeFile(path.join(dir, "keys", "key.pem"), `FOLDER-SECRET ${folder}\n`, { mode: 0o644 });
      await fsp.chmod(path.join(dir, "keys"), 0o700);
    }
    const script = planted.map((dir) => `cat ${dir}/db.conf ${dir}/keys/key.pem ${dir}/public.conf 2>&1; `).join("") +
      "echo done";
    const command = await sandboxArgv(["bash", "-c", script], { workdir, writable: [workdir], mode: "required" });
    const ran = await run(command, { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });
    await command.release();
    assert.doesNotMatch(ran.stdout, /FILE-SECRET/, "a 0600 file was read");
    assert.doesNotMatch(ran.stdout, /FOLDER-SECRET/, "a 0700 folder was entered");
    for (const { folder } of usable) assert.match(ran.stdout, new RegExp(`port=5432 ${folder}\n`), JSON.stringify(ran));
    assert.match(ran.stdout, /done\n$/);
  } finally {
    // Other test files run beside this one (in other processes, under CI's queues), and each process keeps the masks
    // it looked up for 10 s: one that listed a planted entry and mounts over it after it went failed to start its
    // sandbox (bwrap: Can't mkdir parents for /usr/etc/toolfence-service-.../keys), as a CI run met. So the entries
    // are made public first (no look lists them from then on), and removed once every look that may have is stale.
    await Promise.all(planted.map((dir) => makePublic(dir)));
    if (planted.length > 0) await new Promise((resolve) => setTimeout(resolve, MASK_LOOKS_KEPT_MS));
    for (const dir of planted) await fsp.rm(dir, { recursive: true, force: true });
    for (const { folder, made } of usable) if (made) await fsp.rm(folder, { recursive: true, force: true });
    await fsp.rm(workdir, { recursive: true, force: true });
  }
});
