// The limits set inside bubblewrap, with no shell in front of it: bubblewrap
// is what the server starts, and the command's own shell joins the cgroup
// (its cgroup.procs files bound inside) and sets the rlimits before the line
// runs. The claims: a line that forks at once has every child in its group,
// in every hierarchy (racing, with a random number of forks per line); the
// rlimits are exact, in bash's POSIX mode too (where ulimit counts -f in
// 512-byte blocks); and a group that refuses the shell stops the command
// before its first instruction, saying why (fail closed).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, mkdtemp, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import type { ResourceLimitsInput } from "../../../policy/config/schema.ts";
import { limitCommand, limitsState, resourceLimits } from "../../../policy/limits.ts";
import { findCgroup } from "../../../policy/_limits.ts";
import { bubblewrapStatus, sandboxArgv } from "../../../policy/sandbox.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, okOutput } from "./_helpers.ts";

const box = cmdBox();
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const SMALL: ResourceLimitsInput = { fileSize: "8MiB", openFiles: 64, cpuSeconds: 30, memory: "512MiB" };
const limits = resourceLimits(SMALL);
const finding = await findCgroup();
// How many hierarchies a command's group spans here (none without a cgroup).
const hierarchies = !("root" in finding)
  ? 0
  : finding.root.version === 2
  ? 1
  : 1 + (finding.root.memory ? 1 : 0) + (finding.root.cpuacct ? 1 : 0);
const GROUP = /\/(toolfence-\d+-\d+)$/;

function options() {
  return {
    autoConfirm: true,
    host: autoHost(),
    sandbox: "auto",
    rules: PolicyRules.fromLayers([{ name: "project", config: { sandbox: { limits: SMALL } } }], "/"),
  } as const;
}

function run(argv: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => stdout += chunk);
    child.stderr.on("data", (chunk) => stderr += chunk);
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

// The groups a /proc/self/cgroup text names that are a command's, one per hierarchy.
function groupsOf(text: string): string[] {
  return text.split("\n").map((line) => GROUP.exec(line)?.[1]).filter((name) => name !== undefined);
}

