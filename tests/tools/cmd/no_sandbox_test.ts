// Where bubblewrap cannot run (here: a runtime that may not start it), the
// session says so with the probe's own error, `required` starts nothing, and
// the program-running tools do not run unconfined without a person's yes.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import http from "node:http";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { IS_DENO } from "../../_runtime.ts";
import { withSession } from "../../core/_helpers.ts";
import { autoHost, callbackHost } from "../../../policy/hosts.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, okOutput } from "./_helpers.ts";
import "../../../tools/mod.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

interface Report {
  state: { mode: string; working: boolean; reason?: string; summary: string };
  results: { status: string; errorCode?: string; error?: string; output: Record<string, unknown> }[];
}

function probe(
  workdir: string,
  sandbox: "auto" | "required",
  calls: unknown[],
  env: Record<string, string> = {},
  options: { autoConfirm?: boolean; groups?: string[] } = {},
): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        "run",
        "-A",
        "--deny-run=bwrap",
        path.join(here, "_no_sandbox_probe.ts"),
        JSON.stringify({ workdir, sandbox, calls, ...options }),
      ],
      { timeout: 60_000, killSignal: "SIGKILL", env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`${error.message}\n${stderr}`))
          : resolve(JSON.parse(stdout.trim().split("\n").at(-1)!)),
    );
  });
}

