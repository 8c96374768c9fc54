// What a runner runs from a word the shell reads again, or from a script, is not among the line's words: with the
// sandbox off and an automatic answer, `eval 'cp a .npmrc'`, `env -S '...'`, `sg root -c '...'`, `. ./s.sh`,
// `nohup sh -c '...'`, `timeout 5 bash -c '...'` and `nice python3 w.py` wrote .npmrc on the automatic yes (the
// runner asked, the assessor's question has yes for its default, and nothing named the protected file).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { installed } from "../../tools/cmd/_helpers.ts";
import { postgresMissing, startPostgres } from "../../_postgres.ts";

async function workspace(): Promise<string> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-runners-")));
  await writeFile(join(folder, "a"), "registry=http://evil.example/\n");
  await writeFile(join(folder, "s.sh"), "cp a .npmrc\n");
  await writeFile(join(folder, "w.py"), "open('.npmrc', 'w').write('x')\n");
  return folder;
}

/** The line needs a person without the sandbox; in it, protected paths are read-only and no person is needed. */
async function personNeededWithoutSandbox(line: string, folder: string, rules?: PolicyRules): Promise<void> {
  const decided = await decideCommand(line, { ...(rules ? { rules } : {}), workspaceRoot: folder, sandbox: "off" });
  assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
  assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
}

/** The line, its program allowed, needs a person without the sandbox and runs in it without asking. */
async function onlyInSandbox(line: string, folder: string, rules: PolicyRules, allowlist: string[]): Promise<void> {
  await personNeededWithoutSandbox(line, folder, rules);
  const check = await checkCommand(line, { allowlist, sandbox: { available: true }, workspaceRoot: folder });
  assert.equal(check.verdict, "allow", `${line}: ${check.reasons.join(" | ")}`);
}

