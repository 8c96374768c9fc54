// GNU tar and cpio read an archive named `[user@]host:file` through a remote shell they run: with an allow rule for
// tar and the sandbox off, `tar -tf localhost:x.tar` ran (strace: execve("/usr/bin/rsh", ["rsh", "localhost",
// "/usr/sbin/rmt"])), a program no rule names, reaching a host the line names.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";
import { installed } from "../../tools/cmd/_helpers.ts";

const ALLOWLIST = [...DEFAULT_COMMAND_ALLOWLIST, "tar", "cpio", "rsync"];
const SANDBOX = { available: false, reason: "test: no sandbox" } as const;

describe("remote archives", { timeout: 60_000 }, () => {
  test("an archive named host:file asks in every spelling of tar's and cpio's archive options", {
    timeout: 60_000,
  }, async () => {
    const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-remote-")));
    try {
      if (installed("strace") && installed("tar")) {
        const traced = spawnSync("strace", ["-f", "-e", "trace=execve", "tar", "-tf", "localhost:x.tar"], {
          cwd: folder,
          encoding: "utf8",
          timeout: 60_000,
        });
        assert.match(traced.stderr, /execve\("[^"]*rsh"/, "tar ran no remote shell");
      }
      const names = ["localhost:x.tar", "u@h:x", "h:/x.tar", "h:"];
      const lines = names.flatMap((name) => [
        `tar -tf ${name}`,
        `tar -t -f ${name}`,
        `tar -tvf${name}`,
        `tar tf ${name}`,
        `tar tvf ${name} a`,
        `tar --file=${name} -t`,
        `tar -t --file ${name}`,
        `cpio -it -F ${name}`,
        `cpio -itF${name}`,
        `cpio -it --file=${name}`,
        `cpio -o -O ${name}`,
        `cpio -i -I ${name}`,
      ]);
      for (const line of lines) {
        const check = await checkCommand(line, { allowlist: ALLOWLIST, sandbox: SANDBOX, workspaceRoot: folder });
        assert.equal(check.verdict, "ask", line);
        assert.match(check.reasons.join(" "), /names a remote archive/, line);
      }
      // A local name (a `/` before the `:`, or --force-local) and other options' colons are no remote archive.
      for (const line of ["tar -tf ./a:b", "tar -tf a:b --force-local", "tar -tf x.tar --exclude=a:b", "tar tf x"]) {
        const check = await checkCommand(line, { allowlist: ALLOWLIST, sandbox: SANDBOX, workspaceRoot: folder });
        assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("rsync of a path on another host asks: it reaches the host through ssh or its daemon", {
    timeout: 60_000,
  }, async () => {
    // With an allow rule for rsync and the sandbox off, `rsync rsync://127.0.0.1:8730/up/` listed a module of a
    // daemon on loopback (no network rule judged it), and `rsync a u@h:` runs ssh to send a file.
    const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-remote-")));
    try {
      if (installed("strace") && installed("rsync")) {
        const traced = spawnSync("strace", ["-f", "-e", "trace=execve", "rsync", "--list-only", "localhost:"], {
          cwd: folder,
          encoding: "utf8",
          timeout: 60_000,
        });
        assert.match(traced.stderr, /execve\("[^"]*ssh"/, "rsync ran no ssh");
      }
      const remotes = ["localhost:", "u@h:x", "h:/etc/", "h::module", "::module", "rsync://127.0.0.1:8730/up/"];
      const lines = remotes.flatMap((remote) => [
        `rsync ${remote}`,
        `rsync --list-only ${remote}`,
        `rsync -a ${remote} .`,
        `rsync -n f.txt ${remote}`,
      ]);
      for (const line of lines) {
        const check = await checkCommand(line, { allowlist: ALLOWLIST, sandbox: SANDBOX, workspaceRoot: folder });
        assert.equal(check.verdict, "ask", line);
        assert.match(check.reasons.join(" "), /a path on another host/, line);
      }
      for (const line of ["rsync -a src/ dst/", "rsync ./a:b c"]) {
        const check = await checkCommand(line, { allowlist: ALLOWLIST, sandbox: SANDBOX, workspaceRoot: folder });
        assert.doesNotMatch(check.reasons.join(" "), /a path on another host/, line);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
