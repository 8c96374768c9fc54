// Tools' declared needs against the fence: which grants are missing and in
// what order, the flags that grant them, the refusal before a call, hiding in
// list(), and the flags `main.ts flags` derives; then real `deno run`s of the
// diagnostic, fs and system groups under too few flags.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import * as v from "valibot";
import fc from "fast-check";
import { ToolError } from "../../core/errors.ts";
import { Session } from "../../policy/session.ts";
import { tool, type ToolNeeds } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { denoFlagsForNeeds } from "../../policy/fence.ts";
import {
  type Fence,
  type FencePermission,
  grantFlags,
  missingGrants,
  requireGrants,
  resolveNeedTarget,
} from "../../core/fence.ts";
import { denoFlag } from "../../internal/runtime_permissions.ts";
import { printedFlags, runNarrow, without } from "./_narrow_run.ts";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const PERMISSIONS: FencePermission[] = ["run", "read", "write", "sys", "env", "net"];
const places = { workdir: "/w", tempParent: "/t" };

/** A fence granting exactly the listed `permission:target` pairs (`run:*` for every program). */
function grantingFence(granted: Iterable<string>): Fence {
  const set = new Set(granted);
  return {
    query: (permission, target) =>
      set.has(`${permission}:${target ?? "*"}`)
        ? { allowed: true }
        : { allowed: false, flag: denoFlag(permission, target) },
    closedEntirely: (permission) => ![...set].some((g) => g.startsWith(`${permission}:`)),
  };
}

