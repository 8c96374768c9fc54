// Without the OS sandbox, an automatic answer lets run only programs whose effects the analysis knows. A program it
// does not know may write outside the workspace, read the host or run what it is given, which the sandbox contains:
// before, with `sandbox: "off"` and an automatic answer, `capsh -- x.sh`, `memusage bash x.sh`, `sotruss bash x.sh`,
// `fakeroot-sysv bash x.sh` and `gmake` ran the workspace's code (which printed a file outside and made one), and
// `GET http://127.0.0.1:PORT/` and `openssl s_client` read a service of the host.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { Session } from "../../../policy/session.ts";
import { denyAllHost, withAutoConfirm } from "../../../policy/hosts.ts";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { cmdBox, installed } from "./_helpers.ts";

const SECRET = "OUTSIDE-SECRET-61";

interface Places {
  dir: string;
  outside: string;
  marker: string;
}

async function places(): Promise<Places> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-unknown-")));
  const outside = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-unknown-out-")));
  await writeFile(path.join(outside, "secret.txt"), `${SECRET}\n`);
  const marker = path.join(outside, "made");
  const script = `cat '${path.join(outside, "secret.txt")}'; touch '${marker}'\n`;
  await writeFile(path.join(dir, "x.sh"), script);
  await writeFile(path.join(dir, "Makefile"), `all:\n\t@${script}`);
  await writeFile(path.join(dir, "a.txt"), "hello\n");
  return { dir, outside, marker };
}

async function cleanup({ dir, outside }: Places): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
}

/** Runs `command` through the bash tool, sandbox off, every question answered automatically. */
async function runAuto(dir: string, command: string) {
  const session = new Session({ workspace: dir, host: withAutoConfirm(denyAllHost()), sandbox: "off" });
  try {
    return await cmdBox().call(session, "bash", { command, timeout_s: 20 });
  } finally {
    await session.close();
  }
}

/** The line needs a person without the sandbox (an automatic answer does not run it). */
async function personNeeded(line: string, dir: string): Promise<void> {
  const decided = await decideCommand(line, { workspaceRoot: dir, sandbox: "off" });
  assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
  assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
}

