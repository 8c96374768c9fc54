// Resource limits through the command tools, with real processes: each limit
// hit by a real command (memory, CPU time, file size, a fork bomb, open files,
// the private /tmp) ends with `resource_limit` naming the limit, quickly, with
// its output kept, while the same session answers other calls; a deno, node
// and tsc run works under the defaults; the limits hold without bubblewrap; a
// real MCP stdio server answers a ping while a command runs into a limit; a
// command's group is gone with its session, and what escaped its process
// group is killed before its result comes back.
//
// The limits here are small, so that the hogs are cheap on a shared machine:
// a fork bomb only ever runs under a process limit of a few dozen.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { withSession } from "../../core/_helpers.ts";
import { Session } from "../../../policy/session.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import type { ResourceLimitsInput } from "../../../policy/config/schema.ts";
import { limitsState, resourceLimits } from "../../../policy/limits.ts";
import { findCgroup, groupHierarchies } from "../../../policy/_limits.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import type { JobReport } from "../../../tools/cmd/background.ts";
import type { ToolResult } from "../../../core/result.ts";
import {
  cmdBox,
  denyingNetworkHost,
  failedOutput,
  installed,
  killSleeps,
  markerSeconds,
  okOutput,
  pidAlive,
} from "./_helpers.ts";
import { callOutput, startRawServer } from "../../adapters/_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const box = cmdBox();
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const SMALL: ResourceLimitsInput = {
  memory: "256MiB",
  cpuSeconds: 1,
  fileSize: "8MiB",
  processes: 48,
  openFiles: 64,
  tmpSize: "4MiB",
};
// Whether the process limit holds here (a cgroup, or rlimits for a user other than root).
const processesHold = !(await limitsState(resourceLimits(SMALL))).gaps.some((gap) => gap.limit === "processes");
// Whether a cgroup counts a command's memory, and its processes (the groups a workspace's commands share).
const cgroupFinding = await findCgroup();
const memoryCounted = "root" in cgroupFinding &&
  (cgroupFinding.root.version === 2 || cgroupFinding.root.memory !== undefined);
const processesCounted = "root" in cgroupFinding;

// Whether a cgroup counts the CPU of a command's whole tree (else RLIMIT_CPU holds per process, and the state says
// that a kill inside $(...) goes unreported).
// Three processes of 120 MiB each that then sleep a minute: under a 256 MiB memory cgroup its OOM killer ends one.
const OOM_SLEEPERS = "for i in 1 2 3; do python3 -c 'b = bytearray(120 << 20); import time; time.sleep(60)' & done; " +
  "wait; echo done";
const cpuCounted = !(await limitsState(resourceLimits(SMALL))).gaps.some((gap) => gap.limit === "cpuSeconds");

function options(limits: ResourceLimitsInput, sandbox: "auto" | "off" = "auto", read: string[] = []) {
  return {
    autoConfirm: true,
    host: autoHost(),
    sandbox,
    rules: PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits, read } } }], "/"),
  } as const;
}

interface LimitedRun {
  result: ToolResult;
  output: BashResult;
  ms: number;
}

async function bash(session: Parameters<typeof box.call>[0], command: string, timeout_s = 60): Promise<LimitedRun> {
  const started = performance.now();
  const result = await box.call(session, "bash", { command, timeout_s });
  return { result, output: result.output as BashResult, ms: performance.now() - started };
}

function assertLimit(run: LimitedRun, limit: string, value: string): BashResult {
  const output = failedOutput<BashResult>(run.result, "error", "resource_limit");
  assert.deepEqual(output.resource_limit, { limit, value });
  assert.match(run.result.error ?? "", new RegExp(`sandbox\\.limits\\.${limit} = ${value}`));
  return output;
}

const MiB = 1024 * 1024;

// A file a write past SMALL's fileSize left: the kernel's RLIMIT_FSIZE is a byte past the limit (a block, where the
// shell's ulimit counts in blocks), so the file stops within a block past it (see limitCommand).
async function assertCutPastLimit(file: string): Promise<void> {
  const { size } = await stat(file);
  assert.ok(size > 8 * MiB && size <= 8 * MiB + 1024, `${file}: ${size} bytes`);
}

