// Files named inside a word, by a program a policy file's allow rule lets run: `openssl enc -pass file:F` read F
// outside the workspace without asking (its key printed with -P is the key of F's content), `socat -u OPEN:F -`
// printed F and `socat -u SYSTEM:CMD -` ran CMD; the words were judged as relative names (`./file:F`, `./OPEN:F`).
// And the options with which such a program runs or loads code of the workspace: gpg's `--agent-program`, openssl's
// `-provider-path`, install's `--strip-program`, netcat's `-e`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../../policy/shell/allowlist.ts";

const PLANTED = "PLANTED-SECRET-e9b2";
const SANDBOXES = [{ available: true }, { available: false, reason: "test: no sandbox" }] as const;
const ALLOWED = [
  "openssl",
  "socat",
  "websocat",
  "nc",
  "ncat",
  "netcat",
  "imgtool",
  "7z",
  "gpg",
  "gpgtar",
  "gpgsm",
  "install",
  "rustup",
  "pyenv",
  "docker",
  "kubectl",
  "ip",
  "dbus-launch",
  "xdg-open",
  "crontab",
];

let base = "";
let workspace = "";
let secret = "";

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-embedded-")));
  workspace = join(base, "ws");
  await mkdir(workspace);
  await mkdir(join(base, "outside"));
  secret = join(base, "outside", "secret.txt");
  await writeFile(secret, `${PLANTED}\n`);
  await writeFile(join(workspace, "a.txt"), "a\n");
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

const installed = (program: string) => spawnSync("sh", ["-c", `command -v ${program}`]).status === 0;
const run = (line: string) =>
  spawnSync("bash", ["-c", line], {
    cwd: workspace,
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: "/usr/bin:/bin" },
  });
const check = (line: string, sandbox: (typeof SANDBOXES)[number]) =>
  checkCommand(line, { allowlist: [...DEFAULT_COMMAND_ALLOWLIST, ...ALLOWED], workspaceRoot: workspace, sandbox });

async function asks(line: string) {
  for (const sandbox of SANDBOXES) {
    const checked = await check(line, sandbox);
    assert.equal(checked.verdict, "ask", `${line} was allowed (sandbox ${sandbox.available})`);
  }
}

