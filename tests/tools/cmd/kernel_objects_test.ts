// Kernel objects counted per user or per machine, not per process or cgroup:
// inotify instances, fanotify groups, pseudo-terminals. A sandboxed command
// (real bash under bubblewrap, through the bash tool) takes as many as it can
// and holds them; it gets at most its share (an eighth of the machine's
// limit), and meanwhile this process, the server's user on the host, still
// gets an instance. Before, the command took all 128 inotify instances of root,
// and the server's own Deno.watchFs failed with "Too many open files" until it
// ended; and it opened all 3071 pseudo-terminals other devpts instances share.
// The machine's AIO budget, counted for nobody, is refused whole (io_setup), and so are the key calls (the user's key
// quota, whose keys outlive the command).
// POSIX message queues and queued signals, counted per user as rlimits: before,
// one command took all of root's, and the host's mq_open and sigqueue failed.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, watch } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Session } from "../../../policy/session.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus, sandboxArgv } from "../../../policy/sandbox.ts";
import { runSandboxed } from "../../policy/_sandbox_run.ts";
import {
  KernelObjectsHolder,
  OBJECT_SHARE,
  PTY_SESSIONS,
  PTY_SESSIONS_PER_WORKSPACE,
  SERVER_SHARE,
  SESSION_HOLDER_LINE,
} from "../../../policy/_kernel_objects.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, denyingNetworkHost, eventually, installed, okOutput } from "./_helpers.ts";

const X86_64_IO_SETUP = 206;
const X86_64_ADD_KEY = 248;
const X86_64_KEYCTL = 250;

const skip = (await bubblewrapStatus()).path === undefined
  ? "bubblewrap is unavailable here"
  : !installed("python3")
  ? "python3 is not installed"
  : false;

// The holders of this process's sessions (`sessions`), else every holder (the server's too): its children whose
// command line writes a namespace's inotify limit.
function holderChildren(sessions = false): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (
        ppid === process.pid &&
        readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(
          sessions ? SESSION_HOLDER_LINE : "max_inotify_instances",
        )
      ) {
        pids.push(Number(entry));
      }
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function machineLimit(file: string): number | undefined {
  try {
    return Number(readFileSync(file, "utf8").trim());
  } catch {
    return undefined;
  }
}

// Takes inotify instances, then fanotify groups (where the kernel has them), until refused; prints the counts,
// writes `held` and keeps them until `done` appears (at most 30 s).
const TAKER = `
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while libc.inotify_init1(0) >= 0: n += 1
print("inotify", n, os.strerror(ctypes.get_errno()), flush=True)
g = 0
if os.path.exists("/proc/sys/fs/fanotify"):
    while libc.fanotify_init(0x200, 0) >= 0: g += 1
print("fanotify", g, flush=True)
ptys = []
try:
    while True: ptys.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError as e: print("ptys", len(ptys), e.strerror, flush=True)
open("held", "w").close()
for _ in range(300):
    if os.path.exists("done"): break
    time.sleep(0.1)
`;

// Opens POSIX message queues of 80 KiB, then queues real-time signals to itself, each until refused, and prints the
// counts; a command (`hold`: writes `held` and keeps them until `done` appears, at most 30 s) or the host's check.
const QUEUER = `
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("cur", ctypes.c_long), ("pad", ctypes.c_long * 4)]
attr = Attr(0, 10, 8192, 0)
tag, most = sys.argv[1], int(sys.argv[2])
q = 0
while q < most and libc.mq_open(f"/{tag}{q}".encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(attr)) >= 0: q += 1
print("queues", q, flush=True)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
class Value(ctypes.Union): _fields_ = [("i", ctypes.c_int), ("p", ctypes.c_void_p)]
s = 0
while s < most * 1000 and libc.sigqueue(os.getpid(), signal.SIGRTMIN, Value(1)) == 0: s += 1
print("signals", s, flush=True)
if tag == "hold":
    open("held", "w").close()
    for _ in range(300):
        if os.path.exists("done"): break
        time.sleep(0.1)
for i in range(q): libc.mq_unlink(f"/{tag}{i}".encode())
`;

