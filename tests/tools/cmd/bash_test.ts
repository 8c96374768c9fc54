import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { withSession } from "../../core/_helpers.ts";
import { autoHost, callbackHost, denyAllHost } from "../../../policy/hosts.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { readArtifactWindow } from "../../../core/artifacts.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { toModelText } from "../../../core/result.ts";
import { cmdBox, eventually, failedOutput, markerSeconds, okOutput, pidAlive, pidsWithArgs } from "./_helpers.ts";

const box = cmdBox();
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const auto = { autoConfirm: true, host: autoHost() } as const;

describe("bash", () => {
  test(
    "runs an allowlisted command without asking and reports exit code, output and time",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const out = okOutput<BashResult>(await box.call(session, "bash", { command: "echo hello; echo oops >&2" }));
        assert.equal(out.exit_code, 0);
        assert.equal(out.stdout, "hello\n");
        assert.equal(out.stderr, "oops\n");
        assert.equal(typeof out.duration_ms, "number");
        assert.equal(out.sandboxed, hasBwrap);
      }, { host: denyAllHost() });
    },
  );

  test(
    "a repository's config cannot make an allowlisted git command start a program",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session, dir) => {
        const { execFileSync } = await import("node:child_process");
        const git = (...args: string[]) => execFileSync("git", ["-C", dir, ...args], { stdio: "ignore" });
        git("init", "-q");
        await writeFile(path.join(dir, "f.txt"), "x\n");
        const marker = path.join(dir, "fsmonitor-ran");
        git("config", "core.fsmonitor", `touch ${marker}`);
        git("config", "core.pager", `touch ${marker}`);
        const out = okOutput<BashResult>(await box.call(session, "bash", { command: "git status --short" }));
        assert.equal(out.exit_code, 0, out.stderr);
        assert.match(out.stdout, /f\.txt/);
        assert.equal(existsSync(marker), false, "core.fsmonitor or core.pager from .git/config ran");
      }, { host: denyAllHost() });
    },
  );

  test(
    "without the sandbox, deno fmt --check asks: the project's deno.json can name files outside to print",
    { timeout: 60_000 },
    async () => {
      const outside = await mkdtemp(path.join(tmpdir(), "toolfence-fmt-outside-"));
      try {
        await writeFile(path.join(outside, "x.json"), '{"secret":   "planted-fmt-secret"}\n');
        await withSession(async (session, dir) => {
          await writeFile(path.join(dir, "deno.json"), JSON.stringify({ fmt: { include: [`${outside}/`] } }));
          const result = await box.call(session, "bash", { command: "deno fmt --check" });
          assert.equal(result.status, "skipped", `${result.status}: ${result.error}`);
          assert.doesNotMatch(JSON.stringify(result), /planted-fmt-secret/);
        }, { host: denyAllHost(), sandbox: "off" });
      } finally {
        await rm(outside, { recursive: true, force: true });
      }
    },
  );

  test(
    "a non-zero exit fails the call with command_failed, keeping exit code, stdout and stderr",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session) => {
        const result = await box.call(session, "bash", { command: "echo before; ls no-such-file" });
        const out = failedOutput<BashResult>(result, "error", "command_failed");
        assert.equal(result.errorKind, "execution");
        assert.notEqual(out.exit_code, 0);
        assert.equal(out.stdout, "before\n");
        assert.match(out.stderr, /no-such-file/);
        assert.match(result.error!, new RegExp(`exited with code ${out.exit_code}`));
        assert.equal(result.details?.exitCode, out.exit_code);
        assert.equal(result.effectState, "applied", "the command ran");
        assert.equal(result.reconciliationRequired, false);
        assert.equal(result.retryDisposition, "not_needed", "a returned failure is never retried");
        // The model still reads the whole output after the error line.
        const text = toModelText(result);
        assert.match(text, /^Error \[command_failed\]: bash "echo before; ls no-such-file" exited with code \d+/);
        assert.match(text, /no-such-file/);
        assert.match(text, /before/);
        for (const code of [1, 2, 42, 255]) {
          const r = await box.call(session, "bash", { command: `exit ${code}` }, { callId: `exit-${code}` });
          assert.equal(failedOutput<BashResult>(r, "error", "command_failed").exit_code, code);
        }
        const ok = await box.call(session, "bash", { command: "true" });
        assert.equal(ok.status, "success");
        assert.deepEqual([ok.declaredEffects, ok.effectState], [
          ["reads", "writes_files", "runs_processes", "network"],
          "applied",
        ]);
      }, { ...auto, sandbox: "off" });
    },
  );

  test("a command killed by a signal fails with command_killed, naming the signal", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      for (const [signal, number] of [["SIGKILL", 9], ["SIGTERM", 15], ["SIGSEGV", 11]] as const) {
        const result = await box.call(session, "bash", { command: `echo dying; kill -${number} $$` });
        const out = failedOutput<BashResult>(result, "error", "command_killed");
        assert.equal(out.signal, signal);
        assert.equal(out.exit_code, null);
        assert.equal(out.stdout, "dying\n");
        assert.match(result.error!, new RegExp(`killed by ${signal}`));
      }
    }, { host: callbackHost({ choose: (request) => request.defaultChoice, confirm: () => true }), sandbox: "off" });
  });

  test("a denied command never starts: the file it would write does not exist", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      const result = await box.call(session, "bash", { command: "touch made-by-denied.txt" });
      assert.equal(result.status, "skipped");
      assert.equal(result.errorKind, "policy");
      assert.equal(result.errorCode, "permission_denied");
      assert.match(result.error!, /touch made-by-denied\.txt/);
      assert.equal(existsSync(path.join(dir, "made-by-denied.txt")), false);
    }, { host: denyAllHost() });
    const asked: string[] = [];
    const host = callbackHost({
      choose: (request) => request.defaultChoice,
      confirm: (request) => {
        asked.push(request.title);
        return false;
      },
    });
    await withSession(async (session, dir) => {
      const result = await box.call(session, "bash", { command: "rm -rf src && echo gone > gone.txt" });
      assert.equal(result.errorCode, "permission_denied");
      assert.deepEqual(asked, ["Dangerous Command Confirmation"]);
      assert.equal(existsSync(path.join(dir, "gone.txt")), false);
    }, { host });
  });

  test("a confirmed command runs", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      const out = okOutput<BashResult>(await box.call(session, "bash", { command: "touch made.txt" }));
      assert.equal(out.exit_code, 0);
      assert.equal(existsSync(path.join(dir, "made.txt")), true);
    }, auto);
  });

  test("cwd is resolved inside the workspace", { timeout: 60_000 }, async () => {
    await withSession(async (session, dir) => {
      await mkdir(path.join(dir, "sub"));
      const out = okOutput<BashResult>(await box.call(session, "bash", { command: "pwd", cwd: "sub" }));
      assert.equal(out.stdout.trim(), path.join(session.workspace.workdir, "sub"));
      const outside = await box.call(session, "bash", { command: "pwd", cwd: "../" });
      assert.equal(outside.errorCode, "outside_workspace");
      await writeFile(path.join(dir, "file.txt"), "x");
      assert.equal((await box.call(session, "bash", { command: "pwd", cwd: "file.txt" })).errorCode, "not_a_directory");
      // A missing cwd (or one below a file) is not_found with a hint, for bash and bash_background alike; it was
      // command_start_failed with the stat's raw "ENOENT: no such file or directory, stat '<host path>'".
      for (const tool of ["bash", "bash_background"]) {
        for (const cwd of ["nope", "file.txt/below"]) {
          const missing = await box.call(session, tool, { command: "pwd", cwd });
          assert.equal(missing.errorCode, "not_found", `${tool} ${cwd}: ${toModelText(missing)}`);
          assert.match(toModelText(missing), new RegExp(`cwd ${cwd} does not exist[^]*Hint: Pass an existing folder`));
          assert.doesNotMatch(toModelText(missing), /ENOENT|ENOTDIR/);
        }
      }
    });
  });

  test(
    "a line run in a subfolder has its paths judged from there: a link beside it that leads out asks",
    { timeout: 60_000 },
    async () => {
      const outside = await mkdtemp(path.join(tmpdir(), "toolfence-cwd-outside-"));
      try {
        await writeFile(path.join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
        await withSession(async (session, dir) => {
          await mkdir(path.join(dir, "sub"));
          await writeFile(path.join(dir, "sub", "mine.txt"), "inside\n");
          await symlink(outside, path.join(dir, "sub", "o"));
          // From the root `o/secret.txt` would be a missing file inside; from `sub` the shell opens the link.
          for (const command of ["cat o/secret.txt", "cat */secret.txt", "grep -R SECRET .", "cat o/*"]) {
            const result = await box.call(session, "bash", { command, cwd: "sub" });
            assert.equal(result.status, "skipped", `${command}: ${JSON.stringify(result.output)}`);
            assert.equal(result.errorCode, "permission_denied");
            assert.doesNotMatch(JSON.stringify(result), /OUTSIDE-SECRET/);
          }
          const inside = okOutput<BashResult>(await box.call(session, "bash", { command: "cat mine.txt", cwd: "sub" }));
          assert.equal(inside.stdout, "inside\n");
        }, { host: denyAllHost(), sandbox: "off" });
      } finally {
        await rm(outside, { recursive: true, force: true });
      }
    },
  );

  test("the environment is scrubbed; env adds variables; loader and search-path variables are refused", {
    timeout: 60_000,
  }, async () => {
    process.env.TOOLFENCE_TEST_SECRET = "hunter2";
    process.env.LD_LIBRARY_PATH = "/nowhere";
    try {
      await withSession(async (session) => {
        const out = okOutput<BashResult>(
          await box.call(session, "bash", { command: "env", env: { GREETING: "hi there" } }),
        );
        assert.doesNotMatch(out.stdout, /hunter2|TOOLFENCE_TEST_SECRET|LD_LIBRARY_PATH/);
        assert.match(out.stdout, /^GREETING=hi there$/m);
        assert.match(out.stdout, /^PATH=/m);
        // Temporary files go to the sandbox's private /tmp, capped at tmpSize; without it, to the session temp dir.
        const tmpdir = out.sandboxed ? "/tmp" : await session.workspace.tempDir();
        assert.match(out.stdout, new RegExp(`^TMPDIR=${tmpdir}$`, "m"));
        for (
          const name of [
            "LD_PRELOAD",
            "PATH",
            "BASH_ENV",
            "GIT_SSH_COMMAND",
            "BASH_FUNC_ls%%",
            "NODE_OPTIONS",
            "RIPGREP_CONFIG_PATH",
            "OPENSSL_CONF",
            "ld_preload",
          ]
        ) {
          const refused = await box.call(session, "bash", { command: "env", env: { [name]: "x" } });
          assert.ok(
            refused.errorCode === "forbidden_env" || refused.errorCode === "invalid_arguments",
            `${name}: ${refused.errorCode}`,
          );
        }
      }, auto);
    } finally {
      delete process.env.TOOLFENCE_TEST_SECRET;
      delete process.env.LD_LIBRARY_PATH;
    }
  });

  test(
    "an allowlisted reader never starts a program the workspace ships, whatever the caller's PATH holds",
    { timeout: 60_000 },
    async () => {
      const before = process.env.PATH;
      try {
        for (const sandbox of hasBwrap ? ["off", "required"] as const : ["off"] as const) {
          await withSession(async (session, dir) => {
            // A repository with programs named like readers, and a caller whose PATH reaches them: `.`, an
            // empty entry, a relative folder, an absolute folder of the workspace.
            await mkdir(path.join(dir, "bin"));
            for (const file of ["ls", "bin/cat", "bin/head"]) {
              const script = `#!/bin/sh\necho shipped > "${dir}/ran-${path.basename(file)}"\n`;
              await writeFile(path.join(dir, file), script, { mode: 0o755 });
            }
            await writeFile(path.join(dir, "f.txt"), "real\n");
            process.env.PATH = `.:bin::${path.join(dir, "bin")}:${before}`;
            const out = okOutput<BashResult>(
              await box.call(session, "bash", { command: "ls f.txt && cat f.txt && head -1 f.txt" }),
            );
            assert.equal(out.stdout, "f.txt\nreal\nreal\n", sandbox);
            for (const name of ["ls", "cat", "head"]) assert.equal(existsSync(path.join(dir, `ran-${name}`)), false);
            const env = okOutput<BashResult>(await box.call(session, "bash", { command: 'echo "$PATH"' }));
            const entries = env.stdout.trim().split(":");
            assert.ok(entries.every((entry) => entry.startsWith("/") && !entry.startsWith(dir)), env.stdout);
          }, { host: denyAllHost(), sandbox });
        }
      } finally {
        process.env.PATH = before;
      }
    },
  );

  test("variables passed in env are judged like assignments before the command", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const allowed = okOutput<BashResult>(await box.call(session, "bash", { command: "echo hi" }));
      assert.equal(allowed.stdout, "hi\n");
      const withEnv = await box.call(session, "bash", { command: "echo hi", env: { GREETING: "it's me" } });
      assert.equal(withEnv.errorCode, "permission_denied");
      assert.match(withEnv.error!, /GREETING='it'\\''s me' echo hi/);
    }, { host: denyAllHost() });
  });

  test("a command that outlives its timeout is killed with its children (by pid)", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const mark = markerSeconds();
      const started = Date.now();
      const result = await box.call(session, "bash", {
        command: `echo $$; sleep ${mark} & echo $!; sleep ${mark}`,
        timeout_s: 1,
      });
      const out = failedOutput<BashResult>(result, "timed_out", "timeout");
      assert.equal(result.errorKind, "execution");
      assert.match(result.error!, /ran out of time after 1 s/);
      assert.equal(result.effectState, "unknown");
      assert.equal(result.reconciliationRequired, true);
      assert.equal(out.timed_out, true);
      assert.equal(out.exit_code, null);
      assert.equal(out.signal, "SIGTERM");
      assert.ok(Date.now() - started < 4000, "killed promptly by SIGTERM");
      const [shellPid, childPid] = out.stdout.trim().split("\n").map(Number);
      assert.ok(shellPid > 0 && childPid > 0, out.stdout);
      assert.equal(await pidAlive(shellPid), false);
      assert.equal(await pidAlive(childPid), false);
      assert.deepEqual(await pidsWithArgs("sleep", mark), []);
    }, { ...auto, sandbox: "off" });
  });

  test("a group that ignores SIGTERM gets SIGKILL after 5 seconds", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const mark = markerSeconds();
      const started = Date.now();
      const out = failedOutput<BashResult>(
        await box.call(session, "bash", { command: `trap '' TERM; sleep ${mark} & echo $!; wait`, timeout_s: 0.5 }),
        "timed_out",
        "timeout",
      );
      const elapsed = Date.now() - started;
      assert.equal(out.timed_out, true);
      assert.equal(out.signal, "SIGKILL");
      assert.ok(elapsed >= 5000 && elapsed < 9000, `${elapsed} ms`);
      assert.equal(await pidAlive(Number(out.stdout.trim())), false);
      assert.deepEqual(await pidsWithArgs("sleep", mark), []);
    }, { ...auto, sandbox: "off" });
  });

  test("a sandboxed command's children die with it on timeout", { timeout: 60_000, skip: !hasBwrap }, async () => {
    await withSession(async (session) => {
      const mark = markerSeconds();
      // 3 s, not 1: on a loaded machine the two sleeps lived less than the look at them took (CI run ci5, Node 24).
      const call = box.call(session, "bash", { command: `sleep ${mark} & sleep ${mark}`, timeout_s: 3 });
      assert.ok(await eventually(async () => (await pidsWithArgs("sleep", mark)).length === 2, 60_000));
      const out = failedOutput<BashResult>(await call, "timed_out", "timeout");
      assert.equal(out.sandboxed, true);
      assert.equal(out.timed_out, true);
      assert.ok(await eventually(async () => (await pidsWithArgs("sleep", mark)).length === 0, 60_000));
    }, auto);
  });

  test("what the shell leaves running is ended when it exits", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const mark = markerSeconds();
      const out = okOutput<BashResult>(await box.call(session, "bash", { command: `sleep ${mark} & echo $!` }));
      assert.equal(out.exit_code, 0);
      assert.equal(await pidAlive(Number(out.stdout.trim())), false);
    }, { ...auto, sandbox: "off" });
  });

  test("cancelling the call kills the command", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const mark = markerSeconds();
      const controller = new AbortController();
      const call = box.call(session, "bash", { command: `sleep ${mark}` }, { signal: controller.signal });
      assert.ok(await eventually(async () => (await pidsWithArgs("sleep", mark)).length === 1, 60_000));
      controller.abort();
      const result = await call;
      assert.equal(result.status, "cancelled");
      assert.ok(await eventually(async () => (await pidsWithArgs("sleep", mark)).length === 0, 60_000));
    }, auto);
  });

  test("a sandboxed command cannot write outside the workspace", { timeout: 60_000, skip: !hasBwrap }, async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "toolfence-outside-"));
    try {
      await withSession(async (session, dir) => {
        const target = path.join(outside, "escaped.txt");
        const out = okOutput<BashResult>(
          await box.call(session, "bash", {
            command: `touch ${target} ; touch $HOME/toolfence-escaped ; touch inside.txt ; touch "${await session
              .workspace.tempDir()}/t.txt"`,
          }),
        );
        assert.equal(out.sandboxed, true);
        // The outside folder lies under the host's /tmp, which the sandbox does not see.
        assert.match(out.stderr, /No such file or directory|Read-only file system/);
        assert.equal(existsSync(target), false);
        assert.equal(existsSync(path.join(process.env.HOME ?? "/root", "toolfence-escaped")), false);
        assert.equal(existsSync(path.join(dir, "inside.txt")), true);
        assert.equal(existsSync(path.join(await session.workspace.tempDir(), "t.txt")), true);
      }, { ...auto, sandbox: "required" });
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  test("a 50 MB output comes back capped, with the whole stream in an artifact", { timeout: 60_000 }, async () => {
    await withSession(async (session) => {
      const size = 50 * 1024 * 1024;
      const out = okOutput<BashResult>(
        await box.call(session, "bash", {
          command: `head -c ${size} /dev/zero | tr '\\0' 'a'; printf END`,
          max_output_chars: 2000,
        }),
      );
      assert.equal(out.exit_code, 0);
      assert.ok(out.stdout.length <= 2000, `${out.stdout.length}`);
      assert.ok(out.stdout.startsWith("aaaa"));
      assert.ok(out.stdout.endsWith("aEND"));
      const id = /artifact (sha256:[0-9a-f]{64})/.exec(out.stdout)?.[1];
      assert.ok(id, out.stdout.slice(0, 1500));
      assert.equal(session.artifacts.ref(id)!.byteLength, size + 3);
      const tail = await readArtifactWindow(session.artifacts, id, { offset: size - 2, limit: 10 });
      assert.equal(tail.content, "aaEND");
      assert.equal(out.stderr, "");
    }, auto);
  });
});