describe("each limit, hit through the bash tool", { timeout: 300_000 }, () => {
  test("memory: a shell that grows a string past the limit", { timeout: 150_000 }, async () => {
    await withSession(async (session) => {
      const run = await bash(session, "echo start; echo $(yes) | wc -c; echo after");
      const output = assertLimit(run, "memory", "64MiB");
      assert.match(output.stdout, /^start$/m, "the output before the limit is kept");
      // Well before the 300 s default timeout; under a load of 24 on 2 cores this took 47-67 s at 256 MiB. The shell
      // reads $(yes) at about 80 MB/s of CPU: 64 MiB is a quarter of the CPU time (0.9 against 3.5 s here).
      assert.ok(run.ms < 100_000, `${run.ms} ms`);
    }, options({ ...SMALL, memory: "64MiB", cpuSeconds: 60 }));
  });

  test("CPU time: a busy loop, while the session answers another call", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const loop = bash(session, "echo spinning; while :; do :; done");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const other = await bash(session, "echo alive");
      assert.equal(okOutput<BashResult>(other.result).stdout, "alive\n");
      assert.ok(other.ms < 5_000, `another call took ${other.ms} ms while the loop ran`);
      const run = await loop;
      const output = assertLimit(run, "cpuSeconds", "1 s");
      assert.match(output.stdout, /spinning/);
      assert.ok(run.ms < 20_000, `${run.ms} ms`);
    }, options(SMALL));
  });

  test("file size: a write past the limit stops at it", { timeout: 30_000 }, async () => {
    await withSession(async (session, dir) => {
      const run = await bash(session, "head -c 20M /dev/zero > big; echo exit=$?");
      // SIGXFSZ is ignored in every command: the write fails with EFBIG, which head prints.
      const output = assertLimit(run, "fileSize", "8MiB");
      assert.match(output.stdout, /exit=1/);
      assert.match(run.result.error ?? "", /File too large/);
      await assertCutPastLimit(join(dir, "big"));
    }, options(SMALL));
  });

  test("file size: a write past the limit is named whatever the command printed, and a file of the limit is not", {
    timeout: 120_000,
  }, async () => {
    // Each writer past the limit, its error discarded or sent to stdout and cut, its exit hidden: before, each ended
    // as a success with its file cut at exactly 8 MiB (tar's `Wrote only 2048 of 10240 bytes` is in no hint either).
    const writers = [
      "head -c 20M /dev/zero > big",
      `python3 -c 'open("big", "wb").write(bytes(20 << 20))'`,
      `perl -e 'open F, ">big"; print F "a" x (20 << 20); close F'`,
      `node -e 'require("fs").writeFileSync("big", Buffer.alloc(20 << 20))'`,
      "tar cf big /usr/lib",
      "head -c 20M /dev/zero | sort -o big",
    ];
    const hidings = ["2>/dev/null; true", "2>&1 | tail -n 1", "2>&- || echo failed"];
    await withSession(async (session, dir) => {
      let n = 0;
      for (const writer of writers) {
        if (!installed(writer.split(" ")[0])) continue;
        for (const hiding of hidings) {
          const name = `w${n++}`;
          const command = `${writer.replace("big", name)} ${hiding}`;
          const run = await bash(session, command);
          assert.equal(run.result.errorCode, "resource_limit", `${command}: ${run.result.status} ${run.result.error}`);
          assertLimit(run, "fileSize", "8MiB");
          assert.match(run.result.error ?? "", new RegExp(`${name} grew to \\d+ bytes, more than the limit's 8388608`));
          await assertCutPastLimit(join(dir, name));
        }
      }
      assert.ok(n >= 9, `${n} runs`);
      // A file of exactly the limit is written whole and passes; one byte more is named.
      const exact = okOutput<BashResult>((await bash(session, "head -c 8M /dev/zero > exact; wc -c < exact")).result);
      assert.equal(exact.stdout.trim(), String(8 * MiB));
      assertLimit(await bash(session, "head -c 8388609 /dev/zero > over 2>/dev/null"), "fileSize", "8MiB");
      // A file past the limit that the command did not grow is no hit (touched, renamed); a copy of it is cut.
      await writeFile(join(dir, "old"), new Uint8Array(9 * MiB));
      okOutput<BashResult>((await bash(session, "touch old && mv old older && wc -c < older")).result);
      assertLimit(await bash(session, "cp older copy 2>/dev/null; true"), "fileSize", "8MiB");
      // A background job too.
      const job = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "head -c 20M /dev/zero > jobbed 2>/dev/null; true" }),
      );
      const waited = await box.call(session, "bash_wait", { id: job.id, timeout_s: 20 });
      const report = failedOutput<JobReport>(waited, "error", "resource_limit");
      assert.equal(report.resource_limit?.limit, "fileSize");
      assert.match(report.resource_limit?.evidence ?? "", /jobbed grew to \d+ bytes/);
    }, options({ ...SMALL, cpuSeconds: 30 }));
  });

  test("processes: a fork bomb is contained and ended", { timeout: 60_000, skip: !processesHold }, async () => {
    await withSession(async (session) => {
      // `sleep` keeps the first shell, and so the sandbox's PID namespace, alive while the bomb grows
      // (with `wait`, a bomb that grows slower than its first pipeline ends ends with the namespace).
      const run = await bash(session, ":(){ :|:& };:; sleep 20", 30);
      assertLimit(run, "processes", "48");
      assert.ok(run.ms < 15_000, `${run.ms} ms`);
      // Nothing of it is left: the next command runs at once.
      const after = await bash(session, "echo calm");
      assert.equal(okOutput<BashResult>(after.result).stdout, "calm\n");
    }, options(SMALL));
  });

  test("a limit that kills a process nobody reports on is still reported", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      // The shell of `$(yes)` is ended by the CPU limit, and neither bash nor wc says so. It also grows the shell's
      // memory (about 230 MB in two CPU-seconds here), so the memory limit is set well above what one CPU-second
      // makes: at SMALL's 256MiB a CI run under Node met the memory limit first.
      const cpu = await bash(session, "echo $(yes) | wc -c");
      assertLimit(cpu, "cpuSeconds", "1 s");
      assert.ok(cpu.ms < 45_000, `${cpu.ms} ms`);
      // A write past the file size inside $(...): its error line, not a silent SIGXFSZ.
      const file = await bash(session, "echo $(head -c 20M /dev/zero > big) done");
      assert.match(assertLimit(file, "fileSize", "8MiB").stdout, /done/);
      await assertCutPastLimit(join(dir, "big"));
    }, options({ ...SMALL, memory: "2GiB" }));
  });

  test("a CPU limit that ends a process silently is reported, in every spelling", {
    timeout: 120_000,
    skip: !cpuCounted,
  }, async () => {
    // Each line hides the kill: `$(...)`, a subshell, a child shell, a pipeline's left side and a background job
    // end by the CPU limit with no word on stderr and the line exits 0; one ignores SIGXCPU. Only the group's
    // count can say what happened. Each spelling runs twice: a per-process RLIMIT_CPU, sampled by the tick,
    // used to end a lone loop just before the group had counted the limit, and the call passed as a success.
    const lines = [
      "echo $(while :; do :; done)",
      "x=$(awk 'BEGIN { while (1) n++ }'); echo \"[$x]\"",
      "(while :; do :; done) 2>/dev/null; exit 0",
      "bash -c 'while :; do :; done' 2>/dev/null || true",
      "{ while :; do :; done; } 2>/dev/null | cat; true",
      "{ while :; do :; done & } 2>/dev/null; wait; true",
      "trap '' XCPU; while :; do :; done",
    ];
    await withSession(async (session) => {
      for (let round = 0; round < 2; round++) {
        for (const line of lines) {
          const run = await bash(session, line, 30);
          assert.equal(run.result.errorCode, "resource_limit", `${line}: ${run.result.status} ${run.result.error}`);
          assertLimit(run, "cpuSeconds", "1 s");
        }
      }
    }, options(SMALL));
  });

  test("a runtime's own out-of-memory line names the memory limit", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      // V8 sizes its heap from the cgroup and aborts past it, Perl says "Out of memory!" where RLIMIT_DATA refuses:
      // no kernel counter moves, and the line goes on to exit 0: only the words show the limit. Where a cgroup
      // counts memory (no RLIMIT_DATA), its OOM kill may come first and end the tree: the line may not go on.
      for (
        const line of [
          "node -e 'const a = []; for (;;) a.push(new Array(1e6).fill(1))'; echo went on",
          `perl -e '$x = "a" x 600_000_000'; echo went on`,
        ]
      ) {
        const output = assertLimit(await bash(session, line, 50), "memory", "256MiB");
        if (!memoryCounted) assert.match(output.stdout, /went on/, line);
      }
    }, options({ ...SMALL, cpuSeconds: 20 }));
  });

  test("a memory refusal with its words hidden is named: the group's kill, not a silent ENOMEM", {
    timeout: 120_000,
    skip: !memoryCounted,
  }, async () => {
    // Before, RLIMIT_DATA at the limit refused each of these with ENOMEM before the group filled, and none said so:
    // sed took ENOMEM for the end of its input (no output, exit 0), the others ended as plain failures
    // (`exit=1`, perl's 12) of a line that went on. Now the group alone judges memory: its OOM kill is named.
    await withSession(async (session) => {
      for (
        const line of [
          "head -c 400M /dev/zero | tr '\\0' a | sed 's/a/b/' | wc -c; echo went on",
          "head -c 400M /dev/zero | tr '\\0' a | awk '{ print length }' 2>/dev/null; echo went on",
          "python3 -c 'x = bytearray(1 << 30)' 2>/dev/null; echo went on",
          "python3 -c 'a = []\nwhile True: a.append(bytearray(1 << 20))' 2>/dev/null; echo went on",
          `perl -e '$x = "a" x 600_000_000' 2>/dev/null; echo went on`,
          "node -e 'Buffer.alloc(2 ** 30, 1)' 2>/dev/null; echo went on",
        ]
      ) {
        const run = await bash(session, line, 50);
        assert.equal(run.result.errorCode, "resource_limit", `${line}: ${run.result.status} ${run.result.error}`);
        assertLimit(run, "memory", "256MiB");
      }
      // And what only the rlimit refused runs: the JVM reserves its heap and code cache up front (before, "Could not
      // reserve enough space" under 256 MiB, `java -version` failed).
      if (installed("java")) {
        const java = await bash(session, "java -version 2>&1 | head -1", 50);
        assert.match(okOutput<BashResult>(java.result).stdout, /version/);
      }
    }, options({ ...SMALL, cpuSeconds: 20 }));
  });

  test("memory: what a command queues on TCP connections it never reads counts to its limit", {
    timeout: 60_000,
    skip: !memoryCounted,
  }, async () => {
    // Before, on cgroup v1 (which charges a socket's buffers only to a counter of its own, and only once that has a
    // limit), a command under 64 MiB queued 200 MiB on 19 loopback connections and ran on: the memory was nobody's,
    // and past the machine's net.ipv4.tcp_mem (global to every network namespace) every socket of the host would be
    // under pressure. v2 charges them to the group's memory.
    const line = `python3 -c 'import socket
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(4096)
held, total = [], 0
while total < (200 << 20) and len(held) < 4000:
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    c.connect(server.getsockname()); s = server.accept()[0]
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22); c.setblocking(False)
    try:
        while True: total += c.send(b"x" * 65536)
    except BlockingIOError: pass
    held += [c, s]
print(total >> 20)'`;
    await withSession(async (session) => {
      const run = await bash(session, line, 50);
      // Held below the limit (the kernel lets each socket queue its first buffer past it), or ended for memory.
      if (run.result.errorCode === "resource_limit") return void assertLimit(run, "memory", "64MiB");
      const queued = Number(okOutput<BashResult>(run.result).stdout);
      assert.ok(queued < 96, `the command queued ${queued} MiB on its connections under a memory limit of 64 MiB`);
    }, options({ ...SMALL, memory: "64MiB", openFiles: 8192, cpuSeconds: 20 }));
  });

  test("a limit's words on a successful command are no hit where the cgroup counted nothing", {
    timeout: 60_000,
    skip: !processesCounted,
  }, async () => {
    // Before, each of these (exit 0, the words printed by the command itself) ended as resource_limit, the memory or
    // process limit named: where the command's cgroup counts that limit, its counters are the witness, and they show
    // no refused fork and a peak far below the memory limit.
    await withSession(async (session) => {
      const lines = [
        "echo 'bash: fork: retry: Resource temporarily unavailable' >&2; echo ok",
        "printf 'Error: spawn sleep EAGAIN\\n' >&2; echo ok",
      ];
      if (memoryCounted) {
        lines.push("echo 'Cannot allocate memory' >&2; echo ok", "echo 'MemoryError' >&2; echo ok");
      }
      for (const line of lines) {
        const run = await bash(session, line);
        assert.equal(run.result.status, "success", `${line}: ${run.result.errorCode} ${run.result.error}`);
        assert.equal(run.output.resource_limit, undefined, line);
        assert.equal(run.output.stdout, "ok\n", line);
      }
      // A real refusal whose words come before a success is still named: the counters saw it.
      if (processesHold) {
        const run = await bash(session, "for i in $(seq 60); do sleep 5 & done 2>&1 | tail -1 >&2; echo ok");
        assertLimit(run, "processes", "48");
      }
      if (memoryCounted) {
        // Near the limit, a refusal's words after a success still name it (V8's heap sized from the group).
        const run = await bash(session, "node -e 'const a = []; for (;;) a.push(new Array(1e6).fill(1))'; echo ok", 50);
        assertLimit(run, "memory", "256MiB");
      }
    }, options({ ...SMALL, cpuSeconds: 20 }));
  });

  test("open files: a shell that opens past the limit", { timeout: 30_000 }, async () => {
    await withSession(async (session) => {
      const run = await bash(session, "for i in $(seq 100); do exec {fd}</dev/null || exit 1; done");
      assertLimit(run, "openFiles", "64");
    }, options(SMALL));
  });

  test(
    "the private /tmp: a write past its size, and sort spilling into it",
    { timeout: 30_000, skip: !hasBwrap },
    async () => {
      await withSession(async (session) => {
        const write = await bash(session, "head -c 6M /dev/zero > /tmp/x; echo exit=$?");
        assert.match(assertLimit(write, "tmpSize", "4MiB").stdout, /exit=1/);
        const sort = await bash(session, "head -c 6000000 /dev/urandom | od -An -tx1 | sort -S 64K -T /tmp | wc -l");
        assertLimit(sort, "tmpSize", "4MiB");
      }, options({ ...SMALL, fileSize: "64MiB" }));
    },
  );

  // Before, each of these ended as a success with nothing named: the tmpfs refused the write with ENOSPC, and the
  // command discarded the error. The sandbox's check after the command reads what each tmpfs holds.
  test(
    "a full private tmpfs (/tmp, /dev/shm, the home folder) is named whatever the command printed",
    { timeout: 60_000, skip: !hasBwrap },
    async () => {
      await withSession(async (session) => {
        for (
          const command of [
            "head -c 6M /dev/zero > /tmp/x 2>/dev/null || true",
            "cd /dev/shm && { head -c 6M /dev/zero > f; } 2>/dev/null; exit 0",
            'cd "$HOME" && python3 -c \'import os\ntry:\n  open("f", "wb").write(bytes(6 << 20))\nexcept OSError: pass\'',
          ]
        ) {
          const output = assertLimit(await bash(session, command), "tmpSize", "4MiB");
          assert.match(
            output.stderr,
            /held more than sandbox\.limits\.tmpSize \(4194304 bytes\) when the command ended/,
          );
        }
        // Exactly the limit is written whole, and is no hit; the command's own exit status is kept.
        const exact = await bash(session, "head -c 4194304 /dev/zero > /tmp/x && wc -c < /tmp/x");
        assert.equal(okOutput<BashResult>(exact.result).stdout.trim(), "4194304");
        const own = await bash(session, "head -c 1M /dev/zero > /tmp/x; exit 7");
        assert.equal(failedOutput<BashResult>(own.result, "error", "command_failed").exit_code, 7);
        // The check's exit code is one a command may end with itself: before, `exit 251` was named a full tmpfs.
        for (const command of ["exit 251", "echo held more than >&2; python3 -c 'raise SystemExit(251)'"]) {
          const same = await bash(session, command);
          assert.equal(failedOutput<BashResult>(same.result, "error", "command_failed").exit_code, 251);
        }
      }, options(SMALL));
    },
  );

  // Before, each of these ended as `timeout` (or a truncated success, or a stopped job) with nothing named: the check
  // after the command never ran, as the whole sandbox is killed when the command is ended from outside. The door now
  // reads the sandbox's tmpfs folders before it ends them.
  test(
    "a full private tmpfs is named when the command is ended from outside (timeout, output limit, bash_stop)",
    { timeout: 90_000, skip: !hasBwrap },
    async () => {
      await withSession(async (session) => {
        for (
          const command of [
            "head -c 6M /dev/zero > /tmp/x 2>/dev/null; sleep 60",
            'cd "$HOME" && { head -c 6M /dev/zero > f; } 2>/dev/null; echo filled; sleep 60',
          ]
        ) {
          const run = await bash(session, command, 3);
          assertLimit(run, "tmpSize", "4MiB");
          assert.match(run.result.error ?? "", /was ended/);
          assert.ok(run.ms < 30_000, `${command} took ${run.ms} ms`);
        }
        const flood = await box.call(session, "bash", {
          command: "cd /dev/shm && { head -c 6M /dev/zero > f; } 2>/dev/null; yes",
          max_output_bytes: 100_000,
          timeout_s: 30,
        });
        assert.equal(flood.errorCode, "resource_limit", `${flood.status} ${flood.error}`);
        assert.deepEqual((flood.output as BashResult).resource_limit, { limit: "tmpSize", value: "4MiB" });
        const started = await box.call(session, "bash_background", {
          command: "head -c 6M /dev/zero > /tmp/x 2>/dev/null; sleep 60",
        });
        const id = okOutput<{ id: string }>(started).id;
        await new Promise((resolve) => setTimeout(resolve, 1500));
        // A stopped job's report is no failure, and says the limit it hit.
        const stopped = await box.call(session, "bash_stop", { id });
        assert.equal(okOutput<JobReport>(stopped).resource_limit?.limit, "tmpSize");
        // A tmpfs below its limit when a command is ended is no hit: the timeout is what is named.
        const calm = await bash(session, "head -c 1M /dev/zero > /tmp/x; sleep 60", 2);
        assert.equal(calm.result.errorCode, "timeout", `${calm.result.status} ${calm.result.error}`);
      }, options(SMALL));
    },
  );

  // Before, each of these ended as a success: the watch that names a file grown past fileSize sees the workspace only.
  test(
    "a file of a private tmpfs grown past the file size limit is named whatever the command printed",
    { timeout: 60_000, skip: !hasBwrap },
    async () => {
      await withSession(async (session) => {
        for (
          const command of [
            "head -c 20M /dev/zero > /tmp/x 2>/dev/null; echo ok",
            "cd /dev/shm && mkdir -p a/b && { head -c 20M /dev/zero > a/b/x; } 2>/dev/null; exit 0",
            'cd "$HOME" && python3 -c \'import os\ntry:\n  open("f", "wb").write(bytes(20 << 20))\nexcept OSError: pass\'',
          ]
        ) {
          const output = assertLimit(await bash(session, command), "fileSize", "8MiB");
          assert.match(output.stderr, /grew past sandbox\.limits\.fileSize \(8388608 bytes\) while the command ran/);
        }
        // A file of exactly the limit is written whole, and is no hit.
        const exact = await bash(session, "head -c 8388608 /dev/zero > /tmp/x && wc -c < /tmp/x");
        assert.equal(okOutput<BashResult>(exact.result).stdout.trim(), "8388608");
        // Also when the command is ended from outside, read before the sandbox goes (before: timeout, unnamed).
        const ended = await bash(
          session,
          "mkdir -p /tmp/a && head -c 20M /dev/zero > /tmp/a/x 2>/dev/null; sleep 60",
          3,
        );
        assertLimit(ended, "fileSize", "8MiB");
        assert.match(ended.result.error ?? "", /\/tmp\/a\/x, a file of a private tmpfs/);
      }, options({ ...SMALL, tmpSize: "64MiB" }));
    },
  );

  // Before, TMPDIR led a sandboxed command to the session temp dir, on the host's disk with no bound: mktemp and
  // Python's tempfile wrote 40 MiB there under tmpSize 4 MiB, and sort spilled there unless told `-T /tmp`.
  test(
    "temporary files that follow TMPDIR (mktemp, sort's spills, tempfile) land in the capped /tmp, not on the disk",
    { timeout: 60_000, skip: !hasBwrap },
    async () => {
      await withSession(async (session) => {
        const temp = await session.workspace.tempDir();
        const lines = [
          'f=$(mktemp) && head -c 6M /dev/zero > "$f"; echo exit=$?',
          "head -c 6000000 /dev/urandom | od -An -tx1 | sort -S 64K | wc -l",
          ...(installed("python3")
            ? ["python3 -c 'import tempfile\nf = tempfile.NamedTemporaryFile(delete=False)\nf.write(bytes(6 << 20))'"]
            : []),
        ];
        for (const line of lines) {
          const run = await bash(session, line);
          assertLimit(run, "tmpSize", "4MiB");
          const kept = await readdir(temp, { recursive: true, withFileTypes: true });
          const bytes = await Promise.all(
            kept.filter((e) => e.isFile()).map(async (e) => (await stat(join(e.parentPath, e.name))).size),
          );
          // The captures of the calls only: far below what the line wrote.
          assert.ok(bytes.reduce((a, b) => a + b, 0) < 1 << 20, `${line}: ${bytes} bytes in ${temp}`);
        }
      }, options({ ...SMALL, fileSize: "64MiB", cpuSeconds: 30 }));
    },
  );

  test("a background job that hits a limit fails with resource_limit", { timeout: 30_000 }, async () => {
    await withSession(async (session) => {
      const started = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "echo bg; while :; do :; done" }),
      );
      const waited = await box.call(session, "bash_wait", { id: started.id, timeout_s: 20 });
      const report = failedOutput<JobReport>(waited, "error", "resource_limit");
      assert.equal(report.resource_limit?.limit, "cpuSeconds");
      assert.match(report.stdout, /bg/);
    }, options(SMALL));
  });

  // Before, the output limit's stop hid every limit hit before it: a write past fileSize with its error discarded,
  // then output past max_output_bytes, was a success (truncated), through bash and bash_background alike.
  test("a limit hit before the output limit stops the command is still named", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const command = (file: string) => `head -c 20M /dev/zero > ${file} 2>/dev/null; yes`;
      const run = await box.call(session, "bash", { command: command("big"), timeout_s: 30, max_output_bytes: MiB });
      const output = failedOutput<BashResult>(run, "error", "resource_limit");
      assert.deepEqual(output.resource_limit, { limit: "fileSize", value: "8MiB" });
      assert.equal(output.stop_reason, "output_limit");
      const started = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: command("big2"), max_output_bytes: MiB }),
      );
      const waited = await box.call(session, "bash_wait", { id: started.id, timeout_s: 20 });
      const report = failedOutput<JobReport>(waited, "error", "resource_limit");
      assert.equal(report.resource_limit?.limit, "fileSize");
      assert.equal(report.truncated, true);
      // Truncated with no limit hit before it stays a success.
      okOutput<BashResult>(await box.call(session, "bash", { command: "yes", timeout_s: 30, max_output_bytes: MiB }));
    }, options(SMALL));
  });

  test("without bubblewrap the rlimits still hold", { timeout: 30_000 }, async () => {
    await withSession(async (session, dir) => {
      const run = await bash(session, "head -c 20M /dev/zero > big");
      assertLimit(run, "fileSize", "8MiB");
      assert.equal(run.output.sandboxed, false);
      await assertCutPastLimit(join(dir, "big"));
      assertLimit(await bash(session, "while :; do :; done"), "cpuSeconds", "1 s");
    }, options(SMALL, "off"));
  });
});

