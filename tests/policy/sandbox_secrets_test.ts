// The sandbox against an attacker inside it, with the real bubblewrap: secrets
// planted in real files stay invisible, /proc shows only the sandbox, and the
// workspace's protected paths cannot be changed, created, moved or removed.

import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fsp from "node:fs/promises";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { bubblewrapStatus, sandboxArgv, sandboxState } from "../../policy/sandbox.ts";
import { startEgressProxy } from "../../policy/egress/proxy.ts";
import { exists, type Layout, makeLayout } from "./_fixtures.ts";
import { runSandboxed as run } from "./_sandbox_run.ts";
import { exited } from "../_exited.ts";

const status = await bubblewrapStatus();
const skip = status.path === undefined ? `bubblewrap is unavailable here: ${status.reason}` : false;

let L: Layout;

async function sandboxed(script: string, extra: { quarantine?: string; protectedPaths?: string[] } = {}) {
  const command = await sandboxArgv(["bash", "-c", script], {
    workdir: L.workdir,
    writable: [L.workdir],
    workspace: L.workdir,
    mode: "required",
    ...extra,
  });
  const ran = await run(command, { PATH: "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" });
  const moved = await command.release();
  return { ...ran, moved };
}

beforeEach(async () => {
  L = await makeLayout();
});
afterEach(async () => {
  await L.cleanup();
});