describe("without a working sandbox", { skip: IS_DENO ? false : "uses deno run --deny-run" }, () => {
  test("required: the state says why, and no command or checker starts", { timeout: 60_000 }, async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-nosandbox-")));
    try {
      await writeFile(path.join(dir, "a.ts"), "export const a = 1;\n");
      const report = await probe(dir, "required", [
        { name: "bash", args: { command: "touch started" } },
        { name: "bash_background", args: { command: "touch started-job" } },
        { name: "check_types", args: { path: "a.ts" } },
      ]);
      assert.equal(report.state.working, false);
      assert.ok(report.state.reason && report.state.summary.includes(report.state.reason));
      for (const result of report.results) {
        assert.equal(result.errorCode, "sandbox_unavailable", JSON.stringify(result));
        assert.ok(result.error?.includes(report.state.reason!), result.error);
      }
      assert.equal(existsSync(path.join(dir, "started")), false);
      assert.equal(existsSync(path.join(dir, "started-job")), false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("auto: commands say they ran unsandboxed and why; check_types asks a person; bash -n is not started", {
    timeout: 60_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-nosandbox-")));
    try {
      await writeFile(path.join(dir, "a.ts"), "export const a = 1;\n");
      await writeFile(path.join(dir, "s.sh"), "if then\n");
      const report = await probe(dir, "auto", [
        { name: "bash", args: { command: "echo hi" } },
        { name: "check_types", args: { path: "a.ts" } },
        { name: "check_syntax", args: { path: "s.sh" } },
      ]);
      const [bash, types, syntax] = report.results;
      assert.equal(bash.output.sandboxed, false);
      assert.equal(bash.output.sandbox_reason, report.state.reason);
      assert.match(report.state.summary, /unavailable/);
      assert.equal(types.errorCode, "permission_denied", JSON.stringify(types));
      assert.equal(syntax.output.checker, "tree-sitter-bash");
      assert.equal(syntax.output.valid, false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("git branch and git tag need the sandbox: reading an object a partial clone lacks runs its remote's transport", {
    timeout: 60_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-nosandbox-")));
    const marker = path.join(dir, "..", `${path.basename(dir)}-ran`);
    try {
      // A repository whose commit is missing and whose .git/config names a promisor remote: git fetches the missing
      // object by running the remote's upload-pack, a program the configuration names.
      const git = (...args: string[]) =>
        new Promise<string>((resolve, reject) =>
          execFile("git", args, { cwd: dir }, (error, stdout) => error ? reject(error) : resolve(stdout.trim()))
        );
      await git("init", "-q");
      await git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first");
      await git("tag", "v1");
      const head = await git("rev-parse", "HEAD");
      await rm(path.join(dir, ".git", "objects", head.slice(0, 2), head.slice(2)));
      for (
        const [key, value] of [
          ["core.repositoryformatversion", "1"],
          ["extensions.partialClone", "origin"],
          ["remote.origin.url", path.join(dir, "nowhere")],
          ["remote.origin.promisor", "true"],
          ["remote.origin.uploadpack", `touch '${marker}'; false`],
          ["tag.sort", "creatordate"],
        ]
      ) await git("config", key, value);
      // The class, shown without toolfence: this git runs the program.
      await git("branch", "-v").catch(() => {});
      assert.equal(existsSync(marker), true, "git fetched the missing object through the configured upload-pack");
      await rm(marker);
      const report = await probe(dir, "auto", [
        { name: "bash", args: { command: "git branch -v" } },
        { name: "bash", args: { command: "git tag" } },
        { name: "bash", args: { command: "git branch" } },
      ]);
      for (const result of report.results) {
        assert.equal(result.errorCode, "permission_denied", JSON.stringify(result));
        assert.match(result.error ?? "", /sandbox/);
      }
      assert.equal(existsSync(marker), false, "an unsandboxed git listing ran the repository's upload-pack");
    } finally {
      await rm(marker, { force: true });
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("git config and git remote need the sandbox: they read ~/.gitconfig and a repository above the workspace", {
    timeout: 60_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-nosandbox-")));
    try {
      const home = path.join(dir, "home");
      const parent = path.join(dir, "parent");
      const workspace = path.join(parent, "workspace");
      await mkdir(home);
      await mkdir(workspace, { recursive: true });
      await writeFile(
        path.join(home, ".gitconfig"),
        '[url "https://x:HOME-TOKEN@example.com/"]\n\tinsteadOf = https://example.com/\n',
      );
      const git = (...args: string[]) =>
        new Promise<void>((resolve, reject) =>
          execFile("git", args, { cwd: parent }, (error) => error ? reject(error) : resolve())
        );
      // The workspace is no repository: git finds the one above it, outside the workspace.
      await git("init", "-q");
      await git("config", "remote.origin.url", "https://u:PARENT-TOKEN@example.com/r.git");
      const report = await probe(workspace, "auto", [
        { name: "bash", args: { command: "git config --list" } },
        { name: "bash", args: { command: "git config --global --list" } },
        { name: "bash", args: { command: "git remote -v" } },
        { name: "bash", args: { command: "git config --get remote.origin.url" } },
      ], { HOME: home });
      for (const result of report.results) {
        assert.equal(result.errorCode, "permission_denied", JSON.stringify(result));
        assert.doesNotMatch(JSON.stringify(result.output), /TOKEN/);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a background tail -F asks: it opens a name again once it appears, wherever a link there leads", {
    timeout: 60_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-nosandbox-")));
    try {
      const workspace = path.join(dir, "workspace");
      await mkdir(path.join(workspace, "docs"), { recursive: true });
      await writeFile(path.join(dir, "secret"), "OUTSIDE-SECRET\n");
      // A link of the repository that leads outside: reading it asks, and the copy tool refuses to place another
      // link out (it did copy it as a link once; then tail, had it run, would have followed the new name out).
      await symlink(path.join(dir, "secret"), path.join(workspace, "docs", "link"));
      const report = await probe(
        workspace,
        "auto",
        [
          { name: "bash_background", args: { command: "tail -F n" } },
          { name: "sleep", args: { seconds: 1 } },
          { name: "copy", args: { src: "docs/link", dst: "n" } },
          { name: "sleep", args: { seconds: 2 } },
          { name: "bash_read", args: { id: "job-1" } },
          { name: "bash", args: { command: "cat n" } },
        ],
        {},
        { autoConfirm: false, groups: ["fs", "system"] },
      );
      const [job, , copied, , read, cat] = report.results;
      assert.equal(job.errorCode, "permission_denied", JSON.stringify(job));
      assert.equal(copied.errorCode, "symlink_target", JSON.stringify(copied));
      assert.doesNotMatch(JSON.stringify(read), /OUTSIDE-SECRET/);
      // Nothing is at n (reading a link there that led out would ask, and be refused).
      assert.doesNotMatch(JSON.stringify(cat), /OUTSIDE-SECRET/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('with the sandbox "off", a path outside the workspace needs a person', () => {
  const box = cmdBox();
  const secret = "sk-live-toolfence-outside-probe";
  // A file of the host outside the workspace, and the server's own environment (its keys) through /proc.
  test(
    "an automatic answer reads neither the host's files, the server's environment, its processes nor its services; a person's yes does",
    {
      timeout: 60_000,
    },
    async () => {
      const outside = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-outside-")));
      const saved = process.env.TOOLFENCE_PROBE_API_KEY;
      process.env.TOOLFENCE_PROBE_API_KEY = secret;
      try {
        await writeFile(path.join(outside, "id_rsa"), secret);
        const lines = [
          `cat ${outside}/id_rsa`,
          `head -c 200 ${outside}/../${path.basename(outside)}/id_rsa`,
          `cat < ${outside}/id_rsa`,
          "cat /proc/$PPID/environ",
          `cd ${outside} && cat id_rsa`,
          `ln -s ${outside} l && cat l/id_rsa`,
          `grep -r sk- ${outside}`,
        ];
        await withSession(async (session, dir) => {
          await writeFile(path.join(dir, "inside.txt"), "inside\n");
          for (const command of lines) {
            const result = await box.call(session, "bash", { command });
            assert.equal(result.errorCode, "permission_denied", command);
            assert.doesNotMatch(JSON.stringify(result), new RegExp(secret), command);
            assert.match(result.error ?? "", /outside the workspace|runs code the project controls/, command);
          }
          // The workspace itself needs nobody.
          assert.equal(
            okOutput<BashResult>(await box.call(session, "bash", { command: "cat inside.txt" })).stdout,
            "inside\n",
          );
        }, { host: autoHost(), sandbox: "off" });
        // Nor another process of the host: a program with the key in its environment, which `ps e` prints.
        const holder = spawn("sleep", ["60"], { env: { ...process.env, TOOLFENCE_PROBE_API_KEY: secret } });
        try {
          await withSession(async (session) => {
            for (
              const command of [
                "ps auxeww",
                "pgrep -a sleep",
                "top -b -n1 -c",
                "/usr/bin/ps -eww e",
                "getent shadow",
                "timeout 5 ps auxeww",
                "nice pgrep -a sleep",
                "exec ps e",
              ]
            ) {
              const result = await box.call(session, "bash", { command });
              assert.equal(result.errorCode, "permission_denied", command);
              assert.doesNotMatch(JSON.stringify(result), new RegExp(secret), command);
              assert.match(result.error ?? "", /other processes|runs code the project controls/, command);
            }
          }, { host: autoHost(), sandbox: "off" });
        } finally {
          holder.kill("SIGKILL");
        }
        // Nor a service of this host: without the sandbox's namespace, a connection reaches the host's loopback.
        const served = http.createServer((_request, response) => response.end(secret));
        await new Promise<void>((resolve) => served.listen(0, "127.0.0.1", resolve));
        const port = (served.address() as { port: number }).port;
        try {
          await withSession(async (session) => {
            for (
              const command of [
                `curl -s http://127.0.0.1:${port}/`,
                `/usr/bin/wget -qO- http://127.0.0.1:${port}/`,
                // Under the name Debian installs it by (as the other program lists are matched).
                `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc.openbsd 127.0.0.1 ${port}`,
              ]
            ) {
              const result = await box.call(session, "bash", { command });
              assert.equal(result.errorCode, "permission_denied", command);
              assert.doesNotMatch(JSON.stringify(result), new RegExp(secret), command);
              assert.match(result.error ?? "", /connects|runs code the project controls/, command);
            }
          }, { host: autoHost(), sandbox: "off" });
        } finally {
          served.close();
        }
        // A person who says yes is asked, and the line runs as before.
        const asked: string[] = [];
        const person = callbackHost({
          choose: (request) => request.options[0].value as never,
          confirm: (request) => (asked.push(request.message), true),
        });
        await withSession(async (session) => {
          const out = okOutput<BashResult>(await box.call(session, "bash", { command: `cat ${outside}/id_rsa` }));
          assert.equal(out.stdout, secret);
          assert.equal(out.sandboxed, false);
          assert.equal(asked.length, 1);
        }, { host: person, sandbox: "off" });
      } finally {
        if (saved === undefined) delete process.env.TOOLFENCE_PROBE_API_KEY;
        else process.env.TOOLFENCE_PROBE_API_KEY = saved;
        await rm(outside, { recursive: true, force: true });
      }
    },
  );
});