// The server's soft limit of one rlimit (its line in /proc/self/limits); undefined where unlimited or unread.
function ownLimit(line: string): number | undefined {
  const soft = readFileSync("/proc/self/limits", "utf8").split("\n").find((l) => l.startsWith(line))
    ?.slice(line.length).trim().split(/\s+/)[0];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
}

describe("kernel objects counted per user", { skip, timeout: 120_000 }, () => {
  test("a command holds at most its share of inotify instances, fanotify groups and pseudo-terminals", {
    timeout: 90_000,
  }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-kernel-objects-"));
    const session = new Session({
      workspace: dir,
      host: denyingNetworkHost([]),
      // Open files well past the machine's 128 instances: the bound is not RLIMIT_NOFILE's.
      rules: PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits: { openFiles: 4096 } } } }], "/"),
    });
    try {
      await writeFile(path.join(dir, "taker.py"), TAKER);
      const running = cmdBox().call(session, "bash", { command: "id -u; python3 taker.py", timeout_s: 60 });
      assert.ok(await eventually(() => existsSync(path.join(dir, "held")), 40_000), "the command never held them");
      // The host's user, while the command holds what it could take: a watch of its own (node:fs's, an inotify
      // instance under Deno and Node alike).
      let hostWatch: string;
      try {
        const watcher = watch(dir);
        watcher.close();
        hostWatch = "ok";
      } catch (error) {
        hostWatch = String(error);
      }
      await writeFile(path.join(dir, "done"), "");
      const out = okOutput<BashResult>(await running);
      const [uid, inotify, fanotify, ptys] = out.stdout.trim().split("\n");
      assert.equal(Number(uid), process.getuid!(), "the command runs as the server's user, as before");
      const instances = Number(inotify.split(" ")[1]);
      const instanceLimit = machineLimit("/proc/sys/fs/inotify/max_user_instances")!;
      assert.ok(instances >= 1, `the command got no inotify instance at all: ${inotify}`);
      assert.ok(
        instances <= Math.floor(instanceLimit / OBJECT_SHARE),
        `the command took ${instances} of the machine's ${instanceLimit} inotify instances`,
      );
      assert.match(inotify, /Too many open files/);
      const groupLimit = machineLimit("/proc/sys/fs/fanotify/max_user_groups");
      if (groupLimit !== undefined) {
        const groups = Number(fanotify.split(" ")[1]);
        assert.ok(
          groups <= Math.floor(groupLimit / OBJECT_SHARE),
          `the command took ${groups} of the machine's ${groupLimit} fanotify groups`,
        );
      }
      const ptyMax = machineLimit("/proc/sys/kernel/pty/max")!;
      const ptyReserve = machineLimit("/proc/sys/kernel/pty/reserve")!;
      const opened = Number(ptys.split(" ")[1]);
      assert.ok(opened >= 1, `the command got no pseudo-terminal at all: ${ptys}`);
      assert.ok(
        opened <= Math.floor((ptyMax - ptyReserve) / OBJECT_SHARE),
        `the command opened ${opened} of the ${ptyMax - ptyReserve} pseudo-terminals devpts instances share`,
      );
      assert.equal(hostWatch, "ok", "the server's own watcher failed while the command held its instances");
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a session's commands share one namespace, another session has its own, and it ends with its session", {
    timeout: 90_000,
  }, async () => {
    // One holder per session (a child of this process): a second command of the session gets none of what the
    // first holds, a command of another session gets its own share, and no holder is left once both close.
    const holders = (sessions = false) => holderChildren(sessions).length;
    const count = `python3 -c 'import ctypes
l = ctypes.CDLL(None)
n = 0
while l.inotify_init1(0) >= 0: n += 1
print(n)'`;
    const dirs = await Promise.all([0, 1].map(() => mkdtemp(path.join(os.tmpdir(), "toolfence-ns-share-"))));
    const [first, second] = dirs.map((workspace) => new Session({ workspace, host: denyingNetworkHost([]) }));
    try {
      await writeFile(path.join(dirs[0], "taker.py"), TAKER);
      const running = cmdBox().call(first, "bash", { command: "id -u; python3 taker.py", timeout_s: 60 });
      assert.ok(await eventually(() => existsSync(path.join(dirs[0], "held")), 40_000), "the command never held them");
      const same = Number(okOutput<BashResult>(await cmdBox().call(first, "bash", { command: count })).stdout);
      // The other session's first sandboxes start at once: they make one holder between them.
      const [counted] = await Promise.all(
        [count, "true", "true"].map((command) => cmdBox().call(second, "bash", { command })),
      );
      const other = Number(okOutput<BashResult>(counted).stdout);
      await writeFile(path.join(dirs[0], "done"), "");
      const held = Number(okOutput<BashResult>(await running).stdout.split("\n")[1].split(" ")[1]);
      assert.equal(same, 0, `a second command of the session took ${same} more beside the first's ${held}`);
      assert.ok(other >= 1 && other <= held, `another session's command took ${other} (the first held ${held})`);
      assert.equal(holders(true), 2, "one holder per session while they are open");
      assert.equal(holders(), 3, "and one of the server's around them");
    } finally {
      await Promise.all([first.close(), second.close()]);
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
    // The server's goes with the last session: nothing of ours outlives them.
    assert.ok(await eventually(() => holders() === 0, 60_000), `${holders()} holders left after the sessions closed`);
  });

  test("the sessions' commands together hold at most the server's share of inotify instances", {
    timeout: 120_000,
  }, async () => {
    // Before: each session's namespace sat right below the machine's, and eight sessions (an HTTP tenant may hold
    // 32) each holding their eighth took all 128 instances of root: the host's own watch failed with EMFILE.
    const sessions = OBJECT_SHARE;
    const dirs = await Promise.all(
      Array.from({ length: sessions }, () => mkdtemp(path.join(os.tmpdir(), "toolfence-ns-server-"))),
    );
    const opened = dirs.map((workspace) => new Session({ workspace, host: denyingNetworkHost([]) }));
    const command = `python3 -c 'import ctypes, os, time
l = ctypes.CDLL(None)
n = 0
while l.inotify_init1(0) >= 0: n += 1
print(n, flush=True)
open("held", "w").close()
for _ in range(300):
    if os.path.exists("done"): break
    time.sleep(0.1)'`;
    try {
      const running = opened.map((session) => cmdBox().call(session, "bash", { command, timeout_s: 60 }));
      const held = () => dirs.every((dir) => existsSync(path.join(dir, "held")));
      assert.ok(await eventually(held, 60_000), "the commands never held them");
      let hostWatch = "ok";
      try {
        watch(dirs[0]).close();
      } catch (error) {
        hostWatch = String(error);
      }
      await Promise.all(dirs.map((dir) => writeFile(path.join(dir, "done"), "")));
      const counts = (await Promise.all(running)).map((result) => Number(okOutput<BashResult>(result).stdout));
      const total = counts.reduce((a, b) => a + b, 0);
      const limit = machineLimit("/proc/sys/fs/inotify/max_user_instances")!;
      assert.ok(total >= 1 && total <= Math.floor(limit / SERVER_SHARE), `the sessions took ${counts.join(" + ")}`);
      assert.equal(hostWatch, "ok", "the server's own watcher failed while the sessions held their instances");
    } finally {
      await Promise.all(opened.map((session) => session.close()));
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  test("the sessions' commands together open at most the server's share of pseudo-terminals, and none past it", {
    timeout: 120_000,
  }, async () => {
    // Before: each session's devpts had max= an eighth of the 3072 terminals the machine's other devpts instances
    // share, with no bound on the sessions together: nine sessions opened all of them, and no container, tmux or
    // other sandbox of the machine could open one (ENOSPC) while they ran.
    const ptyMax = machineLimit("/proc/sys/kernel/pty/max")!;
    const ptyReserve = machineLimit("/proc/sys/kernel/pty/reserve")!;
    const sessions = OBJECT_SHARE + 1;
    const dirs = await Promise.all(
      Array.from({ length: sessions }, () => mkdtemp(path.join(os.tmpdir(), "toolfence-pty-server-"))),
    );
    const rules = PolicyRules.fromLayers(
      [{ name: "project", config: { sandbox: { limits: { openFiles: 4096 } } } }],
      "/",
    );
    const opened = dirs.map((workspace) => new Session({ workspace, host: denyingNetworkHost([]), rules }));
    const command = `python3 -c 'import os, time
fds = []
try:
    while True: fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
except OSError: pass
print(len(fds), flush=True)
open("held", "w").close()
for _ in range(300):
    if os.path.exists("done"): break
    time.sleep(0.1)'`;
    try {
      const running = opened.map((session) => cmdBox().call(session, "bash", { command, timeout_s: 60 }));
      const held = () => dirs.every((dir) => existsSync(path.join(dir, "held")));
      assert.ok(await eventually(held, 60_000), "the commands never held them");
      await Promise.all(dirs.map((dir) => writeFile(path.join(dir, "done"), "")));
      const counts = (await Promise.all(running)).map((result) => Number(okOutput<BashResult>(result).stdout));
      const total = counts.reduce((a, b) => a + b, 0);
      // Each session has its part. One whose namespace holder could not start in time (twice 5 s, on a loaded
      // machine: CI run ci18, Node 24) has no terminal by design (NO_HOLDER_FRONT, tested on its own below), and one
      // such session is let pass; more would be parts not given.
      assert.ok(counts.filter((n) => n === 0).length <= 1, `sessions got no terminal: ${counts.join(" + ")}`);
      assert.ok(
        total <= Math.floor((ptyMax - ptyReserve) / SERVER_SHARE),
        `the sessions opened ${counts.join(" + ")} of the ${ptyMax - ptyReserve} the machine's devpts instances share`,
      );
      // Past PTY_SESSIONS sessions holding a part, the next has no terminal at all: it fails, and takes none.
      const more = await Promise.all(
        Array.from({ length: PTY_SESSIONS - sessions }, () => mkdtemp(path.join(os.tmpdir(), "toolfence-pty-more-"))),
      );
      dirs.push(...more);
      opened.push(...more.map((workspace) => new Session({ workspace, host: denyingNetworkHost([]), rules })));
      for (const session of opened.slice(sessions)) {
        okOutput<BashResult>(await cmdBox().call(session, "bash", { command: "true", timeout_s: 30 }));
      }
      const last = await mkdtemp(path.join(os.tmpdir(), "toolfence-pty-last-"));
      dirs.push(last);
      opened.push(new Session({ workspace: last, host: denyingNetworkHost([]), rules }));
      const refused = await cmdBox().call(opened.at(-1)!, "bash", {
        command: `python3 -c 'import os; os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)'`,
        timeout_s: 30,
      });
      assert.equal(refused.errorCode, "command_failed", String(refused.error));
      assert.match(String((refused.output as BashResult).stderr), /No such file or directory: '\/dev\/ptmx'/);
      // A session's close gives its part back: the next session opens terminals again.
      await opened[0].close();
      const again = await mkdtemp(path.join(os.tmpdir(), "toolfence-pty-again-"));
      dirs.push(again);
      opened.push(new Session({ workspace: again, host: denyingNetworkHost([]), rules }));
      const out = okOutput<BashResult>(
        await cmdBox().call(opened.at(-1)!, "bash", {
          command: `python3 -c 'import os; os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY); print("pty")'`,
          timeout_s: 30,
        }),
      );
      assert.equal(out.stdout.trim(), "pty");
    } finally {
      await Promise.all(opened.map((session) => session.close()));
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  test("a sandbox whose session namespace cannot be made now has no terminal, not terminals without a bound", {
    timeout: 60_000,
  }, async () => {
    // Before: a holder that did not say it was ready in time (twice, on a loaded machine) left the sandbox to its own
    // devpts, with no bound: under Node 24 in CI one command opened 2,687 terminals while every other session's held 48.
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-pty-noholder-"));
    // A holder that starts (the chain is known to work here), and one given no time to start.
    const holders = [new KernelObjectsHolder(dir), new KernelObjectsHolder(dir, { readyMs: 0 })];
    const openPty = ["python3", "-c", `import os; os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY); print("pty")`];
    try {
      const ran = [];
      for (const kernelObjects of holders) {
        const wrapped = await sandboxArgv(openPty, { workdir: dir, writable: [dir], mode: "required", kernelObjects });
        try {
          ran.push(await runSandboxed(wrapped));
        } finally {
          await wrapped.release();
        }
      }
      const [started, missing] = ran;
      assert.equal(started.stdout.trim(), "pty", started.stderr);
      assert.equal(missing.code, 1, missing.stdout);
      assert.match(missing.stderr, /No such file or directory: '\/dev\/ptmx'/);
    } finally {
      await Promise.all(holders.map((holder) => holder.close()));
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("one workspace's sessions hold at most their part of the terminals: another workspace's session opens one", {
    timeout: 120_000,
  }, async () => {
    // Before: the parts went to the first PTY_SESSIONS sessions whoever opened them, so one tenant (its workspace)
    // opening 32 sessions left every other tenant's commands without a terminal until those sessions closed.
    const [mine, theirs] = await Promise.all(
      ["mine", "theirs"].map((name) => mkdtemp(path.join(os.tmpdir(), `toolfence-pty-${name}-`))),
    );
    const sessionOf = (workspace: string) => new Session({ workspace, host: denyingNetworkHost([]) });
    const opened = Array.from({ length: PTY_SESSIONS_PER_WORKSPACE + 1 }, () => sessionOf(mine));
    const openPty = `python3 -c 'import os; os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY); print("pty")'`;
    const call = (session: Session) => cmdBox().call(session, "bash", { command: openPty, timeout_s: 30 });
    try {
      for (const session of opened.slice(0, -1)) {
        assert.equal(okOutput<BashResult>(await call(session)).stdout.trim(), "pty");
      }
      const refused = await call(opened.at(-1)!);
      assert.equal(refused.errorCode, "command_failed", String(refused.error));
      assert.match(String((refused.output as BashResult).stderr), /No such file or directory: '\/dev\/ptmx'/);
      opened.push(sessionOf(theirs));
      assert.equal(okOutput<BashResult>(await call(opened.at(-1)!)).stdout.trim(), "pty");
      // A session's close gives its part back to its workspace.
      await opened[0].close();
      opened.push(sessionOf(mine));
      assert.equal(okOutput<BashResult>(await call(opened.at(-1)!)).stdout.trim(), "pty");
    } finally {
      await Promise.all(opened.map((session) => session.close()));
      await Promise.all([mine, theirs].map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  test("a command holds at most its share of the user's message queue bytes and pending signals", {
    timeout: 90_000,
    skip: ownLimit("Max msgqueue size") === undefined || ownLimit("Max pending signals") === undefined
      ? "this process's RLIMIT_MSGQUEUE or RLIMIT_SIGPENDING is unlimited: no count to take"
      : false,
  }, async () => {
    // Before: the command opened 9 queues (all 800 KiB of root's RLIMIT_MSGQUEUE) and queued 96,367 signals, and while
    // it held them the host's `mq_open` failed with EMFILE and `sigqueue` with EAGAIN ("host opened 0").
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-user-rlimits-"));
    const session = new Session({ workspace: dir, host: denyingNetworkHost([]) });
    try {
      await writeFile(path.join(dir, "queuer.py"), QUEUER);
      const running = cmdBox().call(session, "bash", { command: "python3 queuer.py hold 100", timeout_s: 60 });
      assert.ok(await eventually(() => existsSync(path.join(dir, "held")), 40_000), "the command never held them");
      // The server's user on the host, while the command holds what it could take: one queue and one signal.
      let host: string;
      try {
        host = execFileSync("python3", ["-c", QUEUER, `host${process.pid}`, "1"], {
          encoding: "utf8",
          timeout: 60_000,
        });
      } finally {
        await writeFile(path.join(dir, "done"), "");
      }
      const out = okOutput<BashResult>(await running);
      assert.equal(host, "queues 1\nsignals 1000\n", "the host's own queue or signal was refused");
      const [queues, signals] = out.stdout.trim().split("\n").map((line) => Number(line.split(" ")[1]));
      assert.ok(queues >= 1, `the command got no queue at all: ${out.stdout}`);
      assert.ok(
        queues * 81_920 <= ownLimit("Max msgqueue size")! / OBJECT_SHARE,
        `the command opened ${queues} queues of 80 KiB under the user's ${ownLimit("Max msgqueue size")} bytes`,
      );
      assert.ok(signals >= 1 && signals <= ownLimit("Max pending signals")! / OBJECT_SHARE, out.stdout);
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("past its pseudo-terminals a command fails as itself, not as a tmpfs that is not full", {
    timeout: 60_000,
  }, async () => {
    // Before: "hit the size of a private tmpfs (sandbox.limits.tmpSize = ...): OSError: [Errno 28] No space left on
    // device: '/dev/ptmx'", with /tmp empty; the ENOSPC was the sandbox's share of pseudo-terminals.
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-pty-words-"));
    const session = new Session({
      workspace: dir,
      host: denyingNetworkHost([]),
      rules: PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits: { openFiles: 4096 } } } }], "/"),
    });
    try {
      const command = `python3 -c 'import os
fds = []
while True: fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))'`;
      const result = await cmdBox().call(session, "bash", { command, timeout_s: 30 });
      assert.equal(result.errorCode, "command_failed", String(result.error));
      assert.match(String((result.output as BashResult).stderr), /No space left on device: '\/dev\/ptmx'/);
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the key calls are refused: the user's key quota is not the command's to take, nor to keep after it", {
    timeout: 60_000,
    skip: os.arch() !== "x64" ? "the probe calls add_key and keyctl by their x86-64 numbers" : false,
  }, async () => {
    // Before: add_key to the user keyring (@u) in a loop took root's key quota (kernel.keys.root_maxkeys, 25 MB),
    // counted for no namespace of the sandbox's nor cgroup, and 3,000 keys of 1000 bytes stayed counted after the
    // command and its session ended (/proc/key-users); another program of the user would fail add_key (EDQUOT).
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-keys-"));
    const session = new Session({ workspace: dir, host: denyingNetworkHost([]) });
    try {
      const command = `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 100 and libc.syscall(${X86_64_ADD_KEY}, b"user", b"toolfence-key-%d" % n, b"x" * 1000, 1000, -4) >= 0: n += 1
print(n, os.strerror(ctypes.get_errno()))
r = libc.syscall(${X86_64_KEYCTL}, 0, -4, 0)
print(r, os.strerror(ctypes.get_errno()))
'`;
      const out = okOutput<BashResult>(await cmdBox().call(session, "bash", { command, timeout_s: 30 }));
      assert.equal(out.stdout, "0 Function not implemented\n-1 Function not implemented\n");
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("io_setup is refused: the machine's one AIO budget is not the command's to take", {
    timeout: 60_000,
    skip: os.arch() !== "x64" ? "the probe calls io_setup by its x86-64 number" : false,
  }, async () => {
    // Before: one io_setup(65536) in a command took all of fs.aio-max-nr (65536), and every other program of the
    // machine failed its own with EAGAIN while the command ran (aio-nr read 65536 from the host).
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-aio-"));
    const session = new Session({ workspace: dir, host: denyingNetworkHost([]) });
    try {
      const command = `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for n in (65536, 1):
    ctx = ctypes.c_ulong(0)
    r = libc.syscall(${X86_64_IO_SETUP}, n, ctypes.byref(ctx))
    print(n, r, os.strerror(ctypes.get_errno()) if r < 0 else "reserved")
'`;
      const out = okOutput<BashResult>(await cmdBox().call(session, "bash", { command, timeout_s: 30 }));
      assert.equal(out.stdout, "65536 -1 Function not implemented\n1 -1 Function not implemented\n");
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
