/**
 * Where the resource limits' share of a sandboxed spawn goes (issue 26: "no
 * slower than before the limits"): the same bubblewrap-wrapped `echo hello`
 * spawned bare (the peer), behind one `/bin/sh` that only execs it (what the
 * limits' shell in front costs alone), with the rlimits only, under the full
 * limits as the process door starts it (a shell in front of bubblewrap moves
 * itself into the cgroup through v1's `tasks`, sets the rlimits, execs
 * bubblewrap), the same joining through `cgroup.procs` (the way before
 * 2026-12-03, which waits for an RCU grace period); and the cgroup made and
 * removed with no spawn. Interleaved rounds of one run.
 *
 * Run: deno run -A bench/limits.ts
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bubblewrapStatus, sandboxArgv } from "../policy/sandbox.ts";
import { DEFAULT_RESOURCE_LIMITS, limitCommand, type LimitCommandOptions, limitsState } from "../policy/limits.ts";
import { spawnUnderLimits } from "./_limited_spawn.ts";
import { comparePerCall, printRatios } from "./_measure.ts";

const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-bench-limits-")));
const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" };

function nodeSpawn(argv: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => out += chunk);
    child.once("error", reject);
    child.once("close", () => out === "hello\n" ? resolve(out) : reject(new Error(`${argv.at(-1)}: ${out}`)));
  });
}

const wrapped = (await sandboxArgv(["bash", "-c", "echo hello"], { workdir: dir, writable: [dir], mode: "auto" })).argv;
console.log(`limits here: ${(await limitsState(DEFAULT_RESOURCE_LIMITS)).mechanism}`);
if ((await bubblewrapStatus()).path === undefined) console.log("bubblewrap is unavailable: the argv runs unsandboxed");

const underLimits = (options: LimitCommandOptions, rewrite?: (argv: string[]) => string[]) => async () => {
  const out = await spawnUnderLimits(wrapped, DEFAULT_RESOURCE_LIMITS, options, { cwd: dir, env }, rewrite);
  if (out !== "hello\n") throw new Error(`under the limits: ${out}`);
};
const rows = await comparePerCall([
  ["bwrap + spawn", () => nodeSpawn(wrapped)],
  ["bwrap + spawn, behind sh -c 'exec \"$@\"'", () => nodeSpawn(["/bin/sh", "-c", 'exec "$@"', "sh", ...wrapped])],
  ["bwrap + spawn, rlimits only (no cgroup)", underLimits({ privateTmp: true, cgroup: false })],
  ["bwrap + spawn, under the limits", underLimits({ privateTmp: true })],
  [
    "bwrap + spawn, limits, joined by cgroup.procs (before)",
    underLimits({ privateTmp: true }, (argv) => argv.map((arg) => arg.replaceAll("/tasks'", "/cgroup.procs'"))),
  ],
  ["the cgroup made and removed, no spawn", async () => {
    const limited = await limitCommand(wrapped, DEFAULT_RESOURCE_LIMITS, { privateTmp: true });
    await limited.release();
  }],
], { rounds: Number(Deno.env.get("BENCH_ROUNDS") ?? 9), iterations: 8 });
printRatios(
  "`echo hello` under bubblewrap, with and without the limits (median ms per run)",
  rows.map(([name, micros]) => [name, micros / 1000]),
  "ms",
  "bwrap + spawn",
  { "bwrap + spawn, under the limits": "≤ 1.0x" },
);
await rm(dir, { recursive: true, force: true });
