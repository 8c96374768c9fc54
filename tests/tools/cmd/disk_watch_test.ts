// A command may not fill the host's disk through the folders it writes there (the workspace, the session temp dir):
// RLIMIT_FSIZE caps each file, not their number, and no cgroup counts a disk. The workspace here is a real 64 MiB
// tmpfs of its own (20,000 inodes), so that "half of its free space" is a few seconds of writing; before, a command
// wrote 48 MiB of files of 4 MiB into it (under a 1 GiB fileSize) and passed, and another made 16,000 empty files.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import process from "node:process";
import os from "node:os";
import path from "node:path";
import { autoHost } from "../../../policy/hosts.ts";
import { limitCommand, resourceLimits } from "../../../policy/limits.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { Session } from "../../../policy/session.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox } from "./_helpers.ts";
import { tmpfsMountable } from "../../_tmpfs.ts";

const box = cmdBox();

const skip = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : tmpfsMountable();

describe("the host's disk", { skip }, () => {
  let mnt: string;
  before(async () => {
    mnt = await mkdtemp(path.join(os.tmpdir(), "toolfence-disk-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64m,nr_inodes=20000", "tmpfs", mnt]);
  });
  after(async () => {
    execFileSync("umount", ["-l", mnt]);
    await rm(mnt, { recursive: true, force: true });
  });

  test("a command writing many files below the file size limit is ended at half the disk's free space", {
    timeout: 90_000,
  }, async () => {
    const session = new Session({ workspace: mnt, sandbox: "required", autoConfirm: true, host: autoHost() });
    try {
      const command =
        "mkdir -p fill && for i in $(seq 12); do head -c 4194304 /dev/zero > fill/f$i; sleep 0.3; done; " +
        "echo wrote all";
      const result = await box.call(session, "bash", { command, timeout_s: 60 });
      const written = (await Promise.all((await readdir(path.join(mnt, "fill"))).map((f) =>
        stat(path.join(mnt, "fill", f))
      ))).reduce((sum, info) => sum + info.size, 0);
      assert.equal(result.success, false, JSON.stringify(result));
      assert.equal(result.errorCode, "resource_limit", result.error);
      assert.equal(result.details?.limit, "disk");
      assert.match(
        result.error ?? "",
        new RegExp(`host's disk from filling: the free space or free inodes of the file system of ${mnt} `),
      );
      assert.match(result.recoveryHint ?? "", /free disk space/);
      const out = result.output as BashResult;
      assert.doesNotMatch(out.stdout, /wrote all/);
      // Ended within a few hundred milliseconds of passing half of the 64 MiB free: far from all 48 MiB.
      assert.ok(written >= 28 * 1024 ** 2 && written <= 40 * 1024 ** 2, `wrote ${written} bytes`);
      // The floor stays half of what the first command found: the next command writing gets no half of what is left
      // (before, it did); once the files are removed there is room again.
      const more = await box.call(session, "bash", {
        command: "head -c 4194304 /dev/zero > more; sleep 2; echo wrote more",
      });
      assert.equal(more.errorCode, "resource_limit", JSON.stringify(more).slice(0, 800));
      assert.match(more.error ?? "", /when the first command on it started/);
      // Below the floor a command may still write a little (what a command removing files needs).
      const small = await box.call(session, "bash", { command: "echo note > note && echo ok" });
      assert.equal((small.output as BashResult | null)?.stdout, "ok\n", JSON.stringify(small).slice(0, 800));
      await rm(path.join(mnt, "fill"), { recursive: true });
      await rm(path.join(mnt, "more"));
      const next = await box.call(session, "bash", { command: "head -c 4194304 /dev/zero > small && echo ok" });
      assert.equal((next.output as BashResult | null)?.stdout, "ok\n", JSON.stringify(next).slice(0, 800));
    } finally {
      await session.close();
    }
  });

  test(
    "fallocate is refused, io_uring too: a loop of it reserves nothing, and posix_fallocate still works by writing",
    {
      timeout: 90_000,
    },
    async () => {
      // Before: fallocate reserves blocks without writing them (5 GiB in 13 ms on this machine's disk), so a loop of
      // `fallocate -l 10M` filled a 488 MiB file system to its last block between two readings of the watch.
      const session = new Session({ workspace: mnt, sandbox: "required", autoConfirm: true, host: autoHost() });
      try {
        const command = "mkdir -p reserved && for i in $(seq 12); do fallocate -l 4M reserved/f$i || break; done; " +
          "echo tried $i; du -sk reserved | cut -f1";
        const result = await box.call(session, "bash", { command, timeout_s: 60 });
        const out = result.output as BashResult;
        assert.match(out.stderr, /fallocate failed: Operation not supported/, JSON.stringify(result).slice(0, 800));
        assert.match(out.stdout, /^tried 1\n\d+\n$/);
        assert.ok(Number(out.stdout.split("\n")[1]) < 1024, out.stdout);
        // What falls back to writing (glibc's posix_fallocate, SQLite, ...) still gets its space, at the disk's speed.
        const python = await box.call(session, "bash", {
          command: "command -v python3 >/dev/null || { echo 1048576; exit; }; python3 -c 'import os; " +
            'f = os.open("pf", os.O_CREAT | os.O_WRONLY); os.posix_fallocate(f, 0, 1048576); ' +
            "print(os.fstat(f).st_size)'",
        });
        assert.equal((python.output as BashResult | null)?.stdout, "1048576\n", JSON.stringify(python).slice(0, 800));
        // Nor through an io_uring (IORING_OP_FALLOCATE is no system call a filter sees): io_uring_setup is ENOSYS, as on
        // a kernel without it. Before, it gave a ring (descriptor 3). x86-64 and aarch64 number it 425.
        if (process.arch === "x64" || process.arch === "arm64") {
          const ring = await box.call(session, "bash", {
            command: "command -v perl >/dev/null || { echo 38; exit; }; perl -e '" +
              'my $p = "\\0" x 120; my $r = syscall(425, 8, $p); print $r < 0 ? ($! + 0) : "ring $r", "\\n"' + "'",
          });
          assert.equal((ring.output as BashResult | null)?.stdout, "38\n", JSON.stringify(ring).slice(0, 800));
        }
      } finally {
        await session.close();
      }
    },
  );

  test("a command making many empty files is ended at half the disk's free inodes", { timeout: 90_000 }, async () => {
    const session = new Session({ workspace: mnt, sandbox: "required", autoConfirm: true, host: autoHost() });
    try {
      const before = (await readdir(mnt)).length;
      const command =
        "mkdir -p many && cd many && for i in $(seq 40); do for j in $(seq 400); do : > f${i}_$j; done; " +
        "sleep 0.1; done; echo made all";
      const result = await box.call(session, "bash", { command, timeout_s: 60 });
      const made = (await readdir(path.join(mnt, "many"))).length;
      assert.equal(result.success, false, JSON.stringify(result).slice(0, 800));
      assert.equal(result.errorCode, "resource_limit", result.error);
      assert.equal(result.details?.limit, "disk");
      assert.doesNotMatch((result.output as BashResult).stdout, /made all/);
      // Half of the free inodes at the start (about 9,990 here) and what one 200 ms reading lets pass: not 16,000.
      assert.ok(made >= 8_000 && made <= 13_000, `made ${made} files (${before} entries before)`);
    } finally {
      await session.close();
    }
  });
});