describe("secrets stay out of the sandbox", { skip }, () => {
  // A home folder of its own under /var/tmp (visible in the sandbox, unlike /tmp), with planted keys.
  let home: string;
  let savedHome: string | undefined;
  const planted = "-----BEGIN OPENSSH PRIVATE KEY----- planted-by-toolfence-test";
  before(async () => {
    await fsp.mkdir("/var/tmp", { recursive: true });
    home = await fsp.realpath(await fsp.mkdtemp("/var/tmp/toolfence-home-"));
    for (const [file, text] of [[".ssh/id_rsa", planted], [".aws/credentials", planted], [".netrc", planted]]) {
      await fsp.mkdir(path.join(home, path.dirname(file)), { recursive: true });
      await fsp.writeFile(path.join(home, file), text);
    }
    savedHome = process.env.HOME;
    process.env.HOME = home;
  });
  after(async () => {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    await fsp.rm(home, { recursive: true, force: true });
  });

  test(
    "cat ~/.ssh/id_rsa finds nothing: the home folder is empty, private and writable",
    { timeout: 60_000 },
    async () => {
      assert.equal(await fsp.readFile(path.join(home, ".ssh/id_rsa"), "utf8"), planted, "the planted key is real");
      const script = `cat ~/.ssh/id_rsa ${home}/.ssh/id_rsa ~/.aws/credentials ~/.netrc 2>&1; ` +
        `ls -A ~ | wc -l; echo cache > ~/.cache-test && cat ~/.cache-test`;
      const command = await sandboxArgv(["bash", "-c", script], {
        workdir: L.workdir,
        writable: [L.workdir],
        mode: "required",
      });
      const ran = await run(command, { PATH: "/usr/bin:/bin", HOME: home });
      assert.doesNotMatch(ran.stdout, /planted-by-toolfence-test/);
      assert.match(ran.stdout, /No such file or directory/);
      assert.match(ran.stdout, /\n0\ncache\n$/);
      assert.equal(await exists(path.join(home, ".cache-test")), false, "writes to the home stay private");
    },
  );

  test("a workspace inside the home folder stays visible and writable", { timeout: 60_000 }, async () => {
    const workdir = path.join(home, "project");
    await fsp.mkdir(workdir, { recursive: true });
    await fsp.writeFile(path.join(workdir, "a.txt"), "in project\n");
    const command = await sandboxArgv(["bash", "-c", "cat a.txt; echo made > b.txt; cat ../.ssh/id_rsa 2>&1"], {
      workdir,
      writable: [workdir],
      mode: "required",
    });
    const ran = await run(command, { PATH: "/usr/bin:/bin", HOME: home });
    assert.match(ran.stdout, /^in project\n/);
    assert.doesNotMatch(ran.stdout, /planted/);
    assert.equal(await fsp.readFile(path.join(workdir, "b.txt"), "utf8"), "made\n");
  });

  test("every home folder on the machine is masked, found by /etc/passwd and /home, not by a list of names", {
    timeout: 60_000,
  }, async () => {
    const other = await fsp.mkdtemp("/home/toolfence-user-");
    try {
      await fsp.mkdir(path.join(other, ".kube"), { recursive: true });
      await fsp.writeFile(path.join(other, ".kube/config"), planted);
      const ran = await sandboxed(`cat ${other}/.kube/config /root/.bash_history 2>&1; ls -A /home /root | wc -l`);
      assert.doesNotMatch(ran.stdout, /planted/);
      const passwd = await fsp.readFile("/etc/passwd", "utf8");
      for (const line of passwd.split("\n")) {
        const dir = line.split(":")[5];
        if (!dir?.startsWith("/home/") && !dir?.startsWith("/var/lib/") && dir !== "/root") continue;
        if (!(await exists(dir))) continue;
        const listed = await sandboxed(`ls -A ${dir} | wc -l`);
        assert.equal(listed.stdout.trim(), "0", `${dir} is visible in the sandbox`);
      }
    } finally {
      await fsp.rm(other, { recursive: true, force: true });
    }
  });

  test("password hashes, ssh host keys and /run are hidden", { timeout: 60_000 }, async () => {
    const ran = await sandboxed(
      "cat /etc/shadow /etc/gshadow 2>/dev/null | wc -c; cat /etc/ssh/ssh_host_*_key 2>/dev/null | wc -c; " +
        "ls -A /run /var/run 2>/dev/null | grep -vc ':$'",
    );
    const lines = ran.stdout.trim().split("\n").map(Number);
    assert.equal(lines[0], 0, "the password hashes were readable");
    assert.equal(lines[1], 0, "an ssh host key was readable");
    // Outside the read view: not there at all.
    assert.equal(lines[2], 0, `/run is visible: ${ran.stdout}`);
  });

  test("the machine's identity is hidden: machine-id and the boot's id", { timeout: 60_000 }, async () => {
    // Before, `cat /etc/machine-id` printed the host's id in every tenant's sandbox (machine-id(5): confidential).
    const host = ["/etc/machine-id", "/proc/sys/kernel/random/boot_id"].map((file) => {
      try {
        return readFileSync(file, "utf8").trim();
      } catch {
        return "";
      }
    }).filter((id) => id !== "");
    const ran = await sandboxed(
      "cat /etc/machine-id /var/lib/dbus/machine-id /etc/hostid /proc/sys/kernel/random/boot_id 2>/dev/null; " +
        "echo end",
    );
    assert.ok(host.length > 0, "this machine has no id to hide");
    for (const id of host) assert.ok(!ran.stdout.includes(id), `the host's id ${id} was readable: ${ran.stdout}`);
    assert.equal(ran.stdout, "end\n");
  });

  test(
    "/proc shows only the sandbox's processes; the host's environments are out of reach",
    { timeout: 60_000 },
    async () => {
      const hostInit = await fsp.readFile("/proc/1/cmdline", "utf8").catch(() => "");
      const marker = `TOOLFENCE_MARKER_${Date.now()}`;
      process.env[marker] = "host-secret";
      try {
        const ran = await sandboxed(
          `ls /proc | grep -c '^[0-9]'; test -e /proc/${process.pid} && echo host-visible-$((6*7)); ` +
            `cat /proc/1/cmdline | tr '\\0' ' '; echo; grep -rah host-sec""ret /proc/[0-9]*/environ 2>/dev/null | wc -l`,
        );
        const lines = ran.stdout.split("\n");
        assert.ok(Number(lines[0]) < 10, `the sandbox sees ${lines[0]} processes`);
        assert.doesNotMatch(ran.stdout, /host-visible-42/, `pid ${process.pid}: ${ran.stdout}`);
        if (hostInit !== "") assert.notEqual(lines[1].trim(), hostInit.replaceAll("\0", " ").trim());
        assert.equal(lines[2].trim(), "0", "the test process's environment was readable");
      } finally {
        delete process.env[marker];
      }
    },
  );
});

