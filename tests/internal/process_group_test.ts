// spawnGroup's process leads a session and group of its own however it was
// started (through setsid(1) under Deno, else the runtime's detached spawn),
// and a terminate that lands before that session exists still ends it all. A
// sandbox (bubblewrap with its own PID namespace) is started as it is and
// ended through its namespace, wherever in bubblewrap's start the end lands.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type GroupProcess, sandboxMakesSession, spawnGroup } from "../../internal/process_group.ts";
import { eventually, killSleeps, markerSeconds, pidsWithArgs } from "../tools/cmd/_helpers.ts";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

async function stdoutOf(child: GroupProcess): Promise<string> {
  let text = "";
  child.stdout.on("data", (chunk) => text += chunk);
  child.stderr.resume();
  await child.exited;
  await new Promise((resolve) => child.stdout.closed ? resolve(undefined) : child.stdout.once("close", resolve));
  return text;
}

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "../..");

// The output of `deno run` (not `deno eval`, which has every permission) of a probe script under `flags` alone.
async function runProbe(probe: string, flags: string[]): Promise<string> {
  const run = ["run", "--config", path.join(ROOT, "deno.json"), "--no-prompt", ...flags, probe];
  return (await promisify(execFile)(DENO, run, { cwd: ROOT, timeout: 50_000 })).stdout;
}

test("the process leads its own session and process group, under the pid it was given", {
  timeout: 30_000,
}, async () => {
  for (const argv of [["/bin/sh", "-c", "cat /proc/$$/stat"], ["sh", "-c", "cat /proc/$$/stat"]]) {
    const child = await spawnGroup(argv, { cwd: "/", env });
    const [pid, , , , pgrp, session] = (await stdoutOf(child)).split(" ").map(Number);
    assert.deepEqual([pid, pgrp, session], [child.pid, child.pid, child.pid], argv[0]);
    assert.equal(child.exit?.code, 0);
  }
});

test("a terminate right after the start ends the command and what it started, wherever it lands", {
  timeout: 60_000,
}, async () => {
  const marker = markerSeconds();
  try {
    for (let round = 0; round < 8; round++) {
      const child = await spawnGroup(["/bin/sh", "-c", `sleep ${marker} & sleep ${marker}`], { cwd: "/", env });
      child.stdout.resume();
      child.stderr.resume();
      // Every other round waits a little, so that the kill lands before and after the session is made.
      if (round % 2) await new Promise((resolve) => setTimeout(resolve, round));
      await child.terminate(1_000);
      await child.exited;
    }
    const gone = await eventually(async () => (await pidsWithArgs("sleep", marker)).length === 0, 60_000);
    assert.ok(gone, `left running: ${(await pidsWithArgs("sleep", marker)).join(", ")}`);
  } finally {
    await killSleeps(marker);
  }
});

test("a program that is not there is a spawn_failed error, as before", { timeout: 30_000 }, async () => {
  await assert.rejects(spawnGroup(["/nonexistent/toolfence-no-such-program"], { cwd: "/", env }), {
    code: "spawn_failed",
  });
});

