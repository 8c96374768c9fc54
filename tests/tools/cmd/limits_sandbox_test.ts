// The limits of a sandboxed command: a shell in front of bubblewrap joins
// the cgroup (through v1's `tasks`, which spares the RCU grace period a write
// to cgroup.procs waits for), sets the rlimits and execs bubblewrap, so that
// everything of the sandbox is born under them. The claims: a line that forks
// at once has every child in its group, in every hierarchy (racing, with a
// random number of forks per line); bubblewrap's init (pid 1) shares the
// command's group and rlimits; the rlimits are exact, in bash's POSIX mode
// too (where ulimit counts -f in 512-byte blocks); and a group the shell
// cannot join stops the command before bubblewrap starts, saying why (fail
// closed). The sandbox's protected mounts are bound from descriptors the
// server holds: the shell opens them again through /proc, so that the spawn
// passes none (under Deno that would fork the server), and what it binds is
// the very file the server opened, whatever took its path since (racing).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rename, rm, rmdir, stat, writeFile } from "node:fs/promises";
import fs from "node:fs";
import process from "node:process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { delay, withSession } from "../../core/_helpers.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import type { ResourceLimitsInput } from "../../../policy/config/schema.ts";
import { limitCommand, limitsState, resourceLimits } from "../../../policy/limits.ts";
import { findCgroup, groupHierarchies, MAX_REOPENED, reopensDescriptors } from "../../../policy/_limits.ts";
import { bubblewrapStatus, sandboxArgv } from "../../../policy/sandbox.ts";
import type { BashResult } from "../../../tools/cmd/bash.ts";
import { cmdBox, okOutput } from "./_helpers.ts";
import { DENO, DENO_PROCESS_ONLY } from "../../_runtime.ts";
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const box = cmdBox();
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
// Whether the shell in front can open the server's descriptors again here (else the spawn passes them).
const reopens = await (async () => {
  const fd = fs.openSync(tmpdir(), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return await reopensDescriptors(fd);
  } finally {
    fs.closeSync(fd);
  }
})();
const SMALL: ResourceLimitsInput = { fileSize: "8MiB", openFiles: 64, cpuSeconds: 30, memory: "512MiB" };
const limits = resourceLimits(SMALL);
const finding = await findCgroup();
// How many hierarchies a command's group spans here (none without a cgroup).
const hierarchies = "root" in finding ? groupHierarchies(finding.root).length : 0;

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