describe("the limits inside bubblewrap", { timeout: 120_000 }, () => {
  test("bubblewrap starts with no shell in front; the group's files are bound inside", {
    timeout: 30_000,
    skip: !hasBwrap,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-inside-")));
    try {
      const inner = ["bash", "-c", "echo hi"];
      const wrapped = await sandboxArgv(inner, { workdir: dir, writable: [dir], mode: "auto" });
      const limited = await limitCommand(wrapped.argv, limits, {
        privateTmp: true,
        bubblewrap: { command: wrapped.argv.length - inner.length, shellLine: true },
      });
      try {
        assert.equal(limited.argv[0], wrapped.argv[0], "bubblewrap itself is started");
        const end = limited.argv.indexOf("--");
        const binds = limited.argv.slice(0, end).filter((arg) => arg.startsWith("/run/toolfence/"));
        assert.equal(binds.length, hierarchies);
        assert.deepEqual(limited.argv.slice(end + 1, -1), ["bash", "-c"]);
        assert.match(limited.argv.at(-1)!, /ulimit -f .*; echo hi$/);
        const out = await run(limited.argv, dir);
        assert.deepEqual(out, { code: 0, stdout: "hi\n", stderr: "" });
      } finally {
        await limited.release();
        await wrapped.release();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test(
    "racing: a line that forks at once has every child in its own group, in every hierarchy",
    { timeout: 90_000, skip: !hasBwrap || hierarchies === 0 },
    async () => {
      await withSession(async (session) => {
        const seen = new Set<string>();
        for (let round = 0; round < 8; round++) {
          // The first instruction forks; each child reads its own /proc/self/cgroup with builtins (no exec).
          const forks = 1 + Math.floor(Math.random() * 24);
          const child = '(while read -r l; do echo "$BASHPID $l"; done < /proc/self/cgroup)';
          const command = `${Array(forks).fill(`${child} &`).join(" ")} ${child}; wait`;
          const result = await box.call(session, "bash", { command, timeout_s: 60 });
          const output = okOutput<BashResult>(result);
          const byPid = new Map<string, string[]>();
          for (const line of output.stdout.split("\n").filter(Boolean)) {
            const [pid, cgroup] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
            byPid.set(pid, [...byPid.get(pid) ?? [], cgroup]);
          }
          assert.equal(byPid.size, forks + 1, output.stdout);
          const groups = [...byPid.values()].map((lines) => groupsOf(lines.join("\n")));
          for (const names of groups) {
            assert.equal(names.length, hierarchies, `every child in the group in every hierarchy:\n${output.stdout}`);
            assert.deepEqual(new Set(names), new Set([groups[0][0]]), output.stdout);
          }
          assert.ok(!seen.has(groups[0][0]), "each command has a group of its own");
          seen.add(groups[0][0]);
        }
      }, options());
    },
  );

  test("bubblewrap's init joins the group too, so that nothing in the sandbox runs clear of it", {
    timeout: 60_000,
    skip: !hasBwrap || hierarchies === 0,
  }, async () => {
    // Outside the group, pid 1 (same uid, dumpable) was a way out: a command that ptraced it ran a shell there,
    // with 48 processes against a limit of 16 and 150 MiB against 64.
    await withSession(async (session) => {
      const read = (file: string, tag: string) => `while read -r l; do echo "${tag} $l"; done < ${file}`;
      const command = `${read("/proc/1/cgroup", "init")}; ${read("/proc/self/cgroup", "self")}`;
      const lines = okOutput<BashResult>(await box.call(session, "bash", { command })).stdout.split("\n");
      const of = (tag: string) => lines.filter((l) => l.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
      const [init, self] = [of("init").join("\n"), of("self").join("\n")];
      assert.equal(groupsOf(self).length, hierarchies, self);
      assert.deepEqual(groupsOf(init), groupsOf(self), `pid 1:\n${init}\nthe command:\n${self}`);
    }, options());
  });

  test("the rlimits are exact, in bash's POSIX mode too", { timeout: 60_000, skip: !hasBwrap }, async () => {
    const state = await limitsState(limits);
    if (state.mechanism === "none") return;
    // Where a cgroup counts the tree's CPU, it judges the limit, and RLIMIT_CPU is a backstop a second later.
    const cpu = state.gaps.some((gap) => gap.limit === "cpuSeconds") ? /^30\s+32\s+seconds$/ : /^31\s+33\s+seconds$/;
    await withSession(async (session) => {
      for (const env of [{}, { POSIXLY_CORRECT: "1" }]) {
        const result = await box.call(session, "bash", { command: "cat /proc/self/limits", env, timeout_s: 30 });
        const text = okOutput<BashResult>(result).stdout;
        const line = (name: string) => text.split("\n").find((l) => l.startsWith(name))?.slice(name.length).trim();
        assert.match(line("Max file size") ?? "", /^8388608\s+8388608\s+bytes$/, JSON.stringify(env));
        assert.match(line("Max open files") ?? "", /^64\s+64\s+files$/);
        assert.match(line("Max cpu time") ?? "", cpu);
        assert.match(line("Max data size") ?? "", /^536870912\s+536870912\s+bytes$/);
        assert.match(line("Max core file size") ?? "", /^0\s+0\s+bytes$/);
      }
    }, options());
  });

  test("fail closed: a group that refuses the shell stops the line before it runs, and says why", {
    timeout: 30_000,
    skip: !hasBwrap || hierarchies === 0,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-inside-")));
    try {
      const inner = ["bash", "-c", `touch ${dir}/ran`];
      const wrapped = await sandboxArgv(inner, { workdir: dir, writable: [dir], mode: "auto" });
      const limited = await limitCommand(wrapped.argv, limits, {
        privateTmp: true,
        bubblewrap: { command: wrapped.argv.length - inner.length, shellLine: true },
      });
      try {
        // The group's cgroup.procs files read-only: the sandbox's root has no capability to pass that.
        const sources = limited.argv.flatMap((arg, i) =>
          arg.startsWith("/run/toolfence/") ? [limited.argv[i - 1]] : []
        );
        assert.equal(sources.length, hierarchies);
        for (const file of sources) await chmod(file, 0o444);
        const out = await run(limited.argv, dir);
        assert.equal(out.code, 126, out.stderr);
        assert.match(out.stderr, /could not join its cgroup, so it does not run/);
        assert.equal(await stat(join(dir, "ran")).then(() => true, () => false), false, "the line never ran");
      } finally {
        await limited.release();
        await wrapped.release();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