test(
  "Deno's --allow-run still judges the program: a list naming setsid(1) but not the program refuses it",
  { timeout: 60_000, skip: DENO_PROCESS_ONLY || (!existsSync("/usr/bin/setsid") && "no /usr/bin/setsid here") },
  async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-setsid-"));
    try {
      // Run permission for setsid alone.
      const probe = path.join(dir, "probe.ts");
      await writeFile(
        probe,
        `import { spawnGroup } from ${JSON.stringify(path.join(ROOT, "internal/process_group.ts"))};
        for (const program of ["/bin/echo", "/usr/bin/setsid"]) {
          try {
            const child = await spawnGroup([program, "--version"], { cwd: "/", env: {} });
            child.stdout.resume();
            child.stderr.resume();
            await child.exited;
            console.log(program, "ran");
          } catch (error) {
            console.log(program, (error as { code?: string }).code);
          }
        }\n`,
      );
      const stdout = await runProbe(probe, ["--allow-read", "--allow-env", "--allow-run=/usr/bin/setsid"]);
      assert.deepEqual(stdout.trim().split("\n"), ["/bin/echo fence_denied", "/usr/bin/setsid ran"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

const BWRAP = ["/usr/bin/bwrap", "/bin/bwrap"].find((file) => existsSync(file));

/**
 * A sandbox that starts two sleeps, with nothing else to end it (no cgroup):
 * its argv, and what of it is left running (the sleeps, and bubblewrap's two
 * processes and the shell, whose arguments hold the script).
 */
function sleepingSandbox() {
  const marker = markerSeconds();
  const script = `sleep ${marker} & sleep ${marker}`;
  const argv = [
    BWRAP!,
    ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
    ...["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--new-session", "--"],
    ...["/bin/sh", "-c", script],
  ];
  const left = async () => [...await pidsWithArgs("sleep", marker), ...await pidsWithArgs(script)];
  return {
    argv,
    left,
    async assertNoneLeft() {
      const gone = await eventually(async () => (await left()).length === 0, 60_000);
      assert.ok(gone, `left running: ${(await left()).join(", ")}`);
    },
    async killLeft() {
      for (const pid of await left()) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    },
  };
}

test("a sandbox ends with everything it started, wherever in bubblewrap's start the end lands", {
  timeout: 120_000,
  skip: !BWRAP ? "no bubblewrap here" : !sandboxMakesSession() && "sandboxes are ended by their process group here",
}, async () => {
  // What ends the command is the end of the namespace's init alone. Killing bubblewrap alone (it is not the
  // leader of a session or a group here) left the sleeps running in most rounds.
  const sandbox = sleepingSandbox();
  try {
    for (let round = 0; round < 24; round++) {
      const child = await spawnGroup(sandbox.argv, { cwd: "/", env, diesWithLeader: true });
      child.stdout.resume();
      child.stderr.resume();
      // From at once to well after the sandbox is set up, so the end lands in every part of the start.
      if (round % 4) await new Promise((resolve) => setTimeout(resolve, (round * 7) % 40));
      await child.terminate(1_000);
      await child.exited;
    }
    await sandbox.assertNoneLeft();
  } finally {
    await sandbox.killLeft();
  }
});

test(
  "where this process may not read /proc, a shell it starts ends the sandbox, as completely",
  { timeout: 120_000, skip: DENO_PROCESS_ONLY || (!BWRAP && "no bubblewrap here") },
  async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-namespace-"));
    const sandbox = sleepingSandbox();
    try {
      // Read access to its own folder only, as under the flags `toolfence flags` prints: /proc is out of reach.
      // Most ends land at once, in bubblewrap's start, where a script that did not kill the namespace's init left
      // it behind (and the probe, waiting on its pipes, never exited) in two runs of three: the script starts
      // a few milliseconds after the stop, by when the init has often set its parent-death signal. The test above
      // catches a missing kill every time; this one shows the script's path ends every sandbox too.
      const probe = path.join(dir, "probe.ts");
      await writeFile(
        probe,
        `import { sandboxMakesSession, spawnGroup } from ${
          JSON.stringify(path.join(ROOT, "internal/process_group.ts"))
        };
        const proc = (await Deno.permissions.query({ name: "read", path: "/proc" })).state;
        const argv = ${JSON.stringify(sandbox.argv)};
        for (let round = 0; round < 120; round++) {
          const child = await spawnGroup(argv, { cwd: "/", env: {}, diesWithLeader: true });
          child.stdout.resume();
          child.stderr.resume();
          if (round % 4 === 3) await new Promise((resolve) => setTimeout(resolve, round % 20));
          await child.terminate(1_000);
          await child.exited;
        }
        console.log(proc, sandboxMakesSession());\n`,
      );
      const stdout = await runProbe(probe, [`--allow-read=${dir}`, "--allow-run", "--allow-env"]);
      assert.equal(stdout.trim(), "prompt true", "/proc unreadable, and sandboxes still ended through their namespace");
      await sandbox.assertNoneLeft();
    } finally {
      await sandbox.killLeft();
      await rm(dir, { recursive: true, force: true });
    }
  },
);
