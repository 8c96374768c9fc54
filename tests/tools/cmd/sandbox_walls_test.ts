// The bash tools inside the real sandbox: the home folder's secrets are out of
// reach, protected files a command creates do not stay, and the state is said.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { withSession } from "../../core/_helpers.ts";
import { autoHost, callbackHost } from "../../../policy/hosts.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import type { JobReport } from "../../../tools/cmd/background.ts";
import { cmdBox, failedOutput, okOutput } from "./_helpers.ts";
import { execFileSync } from "node:child_process";
import { inflateSync } from "node:zlib";
import { createHash } from "node:crypto";
import { PolicyRules } from "../../../policy/mod.ts";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import "../../../tools/mod.ts";

const box = cmdBox();

// `count` entries in `folder`: names of a few files (link(2) is the cheapest entry to make; a file takes at most 65,000
// names on ext4).
function manyNames(folder: string, count: number): void {
  const script = "my $n = shift; my @s = map { my $f = \"s$_\"; open(my $h, '>', $f) or die $!; $f } 0 .. 4; " +
    'link($s[$_ % 5], "l$_") or die $! for 1 .. $n - 5';
  execFileSync("perl", ["-e", script, String(count)], { cwd: folder });
}
const skip = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;
const auto = { autoConfirm: true, host: autoHost() } as const;
const planted = "planted-private-key-for-toolfence-tests";

