// The built package under Node's permission model, in real Node processes:
// `node --experimental-permission` (Node 20; `--permission` from 22) with
// `--allow-fs-read=W --allow-fs-write=W` and W the workspace. A tool call that
// reaches outside W must come back as `fence_denied` naming the Node flag,
// before anything is touched, and the shell tools must be hidden until
// `--allow-child-process` is given. The one place outside W the workspace
// lets a tool go is the session temp dir, so that is where the fence is met.
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { nodePermissionFlag, packageRoot, skipUnlessBuilt } from "./_built_package.ts";

interface CallOutcome {
  status: string;
  output: unknown;
  error?: string;
  errorCode?: string;
}

interface Report {
  /** Every tool of the built-in groups, with its permissions. */
  registered: { name: string; permissions: string[] }[];
  /** What `toolbox.list()` shows under the fence. */
  listed: string[];
  results: CallOutcome[];
}

// Runs inside the fenced Node process: everything it needs is the built package.
const script = (moduleUrl: string) => `
import { BUILTIN_GROUPS, Session, ToolBox, toolGroup, Workspace } from ${JSON.stringify(moduleUrl)};
const { workdir, tempParent, calls } = JSON.parse(process.argv.at(-1));
const box = new ToolBox().withDefaults();
const registered = Object.keys(BUILTIN_GROUPS).flatMap((g) => toolGroup(BUILTIN_GROUPS, g))
  .map((t) => ({ name: t.name, permissions: [...(t.permissions ?? [])] }));
const session = new Session({ workspace: new Workspace(workdir, { tempParent }) });
const results = [];
for (const call of calls) {
  const r = await box.call(session, call.name, call.args);
  results.push({ status: r.status, output: r.output, error: r.error, errorCode: r.errorCode });
}
await session.close();
console.log(JSON.stringify({ registered, listed: box.list().map((t) => t.name), results }));
`;

let top: string;
let fenced: string;
let tempParent: string;
let probe: string;

beforeEach(async () => {
  top = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-node-fence-")));
  fenced = path.join(top, "W");
  tempParent = path.join(top, "tmp");
  await fsp.mkdir(fenced);
  await fsp.mkdir(tempParent);
  await fsp.writeFile(path.join(fenced, "inside.txt"), "inside text\n");
  probe = path.join(top, "probe.mjs");
  await fsp.writeFile(probe, script(pathToFileURL(path.join(packageRoot(), "mod.js")).href));
});

afterEach(async () => {
  await fsp.rm(top, { recursive: true, force: true });
});

function runFenced(
  extraFlags: string[],
  calls: { name: string; args: Record<string, unknown> }[],
  temp = tempParent,
): Promise<Report> {
  const flags = [
    nodePermissionFlag(),
    // The process must read the package it runs and the probe script; nothing else outside W.
    `--allow-fs-read=${packageRoot()}`,
    `--allow-fs-read=${probe}`,
    `--allow-fs-read=${fenced}`,
    `--allow-fs-write=${fenced}`,
    ...extraFlags,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...flags, probe, JSON.stringify({ workdir: fenced, tempParent: temp, calls })],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`fenced node failed: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)!));
      },
    );
  });
}

describe("the npm build under Node's permission model", { skip: skipUnlessBuilt }, () => {
  test("--allow-fs-read=W --allow-fs-write=W: inside W works, outside W is fence_denied naming the Node flag", {
    timeout: 60_000,
  }, async () => {
    const report = await runFenced([], [
      { name: "read_file", args: { path: "inside.txt" } },
      { name: "write_file", args: { path: "new.txt", content: "written\n" } },
      { name: "temp_dir", args: {} },
    ]);
    const [readInside, writeInside, temp] = report.results;
    assert.equal(readInside.status, "success", readInside.error);
    assert.match(JSON.stringify(readInside.output), /inside text/);
    assert.equal(writeInside.status, "success", writeInside.error);
    assert.equal(await fsp.readFile(path.join(fenced, "new.txt"), "utf8"), "written\n");

    assert.equal(temp.errorCode, "fence_denied", JSON.stringify(temp));
    assert.ok(temp.error?.includes(`--allow-fs-write=${tempParent}`), temp.error);
    assert.deepEqual(await fsp.readdir(tempParent), [], "the denied temp dir was created anyway");
  });

  test("without --allow-child-process the tools that run programs are hidden; with it they are listed", {
    timeout: 60_000,
  }, async () => {
    const closed = await runFenced([], []);
    const runTools = closed.registered.filter((t) => t.permissions.includes("run")).map((t) => t.name);
    assert.ok(runTools.includes("bash"), `bash is not among the built-in tools: ${JSON.stringify(closed.registered)}`);
    assert.deepEqual(closed.listed.filter((name) => runTools.includes(name)), []);
    assert.ok(closed.listed.includes("read_file"), closed.listed.join(", "));

    // The shell writes its output to the session temp dir, so here that lies inside W.
    const inside = path.join(fenced, ".tmp");
    await fsp.mkdir(inside);
    const open = await runFenced(["--allow-child-process"], [{ name: "bash", args: { command: "echo hi" } }], inside);
    assert.ok(open.listed.includes("bash"), open.listed.join(", "));
    const [ran] = open.results;
    assert.equal(ran.status, "success", ran.error);
    assert.match(JSON.stringify(ran.output), /hi\\n/);
  });
});