describe("descriptors of the server", { skip }, () => {
  test("none reaches a command: an egress proxy's listener, or one the server inherited", {
    timeout: 60_000,
  }, async () => {
    // Deno's node:net makes a unix listener without close-on-exec: a command could accept other commands'
    // connections on it, or make it blocking and freeze the server's next accept. Here one listener of a real
    // proxy, and a pipe handed to bubblewrap past its own descriptors, as a parent of the server might leave one.
    const proxy = await startEgressProxy({
      judge: () => Promise.reject(new Error("no destination in this test")),
      listen: { path: path.join(L.tempParent, "proxy.sock") },
    });
    try {
      for (const argv of [["bash", "-c", "ls -l /proc/self/fd/"], ["ls", "-l", "/proc/self/fd/"]]) {
        const command = await sandboxArgv(argv, { workdir: L.workdir, writable: [L.workdir], mode: "required" });
        const child = spawn(command.argv[0], command.argv.slice(1), {
          env: { PATH: "/usr/bin:/bin" },
          stdio: ["ignore", "pipe", "pipe", ...command.fds, "pipe"],
        });
        let out = "";
        child.stdout!.on("data", (chunk) => out += chunk);
        await exited(child);
        await command.release();
        const open = out.split("\n").map((line) => /\s(\d+) -> (.*)$/.exec(line)).filter((m) => m !== null);
        assert.ok(open.length >= 3, out);
        // Past 0, 1 and 2 only the listing's own handle of /proc/self/fd (or /proc/<pid>/fd).
        const leaked = open.filter((m) => Number(m![1]) > 2 && !/^\/proc\/(self|\d+)\/fd$/.test(m![2]));
        assert.deepEqual(leaked.map((m) => `${m![1]} -> ${m![2]}`), [], argv.join(" "));
      }
      // The closing loop leaves the command's shell as it found it: no variable of its own is left set.
      const command = await sandboxArgv(["bash", "-c", 'echo "[${toolfence_fd-unset}] $LINENO"'], {
        workdir: L.workdir,
        writable: [L.workdir],
        mode: "required",
      });
      const ran = await run(command, { PATH: "/usr/bin:/bin" });
      await command.release();
      assert.equal(ran.stdout, "[unset] 1\n", ran.stderr);
    } finally {
      await proxy.close();
    }
  });
});

describe("the machine's kernel settings", { skip }, () => {
  test("no file of /proc outside the sandbox's own processes can be written, and kernel secrets are masked", {
    timeout: 60_000,
  }, async () => {
    // Run as root, a command keeps root's file access to the sysctls with no capability: before the covers,
    // `echo ... > /proc/sys/kernel/core_pattern` from a sandbox set what the host runs as root on a crash.
    // Every writable file is listed (access(2), which a read-only mount refuses), and one real write is tried
    // with the value already there, so that a failing cover changes nothing.
    const ran = await sandboxed(
      "find /proc -path '/proc/[0-9]*' -prune -o -path /proc/self -prune -o -path /proc/thread-self -prune " +
        "-o -type f -writable -print 2>/dev/null; echo ==; " +
        "cat /proc/sys/fs/lease-break-time > /proc/sys/fs/lease-break-time && echo wrote-sysctl; echo ==; " +
        "cat /proc/keys /proc/key-users /proc/timer_list /proc/sched_debug /proc/kcore 2>/dev/null | wc -c",
    );
    const [writable, write, secrets] = ran.stdout.split("==\n");
    // What may stay writable: the masks themselves (/dev/null), the pressure triggers (a poll per open file)
    // and /proc/mtrr (which asks for CAP_SYS_ADMIN, dropped).
    const harmless =
      /^\/proc\/(?:keys|key-users|timer_list|sched_debug|kcore|mtrr|pressure\/\w+|sys\/kernel\/random\/boot_id)$/;
    const left = writable.split("\n").filter((line) => line !== "" && !harmless.test(line));
    assert.equal(left.length, 0, `${left.length} writable in the sandbox, such as ${left.slice(0, 8).join(", ")}`);
    assert.doesNotMatch(write, /wrote-sysctl/);
    assert.match(ran.stderr, /Read-only file system/);
    assert.equal(Number(secrets.trim()), 0, `kernel secrets readable: ${secrets}`);
  });

  test("no user namespace can be made inside: no capabilities over a mount or network namespace of its own", {
    timeout: 60_000,
    skip: execFileSync("sh", ["-c", "command -v unshare || true"]).toString().trim() === "" ? "no unshare(1)" : false,
  }, async () => {
    // Before: `unshare -U` in a command gave its process every capability (CapEff 000001ffffffffff) in a user
    // namespace of its own, and with it CAP_NET_ADMIN over a network namespace (nf_tables and the rest of the
    // kernel's widest attack surface) and CAP_SYS_ADMIN over a mount namespace.
    const ran = await sandboxed(
      "unshare -U sh -c 'grep CapEff /proc/self/status; echo made' 2>&1; unshare -Umn true 2>&1 || echo refused",
    );
    assert.doesNotMatch(ran.stdout, /made/, ran.stdout);
    assert.match(ran.stdout, /refused/, ran.stdout);
  });
});