describe("bash in the sandbox", { skip }, () => {
  let home: string;
  let savedHome: string | undefined;
  before(async () => {
    await mkdir("/var/tmp", { recursive: true });
    home = await realpath(await mkdtemp("/var/tmp/toolfence-bash-home-"));
    await mkdir(path.join(home, ".ssh"));
    await writeFile(path.join(home, ".ssh/id_rsa"), planted);
    savedHome = process.env.HOME;
    process.env.HOME = home;
  });
  after(async () => {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    await rm(home, { recursive: true, force: true });
  });

  test("cat ~/.ssh/id_rsa finds nothing, under every sandbox mode that sandboxes", { timeout: 60_000 }, async () => {
    for (const sandbox of ["auto", "required"] as const) {
      await withSession(async (session) => {
        const out = okOutput<BashResult>(
          await box.call(session, "bash", { command: `cat ~/.ssh/id_rsa; cat ${home}/.ssh/id_rsa; echo HOME=$HOME` }),
        );
        assert.equal(out.sandboxed, true);
        assert.doesNotMatch(out.stdout + out.stderr, new RegExp(planted));
        assert.match(out.stdout, new RegExp(`HOME=${home}`));
      }, { ...auto, sandbox });
    }
    // Without the sandbox the same command would read it (the test plants a real key): an automatic answer no longer
    // lets it run (outside_unsandboxed), a person's yes does.
    await withSession(async (session) => {
      const refused = await box.call(session, "bash", { command: "cat ~/.ssh/id_rsa" });
      assert.equal(refused.status, "skipped", JSON.stringify(refused));
      assert.doesNotMatch(JSON.stringify(refused), new RegExp(planted));
    }, { ...auto, sandbox: "off" });
    await withSession(async (session) => {
      const out = okOutput<BashResult>(await box.call(session, "bash", { command: "cat ~/.ssh/id_rsa" }));
      assert.equal(out.stdout, planted);
      assert.equal(out.sandboxed, false);
      assert.match(out.sandbox_reason ?? "", /off/);
    }, {
      sandbox: "off",
      host: callbackHost({ confirm: () => true, choose: (request) => request.options[0].value as never }),
    });
  });

  test("a reader's line sees the workspace read-only and reports no changes; a line that writes sees it writable", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "a.txt"), "a\n");
      const probe = "test -w . && echo writable || echo read-only";
      const reader = await box.call(session, "bash", { command: `${probe}; cat a.txt` });
      assert.equal(okOutput<BashResult>(reader).stdout, "read-only\na\n");
      assert.deepEqual(reader.filesystemChanges, []);
      // The temp dir stays writable to it, as always.
      const tempDir = await session.workspace.tempDir();
      const temp = okOutput<BashResult>(
        await box.call(session, "bash", { command: `test -w "${tempDir}" && echo yes` }),
      );
      assert.equal(temp.stdout, "yes\n");
      // A background reader too; and a line that writes, once allowed, writes and says what it changed.
      const { id } = okOutput<{ id: string }>(await box.call(session, "bash_background", { command: probe }));
      assert.equal(
        okOutput<JobReport>(await box.call(session, "bash_wait", { id, timeout_s: 20 })).stdout,
        "read-only\n",
      );
      const writer = await box.call(session, "bash", { command: `${probe}; echo b > b.txt` });
      assert.equal(okOutput<BashResult>(writer).stdout, "writable\n");
      assert.deepEqual(writer.filesystemChanges.map((c) => `${c.change} ${c.path}`), ["created b.txt"]);
    }, auto);
  });

  test("a command that puts a link in place of its own output file reads nothing through it", {
    timeout: 60_000,
  }, async () => {
    // The output files lie in the session temp dir, which the command may write. The server read them back by path
    // after the command ended, following a link the command had put there to a file outside its sandbox: the
    // key under the home folder came back as the command's output.
    // The session temp dir by its path: TMPDIR leads to the sandbox's private /tmp.
    const swap = (temp: string, target: string) =>
      `for f in "${temp}"/../toolfence-*/*/*.stdout "${temp}"/../toolfence-*/*/*.stderr; do ` +
      `rm -f "$f"; ln -s ${target} "$f"; done; echo done`;
    await withSession(async (session, dir) => {
      await writeFile(path.join(dir, "swap.sh"), swap(await session.workspace.tempDir(), `${home}/.ssh/id_rsa`) + "\n");
      // The capture folders are read-only inside now: the swap fails, and the output is the command's own.
      const ran = await box.call(session, "bash", { command: "sh swap.sh" });
      assert.doesNotMatch(JSON.stringify(ran), new RegExp(planted), JSON.stringify(ran));
      assert.match(okOutput<BashResult>(ran).stdout, /done/, JSON.stringify(ran));
      const { id } = okOutput<{ id: string }>(await box.call(session, "bash_background", { command: "sh swap.sh" }));
      const job = await box.call(session, "bash_wait", { id, timeout_s: 20 });
      assert.doesNotMatch(JSON.stringify(job), new RegExp(planted), JSON.stringify(job));
      assert.match(okOutput<JobReport>(job).stdout, /done/, JSON.stringify(job));
    }, auto);
  });

  test("a command cannot rewrite another call's output: the capture folders are read-only inside", {
    timeout: 60_000,
  }, async () => {
    // Before: a job printed "TESTS FAILED", then `printf 'all 120 tests passed' > <its stdout_path>` from the next
    // command, and bash_read showed "all 120 tests passed" as the job's output.
    await withSession(async (session, dir) => {
      const { id, stdout_path } = okOutput<{ id: string; stdout_path: string }>(
        await box.call(session, "bash_background", { command: "echo TESTS FAILED" }),
      );
      assert.match(okOutput<JobReport>(await box.call(session, "bash_wait", { id, timeout_s: 20 })).stdout, /FAILED/);
      const temp = await session.workspace.tempDir();
      const folders = ["output", "output/bash", "output/jobs", "output/search"].map((f) => `"${temp}/${f}"`).join(" ");
      const script = `printf 'all tests passed\\n' > ${stdout_path}; rm -f ${stdout_path}\n` +
        `for d in ${folders}; do touch "$d/x" || echo "$d is read-only"; mv "$d" "$d.moved" || echo kept; done\n` +
        `cat ${stdout_path}\n`;
      await writeFile(path.join(dir, "forge.sh"), script);
      const forge = await box.call(session, "bash", { command: "sh forge.sh" });
      const out = okOutput<BashResult>(forge);
      assert.equal(out.stdout.match(/is read-only/g)?.length, 4, out.stdout + out.stderr);
      assert.equal(out.stdout.match(/^kept$/gm)?.length, 4, out.stdout + out.stderr);
      assert.match(out.stdout, /TESTS FAILED/, "the job's file is still there, unchanged");
      const again = okOutput<JobReport>(await box.call(session, "bash_read", { id }));
      assert.equal(again.stdout, "TESTS FAILED\n");
    }, auto);
  });

  test("protected files a command creates are moved out and listed in the result", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      const out = okOutput<BashResult>(
        await box.call(session, "bash", { command: "echo registry=http://127.0.0.1:9/ > .npmrc; echo ok > a.txt" }),
      );
      assert.deepEqual(out.protected_paths_moved?.map((m) => m.path), [".npmrc"]);
      assert.equal(existsSync(path.join(dir, ".npmrc")), false);
      assert.equal(await readFile(path.join(dir, "a.txt"), "utf8"), "ok\n");
      const { id } = okOutput<{ id: string }>(
        await box.call(session, "bash_background", { command: "mkdir -p .vscode && echo '{}' > .vscode/tasks.json" }),
      );
      const job = okOutput<JobReport>(await box.call(session, "bash_wait", { id, timeout_s: 20 }));
      assert.deepEqual(job.protected_paths_moved?.map((m) => m.path), [".vscode"]);
      assert.equal(existsSync(path.join(dir, ".vscode")), false);
    }, auto);
  });

  // The server's own folders in the temp dir (the quarantine of created protected paths, the browser's downloads)
  // lie in its captures' folder, read-only inside. Before, the next command rewrote a moved file that the result
  // names for a person to look at (`echo forged > <moved_to>`), and could plant files among the downloads.
  test("the next command cannot rewrite what was moved out, nor write among the kept downloads", {
    timeout: 60_000,
  }, async () => {
    await withSession(async (session, dir) => {
      const out = okOutput<BashResult>(
        await box.call(session, "bash", { command: "echo registry=http://127.0.0.1:9/ > .npmrc" }),
      );
      const movedTo = out.protected_paths_moved?.[0]?.moved_to;
      assert.ok(movedTo, JSON.stringify(out));
      const downloads = path.join(path.dirname(path.dirname(movedTo)), "downloads");
      const forge = `echo forged > '${movedTo}'; rm -f '${movedTo}'; mv '${path.dirname(movedTo)}' '${movedTo}.x'; ` +
        `mkdir -p '${downloads}' && echo planted > '${downloads}/1-report.pdf'; cat '${movedTo}'`;
      await writeFile(path.join(dir, "forge.sh"), forge + "\n");
      const forged = await box.call(session, "bash", { command: "sh forge.sh" });
      const text = JSON.stringify(forged.output);
      assert.match(text, /registry=http:\/\/127\.0\.0\.1:9\//, text);
      assert.doesNotMatch(text, /forged\\n/, text);
      assert.equal(await readFile(movedTo, "utf8"), "registry=http://127.0.0.1:9/\n");
      assert.equal(existsSync(path.join(downloads, "1-report.pdf")), false);
    }, auto);
  });

  test(
    "existing protected files cannot be changed by an allowed command's redirection or by git",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session, dir) => {
        await mkdir(path.join(dir, ".git/hooks"), { recursive: true });
        await writeFile(path.join(dir, ".git/config"), "[core]\n\tbare = false\n");
        // The refused write makes the command exit non-zero: a failed call that still carries stderr.
        const out = failedOutput<BashResult>(
          await box.call(session, "bash", {
            command: "git config --file .git/config diff.external /tmp/evil; echo x >> .git/hooks/pre-commit",
          }),
          "error",
          "command_failed",
        );
        assert.match(out.stderr, /Read-only file system|could not lock|Permission denied/);
        assert.equal(await readFile(path.join(dir, ".git/config"), "utf8"), "[core]\n\tbare = false\n");
        assert.equal(existsSync(path.join(dir, ".git/hooks/pre-commit")), false);
      }, auto);
    },
  );

  // The walk that finds protected paths stopped at 8 levels and 20,000 entries: `sh forge.sh` wrote a hook into a
  // nested checkout nine folders down, a `.npmrc` there stayed, and a hook past 20,050 files in another folder too.
  test("protected paths at every depth and past 20,000 entries are read-only, and new ones moved out", {
    timeout: 120_000,
  }, async () => {
    await withSession(async (session, dir) => {
      const deep = "d1/d2/d3/d4/d5/d6/d7/d8/d9/d10";
      await mkdir(path.join(dir, deep, ".git/hooks"), { recursive: true });
      await mkdir(path.join(dir, "many"));
      manyNames(path.join(dir, "many"), 20_050);
      await mkdir(path.join(dir, "zz/.git/hooks"), { recursive: true });
      const hooks = [`${deep}/.git/hooks/pre-commit`, "zz/.git/hooks/pre-commit"];
      const script = hooks.map((hook) => `echo pwned > ${hook}`).join("; ") + `; echo x > ${deep}/.npmrc; echo ok\n`;
      await writeFile(path.join(dir, "forge.sh"), script);
      const out = okOutput<BashResult>(await box.call(session, "bash", { command: "sh forge.sh" }));
      assert.match(out.stderr, /Read-only file system/, out.stderr);
      for (const hook of hooks) assert.equal(existsSync(path.join(dir, hook)), false, hook);
      assert.deepEqual(out.protected_paths_moved?.map((m) => m.path), [`${deep}/.npmrc`]);
      assert.equal(existsSync(path.join(dir, deep, ".npmrc")), false);
    }, auto);
  });

  test("in a workspace past 200,000 entries a line that may write is refused; a reader's line runs", {
    timeout: 240_000,
  }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, "many"));
      manyNames(path.join(dir, "many"), 200_001);
      const writer = await box.call(session, "bash", { command: "echo x > a.txt" });
      assert.equal(writer.errorCode, "workspace_too_large", JSON.stringify(writer.output));
      assert.match(writer.error ?? "", /200,000 entries/);
      assert.equal(existsSync(path.join(dir, "a.txt")), false);
      const reader = okOutput<BashResult>(await box.call(session, "bash", { command: "ls many | wc -l" }));
      assert.equal(reader.stdout.trim(), "200001");
    }, auto);
  });

  test(
    "while the policy hides .env, what the repository keeps of it is hidden from every line nobody allowed; " +
      "a line a person allowed runs git on the whole repository",
    { timeout: 90_000 },
    async () => {
      const secret = "ENV_SECRET_IN_HISTORY_4711";
      const dir = await realpath(await mkdtemp(path.join(process.env.TMPDIR ?? "/tmp", "toolfence-store-")));
      try {
        await writeFile(path.join(dir, ".env"), `${secret}\n`);
        await writeFile(path.join(dir, "a.txt"), "a\n");
        const git = (...args: string[]) =>
          execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: dir, encoding: "utf8" });
        git("init", "-q");
        git("add", ".env", "a.txt");
        git("commit", "-qm", "x");
        const blob = git("rev-parse", "HEAD:.env").trim();
        const object = `.git/objects/${blob.slice(0, 2)}/${blob.slice(2)}`;
        // The object is real: its zlib stream is the secret.
        assert.match(inflateSync(await readFile(path.join(dir, object))).toString(), new RegExp(secret));
        const rules = PolicyRules.fromLayers([{ name: "project", config: { paths: { deny: ["**/.env"] } } }], dir);
        // Lines that name the store are refused (it is hidden as the file is); the others run and see none of it.
        const named = [
          `od -An -c ${object}`,
          `head -c 100 ${object} | od -An -tx1`,
          `cd .git && cat objects/${blob.slice(0, 2)}/* | od -c`,
        ];
        const unnamed = ["grep -rao '[[:print:]]*' .git", "find . -path '*objects*' -type f", "cat .git/*/*/* | od -c"];
        const session = new Session({ workspace: dir, sandbox: "required", autoConfirm: false, rules });
        try {
          for (const command of named) {
            const result = await box.call(session, "bash", { command });
            assert.equal(result.errorCode, "permission_denied", `${command}: ${JSON.stringify(result.output)}`);
            assert.match(result.error ?? "", /\.git\/objects/);
          }
          for (const command of unnamed) {
            const result = await box.call(session, "bash", { command });
            assert.notEqual(result.status, "skipped", `${command} ran: ${JSON.stringify(result.error)}`);
            const out = result.output as BashResult;
            assert.equal(out.sandboxed, true);
            const shown = out.stdout + out.stderr;
            assert.doesNotMatch(shown, new RegExp(secret), command);
            // The zlib stream's bytes: 78 01 (od -tx1), or x 001 (od -c).
            assert.doesNotMatch(shown, /78 01|x 001/, command);
            assert.doesNotMatch(out.stdout, new RegExp(blob.slice(2)), `${command} lists the object`);
          }
          // Nor do the file tools reach it, so that no copy of it is made for a command to read.
          const files = new ToolBox().withDefaults("fs", "search");
          for (const [name, args] of [["copy", { src: object, dst: "copy.bin" }], ["read_file", { path: object }]]) {
            const result = await files.call(session, name as string, args as Record<string, unknown>);
            assert.equal(result.errorCode, "permission_denied", `${name}: ${JSON.stringify(result.output)}`);
          }
          assert.equal(existsSync(path.join(dir, "copy.bin")), false);
        } finally {
          await session.close();
        }
        // A person's yes: git sees the repository whole (the objects are there).
        const asked: string[] = [];
        const person = callbackHost({
          choose: (request) => request.options[0].value as never,
          confirm: (request) => (asked.push(request.message), true),
        });
        const allowed = new Session({ workspace: dir, sandbox: "required", rules, host: person });
        try {
          const out = okOutput<BashResult>(await box.call(allowed, "bash", { command: "git cat-file -p HEAD:a.txt" }));
          assert.equal(out.stdout, "a\n");
          assert.equal(asked.length, 1);
        } finally {
          await allowed.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
  test("while the policy hides .env, what Subversion, Mercurial, Jujutsu, Bazaar and darcs keep of it is hidden too", {
    timeout: 90_000,
  }, async () => {
    const secret = "ENV_SECRET_IN_STORE_8812";
    const dir = await realpath(await mkdtemp(path.join(process.env.TMPDIR ?? "/tmp", "toolfence-stores-")));
    try {
      await writeFile(path.join(dir, ".env"), `${secret}\n`);
      // Each system's own layout: Subversion keeps a plain copy of every versioned file under its SHA-1, Mercurial a
      // revlog whose small entries are stored as they are (`u` and the bytes), Jujutsu a git repository.
      const sha = createHash("sha1").update(`${secret}\n`).digest("hex");
      const stores = [
        `.svn/pristine/${sha.slice(0, 2)}/${sha}.svn-base`,
        "sub/.svn/text-base/.env.svn-base",
        ".hg/store/data/~2eenv.i",
        ".jj/repo/store/git/objects/pack/x.pack",
        ".bzr/repository/packs/x.pack",
        "_darcs/pristine.hashed/0000000019-x",
      ];
      for (const store of stores) {
        await mkdir(path.dirname(path.join(dir, store)), { recursive: true });
        await writeFile(path.join(dir, store), store.startsWith(".hg") ? `\0\0\0\0u${secret}\n` : `${secret}\n`);
      }
      const rules = PolicyRules.fromLayers([{ name: "project", config: { paths: { deny: ["**/.env"] } } }], dir);
      const session = new Session({ workspace: dir, sandbox: "required", autoConfirm: false, rules });
      try {
        // A line that names a store is refused; the others run and see none of it.
        for (
          const command of ["cat .svn/pristine/*/*", `cat ${stores[2]}`, "od -c .jj/repo/store/git/objects/pack/*"]
        ) {
          const result = await box.call(session, "bash", { command });
          assert.equal(result.errorCode, "permission_denied", `${command}: ${JSON.stringify(result.output)}`);
        }
        for (const command of ["grep -rao 'ENV_SECRET[A-Z_0-9]*' .", "cat .svn/*/*/* sub/.svn/*/* .hg/*/*/* | od -c"]) {
          const result = await box.call(session, "bash", { command });
          assert.notEqual(result.status, "skipped", `${command} ran: ${JSON.stringify(result.error)}`);
          const out = result.output as BashResult;
          assert.equal(out.sandboxed, true);
          assert.doesNotMatch(out.stdout + out.stderr, /ENV_SECRET|E {3}N {3}V/, command);
        }
        // Nor do the file tools read them.
        const read = await new ToolBox().withDefaults("fs").call(session, "read_file", { path: stores[0] });
        assert.equal(read.errorCode, "permission_denied", JSON.stringify(read.output));
      } finally {
        await session.close();
      }
      // Nor does a line an automatic answer allowed: no person did. Until 2026-12-06 any line that asked, under
      // autoConfirm, ran with the stores shown, and these printed the plain copy Subversion keeps of the .env.
      const automatic = new Session({ workspace: dir, sandbox: "required", autoConfirm: true, rules });
      try {
        for (const command of ["eval 'grep -rao ENV_SECRET[A-Z_0-9]* .'", "F=.svn; cat $F/*/*/* | od -c"]) {
          const result = await box.call(automatic, "bash", { command });
          assert.notEqual(result.status, "skipped", `${command} ran: ${JSON.stringify(result.error)}`);
          const out = result.output as BashResult;
          assert.equal(out.sandboxed, true);
          assert.doesNotMatch(out.stdout + out.stderr, /ENV_SECRET|E {3}N {3}V/, command);
        }
      } finally {
        await automatic.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
