// Programs a policy file's allow rule may let run (ssh, scp, sftp, the C compilers, the programs that read `@FILE`):
// the options with which they run another program, load a library or read hidden arguments ask. Before, an allow
// rule for ssh let `ssh -o ProxyCommand='touch m1' nohost` run touch (in the sandbox, writing the workspace), and one
// for gcc let `gcc -wrapper touch,x x.c` run touch and `gcc @/etc/passwd` read a file outside.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";

const SANDBOX = { available: true };
const ALLOWLIST = [
  ...DEFAULT_COMMAND_ALLOWLIST,
  ...["ssh", "scp", "sftp", "gcc", "cc", "clang", "ld", "objdump", "ar", "javac", "java", "rustc"],
];

async function verdict(command: string) {
  return await checkCommand(command, { allowlist: ALLOWLIST, sandbox: SANDBOX });
}

describe("programs an allow rule lets run", () => {
  test(
    "their options that run a program, load a library or read hidden arguments ask",
    { timeout: 60_000 },
    async () => {
      for (
        const [command, named] of [
          ["ssh -o ProxyCommand='touch m1' nohost", "ProxyCommand"],
          ["ssh -oProxyCommand=x nohost", "ProxyCommand"],
          ["ssh -vo 'proxycommand x' nohost", "proxycommand"],
          ["ssh nohost -o ProxyCommand=x", "ProxyCommand"],
          ["ssh -o LocalCommand=x -o PermitLocalCommand=yes h", "LocalCommand"],
          ["ssh -o KnownHostsCommand=x h", "KnownHostsCommand"],
          ["ssh -o PKCS11Provider=./p.so h", "PKCS11Provider"],
          ["ssh -o Include=cfg h", "Include"],
          ["ssh -o UserKnownHostsFile=kh h", "UserKnownHostsFile"],
          ['ssh -o "$opt" h', "only known when the command runs"],
          ["ssh -F cfg h", "configuration file"],
          ["ssh -I lib.so h", "PKCS#11"],
          ["scp -S ./x a h:b", "program scp runs"],
          ["scp -o ProxyCommand=x a h:b", "ProxyCommand"],
          ["sftp -D 'touch m3'", "server program"],
          ["sftp -b cmds h", "batch file"],
          ["gcc -wrapper touch,m4 x.c", "around each"],
          ["gcc @opts x.c", "more arguments from a file"],
          ["cc @/etc/passwd", "more arguments from a file"],
          ["gcc -B. x.c", "from a folder"],
          ["gcc -specs=s x.c", "spec file"],
          ["gcc -fplugin=./p.so x.c", "plugin"],
          ["gcc -Wl,@opts x.c", "more arguments from a file"],
          ["gcc -Wl,-plugin,p.so x.c", "plugin"],
          ["gcc -Xlinker @opts x.c", "more arguments from a file"],
          ["clang -Xclang -load -Xclang p.so x.c", "front end"],
          ["clang --ld-path=./ld x.c", "linker program"],
          ["clang -fuse-ld=./ld x.c", "linker program"],
          ["objdump -d @opts", "more arguments from a file"],
          ["ar --plugin p.so rc x.a y.o", "plugin"],
          ["ld @opts", "more arguments from a file"],
          ["javac @argfile", "more arguments from a file"],
          ["java @argfile", "more arguments from a file"],
          ["rustc @args x.rs", "more arguments from a file"],
          ["gcc $flags x.c", "could expand into an option"],
        ]
      ) {
        const result = await verdict(command);
        assert.equal(result.verdict, "ask", `${command} was allowed`);
        assert.ok(result.reasons.some((reason) => reason.includes(named)), `${command}: ${result.reasons.join(" | ")}`);
      }
    },
  );

  test("their everyday uses still run", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null h ls",
        "ssh -p 2222 -i key h ls -la",
        "scp -P 22 a h:b",
        "sftp h",
        "gcc -O2 -Wall -Iinclude -o x x.c",
        "gcc -Wl,--as-needed x.c",
        "clang -fuse-ld=lld x.c",
        "objdump -d a.out",
      ]
    ) {
      const result = await verdict(command);
      assert.equal(result.verdict, "allow", `${command}: ${result.reasons.join(" | ")}`);
    }
  });

  test("the paths they name are still judged as an unknown program's writes", { timeout: 60_000 }, async () => {
    for (const command of ["gcc -o /tmp/x x.c", "gcc -o ../x x.c", "ssh -E ../log h"]) {
      assert.equal((await verdict(command)).verdict, "ask", command);
    }
  });
});