describe("the host's disk, one command after another", { skip }, () => {
  let mnt: string;
  before(async () => {
    // A file system of its own (another size than the one above: a floor is kept per file system).
    mnt = await mkdtemp(path.join(os.tmpdir(), "toolfence-disk-loop-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=60m,nr_inodes=18000", "tmpfs", mnt]);
  });
  after(async () => {
    execFileSync("umount", ["-l", mnt]);
    await rm(mnt, { recursive: true, force: true });
  });

  test("commands one after another together leave half of the free space the first one found", {
    timeout: 120_000,
  }, async () => {
    // Before, each command's floor was half of what was free at its own start: four commands of this loop left
    // about 4 of the 60 MiB (each took half of what the one before it left), and ten would leave 1/1,024 of a disk.
    const free = () => {
      const info = fs.statfsSync(mnt);
      return info.bavail * info.bsize;
    };
    const start = free();
    const session = new Session({ workspace: mnt, sandbox: "required", autoConfirm: true, host: autoHost() });
    try {
      for (let n = 1; n <= 4; n++) {
        const command = `mkdir -p fill && for i in $(seq 30); do head -c 2097152 /dev/zero > fill/c${n}_$i; ` +
          "sleep 0.5; done; echo wrote all";
        const result = await box.call(session, "bash", { command, timeout_s: 60 });
        assert.equal(result.errorCode, "resource_limit", `command ${n}: ${JSON.stringify(result).slice(0, 800)}`);
        assert.equal(result.details?.limit, "disk");
      }
      // The first took half; each later one what it wrote before a reading saw it (a 2 MiB file, two at most).
      const left = free();
      assert.ok(left >= start * 0.5 - 3 * 4 * 1024 ** 2 - 2 * 1024 ** 2, `${left} of ${start} bytes left`);
    } finally {
      await session.close();
    }
  });
});