describe("programs whose effects the checker does not know, without the sandbox", { timeout: 180_000 }, () => {
  test("runners it did not list and a make under another name do not run on an automatic answer", {
    timeout: 120_000,
  }, async () => {
    const at = await places();
    try {
      const lines = [
        ["capsh", "capsh -- x.sh"],
        ["memusage", "memusage bash x.sh"],
        ["sotruss", "sotruss bash x.sh"],
        ["fakeroot-sysv", "fakeroot-sysv bash x.sh"],
        ["heaptrack", "heaptrack bash x.sh"],
        ["gmake", "gmake"],
      ].filter(([program]) => installed(program));
      for (const [, line] of lines) {
        const result = await runAuto(at.dir, line);
        assert.equal(result.status, "skipped", `${line}: ${JSON.stringify(result)}`);
        assert.ok(!JSON.stringify(result).includes(SECRET), line);
        assert.equal(existsSync(at.marker), false, `${line} ran x.sh`);
      }
      // Each of them, behind a runner it knows, and programs it has never heard of.
      for (
        const line of [
          "capsh -- x.sh",
          "timeout 5 capsh -- x.sh",
          "nice -n 5 memusage bash x.sh",
          "env A=1 sotruss bash x.sh",
          "uclampset bash x.sh",
          "rr record bash x.sh",
          "pg_virtualenv bash x.sh",
          "some-tool-nobody-knows x.sh",
          "base64 a.txt",
          "prove",
          "ctest",
          "pdb3 x.py",
          "lli x.bc",
        ]
      ) await personNeeded(line, at.dir);
      // The class, shown without toolfence: capsh runs the workspace's script, which reads and writes outside.
      if (installed("capsh")) {
        const out = execFileSync("capsh", ["--", "x.sh"], { cwd: at.dir, encoding: "utf8", timeout: 60_000 });
        assert.ok(out.includes(SECRET), "capsh -- x.sh runs x.sh");
        assert.ok(existsSync(at.marker));
      }
    } finally {
      await cleanup(at);
    }
  });

  test("clients of the network and the keyring it did not list do not reach the host on an automatic answer", {
    timeout: 120_000,
  }, async () => {
    const at = await places();
    const server = http.createServer((_, response) => response.end("NETWORK-REACHED-61\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const url = `http://127.0.0.1:${port}/`;
      const lines = [["GET", `GET ${url}`], ["lwp-request", `lwp-request ${url}`]].filter(([p]) => installed(p));
      for (const [, line] of lines) {
        const result = await runAuto(at.dir, line);
        assert.equal(result.status, "skipped", `${line}: ${JSON.stringify(result)}`);
        assert.ok(!JSON.stringify(result).includes("NETWORK-REACHED-61"), line);
      }
      for (
        const line of [
          `GET ${url}`,
          `chromium-headless-shell --dump-dom ${url}`,
          `openssl s_client -connect 127.0.0.1:${port}`,
          `timeout 5 openssl s_time -connect 127.0.0.1:${port}`,
          "gpg --export-secret-keys -a",
          "gpg -K",
          "gpg --import a.txt",
          "pg_dumpall",
        ]
      ) await personNeeded(line, at.dir);
    } finally {
      server.close();
      await cleanup(at);
    }
  });

  test("known programs, and the small ones that only print, still run on an automatic answer", {
    timeout: 60_000,
  }, async () => {
    const at = await places();
    try {
      for (
        const line of [
          "sleep 0",
          "seq 3",
          "expr 1 + 2",
          "id -u",
          "nproc",
          "sha256sum a.txt",
          "timeout 5 cat a.txt",
          "cp a.txt b.txt",
          "touch made-here",
          ": > empty",
          "openssl dgst -sha256 a.txt",
        ]
      ) {
        const result = await runAuto(at.dir, line);
        assert.equal(result.status, "success", `${line}: ${JSON.stringify(result)}`);
      }
    } finally {
      await cleanup(at);
    }
  });

  test("a runner given no command starts a shell that runs what it reads: it needs a person", {
    timeout: 120_000,
  }, async () => {
    // Before, with the sandbox off and an automatic answer, `unshare <<< 'cat /outside/secret.txt'` printed it, and so
    // did fakeroot, fakeroot-sysv, newgrp, `sg root` and nsenter: each started a shell on the here-string.
    const at = await places();
    try {
      const secret = path.join(at.outside, "secret.txt");
      const lines = [
        ["unshare", `unshare <<< 'cat ${secret}'`],
        ["fakeroot", `fakeroot <<< 'cat ${secret}'`],
        ["fakeroot-sysv", `fakeroot-sysv <<< 'cat ${secret}'`],
        ["newgrp", `newgrp <<< 'cat ${secret}'`],
        ["sg", `sg root <<< 'cat ${secret}'`],
        ["nsenter", `nsenter <<< 'cat ${secret}'`],
      ].filter(([program]) => installed(program));
      for (const [, line] of lines) {
        const result = await runAuto(at.dir, line);
        assert.equal(result.status, "skipped", `${line}: ${JSON.stringify(result)}`);
        assert.ok(!JSON.stringify(result).includes(SECRET), line);
      }
      for (
        const line of [
          "capsh -- < x.sh",
          "echo id | capsh --",
          "env capsh <<< id",
          "timeout 5 unshare < x.sh",
          "nice fakeroot < x.sh",
          "chroot . < x.sh",
          "dbus-run-session < x.sh",
        ]
      ) await personNeeded(line, at.dir);
    } finally {
      await cleanup(at);
    }
  });

  test("an option's value or a runner's operand that names a known program is not taken for the command it runs", {
    timeout: 60_000,
  }, async () => {
    // `env -u cat capsh -- x.sh` unsets the variable `cat` and runs capsh; `timeout -s cat 5 capsh`, `exec -a cat`,
    // `chroot cat capsh` likewise.
    const at = await places();
    try {
      const prefixes = [
        "env -u cat",
        "env --unset cat",
        "env -C cat",
        "timeout -s cat 5",
        "timeout -k sed 5",
        "timeout --signal cat 5",
        "exec -a cat",
        "stdbuf -o cat",
        "ionice -c cat",
        "time -o cat",
        "time -f cat",
        "nice -n cat",
        "chroot cat",
        "taskset cat",
        "setarch cat",
        "unshare -w cat",
        "nsenter -t cat",
        "prlimit -p cat",
        "timeout -- 5",
      ];
      let lines = 0;
      for (const prefix of prefixes) {
        for (const program of ["capsh -- x.sh", "memusage bash x.sh", "tool-nobody-knows a.txt"]) {
          const line = `${prefix} ${program}`;
          const check = await checkCommand(line, {
            workspaceRoot: at.dir,
            sandbox: { available: false, reason: "off" },
          });
          assert.equal(check.sandbox.needed, true, `${line}: ${check.reasons.join(" | ")}`);
          lines++;
        }
      }
      assert.equal(lines, prefixes.length * 3);
      // The same runners in front of a known program still run on an automatic answer.
      for (const line of ["env -u HOME cat a.txt", "timeout -s KILL 5 cat a.txt", "nice -n 5 cat a.txt"]) {
        const result = await runAuto(at.dir, line);
        assert.equal(result.status, "success", `${line}: ${JSON.stringify(result)}`);
      }
    } finally {
      await cleanup(at);
    }
  });

  test(
    "hash -p and enable -f run or load a file of the workspace: they need a person",
    { timeout: 60_000 },
    async () => {
      // Before, with the sandbox off and an automatic answer, `hash -p x2.sh cat; cat a.txt` ran x2.sh and
      // `enable -f evil.so evil` its constructor, each printing the file outside: bash finds FILE from the folder the
      // line runs in, without a `/`.
      const at = await places();
      try {
        const secret = path.join(at.outside, "secret.txt");
        await writeFile(path.join(at.dir, "x2.sh"), `head -c 100 '${secret}'; touch '${at.marker}'\n`, { mode: 0o755 });
        const lines = ["hash -p x2.sh cat; cat a.txt"];
        if (installed("gcc")) {
          await writeFile(
            path.join(at.dir, "evil.c"),
            `#include <stdlib.h>\n__attribute__((constructor)) static void x(void) { system("head -c 100 '${secret}'"); }\n`,
          );
          execFileSync("gcc", ["-shared", "-fPIC", "-o", "evil.so", "evil.c"], { cwd: at.dir, timeout: 60_000 });
          lines.push("enable -f evil.so evil");
        }
        for (const line of lines) {
          const result = await runAuto(at.dir, line);
          assert.equal(result.status, "skipped", `${line}: ${JSON.stringify(result)}`);
          assert.ok(!JSON.stringify(result).includes(SECRET), line);
          assert.equal(existsSync(at.marker), false, line);
        }
        for (
          const line of [
            "hash -tp x2.sh cat",
            "hash -p x2.sh ls; ls",
            "builtin hash -p x2.sh cat; cat a.txt",
            "command hash -p x2.sh cat",
            "hash $o x2.sh cat",
            "enable -nf evil.so evil",
            "enable -f ./evil.so evil",
            "builtin enable -f evil.so evil",
          ]
        ) await personNeeded(line, at.dir);
        for (const line of ["hash -r", "hash", "enable -n echo"]) {
          const result = await runAuto(at.dir, line);
          assert.equal(result.status, "success", `${line}: ${JSON.stringify(result)}`);
        }
      } finally {
        await cleanup(at);
      }
    },
  );

  test("generated names: a program it does not know needs a person, behind any runner it knows (seed 61)", {
    timeout: 60_000,
  }, async () => {
    const at = await places();
    try {
      const name = fc.stringMatching(/^[a-z][a-z0-9_-]{2,12}$/).filter((word) =>
        !["cat", "sed", "awk", "jq", "git", "cut", "tar", "zip", "env", "nice", "time"].includes(word)
      );
      const runner = fc.constantFrom("", "timeout 5 ", "nice -n 3 ", "env A=1 ", "stdbuf -o0 ", "nohup ", "time ");
      await fc.assert(
        fc.asyncProperty(name, runner, async (program, prefix) => {
          const line = `${prefix}${program}-x9 a.txt`;
          const check = await checkCommand(line, {
            workspaceRoot: at.dir,
            sandbox: { available: false, reason: "off" },
          });
          assert.equal(check.sandbox.needed, true, `${line}: ${check.reasons.join(" | ")}`);
          assert.ok(check.reasons.some((reason) => reason.includes("does not know")), line);
        }),
        { seed: 61, numRuns: 200 },
      );
    } finally {
      await cleanup(at);
    }
  });

  test("a command hidden in a value bash evaluates as code does not run on an automatic answer", {
    timeout: 120_000,
  }, async () => {
    // bash evaluates a variable's value again in arithmetic, and runs a command substitution in an array subscript of
    // it; so do indirect expansions, `@P`, `[[ -v ]]`, `test -v`, `printf -v` and `let`. Before, with the sandbox off and
    // an automatic answer, each of these lines ran `touch` on a file outside: the line asked, for nothing the risk
    // assessor took for more than unsure.
    const at = await places();
    try {
      const run = `$(touch '${at.marker}')`;
      const lines = [
        `x='a[${run}]'; echo $((x))`,
        `x='a[${run}]'; echo \${!x}`,
        `x='${run}'; echo "\${x@P}"`,
        `x='a[${run}]'; echo "\${b[x]}"`,
        `x='a[${run}]'; (( x ))`,
        `x='a[${run}]'; let x`,
        `x='a[${run}]'; [[ $x -eq 1 ]]`,
        `[[ 'a[${run}]' -eq 1 ]]`,
        `[[ -v 'a[${run}]' ]]`,
        `test -v 'a[${run}]'`,
        `printf -v 'a[${run}]' x`,
        `echo $(( 'a[${run}]' ))`,
      ];
      for (const line of lines) {
        spawnSync("bash", ["-c", line], { cwd: at.dir, stdio: "ignore", timeout: 60_000 });
        assert.ok(existsSync(at.marker), `${line} did not run the hidden command under bash`);
        await rm(at.marker);
        await personNeeded(line, at.dir);
      }
      const result = await runAuto(at.dir, lines[0]);
      assert.notEqual(result.status, "success", JSON.stringify(result));
      assert.ok(!existsSync(at.marker), "the automatic answer ran the hidden command");
    } finally {
      await cleanup(at);
    }
  });

  test("a runner that runs its command in another folder moves the command's relative paths", {
    timeout: 120_000,
  }, async () => {
    // Before, with the sandbox off and an automatic answer, `env -C sub cat lnk` printed the file outside that
    // `sub/lnk` leads to: `lnk` was judged from the folder the line runs in, where it was a file of the workspace.
    const at = await places();
    try {
      await mkdir(path.join(at.dir, "sub"));
      await symlink(path.join(at.outside, "secret.txt"), path.join(at.dir, "sub", "lnk"));
      await writeFile(path.join(at.dir, "lnk"), "inside\n");
      const lines = [
        "env -C sub cat lnk",
        "env --chdir=sub cat lnk",
        "env -Csub head lnk",
        "env -i -C sub cat lnk",
        "timeout 5 env -C sub cat lnk",
        "nice env --ch sub cat lnk",
      ];
      for (const line of lines) await personNeeded(line, at.dir);
      const shown = spawnSync("bash", ["-c", lines[0]], { cwd: at.dir, encoding: "utf8", timeout: 60_000 });
      assert.match(shown.stdout, new RegExp(SECRET), shown.stderr);
      const result = await runAuto(at.dir, lines[0]);
      assert.doesNotMatch(JSON.stringify(result), new RegExp(SECRET));
      // Options of the command it runs are its own: `env LANG=C sort -C a.txt` keeps the automatic answer.
      const own = await runAuto(at.dir, "env LANG=C sort -C a.txt");
      assert.equal(own.status, "success", JSON.stringify(own));
    } finally {
      await cleanup(at);
    }
  });
});