describe("the limits of a sandboxed command", { timeout: 120_000 }, () => {
  test("a shell in front joins the group through v1's tasks files, sets the rlimits and execs bubblewrap", {
    timeout: 30_000,
    skip: !hasBwrap,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-limits-")));
    try {
      const inner = ["bash", "-c", "echo hi"];
      const wrapped = await sandboxArgv(inner, { workdir: dir, writable: [dir], mode: "auto" });
      const limited = await limitCommand(wrapped.argv, limits, { privateTmp: true });
      try {
        assert.deepEqual(limited.argv.slice(0, 2), ["/bin/sh", "-c"]);
        assert.deepEqual(limited.argv.slice(3), ["sh", ...wrapped.argv], "bubblewrap's argv after the shell's");
        const joins = [...limited.argv[2].matchAll(/echo 0 > '([^']+)'/g)].map((m) => m[1]);
        assert.equal(joins.length, hierarchies, limited.argv[2]);
        const file = "root" in finding && finding.root.version === 2 ? "cgroup.procs" : "tasks";
        for (const path of joins) assert.ok(path.endsWith(`/${file}`), path);
        assert.match(limited.argv[2], /ulimit -f .*\nexec "\$@"$/);
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
    "generative: every process of the sandbox (bubblewrap, its init, the command and its children) is in the group",
    { timeout: 90_000, skip: !hasBwrap || hierarchies === 0 || !("root" in finding) },
    async () => {
      if (!("root" in finding)) return;
      const root = finding.root;
      const parents = groupHierarchies(root);
      await withSession(async (session, dir) => {
        for (let round = 0; round < 3; round++) {
          for (const name of ["ready", "go"]) await rm(join(dir, name), { force: true });
          const forks = 1 + Math.floor(Math.random() * 8);
          // No process comes or goes while the server looks: the line signals with a builtin and waits on a FIFO.
          const command = `mkfifo go; ${"(read -r < go) & ".repeat(forks)}: > ready; read -r < go; wait`;
          const call = box.call(session, "bash", { command, timeout_s: 60 });
          let settled = false;
          void call.finally(() => settled = true);
          while (!await stat(join(dir, "ready")).then(() => true, () => false)) {
            if (settled) assert.fail(`the command ended early: ${JSON.stringify(await call)}`);
            await delay(20);
          }
          // Seen from the server: the group's members in each hierarchy, and the tree under the process it started.
          // The group with members: an earlier command's may still be on its way out (its removal does not hold
          // up a result), empty by then.
          const members = await Promise.all(parents.map(async (parent) => {
            // A command's group may sit in its workspace's shared parent group (pids, memory, cpu), one level down.
            const ours = (entry: string) => entry.startsWith(`toolfence-${process.pid}-`);
            const top = (await readdir(parent)).filter(ours);
            const nested = await Promise.all(
              top.map(async (name) =>
                (await readdir(join(parent, name)).catch(() => [] as string[])).filter(ours).map((c) => join(name, c))
              ),
            );
            const names = [...top, ...nested.flat()];
            const sets = await Promise.all(
              names.map(async (name) =>
                new Set(
                  (await readFile(join(parent, name, "cgroup.procs"), "utf8").catch(() => "")).split("\n")
                    .filter(Boolean),
                )
              ),
            );
            const live = sets.filter((set) => set.size > 0);
            assert.equal(live.length, 1, `one group of this server with members under ${parent}: ${names}`);
            return live[0];
          }));
          const parentOf = new Map<string, string>();
          for (const pid of (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry))) {
            const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
            const [state, ppid] = text.slice(text.lastIndexOf(")") + 2).split(" ");
            // An exited process left its group already; it stays in /proc until its parent reaps it.
            if (ppid && state !== "Z") parentOf.set(pid, ppid);
          }
          const started = [...members[0]].filter((pid) => !members[0].has(parentOf.get(pid) ?? ""));
          assert.equal(started.length, 1, `one process the server started: ${started}`);
          const tree = new Set(started);
          for (let grew = true; grew;) {
            grew = false;
            for (const [pid, ppid] of parentOf) {
              if (tree.has(ppid) && !tree.has(pid)) grew = tree.add(pid) !== undefined;
            }
          }
          // bubblewrap, its init, bash and each child at least.
          assert.ok(tree.size >= 3 + forks, `the tree: ${[...tree]}`);
          for (const [i, set] of members.entries()) {
            for (const pid of tree) assert.ok(set.has(pid), `${pid} in the group under ${parents[i]}`);
          }
          // Every reader opens the FIFO on its own, and on a loaded machine one may reach its open only after a
          // writer has come and gone (and then waits for the next): a writer opens it again while the call runs.
          while (!settled) {
            try {
              const fd = fs.openSync(join(dir, "go"), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
              fs.writeSync(fd, "\n".repeat(forks + 1));
              fs.closeSync(fd);
            } catch (error) {
              // No reader has it open at this moment (ENXIO), or the readers left between the open and the write.
              if (!["ENXIO", "ENOENT", "EAGAIN", "EPIPE"].includes((error as NodeJS.ErrnoException).code ?? "")) {
                throw error;
              }
            }
            await delay(20);
          }
          okOutput<BashResult>(await call);
        }
      }, options());
    },
  );

  test("bubblewrap's init shares the command's group and rlimits, so that nothing in the sandbox runs clear of them", {
    timeout: 60_000,
    skip: !hasBwrap || hierarchies === 0,
  }, async () => {
    // Outside the group, pid 1 (same uid, dumpable) was a way out: a command that ptraced it ran a shell there,
    // with 48 processes against a limit of 16 and 150 MiB against 64; and its rlimits were the server's.
    await withSession(async (session) => {
      const read = (file: string, tag: string) => `while read -r l; do echo "${tag} $l"; done < ${file}`;
      const command = [
        read("/proc/1/cgroup", "init"),
        read("/proc/self/cgroup", "self"),
        read("/proc/1/limits", "initlimit"),
        read("/proc/self/limits", "selflimit"),
      ].join("; ");
      const lines = okOutput<BashResult>(await box.call(session, "bash", { command })).stdout.split("\n");
      const of = (tag: string) => lines.filter((l) => l.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
      // The cgroup namespace bubblewrap makes is rooted at the command's group (it was born in it).
      const [init, self] = [of("init").join("\n"), of("self").join("\n")];
      assert.equal(init, self, `pid 1:\n${init}\nthe command:\n${self}`);
      const limitLines = (tag: string) => of(tag).filter((l) => /^Max (open files|file size|processes)/.test(l));
      assert.equal(limitLines("initlimit").length, 3, of("initlimit").join("\n"));
      assert.deepEqual(limitLines("initlimit"), limitLines("selflimit"));
      assert.ok(limitLines("initlimit").some((l) => /^Max open files\s+64\s+64\s/.test(l)), of("initlimit").join("\n"));
    }, options());
  });

  test("the rlimits are exact, in bash's POSIX mode too", { timeout: 60_000, skip: !hasBwrap }, async () => {
    const state = await limitsState(limits);
    if (state.mechanism === "none") return;
    // Where a cgroup counts the tree's CPU, it judges the limit, and RLIMIT_CPU is a backstop a second later.
    const cpu = state.gaps.some((gap) => gap.limit === "cpuSeconds") ? /^30\s+32\s+seconds$/ : /^31\s+33\s+seconds$/;
    const memoryCounted = !state.gaps.some((gap) => gap.limit === "memory");
    const own = (await readFile("/proc/self/limits", "utf8")).split("\n").find((l) => l.startsWith("Max data size"));
    const ownData = new RegExp(`^${own?.slice("Max data size".length).trim().replace(/\s+/g, "\\s+")}$`);
    await withSession(async (session) => {
      for (const env of [{}, { POSIXLY_CORRECT: "1" }]) {
        const result = await box.call(session, "bash", { command: "cat /proc/self/limits", env, timeout_s: 30 });
        const text = okOutput<BashResult>(result).stdout;
        const line = (name: string) => text.split("\n").find((l) => l.startsWith(name))?.slice(name.length).trim();
        // Within a block past the limit (the shell's ulimit counts in blocks of 512 or 1024 bytes), so that a file
        // grown past the limit is seen by its size (see limitCommand).
        const [fsize, fsizeHard] = (line("Max file size") ?? "").split(/\s+/);
        assert.equal(fsize, fsizeHard, JSON.stringify(env));
        assert.ok(Number(fsize) > 8 * 1024 * 1024 && Number(fsize) <= 8 * 1024 * 1024 + 1024, `${fsize} ${env}`);
        assert.match(line("Max open files") ?? "", /^64\s+64\s+files$/);
        assert.match(line("Max cpu time") ?? "", cpu);
        // Where a cgroup counts memory it alone judges it, and the command keeps the server's RLIMIT_DATA.
        assert.match(line("Max data size") ?? "", memoryCounted ? ownData : /^536870912\s+536870912\s+bytes$/);
        assert.match(line("Max core file size") ?? "", /^0\s+0\s+bytes$/);
      }
    }, options());
  });

  test(
    "racing: a protected folder bound from the server's descriptor is the folder it opened, whatever took its path",
    {
      timeout: 60_000,
      skip: !hasBwrap || !reopens,
    },
    async () => {
      const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-limits-")));
      try {
        for (let round = 0; round < 12; round++) {
          const kept = join(dir, `kept${round}`);
          const shown = join(dir, "shown");
          await rm(shown, { recursive: true, force: true });
          await mkdir(join(kept), { recursive: true });
          await writeFile(join(kept, "config"), `original ${round}\n`);
          await rename(kept, shown);
          const fd = fs.openSync(shown, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_DIRECTORY);
          try {
            // What took the path meanwhile: a decoy folder, now or just as the command starts.
            const swap = async () => {
              await rename(shown, join(dir, `moved${round}`));
              // bubblewrap, starting meanwhile, may have made the mount point itself (an empty folder) at the path.
              await mkdir(shown, { recursive: true });
              await writeFile(join(shown, "config"), "decoy\n");
            };
            const inner = ["bash", "-c", `cat ${shown}/config; echo x > ${shown}/config || echo refused`];
            const wrapped = await sandboxArgv(inner, { workdir: dir, writable: [dir], mode: "auto" });
            // The argv binds descriptor 3 read-only at the folder's path, as the protected mounts do.
            const at = wrapped.argv.indexOf("--");
            const argv = [...wrapped.argv.slice(0, at), "--ro-bind-fd", "3", shown, ...wrapped.argv.slice(at)];
            const limited = await limitCommand(argv, limits, { privateTmp: true, descriptors: [fd] });
            try {
              assert.deepEqual(limited.descriptors, [], "the shell opens it again; the spawn passes nothing");
              assert.ok(limited.argv[2].includes(`command exec 3</proc/${process.pid}/fd/${fd}`), limited.argv[2]);
              const racing = round % 3 === 0 ? Promise.resolve() : swap();
              if (round % 3 === 0) await swap();
              const out = await run(limited.argv, dir);
              await racing;
              // A rename of a mount point from outside its namespace detaches the mount (Linux since 3.18): a swap
              // after bubblewrap made its mounts leaves the command the decoy folder the swap made, writable as the
              // workspace is, as a CI run under load met once. Never the decoy bound read-only, which a bind by path
              // would give.
              const detached = round % 3 !== 0 && out.code === 0 && out.stdout === "decoy\n";
              if (round % 3 !== 0 && out.code !== 0) {
                // bubblewrap binds a descriptor by the path it leads to, then checks the mount is that very file: a
                // swap between the two makes it refuse to start (closed), as a CI run under load met once.
                assert.match(out.stderr, /^bwrap: /, `round ${round}: ${out.stderr}`);
                assert.equal(out.stdout, "", `round ${round}: nothing ran`);
              } else if (!detached) {
                assert.equal(out.code, 0, out.stderr);
                assert.equal(out.stdout, `original ${round}\nrefused\n`, `round ${round}: ${out.stderr}`);
              }
              // Either way the folder opened was never written through the bound one.
              assert.equal(await readFile(join(dir, `moved${round}`, "config"), "utf8"), `original ${round}\n`);
              assert.equal(await readFile(join(shown, "config"), "utf8"), detached ? "x\n" : "decoy\n");
            } finally {
              await limited.release();
              await wrapped.release();
            }
          } finally {
            fs.closeSync(fd);
          }
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  test("descriptors past what the shell opens again are passed by the spawn; one it cannot open stops the command", {
    timeout: 30_000,
    skip: !hasBwrap || !reopens,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-limits-")));
    const fds = Array.from({ length: MAX_REOPENED + 1 }, () => fs.openSync(dir, fs.constants.O_RDONLY));
    try {
      const many = await limitCommand(["true"], limits, { privateTmp: false, descriptors: fds });
      try {
        assert.deepEqual(many.descriptors, fds);
        assert.ok(!many.argv[2].includes("/fd/"), many.argv[2]);
      } finally {
        await many.release();
      }
      // A descriptor the server does not hold (no number is reused this high): the shell stops, says why, and
      // the command never runs.
      const closed = 999_999;
      const limited = await limitCommand(["touch", join(dir, "ran")], limits, {
        privateTmp: false,
        descriptors: [closed],
      });
      try {
        const out = await run(limited.argv, dir);
        assert.equal(out.code, 126, out.stderr);
        assert.match(out.stderr, /protected paths could not be opened again, so the command does not run/);
        assert.equal(await stat(join(dir, "ran")).then(() => true, () => false), false, "the command never ran");
      } finally {
        await limited.release();
      }
    } finally {
      for (const fd of fds) fs.closeSync(fd);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("under narrow flags too, the shell opens the descriptors again (the probe asks the shell, not the runtime)", {
    timeout: 60_000,
    skip: DENO_PROCESS_ONLY || !reopens,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-limits-")));
    try {
      // A server's flags: its workspace and nothing of /tmp or the environment to open a probe folder with.
      const limitsModule = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), "../../../policy/limits.ts"));
      const script = join(dir, "probe.ts");
      await writeFile(
        script,
        `import fs from "node:fs";\n` +
          `import { DEFAULT_RESOURCE_LIMITS, limitCommand } from ${JSON.stringify(limitsModule.href)};\n` +
          `const fd = fs.openSync(${JSON.stringify(dir)}, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);\n` +
          `const limited = await limitCommand(["true"], DEFAULT_RESOURCE_LIMITS, { privateTmp: false, ` +
          `descriptors: [fd] });\n` +
          `console.log(JSON.stringify({ passed: limited.descriptors, reopened: limited.argv.join(" ")` +
          `.includes("command exec 3</proc/") }));\n` +
          `await limited.release();\n`,
      );
      const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
      const out = execFileSync(
        DENO,
        [
          "run",
          "--no-prompt",
          "--config",
          join(root, "deno.json"),
          `--allow-read=${root},${dir}`,
          "--allow-run=/bin/sh",
          script,
        ],
        { encoding: "utf8", cwd: dir, timeout: 50_000 },
      );
      assert.deepEqual(JSON.parse(out.trim().split("\n").at(-1)!), { passed: [], reopened: true }, out);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("fail closed: a group the shell cannot join stops the command before bubblewrap starts, and says why", {
    timeout: 30_000,
    skip: !hasBwrap || hierarchies === 0,
  }, async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-limits-")));
    try {
      const inner = ["bash", "-c", `touch ${dir}/ran`];
      const wrapped = await sandboxArgv(inner, { workdir: dir, writable: [dir], mode: "auto" });
      const limited = await limitCommand(wrapped.argv, limits, { privateTmp: true });
      try {
        // The group's last folder removed before the start (a server as root passes any mode bits).
        const joins = [...limited.argv[2].matchAll(/echo 0 > '([^']+)'/g)].map((m) => m[1]);
        assert.equal(joins.length, hierarchies);
        await rmdir(dirname(joins.at(-1)!));
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