describe("protected paths inside the sandbox", { skip }, () => {
  test("existing ones are read-only and cannot be moved, removed or replaced", { timeout: 60_000 }, async () => {
    await fsp.mkdir(path.join(L.workdir, ".git/hooks"), { recursive: true });
    await fsp.writeFile(path.join(L.workdir, ".git/config"), "[core]\n");
    await fsp.writeFile(path.join(L.workdir, ".git/hooks/pre-commit"), "#!/bin/sh\n");
    await fsp.writeFile(path.join(L.workdir, ".npmrc"), "registry=https://registry.npmjs.org/\n");
    await fsp.mkdir(path.join(L.workdir, "pkg/.vscode"), { recursive: true });
    const attacks = [
      "echo '[diff] external = /tmp/x' >> .git/config",
      "echo evil > .git/hooks/pre-commit",
      "echo evil > .git/hooks/post-checkout",
      "rm -f .git/config",
      "mv .git/config .git/config.old",
      "mv .git .git-old",
      "rm -rf .git",
      "mv .npmrc npmrc && echo registry=http://evil > .npmrc",
      "echo registry=http://evil >> .npmrc",
      "echo '{}' > pkg/.vscode/settings.json",
      "ln -sf /tmp/x .git/hooks/pre-push",
    ];
    for (const attack of attacks) {
      await sandboxed(attack);
      assert.equal(await fsp.readFile(path.join(L.workdir, ".git/config"), "utf8"), "[core]\n", attack);
      assert.deepEqual(await fsp.readdir(path.join(L.workdir, ".git/hooks")), ["pre-commit"], attack);
      assert.equal(await fsp.readFile(path.join(L.workdir, ".git/hooks/pre-commit"), "utf8"), "#!/bin/sh\n", attack);
      assert.match(await fsp.readFile(path.join(L.workdir, ".npmrc"), "utf8"), /registry.npmjs.org/, attack);
      assert.deepEqual(await fsp.readdir(path.join(L.workdir, "pkg/.vscode")), [], attack);
    }
    // Ordinary work in the same folders goes on.
    const ordinary = await sandboxed("echo x > notes.txt && mkdir -p src && echo y > src/a.ts && cat .git/config");
    assert.equal(ordinary.code, 0, ordinary.stderr);
    assert.equal(await fsp.readFile(path.join(L.workdir, "src/a.ts"), "utf8"), "y\n");
  });

  test(
    "missing ones inside .git cannot be created; placeholders leave no trace afterwards",
    { timeout: 60_000 },
    async () => {
      await fsp.mkdir(path.join(L.workdir, ".git/objects"), { recursive: true });
      const before = (await fsp.readdir(path.join(L.workdir, ".git"))).sort();
      const ran = await sandboxed(
        "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; echo '[core]' > .git/config; " +
          "mkdir -p .git/info && echo x > .git/info/attributes; echo ok > .git/objects/o",
      );
      assert.match(ran.stderr, /Read-only file system/);
      assert.equal(await exists(path.join(L.workdir, ".git/hooks/pre-commit")), false);
      assert.equal(await exists(path.join(L.workdir, ".git/config")), false);
      assert.deepEqual((await fsp.readdir(path.join(L.workdir, ".git"))).sort(), before, "placeholders were left");
      assert.equal(await fsp.readFile(path.join(L.workdir, ".git/objects/o"), "utf8"), "ok\n");
    },
  );

  test("missing ones at the root that a command creates are moved out of the workspace when it ends", {
    timeout: 60_000,
  }, async () => {
    const quarantine = path.join(L.tempParent, "quarantine");
    const listing = (await fsp.readdir(L.workdir)).sort();
    const ran = await sandboxed(
      "ls -A; echo registry=http://127.0.0.1:9/ > .npmrc; mkdir -p .vscode && echo '{}' > .vscode/tasks.json; " +
        "echo '{}' > .mcp.json; echo keep > kept.txt; echo x > sub/.npmrc; mkdir -p sub/deep/.idea; " +
        "git init -q repo; ln -s /etc/passwd sub/.yarnrc",
      { quarantine },
    );
    assert.deepEqual(ran.stdout.trim().split("\n").sort(), listing, "the command saw placeholders in the workspace");
    assert.deepEqual(ran.moved.map((m) => path.relative(L.workdir, m.path)).sort(), [
      ".mcp.json",
      ".npmrc",
      ".vscode",
      "repo/.git",
      "sub/.npmrc",
      "sub/.yarnrc",
      "sub/deep/.idea",
    ]);
    assert.equal(await exists(path.join(L.workdir, "sub/a.txt")), true);
    for (const name of [".npmrc", ".vscode", ".mcp.json"]) {
      assert.equal(await exists(path.join(L.workdir, name)), false);
    }
    assert.equal(await fsp.readFile(path.join(L.workdir, "kept.txt"), "utf8"), "keep\n");
    for (const m of ran.moved) assert.ok(await exists(m.movedTo), m.movedTo);
  });

  test("the quarantine folder made a link out of the temp dir is replaced, never followed", {
    timeout: 60_000,
  }, async () => {
    // The quarantine lies in the session temp dir, which commands may change: what `ln -s <outside>
    // "$TMPDIR/protected-created"` leaves. The created .npmrc went through the link, out of the workspace.
    const quarantine = path.join(L.tempParent, "quarantine");
    const outside = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-quarantine-outside-")));
    try {
      await fsp.symlink(outside, quarantine);
      const ran = await sandboxed("echo registry=http://127.0.0.1:9/ > .npmrc; echo x > sub/.npmrc", { quarantine });
      assert.deepEqual(ran.moved.map((m) => path.relative(L.workdir, m.path)).sort(), [".npmrc", "sub/.npmrc"]);
      assert.deepEqual(await fsp.readdir(outside), [], "nothing was moved through the link");
      assert.ok((await fsp.lstat(quarantine)).isDirectory(), "the link was replaced by a folder");
      for (const m of ran.moved) {
        assert.equal(path.dirname(m.movedTo), quarantine);
        assert.match(await fsp.readFile(m.movedTo, "utf8"), /registry|x/);
      }
    } finally {
      await fsp.rm(outside, { recursive: true, force: true });
    }
  });

  test("a missing .git/commondir gets no placeholder (git dies on an empty one) and is moved out once made", {
    timeout: 60_000,
  }, async () => {
    execFileSync("git", ["init", "-q", L.workdir]);
    const quarantine = path.join(L.tempParent, "quarantine");
    const ran = await sandboxed(
      "git status --short >/dev/null && echo git-works; echo ../evil > .git/commondir",
      { quarantine },
    );
    assert.match(ran.stdout, /git-works/, ran.stderr);
    assert.deepEqual(ran.moved.map((m) => path.relative(L.workdir, m.path)), [".git/commondir"]);
    assert.equal(await exists(path.join(L.workdir, ".git/commondir")), false);
  });

  test(
    "the list is data: extra patterns are protected too, an empty list protects nothing",
    { timeout: 60_000 },
    async () => {
      await fsp.writeFile(path.join(L.workdir, "Makefile"), "all:\n");
      await sandboxed("echo evil > Makefile", { protectedPaths: ["Makefile"] });
      assert.equal(await fsp.readFile(path.join(L.workdir, "Makefile"), "utf8"), "all:\n");
      await sandboxed("echo changed > Makefile", { protectedPaths: [] });
      assert.equal(await fsp.readFile(path.join(L.workdir, "Makefile"), "utf8"), "changed\n");
    },
  );
});

