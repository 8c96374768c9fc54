// The sandbox's seccomp filter (policy/_seccomp.ts), as a command meets it: a file's set-user-ID and set-group-ID bits
// are refused wherever a mode is given. The workspace is the host's, and a command's files are the server's user's
// outside the sandbox: before, `chmod 4755 a.sh` in a sandboxed command left a set-user-ID file of that user (root,
// for a server run as root) in the workspace, which any local user could run as that user; the sandbox's own nosuid
// mounts hid it from the command alone. Other modes are set as before.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { autoHost } from "../../policy/hosts.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { Session } from "../../policy/session.ts";
import type { BashResult } from "../../tools/cmd/bash.ts";
import { cmdBox } from "../tools/cmd/_helpers.ts";

const box = cmdBox();
const skip = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;

describe("the sandbox's seccomp filter", { skip }, () => {
  let dir: string;
  let session: Session;
  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "toolfence-seccomp-")));
    session = new Session({ workspace: dir, sandbox: "required", autoConfirm: true, host: autoHost() });
  });
  after(async () => {
    await session?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const run = async (command: string): Promise<BashResult> => {
    const result = await box.call(session, "bash", { command, timeout_s: 60 });
    assert.equal((result.output as BashResult | null)?.sandboxed, true, JSON.stringify(result).slice(0, 600));
    return result.output as BashResult;
  };
  const modeOf = (name: string) => fs.statSync(path.join(dir, name)).mode & 0o7777;

  test("no set-user-ID or set-group-ID bit is given to a file, by any call that gives a mode", {
    timeout: 90_000,
  }, async () => {
    const out = await run(
      "printf '#!/bin/sh\\nid\\n' > a.sh; chmod 4755 a.sh; echo chmod $?; chmod u+s,g+s a.sh; echo plus $?; " +
        "install -m 2755 a.sh b.sh; echo install $?; chmod 755 a.sh; echo plain $?",
    );
    assert.match(out.stdout, /^chmod 1\nplus 1\ninstall 1\nplain 0\n$/, JSON.stringify(out));
    assert.match(out.stderr, /Operation not permitted/);
    assert.equal(modeOf("a.sh"), 0o755);
    if (fs.existsSync(path.join(dir, "b.sh"))) assert.equal(modeOf("b.sh") & 0o6000, 0);
    // A file created with the bits (open, openat and creat take a mode), and fchmod on a descriptor.
    const python = await run(
      "command -v python3 >/dev/null || { echo skipped; exit; }; python3 -c '\n" +
        "import os\n" +
        'for how in ("open", "fchmod", "mknod"):\n' +
        "  try:\n" +
        '    if how == "open": os.close(os.open("c.sh", os.O_CREAT | os.O_WRONLY, 0o4755))\n' +
        '    elif how == "fchmod":\n' +
        '      f = os.open("d.sh", os.O_CREAT | os.O_WRONLY, 0o755); os.fchmod(f, 0o6755); os.close(f)\n' +
        '    else: os.mknod("e.sh", 0o104755)\n' +
        '    print(how, "made")\n' +
        "  except OSError as error: print(how, error.errno)\n" +
        "'",
    );
    if (python.stdout !== "skipped\n") {
      assert.equal(python.stdout, "open 1\nfchmod 1\nmknod 1\n", JSON.stringify(python));
      assert.equal(fs.existsSync(path.join(dir, "c.sh")), false);
      assert.equal(modeOf("d.sh"), 0o755);
    }
    // Nothing in the workspace carries either bit.
    for (const name of fs.readdirSync(dir)) {
      assert.equal(modeOf(name) & 0o6000, 0, `${name}: ${modeOf(name).toString(8)}`);
    }
  });

  test(
    "openat2, whose mode no filter can read, is absent (ENOSYS); other calls work",
    { timeout: 60_000 },
    async () => {
      if (process.arch !== "x64" && process.arch !== "arm64") return;
      // openat2(AT_FDCWD, "f", &how, 24) with how = { O_CREAT|O_WRONLY, 04755, 0 }: 437 on both architectures.
      const out = await run(
        "command -v perl >/dev/null || { echo 38; exit; }; perl -e '" +
          'my $how = pack("QQQ", 0101, 04755, 0); my $f = "f"; my $r = syscall(437, -100, $f, $how, 24); ' +
          'print $r < 0 ? ($! + 0) : "fd $r", "\\n"' + "'; touch g; ls g",
      );
      assert.equal(out.stdout, "38\ng\n", JSON.stringify(out));
      assert.equal(fs.existsSync(path.join(dir, "f")), false);
    },
  );
});