describe("a command's cgroup", { timeout: 120_000 }, () => {
  test(
    "a result waits for its group's counters only; what escaped the process group is killed before it, the session's close waits for the folders",
    { timeout: 60_000 },
    async () => {
      const finding = await findCgroup();
      if (!("root" in finding)) return;
      const dirs = groupHierarchies(finding.root);
      const ours = async () =>
        (await Promise.all(dirs.map((dir) => readdir(dir).catch(() => [] as string[]))))
          .flat().filter((name) => name.startsWith(`toolfence-${process.pid}-`));
      const marker = markerSeconds();
      try {
        await withSession(async (session) => {
          // Without the sandbox a process in a session of its own is outside the command's process group, and
          // only its cgroup still holds it: the group's close kills it.
          for (let round = 0; round < 3; round++) {
            const run = await bash(session, `setsid sleep ${marker} </dev/null >/dev/null 2>&1 & echo $!`);
            const pid = Number(okOutput<BashResult>(run.result).stdout.trim());
            assert.ok(pid > 0, run.output.stdout);
            // SIGKILL was sent before the result; the kernel may take a moment to end and reap it.
            const deadline = performance.now() + 2_000;
            while (await pidAlive(pid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
            assert.equal(await pidAlive(pid), false, `round ${round}: ${pid} outlived its command`);
          }
        }, options(SMALL, "off"));
        assert.deepEqual(await ours(), [], "a group of the session's commands outlived its close");
      } finally {
        await killSleeps(marker);
      }
    },
  );
});

// The commands of one workspace (a session's, a sub-agent's on the same workspace) share a parent cgroup of twice
// the memory and process limits. Before, each command had the whole of them: three commands of one workspace held
// three times the memory limit at once (four python3 commands of 100 MiB each ran together under memory 128 MiB).
describe("the commands of one workspace share twice the limits", { timeout: 180_000 }, () => {
  // Each command takes its share, marks it, and waits (at most 12 s) until every one of them has: all at once.
  const together = (what: string, n: number) =>
    `${what}; touch "m.$$"; for i in $(seq 120); do [ "$(ls m.* | wc -l)" -ge ${n} ] && break; sleep 0.1; done; echo held`;
  async function three(command: string, limits: ResourceLimitsInput): Promise<ToolResult[]> {
    return await withSession(async (session, dir) => {
      // A second session on the same workspace: a sub-agent's, or another session of the tenant.
      const other = new Session({ workspace: dir, ...options(limits), host: denyingNetworkHost([]) });
      try {
        return await Promise.all([
          box.call(session, "bash", { command, timeout_s: 60 }),
          box.call(session, "bash", { command, timeout_s: 60 }),
          box.call(other, "bash", { command, timeout_s: 60 }),
        ]);
      } finally {
        await other.close();
      }
      // A person who lets them run (python3 -c and the loop need a yes).
    }, { ...options(limits), host: denyingNetworkHost([]) });
  }

  test("memory: three commands of 48 MiB under a limit of 64 MiB do not all hold theirs", {
    timeout: 90_000,
    skip: !memoryCounted || !installed("python3"),
  }, async () => {
    const hold =
      "python3 -c 'import time\nb = bytearray(48 << 20)\ntime.sleep(30)' & p=$!; sleep 2; kill -0 $p || exit 1";
    const results = await three(together(hold, 3) + "; kill $p", { ...SMALL, memory: "64MiB", cpuSeconds: 30 });
    const hits = results.filter((r) => (r.output as BashResult | undefined)?.resource_limit?.limit === "memory");
    assert.ok(
      hits.length >= 1,
      results.map((r) => `${r.status} ${r.errorCode} ${(r.output as BashResult | undefined)?.stdout}`).join("; "),
    );
    assert.match(hits[0].error ?? "", /its workspace's commands together/);
  });

  test("processes: three commands of 10 sleeps under a limit of 16 do not all start theirs", {
    timeout: 90_000,
    skip: !processesCounted,
  }, async () => {
    const marker = markerSeconds();
    try {
      const results = await three(together(`for i in $(seq 10); do sleep ${marker} & done`, 3), {
        ...SMALL,
        processes: 16,
        cpuSeconds: 30,
      });
      const hits = results.filter((r) => (r.output as BashResult | undefined)?.resource_limit?.limit === "processes");
      assert.ok(
        hits.length >= 1,
        results.map((r) => `${r.status} ${r.errorCode} ${(r.output as BashResult | undefined)?.stdout}`).join("; "),
      );
    } finally {
      await killSleeps(marker);
    }
  });
});

describe("the defaults leave a coding agent's tools working", { timeout: 120_000 }, () => {
  test("deno, node, npm and tsc run under the default limits", { timeout: 120_000 }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(join(dir, "a.ts"), "const n: number = 2;\nconsole.log(n * 21);\n");
      const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
      for (
        const command of [
          "deno --version",
          "node -e 'console.log(6 * 7)'",
          "npm --version",
          `node ${tsc} --noEmit --strict a.ts && echo typed`,
          `node ${tsc} --outDir out a.ts && node out/a.js`,
        ]
      ) {
        const run = await bash(session, command, 110);
        okOutput<BashResult>(run.result);
      }
      assert.match(await readFile(join(dir, "out", "a.js"), "utf8"), /console\.log/);
      // The sandbox's read view shows only what the policy names: this checkout's typescript.
    }, options({}, "auto", [join(ROOT, "node_modules")]));
  });
});

