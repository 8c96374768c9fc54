// The command tools under real `deno run` with too few and exactly enough
// flags: nothing hangs (every run is bounded), a tool that cannot run is not
// listed, and a call of it anyway is refused before anything happens, naming
// the first missing flag and listing every one.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { printedFlags, type ProbeReport, runNarrow, without } from "../../policy/_narrow_run.ts";
import { DENO_PROCESS_ONLY } from "../../_runtime.ts";

const CMD_TOOLS = ["bash", "bash_background", "bash_read", "bash_wait", "bash_list", "bash_stop"];

let top: string;
let workdir: string;
let tempParent: string;
let exact: string[];

describe("command tools in a deno process under narrow flags", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    top = await realpath(await mkdtemp(path.join(tmpdir(), "toolfence-narrow-")));
    workdir = path.join(top, "W");
    tempParent = path.join(top, "tmp");
    await mkdir(workdir);
    await mkdir(tempParent);
    await writeFile(path.join(workdir, "a.txt"), "hello\n");
    exact = await printedFlags(workdir, tempParent, ["cmd"]);
  });

  after(async () => {
    await rm(top, { recursive: true, force: true });
  });

  function run(flags: string[], calls: { name: string; args: Record<string, unknown> }[]): Promise<ProbeReport> {
    return runNarrow(flags, { workdir, tempParent, groups: ["cmd"], calls });
  }

  describe("the command tools under narrow deno flags", () => {
    test("exactly the printed flags: every command tool listed, bash runs (sandboxed when bwrap works)", {
      timeout: 60_000,
    }, async () => {
      const report = await run(exact, [{ name: "bash", args: { command: "echo narrow" } }]);
      assert.deepEqual(report.listed, CMD_TOOLS);
      const [ran] = report.results;
      assert.equal(ran.status, "success", JSON.stringify(ran));
      const output = ran.output as { stdout: string; sandboxed: boolean };
      assert.equal(output.stdout, "narrow\n");
      assert.equal(output.sandboxed, (await bubblewrapStatus()).path !== undefined);
    });

    test("a broad --allow-read without --allow-sys=uid: the call settles (no access(X_OK) escaping its promise)", {
      timeout: 60_000,
    }, async () => {
      const flags = ["--allow-read", `--allow-write=${workdir},${tempParent}`, "--allow-run", "--allow-env"];
      const report = await run(flags, [{ name: "bash", args: { command: "echo settled" } }]);
      const [ran] = report.results;
      assert.equal(ran.status, "success", JSON.stringify(ran));
      assert.equal((ran.output as { stdout: string }).stdout, "settled\n");
    });

    test("at its timeout a command is stopped (stopping a process group needs the whole --allow-run)", {
      timeout: 60_000,
    }, async () => {
      const report = await run(exact, [{ name: "bash", args: { command: "tail -f a.txt", timeout_s: 1 } }]);
      const [ran] = report.results;
      assert.ok(ran.ms < 15_000, `tail -f ran ${ran.ms} ms past a 1 s timeout`);
      assert.match(JSON.stringify(ran), /timed_out|timeout/, JSON.stringify(ran));
    });

    test(
      "without --allow-run: no command tool is listed, and bash names --allow-run=bash first",
      { timeout: 60_000 },
      async () => {
        const flags = without(exact, "--allow-run");
        const report = await run(flags, [
          { name: "bash", args: { command: "echo never" } },
          { name: "bash_list", args: {} },
        ]);
        assert.deepEqual(report.listed, [], "bash_read, bash_wait and bash_list must go with bash");
        const [bash, list] = report.results;
        assert.equal(bash.errorCode, "fence_denied", JSON.stringify(bash));
        assert.match(bash.error!, /needs --allow-run=bash\b/);
        assert.equal(bash.details?.flag, "--allow-run=bash");
        assert.deepEqual(bash.details?.flags, ["--allow-run"]);
        assert.equal(list.errorCode, "fence_denied", JSON.stringify(list));
        assert.deepEqual(await readdir(tempParent), [], "a refused call made the session temp dir");
      },
    );

    test("without --allow-run nor writes: --allow-run=bash is named first, and every missing flag at once", {
      timeout: 60_000,
    }, async () => {
      const flags = [
        "--allow-read",
        ...without(without(without(exact, "--allow-run"), "--allow-write"), "--allow-read"),
      ];
      const report = await run(flags, [{ name: "bash", args: { command: "echo never" } }]);
      const [bash] = report.results;
      assert.equal(bash.errorCode, "fence_denied", JSON.stringify(bash));
      assert.equal(bash.details?.flag, "--allow-run=bash");
      assert.deepEqual(bash.details?.flags, ["--allow-run", `--allow-write=${workdir},${tempParent}`]);
      assert.match(bash.error!, new RegExp(`all it lacks: --allow-run --allow-write=${workdir},${tempParent}`));
      assert.deepEqual(await readdir(tempParent), []);
    });

    test("--allow-run=bash,bwrap alone cannot stop a command: bash is hidden and says it needs --allow-run", {
      timeout: 60_000,
    }, async () => {
      const flags = [...without(exact, "--allow-run"), "--allow-run=bash,bwrap"];
      const report = await run(flags, [{ name: "bash", args: { command: "echo never" } }]);
      assert.deepEqual(report.listed, [], "the job tools go with bash_background");
      const [bash] = report.results;
      assert.equal(bash.errorCode, "fence_denied", JSON.stringify(bash));
      assert.match(bash.error!, /stop the processes it starts; it needs --allow-run$/);
    });

    test("without the temp folder: bash is hidden and names --allow-write for it", { timeout: 60_000 }, async () => {
      const flags = [...without(exact, "--allow-write"), `--allow-write=${workdir}`];
      const report = await run(flags, [{ name: "bash", args: { command: "echo never" } }]);
      assert.ok(!report.listed.includes("bash"));
      const [bash] = report.results;
      assert.equal(bash.details?.flag, `--allow-write=${tempParent}`, JSON.stringify(bash));
      assert.deepEqual(await readdir(tempParent), []);
    });
  });
});