describe("missing grants and their flags", () => {
  test("named in a fixed order: programs, reads, writes, system facts, variables, hosts", { timeout: 60_000 }, () => {
    const needs: ToolNeeds = {
      net: ["example.com"],
      env: ["HOME"],
      sys: ["uid"],
      write: ["workspace", "temp"],
      read: ["workspace"],
      run: ["bash"],
      signal: true,
    };
    const missing = missingGrants(grantingFence([]), needs, places);
    assert.deepEqual(missing.map((m) => m.flag), [
      "--allow-run=bash",
      "--allow-run",
      "--allow-read=/w",
      "--allow-write=/w",
      "--allow-write=/t",
      "--allow-sys=uid",
      "--allow-env=HOME",
      "--allow-net=example.com",
    ]);
    assert.deepEqual(grantFlags(missing), [
      "--allow-run",
      "--allow-read=/w",
      "--allow-write=/w,/t",
      "--allow-sys=uid",
      "--allow-env=HOME",
      "--allow-net=example.com",
    ]);
  });

  test("requireGrants names the first missing flag and lists all in details", { timeout: 60_000 }, () => {
    const fence = grantingFence(["read:/w"]);
    assert.throws(
      () => requireGrants(fence, "bash", { run: ["bash"], read: ["workspace"], write: ["temp"] }, places),
      (e) => {
        assert.ok(e instanceof ToolError);
        assert.equal(e.code, "fence_denied");
        assert.equal(e.kind, "policy");
        assert.match(
          e.message,
          /^bash cannot run: the runtime does not grant permission to run bash; it needs --allow-run=bash/,
        );
        assert.match(e.message, /all it lacks: --allow-run=bash --allow-write=\/t\)$/);
        const details = e.details as { flag: string; flags: string[]; missing: unknown[] };
        assert.equal(details.flag, "--allow-run=bash");
        assert.deepEqual(details.flags, ["--allow-run=bash", "--allow-write=/t"]);
        assert.equal(details.missing.length, 2);
        return true;
      },
    );
    requireGrants(
      grantingFence(["run:bash", "read:/w", "write:/t"]),
      "bash",
      { run: ["bash"], read: ["workspace"] },
      places,
    );
  });

  test("workspace and temp point at the session's folders; deno at the running executable", { timeout: 60_000 }, () => {
    assert.equal(resolveNeedTarget("read", "workspace", places), "/w");
    assert.equal(resolveNeedTarget("write", "temp", places), "/t");
    assert.equal(resolveNeedTarget("read", "/etc/hosts", places), "/etc/hosts");
    assert.equal(resolveNeedTarget("write", "build/out", places), "/w/build/out");
    assert.equal(resolveNeedTarget("write", "../escape", places), "/escape");
    assert.equal(resolveNeedTarget("read", "workspace"), undefined);
    // Under Node there is no running Deno: the name is looked up on PATH.
    assert.equal(resolveNeedTarget("run", "deno", places), DENO);
    assert.equal(resolveNeedTarget("run", "bash", places), "bash");
  });

  test(
    "without a session, the workspace counts as missing only when reads are closed entirely",
    { timeout: 60_000 },
    () => {
      assert.deepEqual(missingGrants(grantingFence(["read:/elsewhere"]), { read: ["workspace"] }), []);
      assert.deepEqual(missingGrants(grantingFence([]), { read: ["workspace"] }).map((m) => m.permission), ["read"]);
    },
  );

  test("generated needs and grants: list() hides exactly what a call refuses, naming the first missing flag", {
    timeout: 60_000,
  }, async () => {
    const workdir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-needs-")));
    try {
      const targets: Record<FencePermission, string[]> = {
        run: ["bash", "rg", "*"],
        read: ["workspace", "temp", "/etc"],
        write: ["workspace", "temp"],
        sys: ["uid", "hostname"],
        env: ["HOME", "PATH"],
        net: ["example.com"],
      };
      const need = fc.record({
        run: fc.subarray(["bash", "rg"]),
        signal: fc.boolean(),
        read: fc.subarray(targets.read),
        write: fc.subarray(targets.write),
        sys: fc.subarray(targets.sys),
        env: fc.subarray(targets.env),
        net: fc.subarray(targets.net),
      });
      const tempParent = tmpdir();
      const all = PERMISSIONS.flatMap((p) =>
        targets[p].map((t) => `${p}:${t === "workspace" ? workdir : t === "temp" ? path.resolve(tempParent) : t}`)
      );
      await fc.assert(
        fc.asyncProperty(need, fc.subarray(all), async (needs, granted) => {
          const fence = grantingFence(granted);
          let ran = 0;
          const probe = tool({
            name: "probe",
            description: "Counts its runs.",
            input: v.object({}),
            needs,
            run: () => ++ran,
          });
          const box = new ToolBox().register(probe);
          const session = new Session({ workspace: workdir, fence });
          try {
            const missing = missingGrants(fence, needs, { workdir, tempParent: path.resolve(tempParent) });
            const listed = box.list({ session }).some((t) => t.name === "probe");
            const result = await box.call(session, "probe", {});
            assert.equal(listed, missing.length === 0);
            if (missing.length === 0) {
              assert.equal(result.status, "success");
              assert.equal(ran, 1);
            } else {
              assert.equal(result.errorCode, "fence_denied");
              assert.equal(ran, 0, "a refused tool ran");
              assert.equal((result.details as { flag: string }).flag, missing[0].flag);
              assert.ok(result.error!.includes(`needs ${missing[0].flag}`), result.error);
              assert.deepEqual((result.details as { flags: string[] }).flags, grantFlags(missing));
            }
          } finally {
            await session.close();
          }
        }),
        { numRuns: 150 },
      );
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
  });

  test("the refusal comes before validation, hooks and approval: a hidden tool is not even asked about", {
    timeout: 60_000,
  }, async () => {
    const workdir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-needs-")));
    try {
      let hooked = 0;
      const box = new ToolBox().register(tool({
        name: "needs_rg",
        description: "Needs ripgrep.",
        input: v.object({ n: v.number() }),
        needsApproval: true,
        needs: { run: ["rg"] },
        run: () => "ran",
      })).beforeToolCall(() => void hooked++);
      const session = new Session({ workspace: workdir, fence: grantingFence([`read:${workdir}`]) });
      const result = await box.call(session, "needs_rg", { n: "not a number" });
      assert.equal(result.errorCode, "fence_denied");
      assert.equal(hooked, 0);
      await session.close();
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
  });

  test(
    "a tool with only coarse permissions is hidden when the fence closes them entirely",
    { timeout: 60_000 },
    async () => {
      const workdir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-needs-")));
      try {
        const box = new ToolBox().register(tool({
          name: "coarse",
          description: "Runs something.",
          input: v.object({}),
          permissions: ["net", "read"],
          run: () => "ran",
        }));
        const closed = new Session({ workspace: workdir, fence: grantingFence([]) });
        assert.deepEqual(box.list({ session: closed }), []);
        const refused = await box.call(closed, "coarse", {});
        assert.equal(refused.errorCode, "fence_denied");
        assert.deepEqual((refused.details as { flags: string[] }).flags, [`--allow-read=${workdir}`, "--allow-net"]);
        await closed.close();
        const open = new Session({ workspace: workdir, fence: grantingFence([`read:${workdir}`, "net:example.com"]) });
        assert.equal(box.list({ session: open }).length, 1);
        await open.close();
      } finally {
        await rm(workdir, { recursive: true, force: true });
      }
    },
  );
});

describe("denoFlagsForNeeds", () => {
  test("the union, workspace first, one flag per permission, never a bare flag but --allow-run for signals", {
    timeout: 60_000,
  }, async () => {
    const workdir = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-needs-")));
    try {
      const needs: ToolNeeds[] = [
        { read: ["temp"], write: ["temp"] },
        { read: ["workspace"], write: ["workspace"], run: ["rg"], env: ["PATH"] },
        { sys: ["cpus"], net: ["example.com:443"], env: ["PATH", "HOME"] },
      ];
      assert.deepEqual(denoFlagsForNeeds(needs, { workspace: workdir, tempParent: "/tmp" }), [
        `--allow-read=${workdir},/tmp`,
        `--allow-write=${workdir},/tmp`,
        "--allow-run=rg",
        "--allow-sys=cpus",
        "--allow-env=PATH,HOME",
        "--allow-net=example.com:443",
      ]);
      assert.deepEqual(
        denoFlagsForNeeds([{ run: ["bash"], signal: true }], { workspace: workdir, tempParent: "/tmp" }),
        [
          `--allow-read=${workdir}`,
          "--allow-run",
        ],
      );
      // Without a temp folder the program must find the system's, through the variables os.tmpdir() reads.
      const flags = denoFlagsForNeeds([{ write: ["temp"] }], { workspace: workdir });
      assert.ok(flags.includes("--allow-env=TMPDIR,TMP,TEMP"), flags.join(" "));
      assert.throws(() => denoFlagsForNeeds([{ env: ["A,B"] }], { workspace: workdir }), /Cannot express/);
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
  });
});

describe("groups under too few deno flags", { skip: DENO_PROCESS_ONLY }, () => {
  let top: string;
  let workdir: string;
  let tempParent: string;

  before(async () => {
    top = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-needs-run-")));
    workdir = path.join(top, "W");
    tempParent = path.join(top, "tmp");
    await mkdir(workdir);
    await mkdir(tempParent);
    await writeFile(path.join(workdir, "x.ts"), "export const x: number = 1;\n");
    await writeFile(path.join(workdir, "s.sh"), "if true; then echo hi; fi\n");
  });

  after(async () => {
    await rm(top, { recursive: true, force: true });
  });

  test("flags --groups diagnostic includes what check_types runs; without it check_types is hidden and names it", {
    timeout: 60_000,
  }, async () => {
    const exact = await printedFlags(workdir, tempParent, ["diagnostic"]);
    assert.ok(exact.includes("--allow-run"), exact.join(" "));
    const report = await runNarrow(without(exact, "--allow-run"), {
      workdir,
      tempParent,
      groups: ["diagnostic"],
      calls: [
        { name: "check_types", args: { path: "x.ts" } },
        { name: "check_syntax", args: { path: "s.sh" } },
      ],
    });
    assert.deepEqual(report.listed, ["check_syntax", "diff_files"]);
    const [types, syntax] = report.results;
    assert.equal(types.errorCode, "fence_denied", JSON.stringify(types));
    assert.equal(types.details?.flag, `--allow-run=${report.execPath}`);
    assert.equal(syntax.status, "success", JSON.stringify(syntax));
    assert.deepEqual(await readdir(tempParent), []);
  });

  test("without the variables typescript reads, check_syntax is hidden and names the first of them", {
    timeout: 60_000,
  }, async () => {
    const exact = await printedFlags(workdir, tempParent, ["diagnostic"]);
    const report = await runNarrow(without(exact, "--allow-env"), {
      workdir,
      tempParent,
      groups: ["diagnostic"],
      calls: [{ name: "check_syntax", args: { path: "x.ts" } }],
    });
    assert.deepEqual(report.listed, ["diff_files"]);
    assert.equal(report.results[0].details?.flag, "--allow-env=TSC_WATCHFILE", JSON.stringify(report.results[0]));
  });

  test("fs with writes to the workspace only: temp_dir is hidden and names the temp folder, the rest works", {
    timeout: 60_000,
  }, async () => {
    const exact = await printedFlags(workdir, tempParent, ["fs"]);
    const report = await runNarrow([...without(exact, "--allow-write"), `--allow-write=${workdir}`], {
      workdir,
      tempParent,
      groups: ["fs"],
      calls: [
        { name: "temp_dir", args: {} },
        { name: "write_file", args: { path: "w.txt", content: "w\n" } },
      ],
    });
    assert.ok(!report.listed.includes("temp_dir"));
    assert.ok(report.listed.includes("write_file"));
    const [temp, write] = report.results;
    assert.equal(temp.details?.flag, `--allow-write=${tempParent}`, JSON.stringify(temp));
    assert.equal(write.status, "success", JSON.stringify(write));
    assert.deepEqual(await readdir(tempParent), []);
  });

  test(
    "system without --allow-sys: system_info is listed and answers without the fenced facts",
    { timeout: 60_000 },
    async () => {
      const exact = await printedFlags(workdir, tempParent, ["system"]);
      assert.ok(exact.includes("--allow-sys=osRelease,cpus"), exact.join(" "));
      const report = await runNarrow(without(exact, "--allow-sys"), {
        workdir,
        tempParent,
        groups: ["system"],
        calls: [{ name: "system_info", args: {} }],
      });
      assert.ok(report.listed.includes("system_info"));
      const [info] = report.results;
      assert.equal(info.status, "success", JSON.stringify(info));
      assert.equal((info.output as { release?: string }).release, undefined);
    },
  );
});