describe("sandbox state", () => {
  test("says whether commands are sandboxed and, if not, the probe's own reason", { timeout: 60_000 }, async () => {
    const auto = await sandboxState("auto");
    assert.equal(auto.working, status.path !== undefined);
    if (auto.working) assert.equal(auto.bwrap, status.path);
    else assert.ok(auto.reason && auto.summary.includes(auto.reason));
    const off = await sandboxState("off");
    assert.equal(off.working, false);
    assert.match(off.summary, /off/);
    const required = await sandboxState("required");
    if (!required.working) assert.match(required.summary, /no shell command or checker will start/);
  });
});

// Whether a sandbox started now can write into `folder` (through any link the racer made).
async function runSandboxedProbe(folder: string): Promise<string> {
  const ran = await sandboxed(`touch ${folder}/probe-$$ 2>/dev/null && echo writable; rm -f ${folder}/probe-$$`);
  return ran.stdout.trim();
}

describe("protected paths under a racing swap", { skip }, () => {
  test("a folder swapped for a link out of the workspace never becomes writable, and nothing outside changes", {
    timeout: 120_000,
  }, async () => {
    const outside = await fsp.realpath(await fsp.mkdtemp("/var/tmp/toolfence-race-out-"));
    await fsp.writeFile(path.join(outside, "a"), "untouched\n");
    const fingerprint = async () =>
      JSON.stringify(
        await Promise.all(
          (await fsp.readdir(outside, { recursive: true })).sort().map(async (name) => {
            const info = await fsp.lstat(path.join(outside, name));
            return [name, info.size, info.mtimeMs];
          }),
        ),
      );
    const before = await fingerprint();
    await fsp.mkdir(path.join(L.workdir, ".git"));
    await fsp.writeFile(path.join(L.workdir, ".git/config"), "[core]\n");
    const git = path.join(L.workdir, ".git");
    // A local process swaps .git between the real folder and a link to the outside folder, as fast as it can.
    const racer = spawn("bash", [
      "-c",
      `while :; do mv ${git} ${git}-real 2>/dev/null; ln -sfn ${outside} ${git}; rm -f ${git}; ` +
      `mv ${git}-real ${git} 2>/dev/null; done`,
    ], { stdio: "ignore", detached: true });
    const racerExit = exited(racer);
    const tries = Number(process.env.TOOLFENCE_RACE_TRIES ?? 60);
    // On a loaded machine the tries stop at 30 s, after at least 10: the racer spins all along, so each try races.
    const until = performance.now() + 30_000;
    try {
      for (let i = 0; i < tries && (i < 10 || performance.now() < until); i++) {
        await sandboxed(
          "echo evil > .git/hooks/pwned; echo evil > .git/pwned; mkdir .git/hooks; echo evil >> .git/config; " +
            `echo evil > ${outside}/pwned`,
        );
        assert.equal(await fingerprint(), before, `try ${i}: the outside folder changed`);
        const probe = await runSandboxedProbe(outside);
        assert.notEqual(probe, "writable", `try ${i}: the outside folder was writable in the sandbox`);
      }
    } finally {
      // The whole group: a mv or ln the loop had just started would otherwise outlive it and write into the
      // workspace while afterEach removes it (ENOTEMPTY under load, seen on Node 22 in CI).
      process.kill(-racer.pid!, "SIGKILL");
      await racerExit;
      await fsp.rm(outside, { recursive: true, force: true });
    }
  });
});