describe("what a runner runs", { timeout: 120_000 }, () => {
  test("perf runs the command it is given: a deny rule sees it", { timeout: 60_000 }, async () => {
    const folder = await workspace();
    try {
      const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { deny: ["touch*"] } } }], folder);
      for (const line of ["perf stat touch made", "perf stat -o /dev/null touch made", "perf trace touch made"]) {
        const decided = await decideCommand(line, { rules, workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
      }
      // What the line does when run: perf runs touch.
      if (installed("perf")) {
        spawnSync("bash", ["-c", "perf stat -o /dev/null touch made"], {
          cwd: folder,
          stdio: "ignore",
          timeout: 60_000,
        });
        assert.ok(existsSync(join(folder, "made")), "perf stat ran touch");
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("logsave, the dynamic loader, gpg-agent, gpg-connect-agent, systemd-cat and ip run the command they are given", {
    timeout: 60_000,
  }, async () => {
    // Before, with deny ["touch*"] and the automatic answer, `logsave /dev/null touch made`, `ld.so /usr/bin/touch
    // made` and `gpg-agent --daemon touch made` ran touch, and `run-parts rp` ran the workspace's rp/a unsandboxed:
    // they were read as unknown programs whose words are only paths.
    const folder = await workspace();
    try {
      const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { deny: ["touch*"] } } }], folder);
      const lines = [
        "logsave /dev/null touch made",
        "logsave -a log touch made",
        "ld.so touch made",
        "ld-linux-x86-64.so.2 touch made",
        "gpg-agent --daemon touch made",
        "gpg-agent --daemon -- touch made",
        "gpg-connect-agent --exec touch made",
        "systemd-cat touch made",
        "ip netns exec ns touch made",
      ];
      for (const line of lines) {
        const decided = await decideCommand(line, { rules, workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "deny", `${line}: ${decided.reason}`);
      }
      for (const line of ["logsave /dev/null ./s.sh", "ld.so ./s.sh", "gpg-agent --daemon ./s.sh", "run-parts rp"]) {
        await personNeededWithoutSandbox(line, folder);
      }
      // What the lines do when run: each runs touch.
      for (
        const [program, line] of [["logsave", "logsave /dev/null touch made1"], ["ld.so", "ld.so /usr/bin/touch made2"]]
      ) {
        if (!installed(program)) continue;
        spawnSync("bash", ["-c", line], { cwd: folder, stdio: "ignore", timeout: 60_000 });
        assert.ok(existsSync(join(folder, line.split(" ").at(-1)!)), `${line} ran touch`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("a command line given as one word, or a script, may write a protected path: a person decides", {
    timeout: 120_000,
  }, async () => {
    const folder = await workspace();
    try {
      const lines = [
        "eval 'cp a .npmrc'",
        "builtin eval 'cp a .npmrc'",
        "command eval 'cp a .npmrc'",
        "time eval 'cp a .npmrc'",
        `eval "cp a ."npmrc`,
        "eval $'cp a .npmrc'",
        "eval cp\\ a\\ .npmrc",
        "echo $(eval 'cp a .npmrc')",
        "env -S 'cp a .npmrc'",
        ". ./s.sh",
        "source s.sh",
        "nohup sh -c 'cp a .npmrc'",
        "setsid -w sh -c 'cp a .npmrc'",
        "timeout 5 bash -c 'cp a .npmrc'",
        ...(installed("strace") ? ["strace -o /dev/null sh -c 'cp a .npmrc'"] : []),
        ...(installed("python3") ? ["nice python3 w.py"] : []),
      ];
      for (const line of lines) await personNeededWithoutSandbox(line, folder);
      // What the lines do when run: each writes .npmrc.
      for (const line of lines) {
        await rm(join(folder, ".npmrc"), { force: true });
        spawnSync("bash", ["-c", line], { cwd: folder, stdio: "ignore", timeout: 60_000 });
        assert.ok(existsSync(join(folder, ".npmrc")), `${line} wrote .npmrc`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("every runner before every way of running a command line or project code needs a person", {
    timeout: 120_000,
  }, async () => {
    const folder = await workspace();
    try {
      const runners = ["", "nice ", "nice -n 5 ", "timeout 5 ", "env ", "env X=1 ", "nohup ", "setsid ", "stdbuf -o0 "];
      const builtins = ["", "command ", "builtin ", "time "];
      const payloads = ["sh -c 'cp a .npmrc'", "bash -c 'cp a .npmrc'", "python3 w.py", "make", "node -e 1"];
      const shellPayloads = ["eval 'cp a .npmrc'", ". ./s.sh", "source s.sh"];
      const lines = [
        ...runners.flatMap((runner) => payloads.map((payload) => `${runner}${payload}`)),
        ...builtins.flatMap((runner) => shellPayloads.map((payload) => `${runner}${payload}`)),
        ...runners.slice(1).flatMap((outer) => runners.slice(1).map((inner) => `${outer}${inner}sh -c 'x'`)),
      ];
      for (const line of lines) await personNeededWithoutSandbox(line, folder);
      // A runner of a program that is no project code and given no command line is asked as before: the automatic
      // answer may run it.
      for (const line of ["nice cat a", "timeout 5 cat a", "env cat a", "time ls", "eval echo hi"]) {
        const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
        assert.notEqual(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
  test("a client whose own commands run shell commands asks even when an allow rule lets it run", {
    timeout: 120_000,
  }, async () => {
    const folder = await workspace();
    const clients = ["psql", "mysql", "mariadb", "duckdb", "lftp", "ftp", "sqlcmd", "sqlplus", "lldb", "mutt", "w3m"];
    const interpreters = ["octave", "gp", "mongosh", "ipython", "swipl"];
    const rules = PolicyRules.fromLayers(
      [{ name: "project", config: { commands: { allow: [...clients, ...interpreters] } } }],
      folder,
    );
    const lines = [
      "psql postgres://u@127.0.0.1/db -c '\\! touch made'",
      "psql -o '|touch made' -c 'select 1'",
      "mysql -e 'system touch made'",
      "duckdb -c '.shell touch made'",
      "lftp -c '!touch made'",
      "sqlcmd -Q '!!touch made'",
      "lldb -o 'platform shell touch made'",
    ];
    try {
      // With the sandbox as without: what their commands run is not among the line's words.
      for (const sandbox of ["off", "auto"] as const) {
        for (const line of [...lines, ...clients.map((client) => `${client} x`)]) {
          const decided = await decideCommand(line, { rules, workspaceRoot: folder, sandbox });
          assert.equal(decided.decision, "ask", `${line} (sandbox ${sandbox}): ${decided.reason}`);
        }
      }
      // Interpreters of languages that reach the system run code as any interpreter does: only in the sandbox.
      for (const line of ["octave --eval 'system(\"touch made\")'", "gp -q", "mongosh --eval 1", "ipython -c 1"]) {
        await personNeededWithoutSandbox(line, folder);
        const decided = await decideCommand(line, { rules, workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
      }
      // What psql does with the line, against a real server: its `\!` runs the shell command.
      if (postgresMissing() !== undefined || !installed("psql")) return;
      const cluster = await startPostgres();
      try {
        const line = `psql ${cluster.url} -c '\\! touch made-by-psql'`;
        const decided = await decideCommand(line, { rules, workspaceRoot: folder, sandbox: "off" });
        assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
        const run = spawnSync("bash", ["-c", line], { cwd: folder, encoding: "utf8", timeout: 30_000 });
        assert.equal(run.status, 0, run.stderr);
        assert.ok(existsSync(join(folder, "made-by-psql")), `psql's \\! ran nothing: ${run.stderr}`);
      } finally {
        await cluster.stop();
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
  test("a compiler or document processor reads the files its sources name: it runs only in the sandbox", {
    timeout: 120_000,
  }, async () => {
    const folder = await workspace();
    const outside = await realpath(await mkdtemp(join(tmpdir(), "toolfence-included-")));
    try {
      await writeFile(join(outside, "secret.txt"), "INCLUDED-SECRET-51\n");
      const secret = join(outside, "secret.txt");
      await writeFile(join(folder, "c.c"), `#include "${secret}"\n`);
      await writeFile(join(folder, "t.ms"), `.so ${secret}\n`);
      await writeFile(join(folder, "t.tex"), `\\input{${secret}}\n`);
      const lines = ["gcc -E c.c", "gcc-12 -c c.c", "cpp c.c", "clang -E c.c", "groff -Tascii t.ms", "nroff t.ms"];
      const more = ["soelim t.ms", "pdflatex t.tex", "pandoc t.md", "xsltproc s.xsl a.xml", "jsonnet a.jsonnet"];
      const programs = [...lines, ...more].map((line) => line.split(" ")[0]);
      const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: programs } } }], folder);
      // In the sandbox, what they include is what the sandbox shows.
      for (const line of [...lines, ...more]) await onlyInSandbox(line, folder, rules, programs);
      // What the lines print when run: the file outside, which no word of theirs names.
      for (const line of ["gcc -E c.c", "groff -Tascii t.ms", "nroff t.ms"]) {
        if (!installed(line.split(" ")[0])) continue;
        const run = spawnSync("bash", ["-c", line], { cwd: folder, encoding: "utf8", timeout: 60_000 });
        assert.match(run.stdout, /INCLUDED.SECRET.51/, `${line}: ${run.stderr}`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    }
  });
  test("a tool that imports the project's modules or loads the folder's configuration runs only in the sandbox", {
    timeout: 120_000,
  }, async () => {
    const folder = await workspace();
    const outside = await realpath(await mkdtemp(join(tmpdir(), "toolfence-config-")));
    try {
      await writeFile(
        join(folder, "evilmod.py"),
        `open(${JSON.stringify(join(outside, "by-pydoc"))}, "w").write("x")\n`,
      );
      await mkdir(join(folder, ".ctags.d"));
      await writeFile(join(folder, ".ctags.d", "a.ctags"), `-o${join(outside, "by-ctags")}\n`);
      await writeFile(join(folder, "a.c"), "int main(void) { return 0; }\n");
      const lines = ["pydoc3 evilmod", "pydoc evilmod", "ctags -R", "ctags a.c", "flake8 .", "coverage report"];
      const more = ["javadoc -d d A.java", "doxygen", "phpstan analyse", "lint-staged", "cspell .", "prisma generate"];
      const programs = [...lines, ...more].map((line) => line.split(" ")[0]);
      const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: programs } } }], folder);
      for (const line of [...lines, ...more]) await onlyInSandbox(line, folder, rules, programs);
      // What the lines do when run: the module's code and the folder's options write outside.
      for (const [line, made] of [["pydoc3 evilmod", "by-pydoc"], ["ctags -R", "by-ctags"]]) {
        if (!installed(line.split(" ")[0])) continue;
        spawnSync("bash", ["-c", line], { cwd: folder, stdio: "ignore", timeout: 60_000 });
        assert.ok(existsSync(join(outside, made)), `${line} made nothing outside`);
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    }
  });

  test("a runner that starts a shell when given no command runs what it reads: a deny rule cannot see it", {
    timeout: 60_000,
  }, async () => {
    // Before, with deny ["touch*"] and the sandbox, `unshare <<< 'touch made5'` and `fakeroot <<< 'touch made6'`
    // made the files (the bash tool's automatic answer): the shell each starts was not seen as one reading its
    // commands, as `bash <<< 'touch m'` is.
    const folder = await workspace();
    try {
      const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { deny: ["touch*"] } } }], folder);
      const runners = ["unshare", "fakeroot", "fakeroot-sysv", "newgrp", "sg root", "nsenter", "chroot .", "capsh --"];
      const feeds = ["<<< 'touch made'", "< s.sh", "<<EOF\ntouch made\nEOF"];
      const fronts = ["", "nice -n 3 ", "timeout 5 ", "env -u X "];
      let index = 0;
      for (const runner of runners) {
        for (const feed of feeds) {
          const line = `${fronts[index++ % fronts.length]}${runner} ${feed}`;
          for (const sandbox of ["off", "required"] as const) {
            const decided = await decideCommand(line, { rules, workspaceRoot: folder, sandbox });
            assert.notEqual(decided.decision, "allow", `${line}: ${decided.reason}`);
            assert.equal(decided.prompt?.requirePerson, true, `${line} (${sandbox}): ${decided.reason}`);
          }
        }
      }
      // What the line does when run: unshare's shell runs touch.
      if (installed("unshare")) {
        spawnSync("bash", ["-c", "unshare <<< 'touch made-by-unshare'"], { cwd: folder, timeout: 60_000 });
        assert.ok(existsSync(join(folder, "made-by-unshare")), "unshare's shell ran touch");
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  test("make under its other names and the drivers of a project's tests run only in the sandbox", {
    timeout: 60_000,
  }, async () => {
    // Before, with an allow rule for gmake and the sandbox off, `gmake` ran the workspace's Makefile (which printed a
    // file outside) and nobody was asked; prove ran t/*.t and ctest CTestTestfile.cmake likewise.
    const folder = await workspace();
    try {
      const programs = ["gmake", "bmake", "prove", "ctest", "cpack", "cpan", "dpkg-buildpackage", "mvnDebug"];
      const rules = PolicyRules.fromLayers([{ name: "project", config: { commands: { allow: programs } } }], folder);
      for (const line of ["gmake", "gmake -j4 all", "bmake", "prove -r t", "ctest", "cpack", "dpkg-buildpackage -b"]) {
        await onlyInSandbox(line, folder, rules, programs);
      }
      // What gmake does when run: it runs the Makefile's recipe.
      if (installed("gmake")) {
        await writeFile(join(folder, "Makefile"), "all:\n\t@touch made-by-gmake\n");
        spawnSync("gmake", [], { cwd: folder, stdio: "ignore", timeout: 60_000 });
        assert.ok(existsSync(join(folder, "made-by-gmake")), "gmake ran the Makefile");
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
