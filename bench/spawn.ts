/**
 * What the `bash` tool adds to starting a process: the same short command run
 * by a bare `node:child_process` spawn, a bare `Deno.Command`, a bare spawn of
 * the bubblewrap-wrapped argv, and through `toolbox.call("bash")` with the
 * sandbox off and on, in interleaved rounds of one run. The command analysis
 * alone, and a bare spawn into a session and process group of its own (the
 * tool needs one to kill the whole group) both ways, through setsid(1) as the
 * tool starts it under Deno and with `detached` (a fork of this process), are
 * timed too, to show where the tool's overhead goes. Target (issue 30): `bash`
 * under bubblewrap within 1.3x of a bare bubblewrap spawn.
 *
 * Run: deno run -A bench/spawn.ts
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "../policy/session.ts";
import { ToolBox } from "../toolbox.ts";
import { authorizeCommand } from "../policy/shell/authorize_command.ts";
import { bubblewrapStatus, sandboxArgv } from "../policy/sandbox.ts";
import { DEFAULT_RESOURCE_LIMITS } from "../policy/limits.ts";
import { KernelObjectsHolder } from "../policy/_kernel_objects.ts";
import { spawnUnderLimits } from "./_limited_spawn.ts";
import { PolicyState } from "../policy/state.ts";
import { denyAllHost } from "../policy/hosts.ts";
import { cmdTools } from "../tools/cmd/mod.ts";
import { comparePerCall, printRatios } from "./_measure.ts";

const COMMAND = "echo hello";
const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-bench-")));
const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" };

function nodeSpawn(argv: string[], detached = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: dir, env, detached, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk) => out += chunk);
    child.once("error", reject);
    child.once("close", () => resolve(out));
  });
}

async function denoCommand(argv: string[]): Promise<string> {
  const out = await new Deno.Command(argv[0], { args: argv.slice(1), cwd: dir, env, clearEnv: true }).output();
  return new TextDecoder().decode(out.stdout);
}

const box = new ToolBox().register(...cmdTools());
const plain = new Session({ workspace: dir, sandbox: "off", host: denyAllHost() });
const sandboxed = new Session({ workspace: dir, sandbox: "auto", host: denyAllHost() });
// The same in a git checkout, where the sandbox binds the protected paths (.git, its config, hooks and info)
// from descriptors the server holds.
const checkout = await realpath(await mkdtemp(join(tmpdir(), "toolfence-bench-git-")));
await new Promise((resolve, reject) =>
  spawn("git", ["init", "-q", checkout], { stdio: "ignore" }).once("close", resolve).once("error", reject)
);
const inCheckout = new Session({ workspace: checkout, sandbox: "auto", host: denyAllHost() });
const state = new PolicyState();
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const wrapped = (await sandboxArgv(["bash", "-c", COMMAND], { workdir: dir, writable: [dir], mode: "auto" })).argv;
// The same entered into a session's user namespace, as the tool's sandboxes are (the bounds of the kernel objects
// counted per user): its share of the tool's overhead.
const kernelObjects = new KernelObjectsHolder(dir);
const entered =
  (await sandboxArgv(["bash", "-c", COMMAND], { workdir: dir, writable: [dir], mode: "auto", kernelObjects }))
    .argv;

async function viaTool(session: Session): Promise<void> {
  const result = await box.call(session, "bash", { command: COMMAND });
  if ((result.output as { stdout?: string })?.stdout !== "hello\n") throw new Error(JSON.stringify(result));
}

const candidates: [string, () => unknown][] = [
  ["node:child_process spawn", () => nodeSpawn(["bash", "-c", COMMAND])],
  ["Deno.Command", () => denoCommand(["bash", "-c", COMMAND])],
  ["node spawn, own process group", () => nodeSpawn(["bash", "-c", COMMAND], true)],
  ["node spawn through setsid(1)", () => nodeSpawn(["setsid", "bash", "-c", COMMAND])],
  ["command analysis only", () => authorizeCommand({ state, asker: denyAllHost() }, COMMAND)],
  ["bash tool, sandbox off", () => viaTool(plain)],
];
if (hasBwrap) {
  candidates.push(["bwrap + spawn", () => nodeSpawn(wrapped)]);
  candidates.push(["bwrap + spawn, in a session's namespace", () => nodeSpawn(entered)]);
  // The resource limits' share: a cgroup made, joined and removed, and the rlimits set, around the same bwrap.
  candidates.push([
    "bwrap + spawn, under the limits",
    () => spawnUnderLimits(wrapped, DEFAULT_RESOURCE_LIMITS, { privateTmp: true }, { cwd: dir, env }),
  ]);
  candidates.push(["bash tool, bubblewrap", () => viaTool(sandboxed)]);
  candidates.push(["bash tool, bubblewrap, a git checkout", () => viaTool(inCheckout)]);
} else {
  console.log("bubblewrap is unavailable here: the sandboxed rows are left out");
}

const rows = await comparePerCall(candidates, { rounds: 11, iterations: 20 });
const ms = rows.map(([name, micros]) => [name, micros / 1000] as [string, number]);
printRatios(
  `\`${COMMAND}\` from start to output (median ms per run)`,
  ms,
  "ms",
  hasBwrap ? "bwrap + spawn" : "node:child_process spawn",
  { "bash tool, bubblewrap": "≤ 1.3x" },
);
const by = Object.fromEntries(ms);
console.log(
  `  tool overhead, sandbox off: +${(by["bash tool, sandbox off"] - by["node:child_process spawn"]).toFixed(2)} ms, ` +
    `of which a session of its own: +${
      (by["node spawn through setsid(1)"] - by["node:child_process spawn"]).toFixed(2)
    } ms (with detached, a fork: +${
      (by["node spawn, own process group"] - by["node:child_process spawn"]).toFixed(2)
    } ms)`,
);
if (hasBwrap) {
  console.log(
    `  tool overhead, bubblewrap:  +${(by["bash tool, bubblewrap"] - by["bwrap + spawn"]).toFixed(2)} ms ` +
      `(bubblewrap itself: +${(by["bwrap + spawn"] - by["node:child_process spawn"]).toFixed(2)} ms; ` +
      `the limits: +${(by["bwrap + spawn, under the limits"] - by["bwrap + spawn"]).toFixed(2)} ms)`,
  );
}
await kernelObjects.close();
await plain.close();
await sandboxed.close();
await inCheckout.close();
await rm(dir, { recursive: true, force: true });
await rm(checkout, { recursive: true, force: true });