test("without --allow-sys=statfs the state lists the disk among the limits that do not hold", {
  timeout: 60_000,
  skip: "Deno" in globalThis ? false : "runs deno with narrow flags",
}, async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-disk-state-"));
  try {
    const limits = new URL("../../../policy/limits.ts", import.meta.url).href;
    const script = path.join(dir, "state.ts");
    await writeFile(
      script,
      `const { DEFAULT_RESOURCE_LIMITS, limitsState } = await import(${JSON.stringify(limits)});\n` +
        `console.log(JSON.stringify((await limitsState(DEFAULT_RESOURCE_LIMITS)).gaps.map((g) => g.limit)));\n`,
    );
    const config = new URL("../../../deno.json", import.meta.url).pathname;
    const gaps = (sys: string[]) =>
      JSON.parse(
        execFileSync(process.execPath, [
          "run",
          "--config",
          config,
          "--no-prompt",
          "--allow-read",
          "--allow-write",
          "--allow-run",
          "--allow-env",
          ...sys,
          script,
        ], { encoding: "utf8", timeout: 50_000 }).trim().split("\n").at(-1)!,
      ) as string[];
    assert.ok(gaps([]).includes("disk"));
    assert.ok(!gaps(["--allow-sys=statfs"]).includes("disk"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

describe("the host's disk, as the command starts", { skip }, () => {
  let mnt: string;
  before(async () => {
    // A file system of its own (another size than the ones above: a floor is kept per file system).
    mnt = await mkdtemp(path.join(os.tmpdir(), "toolfence-disk-start-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=32m,nr_inodes=16000", "tmpfs", mnt]);
  });
  after(async () => {
    execFileSync("umount", ["-l", mnt]);
    await rm(mnt, { recursive: true, force: true });
  });

  test("the floor is read before the command starts: what it writes before the watch's first reading counts", {
    timeout: 30_000,
  }, async () => {
    // Before, the free space was first read once the command had started, beside it: on a loaded machine a command
    // starting below the floor wrote its 4 MiB before that reading, which then took them as the start, and the
    // command was not stopped (a CI run of the case above: `head -c 4194304 /dev/zero > more; sleep 2` passed).
    const limited = await limitCommand(["true"], resourceLimits({}), {
      privateTmp: false,
      cgroup: false,
      disks: [mnt],
    });
    try {
      // What the command writes before the watch runs: 20 MiB of 32, past the floor (16 MiB free).
      await writeFile(path.join(mnt, "first"), Buffer.alloc(20 << 20));
      let ended = false;
      limited.watch(() => ended = true);
      const until = Date.now() + 60_000;
      while (!ended && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(ended, "the watch did not end a command that wrote 20 of 32 MiB after its floor of 16 MiB was read");
      const hit = await limited.hit({ code: 0, signal: null });
      assert.equal(hit?.limit, "disk");
    } finally {
      await limited.release();
      await rm(path.join(mnt, "first"), { force: true });
    }
  });
});