test("a running command reports progress once a second, and none after it ends", { timeout: 60_000 }, async () => {
  await withSession(async (session) => {
    const seen: string[] = [];
    const out = okOutput<BashResult>(
      await box.call(session, "bash", { command: "sleep 2.3" }, { onProgress: (e) => void seen.push(e.message) }),
    );
    assert.equal(out.exit_code, 0);
    await new Promise((r) => setTimeout(r, 1_200));
    assert.deepEqual(seen, ["running for 1 s", "running for 2 s"]);
  }, auto);
});

describe("bash: its output files", () => {
  test(
    "are removed without following a link the command put in place of their folder",
    { timeout: 60_000 },
    async () => {
      const outside = await mkdtemp(path.join(tmpdir(), "toolfence-outside-"));
      try {
        await withSession(async (session) => {
          // The command finds its output files in their folder, puts files of the same names in a folder outside,
          // and makes the folder a link to it (a person allows it: without the sandbox it could write there).
          const d = (await session.workspace.tempDir()) + "/output/bash";
          const command = `for f in ${d}/*.std*; do printf keep > ${outside}/\${f##*/}; done; ` +
            `mv ${d} ${d}.away && ln -s ${outside} ${d}`;
          await box.call(session, "bash", { command });
          const kept = (await readdir(outside)).sort();
          assert.equal(kept.length, 2, `the files outside were removed: ${kept}`);
        }, {
          host: callbackHost({
            choose: (request) =>
              (request.options.find((o) => o.value === "once")?.value ?? request.defaultChoice) as never,
            confirm: () => true,
          }),
          sandbox: "off",
        });
      } finally {
        await rm(outside, { recursive: true, force: true });
      }
    },
  );
});
