// spawnGroup's process leads a session and group of its own however it was
// started (through setsid(1) under Deno, else the runtime's detached spawn),
// and a terminate that lands before that session exists still ends it all.

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
import { type GroupProcess, spawnGroup } from "../../internal/process_group.ts";
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
    const gone = await eventually(async () => (await pidsWithArgs("sleep", marker)).length === 0, 5_000);
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
    const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "../..");
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-setsid-"));
    try {
      // `deno run` (not `deno eval`, which has every permission), with run permission for setsid alone.
      const probe = path.join(dir, "probe.ts");
      await writeFile(
        probe,
        `import { spawnGroup } from ${JSON.stringify(path.join(root, "internal/process_group.ts"))};
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
      const { stdout } = await promisify(execFile)(
        DENO,
        [
          "run",
          "--config",
          path.join(root, "deno.json"),
          "--no-prompt",
          "--allow-read",
          "--allow-env",
          "--allow-run=/usr/bin/setsid",
          probe,
        ],
        { cwd: root, timeout: 50_000 },
      );
      assert.deepEqual(stdout.trim().split("\n"), ["/bin/echo fence_denied", "/usr/bin/setsid ran"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