describe("files named inside the words of a program allowed by a policy file", () => {
  test("openssl's `-pass file:F` reads F: the key it prints is the key of F's content", {
    timeout: 30_000,
    skip: !installed("openssl"),
  }, async () => {
    const key = (pass: string) => run(`openssl enc -aes-128-cbc -pbkdf2 -nosalt -P -pass ${pass}`).stdout;
    assert.equal(key(`file:${secret}`), key(`pass:${PLANTED}`));
    await asks(`openssl enc -aes-128-cbc -pbkdf2 -nosalt -P -pass file:${secret}`);
    await asks(`openssl rsa -in a.txt -passin file:../outside/secret.txt`);
    const inside = await check("openssl enc -aes-128-cbc -pbkdf2 -nosalt -P -pass file:a.txt", SANDBOXES[1]);
    assert.equal(inside.verdict, "allow", inside.reasons.join(" | "));
  });

  test("openssl loads the provider library a `-provider-path` folder holds: code that runs here, so it asks", {
    timeout: 60_000,
    skip: !installed("openssl") || !installed("gcc"),
  }, async () => {
    const marker = join(base, "provider-ran");
    await writeFile(
      join(workspace, "p.c"),
      `#include <stdio.h>\n__attribute__((constructor)) static void f(void) { fclose(fopen("${marker}", "w")); }\n` +
        "int OSSL_provider_init(void) { return 0; }\n",
    );
    assert.equal(run("gcc -shared -fPIC -o evil.so p.c").status, 0);
    run("openssl list -provider-path . -provider evil");
    assert.ok(spawnSync("test", ["-e", marker]).status === 0, "openssl did not load the provider");
    for (
      const line of [
        "openssl list -provider-path . -provider evil",
        "openssl list -provider ./evil.so",
        "openssl list --provider=evil",
        "openssl req -config x.cnf -new",
        "openssl req -engine e -new",
        "openssl s_client -ssl_client_engine e",
        "openssl engine ./evil.so",
      ]
    ) await asks(line);
    for (
      const line of ["openssl list -provider legacy -provider default", "openssl dgst -sha256 a.txt", "openssl version"]
    ) {
      const checked = await check(line, SANDBOXES[1]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
    }
  });

  test("socat opens the file and runs the command its addresses name, so it always asks", {
    timeout: 30_000,
    skip: !installed("socat"),
  }, async () => {
    assert.match(run(`socat -u OPEN:${secret} -`).stdout, new RegExp(PLANTED));
    for (
      const line of [
        `socat -u OPEN:${secret} -`,
        "socat -u SYSTEM:id -",
        "socat - EXEC:sh",
        "socat TCP-LISTEN:8080 STDOUT",
        "websocat -b sh-c:id ws://localhost:1",
      ]
    ) await asks(line);
  });

  test("an unknown program's `@F`, `key=F`, `--opt=@F`, `TYPE:F` and `file://` words are judged as F", {
    timeout: 60_000,
  }, async () => {
    for (
      const line of [
        `imgtool @${secret}`,
        `imgtool --list=@${secret}`,
        `imgtool -F field=@${secret}`,
        `imgtool input=${secret}`,
        `imgtool text:${secret} out.png`,
        `imgtool file://${secret}`,
        `imgtool file://localhost${secret}`,
        "imgtool text:../outside/secret.txt",
        `7z a x.7z @${secret}`,
      ]
    ) await asks(line);
    // URLs, host names with ports and names inside the workspace still run.
    for (
      const line of [
        "imgtool https://example.com/a/b",
        "imgtool localhost:8080",
        "imgtool @a.txt",
        "imgtool text:a.txt",
        "imgtool key=value a.txt",
        "imgtool git@github.com:a/b.git",
      ]
    ) {
      const checked = await check(line, SANDBOXES[1]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
    }
  });

  test("gpg's programs, option files and other homes ask; the files it names after its inputs are judged", {
    timeout: 60_000,
    skip: !installed("gpg"),
  }, async () => {
    // `--agent-program PROG` runs PROG when no agent runs.
    const home = join(base, "gnupg");
    await mkdir(home, { mode: 0o700 });
    const marker = join(base, "agent-ran");
    await writeFile(join(workspace, "agent.sh"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    run(
      `gpg --batch --homedir ${home} --agent-program ./agent.sh --symmetric --passphrase x --pinentry-mode loopback ` +
        `-o ${base}/m.gpg a.txt`,
    );
    assert.ok(spawnSync("test", ["-e", marker]).status === 0, "gpg did not start the agent program");
    for (
      const line of [
        "gpg --agent-program ./agent.sh -c a.txt",
        "gpg --agent=./agent.sh -c a.txt",
        "gpg --dirmngr-program ./agent.sh --recv-keys 0x1",
        "gpg --photo-viewer 'touch x' --list-keys",
        "gpg --list-options show-photos -k",
        "gpg --homedir ./h --list-keys",
        "gpg --options ./o --list-keys",
        "gpg --log-file f -k",
      ]
    ) await asks(line);
    // `gpg .npmrc.gpg` decrypts into `.npmrc`: a protected path, which needs a person without the sandbox.
    const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: ["gpg"] } } }], workspace);
    for (
      const line of [
        "gpg --batch --passphrase x .npmrc.gpg",
        "gpg --decrypt-files .npmrc.gpg",
        "gpg .git/hooks/pre-commit.asc",
        "gpg -c .git/hooks/x",
      ]
    ) {
      const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
      assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
    }
    // They run in the sandbox; without it they read the home folder's keyrings (`gpg --export-secret-keys` prints
    // its secret keys), which need a person.
    for (const line of ["gpg --list-keys", "gpg -d a.txt.gpg", "gpg --verify a.sig a.txt"]) {
      const checked = await check(line, SANDBOXES[0]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
      const decided = await decideCommand(line, { rules, workspaceRoot: workspace, sandbox: "off" });
      assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
    }
  });

  test(
    "gpgtar's gpg and gpgsm's programs ask as gpg's do",
    { timeout: 60_000, skip: !installed("gpgtar") },
    async () => {
      // Before, with an allow rule for gpgtar, `gpgtar --gpg ./g.sh --list-archive a.txt` ran the workspace's g.sh
      // with the sandbox off and nobody asked: gpgtar runs the gpg it is given.
      const marker = join(base, "gpgtar-ran");
      await writeFile(join(workspace, "g.sh"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
      run("gpgtar --gpg ./g.sh --list-archive a.txt");
      assert.ok(spawnSync("test", ["-e", marker]).status === 0, "gpgtar did not run the gpg it was given");
      for (
        const line of [
          "gpgtar --gpg ./g.sh --list-archive a.txt",
          "gpgtar --gpg=./g.sh -t a.txt",
          "gpgtar --gpg-args=--agent-program=./g.sh -t a.txt",
          "gpgsm --agent-program ./g.sh -k",
          "gpgsm --protect-tool-program ./g.sh -k",
          "gpgsm --homedir ./h -k",
        ]
      ) await asks(line);
      await rm(join(workspace, "g.sh"));
    },
  );

  test("install's `--strip-program` runs the program it names, so it asks", { timeout: 30_000 }, async () => {
    const marker = join(base, "strip-ran");
    await writeFile(join(workspace, "strip.sh"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    run("install -s --strip-program=./strip.sh a.txt b.out");
    assert.ok(spawnSync("test", ["-e", marker]).status === 0, "install did not run the strip program");
    for (
      const line of ["install -s --strip-program=./strip.sh a.txt b", "install --strip-prog ./strip.sh -s a.txt b"]
    ) {
      await asks(line);
    }
    const checked = await check("install -m 644 a.txt b", SANDBOXES[1]);
    assert.equal(checked.verdict, "allow", checked.reasons.join(" | "));
  });

  test("subcommands and launchers that run the command they are given ask", { timeout: 60_000 }, async () => {
    // `rustup run stable sh -c CMD` ran CMD with only an allow rule for rustup.
    if (installed("rustup")) {
      const marker = join(base, "rustup-ran");
      spawnSync("rustup", ["run", "stable", "sh", "-c", `touch ${marker}`], { cwd: workspace, timeout: 30_000 });
      assert.ok(spawnSync("test", ["-e", marker]).status === 0, "rustup run did not run the command");
    }
    for (
      const line of [
        "rustup run stable sh -c id",
        "rustup +nightly run stable id",
        "pyenv exec python -c 1",
        "docker run alpine id",
        "docker --context c exec box id",
        "kubectl exec pod -- id",
        "ip netns exec ns id",
        "dbus-launch id",
        "xdg-open a.txt",
        "crontab a.txt",
      ]
    ) await asks(line);
    for (const line of ["rustup show", "rustup toolchain list", "pyenv versions", "docker ps", "kubectl get pods"]) {
      const checked = await check(line, SANDBOXES[0]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
    }
    for (const line of ["rustup show", "rustup toolchain list", "pyenv versions"]) {
      const checked = await check(line, SANDBOXES[1]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
    }
    // Without the sandbox the engine's and the cluster's clients reach the host's socket and credentials: they ask.
    for (const line of ["docker ps", "kubectl get pods"]) {
      assert.equal((await check(line, SANDBOXES[1])).verdict, "ask", line);
    }
  });

  test("netcat's and ncat's options that run a program for the connection ask", { timeout: 60_000 }, async () => {
    for (
      const line of [
        "nc -e /bin/sh localhost 1",
        "nc -c id localhost 1",
        "nc -lvc id -p 1",
        "netcat -e sh h 1",
        "ncat --sh-exec id h 1",
        "ncat --exec /bin/sh -l 1",
        "ncat --lua-exec x.lua -l 1",
        "ncat --sh=id h 1",
      ]
    ) await asks(line);
    for (const line of ["nc localhost 80", "nc -zv localhost 22", "ncat -l -p 8080"]) {
      const checked = await check(line, SANDBOXES[0]);
      assert.equal(checked.verdict, "allow", `${line}: ${checked.reasons.join(" | ")}`);
      // Without the sandbox a connection reaches whatever the host reaches: it asks, allowed or not.
      const unconfined = await check(line, SANDBOXES[1]);
      assert.equal(unconfined.verdict, "ask", line);
      assert.match(unconfined.reasons.join(" | "), /connects to whatever this host reaches/, line);
    }
  });
});
