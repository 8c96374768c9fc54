/**
 * What the `bash` tool's workspace comparison (internal/workspace_changes.ts)
 * costs on a workspace of 10,000 files in 100 folders, against a bare spawn of
 * the bubblewrap-wrapped `true` and a typical command through the tool: `true`
 * and `ls` under bubblewrap (readers' lines: the workspace is read-only to them
 * and not compared), `touch` under bubblewrap (compared), and `true` and `ls`
 * with the sandbox off (compared), in interleaved rounds
 * of one run. The comparison is timed alone, nothing changed and one file
 * changed: as a command under bubblewrap gets it (the session's watch of the
 * workspace's folders names where to look) and as a command with the sandbox
 * off gets it (a stat scan of every entry at each end); and one stat scan
 * alone. Target (issue 30): the comparison at most 0.1x of a bare bubblewrap
 * spawn when nothing changed.
 *
 * Run: deno run -A bench/workspace_changes.ts
 *
 * @module
 */

import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { tool } from "../core/tool.ts";
import { Session } from "../policy/session.ts";
import { ToolBox } from "../toolbox.ts";
import { autoHost } from "../policy/hosts.ts";
import { bubblewrapStatus, sandboxArgv } from "../policy/sandbox.ts";
import { cmdTools } from "../tools/cmd/mod.ts";
import { scanWorkspace, watchWorkspace } from "../internal/workspace_changes.ts";
import { RACY_MS } from "../core/settled_stat.ts";
import { comparePerCall, printRatios } from "./_measure.ts";
import { sized } from "./_report.ts";

const FOLDERS = sized(100, 2);
const FILES = sized(100, 10);
const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-bench-ws-")));
for (let d = 0; d < FOLDERS; d++) {
  const folder = join(dir, "src", `d${String(d).padStart(3, "0")}`);
  await mkdir(folder, { recursive: true });
  for (let f = 0; f < FILES; f++) {
    await writeFile(join(folder, `f${String(f).padStart(3, "0")}.ts`), `export const v${f} = ${d * FILES + f};\n`);
  }
}

// A file changed less than RACY_MS ago is hashed by each comparison (its stat key may not name its content yet): a
// session's workspace is older than that, and so is this one when the rounds start.
await new Promise((settle) => setTimeout(settle, RACY_MS));

let counter = 0;
// The comparison a command's call makes: with `sandboxed`, the one a command under bubblewrap gets (the session's
// watch of the folders tells where to look); without, the one a command with the sandbox off gets (a whole scan).
const compare = (change: boolean, sandboxed: boolean) =>
  tool({
    name: `compare${change ? "_change" : ""}${sandboxed ? "_sandboxed" : ""}`,
    description: "the comparison alone",
    input: v.object({}),
    async run(_args, ctx) {
      const watch = await watchWorkspace(ctx, { sandboxed });
      if (change) await writeFile(join(dir, "src", "d000", "f000.ts"), `export const v0 = ${++counter};\n`);
      const changes = await watch.finish(ctx);
      if (change && changes.length !== 1) throw new Error(`expected one change, got ${JSON.stringify(changes)}`);
      return changes.length;
    },
  });

const box = new ToolBox().register(
  ...cmdTools(),
  ...[false, true].flatMap((sandboxed) => [compare(false, sandboxed), compare(true, sandboxed)]),
);
const sandboxed = new Session({ workspace: dir, sandbox: "auto", host: autoHost(), autoConfirm: true });
const plain = new Session({ workspace: dir, sandbox: "off", host: autoHost(), autoConfirm: true });
const hasBwrap = (await bubblewrapStatus()).path !== undefined;

async function call(session: Session, name: string, args: Record<string, unknown> = {}): Promise<void> {
  const result = await box.call(session, name, args);
  if (result.status !== "success") throw new Error(JSON.stringify(result));
}

// The peer: a bare spawn of the bubblewrap-wrapped `true`, what the issue measures the comparison against.
const wrapped = hasBwrap
  ? (await sandboxArgv(["true"], { workdir: dir, writable: [dir], mode: "auto" })).argv
  : ["true"];
const bareSpawn = () => new Deno.Command(wrapped[0], { args: wrapped.slice(1), cwd: dir }).output();

const candidates: [string, () => unknown][] = [
  [hasBwrap ? "bare bubblewrap spawn of `true`" : "bare spawn of `true`", bareSpawn],
  ["bash `true`, sandbox off", () => call(plain, "bash", { command: "true" })],
  ["bash `ls`, sandbox off", () => call(plain, "bash", { command: "ls" })],
  ["comparison alone, nothing changed", () => call(sandboxed, "compare_sandboxed")],
  ["comparison alone, one file changed", () => call(sandboxed, "compare_change_sandboxed")],
  ["comparison alone, sandbox off (a scan), nothing changed", () => call(plain, "compare")],
  ["comparison alone, sandbox off (a scan), one file changed", () => call(plain, "compare_change")],
  ["one stat scan alone", () => scanWorkspace(dir)],
];
if (hasBwrap) {
  // `true` and `ls` are readers' lines: the workspace is read-only to them, and nothing is compared. A line that
  // may write (`touch`, allowed by the session's automatic yes) is compared as with the sandbox off.
  candidates.unshift([
    "bash `touch stamp` (writes), bubblewrap",
    () => call(sandboxed, "bash", { command: "touch stamp" }),
  ]);
  candidates.unshift(["bash `ls`, bubblewrap (a reader)", () => call(sandboxed, "bash", { command: "ls" })]);
  candidates.unshift(["bash `true`, bubblewrap (a reader)", () => call(sandboxed, "bash", { command: "true" })]);
}

const rows = await comparePerCall(candidates, { rounds: 7, iterations: 5 });
const ms = rows.map(([name, micros]) => [name, micros / 1000] as [string, number]);
printRatios(
  `workspace comparison on ${FOLDERS * FILES} files (median ms per call, bash rows include it)`,
  ms,
  "ms",
  hasBwrap ? "bare bubblewrap spawn of `true`" : "bare spawn of `true`",
  { "comparison alone, nothing changed": "≤ 0.1x" },
);
await sandboxed.close();
await plain.close();
await rm(dir, { recursive: true, force: true });