describe("a real MCP stdio server keeps answering", { timeout: 120_000, skip: DENO_PROCESS_ONLY }, () => {
  test("a ping is answered while a command runs into its CPU limit", { timeout: 90_000 }, async () => {
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-limits-mcp-"));
    await writeFile(
      join(workspace, "toolfence.json"),
      JSON.stringify({ sandbox: { limits: { cpuSeconds: 2 } }, commands: { allow: ["yes"] } }),
    );
    const server = await startRawServer(workspace, { groups: "cmd" });
    try {
      const call = server.request("tools/call", {
        name: "bash",
        arguments: { command: "echo spinning; yes > /dev/null", timeout_s: 60 },
      }, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ping = await server.request("ping", {}, 5_000);
      assert.deepEqual(ping.result, {});
      assert.ok(ping.ms < 2_000, `ping took ${ping.ms} ms`);
      const reply = await call;
      assert.ok(reply.ms < 30_000, `${reply.ms} ms`);
      // A failed call's text is the error, then the whole result after "Output: ".
      const text = String(callOutput(reply));
      assert.match(text, /^Error \[resource_limit\]: .*sandbox\.limits\.cpuSeconds = 2 s/);
      const output = JSON.parse(text.slice(text.indexOf("\nOutput: ") + "\nOutput: ".length)) as BashResult;
      assert.deepEqual(output.resource_limit, { limit: "cpuSeconds", value: "2 s" }, JSON.stringify(reply.result));
      assert.match(output.stdout, /spinning/);
    } finally {
      await server.close();
      await rm(workspace, { recursive: true, force: true });
    }
  });

  test("a limit only the cgroup saw is reported by a server under the narrow flags", {
    timeout: 90_000,
    skip: !cpuCounted,
  }, async () => {
    // There a shell reads the group's counters as it closes, not the server: its loop once sent them all to
    // /dev/null, and a kill nothing else shows (a loop inside $(...), a fork bomb with its errors hidden) passed.
    const { mkdtemp, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const workspace = await mkdtemp(join(tmpdir(), "toolfence-limits-mcp-"));
    await writeFile(
      join(workspace, "toolfence.json"),
      // 3 CPU seconds, not 1: on a loaded machine the OOM sleepers' page faults and reclaim (counted to the group as
      // kernel time) took the one second before the memory limit was hit.
      JSON.stringify({ sandbox: { limits: { cpuSeconds: 3, processes: 48, memory: "256MiB", tmpSize: "4MiB" } } }),
    );
    const server = await startRawServer(workspace, { groups: "cmd", args: ["--auto-confirm"] });
    try {
      const cases: [string, string, number?][] = [["echo $(while :; do :; done)", "cpuSeconds"]];
      if (processesHold) cases.push(["{ :(){ :|:& };:; } 2>/dev/null; sleep 10", "processes"]);
      // The group's OOM killer ends one of three sleepers of 120 MiB each: the watcher shell ends the rest at once
      // (before, the call waited for them, 60 s).
      if (memoryCounted && installed("python3")) cases.push([OOM_SLEEPERS, "memory"]);
      // A full tmpfs of a command its timeout ends: the door reads it by a shell there (no /proc for the server).
      if (hasBwrap) cases.push(["head -c 6M /dev/zero > /tmp/x 2>/dev/null; sleep 60", "tmpSize", 3]);
      for (const [command, limit, timeout = 60] of cases) {
        const started = performance.now();
        const reply = await server.request(
          "tools/call",
          { name: "bash", arguments: { command, timeout_s: timeout } },
          60_000,
        );
        const text = String(callOutput(reply));
        assert.match(
          text,
          new RegExp(`^Error \\[resource_limit\\]: .*sandbox\\.limits\\.${limit} = `),
          `${command}: ${text}`,
        );
        assert.ok(performance.now() - started < 30_000, `${command} took ${performance.now() - started} ms`);
      }
    } finally {
      await server.close();
      await rm(workspace, { recursive: true, force: true });
    }
  });
});
