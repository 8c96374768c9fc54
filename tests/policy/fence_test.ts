import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ToolError } from "../../core/errors.ts";
import { denoFlagsForNeeds, openFence, runtimeFence } from "../../policy/fence.ts";
import { ANY_TARGET, missingGrants, requireFence } from "../../core/fence.ts";
import { exists, type Layout, makeLayout } from "./_fixtures.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const PROBE = fileURLToPath(new URL("./_fence_probe.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../", import.meta.url));
// The probe runs the TypeScript sources under `deno run`; the npm build's Node
// run of this suite has neither.
const skip = DENO_PROCESS_ONLY;

interface Outcome {
  ok: boolean;
  value?: unknown;
  code?: string;
  kind?: string;
  message?: string;
  details?: Record<string, unknown>;
}

let L: Layout;

function probe(flags: string[], ops: unknown[]): Promise<Outcome[]> {
  const input = JSON.stringify({ workdir: L.workdir, tempParent: L.tempParent, ops });
  return new Promise((resolve, reject) => {
    execFile(
      "deno",
      ["run", "--no-prompt", ...flags, PROBE, input],
      { cwd: REPO, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`probe failed: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split("\n").at(-1)!));
      },
    );
  });
}

beforeEach(async () => {
  L = await makeLayout();
  await fsp.symlink(path.join(L.outside, "secret.txt"), path.join(L.workdir, "link-out"));
});
afterEach(() => L.cleanup());

describe("runtime fence under real `deno run` with narrow flags", { skip }, () => {
  test(
    "--allow-read=W: reads inside work, a write names --allow-write, outside stays outside",
    { timeout: 60_000 },
    async () => {
      const [read, write, etc, link, query, require, temp] = await probe([`--allow-read=${L.workdir}`], [
        { op: "read", path: "file.txt" },
        { op: "write", path: "new.txt", action: "create", content: "x" },
        { op: "read", path: "/etc/passwd" },
        { op: "read", path: "link-out" },
        { op: "query", permission: "read", target: "/etc/hostname" },
        { op: "require", permission: "read", target: path.join(L.outside, "secret.txt") },
        { op: "tempWrite", name: "x" },
      ]);
      assert.deepEqual(read, { ok: true, value: path.join(L.workdir, "file.txt") });
      assert.equal(write.code, "fence_denied");
      assert.equal(write.kind, "policy");
      assert.match(write.message!, new RegExp(`--allow-write=${path.join(L.workdir, "new.txt")}`));
      assert.equal(await exists(path.join(L.workdir, "new.txt")), false);
      // The workspace refuses before the fence is consulted, with the workspace message.
      assert.equal(etc.code, "outside_workspace");
      assert.equal(link.code, "outside_workspace");
      assert.deepEqual(query.value, { allowed: false, flag: "--allow-read=/etc/hostname" });
      assert.equal(require.code, "fence_denied");
      assert.match(require.message!, new RegExp(`--allow-read=${path.join(L.outside, "secret.txt")}`));
      assert.equal(temp.code, "fence_denied");
      assert.match(temp.message!, new RegExp(`--allow-write=${L.tempParent}`));
    },
  );

  test("a denied path inside the workspace gives fence_denied naming --allow-read", { timeout: 60_000 }, async () => {
    await fsp.mkdir(path.join(L.workdir, "private"));
    await fsp.writeFile(path.join(L.workdir, "private", "key"), "k");
    const [inside, denied, file] = await probe(
      [`--allow-read=${L.workdir}`, `--deny-read=${path.join(L.workdir, "private")}`],
      [
        { op: "read", path: "sub/a.txt" },
        { op: "read", path: "private/key" },
        { op: "read", path: "private" },
      ],
    );
    assert.equal(inside.ok, true);
    for (const outcome of [denied, file]) {
      assert.equal(outcome.code, "fence_denied", outcome.message);
      assert.match(outcome.message!, new RegExp(`--allow-read=${path.join(L.workdir, "private")}`));
    }
  });

  test("Deno checks a symlink's location; the fence is asked about the real path", { timeout: 60_000 }, async () => {
    // Writing is allowed to W/sub only; W/alias is a link into W/sub, W/sub/out a link to W.
    await fsp.symlink("sub", path.join(L.workdir, "alias"));
    await fsp.symlink("..", path.join(L.workdir, "sub", "up"));
    const [throughAlias, throughUp] = await probe(
      [`--allow-read=${L.workdir}`, `--allow-write=${path.join(L.workdir, "sub")}`],
      [
        { op: "write", path: "alias/made.txt", action: "create", content: "ok" },
        // Deno alone would allow this write: its location W/sub/up/... is under W/sub.
        { op: "write", path: "sub/up/escaped.txt", action: "create", content: "no" },
      ],
    );
    assert.deepEqual(throughAlias, { ok: true, value: path.join(L.workdir, "sub", "made.txt") });
    assert.equal(await fsp.readFile(path.join(L.workdir, "sub", "made.txt"), "utf8"), "ok");
    assert.equal(throughUp.code, "fence_denied");
    assert.match(throughUp.message!, new RegExp(`--allow-write=${path.join(L.workdir, "escaped.txt")}`));
    assert.equal(await exists(path.join(L.workdir, "escaped.txt")), false);
  });

  test("the narrowest flags for read and write are enough, and no more", { timeout: 60_000 }, async () => {
    const flags = denoFlagsForNeeds([{ read: ["workspace", "temp"], write: ["workspace", "temp"] }], {
      workspace: L.workdir,
      tempParent: L.tempParent,
    });
    assert.deepEqual(flags, [
      `--allow-read=${L.workdir},${L.tempParent}`,
      `--allow-write=${L.workdir},${L.tempParent}`,
    ]);
    const [created, overwritten, temp, outside, query, run] = await probe(flags, [
      { op: "write", path: "sub/new.txt", action: "create", content: "new" },
      { op: "write", path: "file.txt", action: "overwrite", content: "changed" },
      { op: "tempWrite", name: "scratch.txt" },
      { op: "write", path: "../outside/x", action: "create", content: "no" },
      { op: "query", permission: "write", target: path.join(L.outside, "x") },
      { op: "closedEntirely", permission: "run" },
    ]);
    assert.equal(created.ok, true, created.message);
    assert.equal(overwritten.ok, true, overwritten.message);
    assert.equal(await fsp.readFile(path.join(L.workdir, "file.txt"), "utf8"), "changed");
    assert.equal(temp.ok, true, temp.message);
    assert.ok(String(temp.value).startsWith(L.tempParent + "/"));
    assert.equal(outside.code, "outside_workspace");
    assert.equal(await exists(path.join(L.outside, "x")), false);
    assert.deepEqual(query.value, { allowed: false, flag: `--allow-write=${path.join(L.outside, "x")}` });
    assert.equal(run.value, true);
  });

  test("closedEntirely: run is closed without a grant for the shell; write only for explicit probes", {
    timeout: 60_000,
  }, async () => {
    const none = await probe([`--allow-read=${L.workdir}`], [
      { op: "closedEntirely", permission: "run" },
      { op: "closedEntirely", permission: "write", probes: [L.workdir] },
      { op: "closedEntirely", permission: "net" },
    ]);
    assert.deepEqual(none.map((o) => o.value), [true, true, false]);
    const rgOnly = await probe([`--allow-read=${L.workdir}`, "--allow-run=rg"], [
      { op: "closedEntirely", permission: "run" },
      { op: "closedEntirely", permission: "run", probes: ["rg"] },
      { op: "query", permission: "run", target: "bash" },
    ]);
    assert.deepEqual(rgOnly.map((o) => o.value), [true, false, { allowed: false, flag: "--allow-run=bash" }]);
    const shell = await probe([`--allow-read=${L.workdir}`, "--allow-run=bash", `--allow-write=${L.workdir}`], [
      { op: "closedEntirely", permission: "run" },
      { op: "closedEntirely", permission: "write", probes: [L.workdir] },
    ]);
    assert.deepEqual(shell.map((o) => o.value), [false, false]);
    const denied = await probe([`--allow-read=${L.workdir}`, "--deny-net", "--deny-run"], [
      { op: "closedEntirely", permission: "net" },
      { op: "closedEntirely", permission: "run" },
    ]);
    assert.deepEqual(denied.map((o) => o.value), [true, true]);
  });

  test("the sandbox probe under a narrow fence: bwrap by its path with --allow-run=bwrap,/bin/sh, else unavailable", {
    timeout: 60_000,
  }, async () => {
    const bwrapWorks = await new Promise<boolean>((resolve) =>
      execFile("bwrap", ["--ro-bind", "/", "/", "true"], (error) => resolve(error === null))
    );
    const [auto, required] = await probe([`--allow-read=${L.workdir}`], [
      { op: "sandbox", mode: "auto" },
      { op: "sandbox", mode: "required" },
    ]);
    const { argv, sandboxed } = auto.value as { argv: string[]; sandboxed: boolean };
    assert.deepEqual({ argv, sandboxed }, { argv: ["true"], sandboxed: false });
    assert.equal(required.code, "sandbox_unavailable");
    assert.match(required.message!, /--allow-run=bwrap/);
    if (!bwrapWorks) return;
    // bubblewrap alone is not enough: the masks of /etc's and /proc's secrets are looked up by a child shell when the
    // server may not look itself, and without one the sandbox is refused rather than made without them.
    const [blind] = await probe([`--allow-read=${L.workdir}`, "--allow-run=bwrap"], [
      { op: "sandbox", mode: "required" },
    ]);
    assert.equal(blind.code, "sandbox_unavailable", JSON.stringify(blind));
    assert.match(blind.message!, /--allow-run=\/bin\/sh/);
    const [allowed] = await probe([`--allow-read=${L.workdir}`, "--allow-run=bwrap,/bin/sh"], [
      { op: "sandbox", mode: "required" },
    ]);
    const value = allowed.value as { argv: string[]; sandboxed: boolean };
    assert.equal(value.sandboxed, true);
    // By its absolute path, never the bare name the runtime would look up through the whole PATH.
    assert.ok(path.isAbsolute(value.argv[0]) && value.argv[0].endsWith("/bwrap"), value.argv[0]);
  });
});

const nodeMajor: number = await new Promise((resolve) =>
  execFile("node", ["--version"], (error, stdout) => resolve(error ? 0 : Number(/v(\d+)/.exec(stdout)?.[1])))
);
const nodeSkip = skip || (nodeMajor < 20 ? "needs Node 20 or later (its permission model)" : false);

describe("runtime fence under Node's permission model", { skip: nodeSkip }, () => {
  let bundleDir: string;
  let bundle: string;

  beforeEach(async () => {
    bundleDir = await fsp.mkdtemp(path.join(L.root, "bundle-"));
    bundle = path.join(bundleDir, "probe.mjs");
    await new Promise<void>((resolve, reject) =>
      execFile(
        "deno",
        ["bundle", "--platform", "node", "-o", bundle, PROBE],
        { cwd: REPO, timeout: 120_000 },
        (error, _stdout, stderr) => error ? reject(new Error(`deno bundle failed: ${stderr}`)) : resolve(),
      )
    );
  });

  function nodeProbe(flags: string[], ops: unknown[]): Promise<Outcome[]> {
    const input = JSON.stringify({ workdir: L.workdir, tempParent: L.tempParent, ops });
    const permission = nodeMajor >= 22 ? "--permission" : "--experimental-permission";
    return new Promise((resolve, reject) => {
      execFile(
        "node",
        [permission, `--allow-fs-read=${bundleDir}`, ...flags, bundle, input],
        { timeout: 60_000 },
        (error, stdout, stderr) => {
          if (error) return reject(new Error(`node probe failed: ${error.message}\n${stderr}`));
          resolve(JSON.parse(stdout.trim().split("\n").at(-1)!));
        },
      );
    });
  }

  test(
    "--allow-fs-read=W: reads work, a write names --allow-fs-write, run is closed",
    { timeout: 60_000 },
    async () => {
      const [read, write, query, run, writeClosed] = await nodeProbe([`--allow-fs-read=${L.workdir}`], [
        { op: "read", path: "file.txt" },
        { op: "write", path: "new.txt", action: "create", content: "x" },
        { op: "query", permission: "read", target: "/etc/hostname" },
        { op: "closedEntirely", permission: "run" },
        { op: "closedEntirely", permission: "write" },
      ]);
      assert.deepEqual(read, { ok: true, value: path.join(L.workdir, "file.txt") });
      assert.equal(write.code, "fence_denied");
      assert.match(write.message!, new RegExp(`--allow-fs-write=${path.join(L.workdir, "new.txt")}`));
      assert.equal(await exists(path.join(L.workdir, "new.txt")), false);
      assert.deepEqual(query.value, { allowed: false, flag: "--allow-fs-read=/etc/hostname" });
      assert.equal(run.value, true);
      assert.equal(writeClosed.value, true);
    },
  );

  test("a tool's needs under Node: the shell and stopping it need --allow-child-process, named first", {
    timeout: 60_000,
  }, async () => {
    const shell = { run: ["bash"], signal: true, read: ["workspace", "temp"], write: ["workspace", "temp"] };
    const [closed, readOnly] = await nodeProbe([`--allow-fs-read=${L.workdir}`], [
      { op: "needs", needs: shell },
      { op: "needs", needs: { read: ["workspace"], env: ["HOME"], sys: ["uid"] } },
    ]);
    assert.equal(closed.code, "fence_denied");
    const details = closed.details as { flag: string; flags: string[] };
    assert.equal(details.flag, "--allow-child-process");
    assert.deepEqual(details.flags, [
      "--allow-child-process",
      `--allow-fs-read=${L.tempParent}`,
      `--allow-fs-write=${L.workdir},${L.tempParent}`,
    ]);
    // Node 20 fences neither variables nor system facts.
    assert.deepEqual(readOnly, { ok: true, value: "granted" });
    const [open] = await nodeProbe([
      `--allow-fs-read=${L.workdir}`,
      `--allow-fs-read=${L.tempParent}`,
      `--allow-fs-write=${L.workdir}`,
      `--allow-fs-write=${L.tempParent}`,
      "--allow-child-process",
    ], [{ op: "needs", needs: shell }]);
    assert.deepEqual(open, { ok: true, value: "granted" });
  });

  test("with write and child-process grants the same operations go through", { timeout: 60_000 }, async () => {
    const [write, run, writeClosed, net] = await nodeProbe(
      [`--allow-fs-read=${L.workdir}`, `--allow-fs-write=${L.workdir}`, "--allow-child-process"],
      [
        { op: "write", path: "new.txt", action: "create", content: "x" },
        { op: "closedEntirely", permission: "run" },
        { op: "closedEntirely", permission: "write" },
        { op: "query", permission: "net", target: "example.com:443" },
      ],
    );
    assert.equal(write.ok, true, write.message);
    assert.equal(await fsp.readFile(path.join(L.workdir, "new.txt"), "utf8"), "x");
    assert.deepEqual([run.value, writeClosed.value], [false, false]);
    // Node 20 does not fence the network.
    assert.deepEqual(net.value, { allowed: true });
  });
});

describe("fence helpers in this process", () => {
  test("requireFence passes an open fence and names the flag of a closed one", { timeout: 60_000 }, () => {
    requireFence(openFence(), "write", "/anywhere");
    const closed = {
      query: () => ({ allowed: false, flag: "--allow-net=example.com:443" }),
      closedEntirely: () => true,
    };
    assert.throws(() => requireFence(closed, "net", "example.com:443"), (error: unknown) => {
      assert.ok(error instanceof ToolError);
      assert.equal(error.code, "fence_denied");
      assert.equal(error.kind, "policy");
      assert.equal(error.status, "error");
      assert.equal(
        error.message,
        "The runtime does not grant network access to example.com:443: it needs --allow-net=example.com:443",
      );
      return true;
    });
  });

  test("under -A the runtime fence is open", { timeout: 60_000 }, () => {
    assert.equal(runtimeFence.query("write", "/").allowed, true);
    assert.equal(runtimeFence.closedEntirely("run"), false);
  });

  test('a need of "*" is the whole permission, for the fence and for the printed flags', { timeout: 60_000 }, () => {
    const needs = { run: [ANY_TARGET], env: [ANY_TARGET], net: [ANY_TARGET], read: ["workspace"] };
    const asked: [string, string | undefined][] = [];
    const closed = {
      query: (permission: string, target?: string) => {
        asked.push([permission, target]);
        return { allowed: permission === "read", flag: `--allow-${permission}${target ? `=${target}` : ""}` };
      },
      closedEntirely: () => false,
    };
    const missing = missingGrants(closed, needs, { workdir: "/w", tempParent: "/t" });
    assert.deepEqual(missing.map((m) => m.flag), ["--allow-run", "--allow-env", "--allow-net"]);
    assert.ok(asked.every(([permission, target]) => permission === "read" ? target === "/w" : target === undefined));
    assert.deepEqual(
      denoFlagsForNeeds([needs, { env: ["PATH"], net: ["example.com"] }], { workspace: "/", tempParent: "/" }),
      ["--allow-read=/", "--allow-run", "--allow-env", "--allow-net"],
    );
  });

  test("denoFlagsForNeeds refuses what a Deno flag cannot say", { timeout: 60_000 }, () => {
    assert.throws(
      () => denoFlagsForNeeds([{ read: ["workspace"] }], { workspace: "/w,x", tempParent: "/t" }),
      /Deno flag/,
    );
  });
});
