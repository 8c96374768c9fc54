// The process matrix: every registered tool that starts a process (found from
// the registry by its declared effects and needs, so a new tool is covered or
// this test fails) × a file planted in each host place outside the sandbox's
// read view: unreadable, unlistable, and not one byte of its marker in any
// output. A control file in the workspace shows each probe does read what it
// may, so no probe passes by reading nothing.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { randomUUID } from "node:crypto";
import { BUILTIN_GROUPS, SUBAGENT_TOOLS } from "../../tools/groups.ts";
import type { AnyTool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { Session } from "../../policy/session.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { BROWSER_MARKER } from "../../tools/browser/_browser_session.ts";
import { descendantsWith, noBrowser } from "./browser/_fixtures.ts";
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { grepTool } from "../../tools/search/grep.ts";

const tools: AnyTool[] = [
  ...Object.values(BUILTIN_GROUPS).flatMap((group) => [...group()]),
  ...SUBAGENT_TOOLS(() => undefined),
];

// Whether a tool starts (or drives) a process, by what it declares.
function startsProcesses(t: AnyTool): boolean {
  return (t.effects?.includes("runs_processes") ?? false) || (t.needs?.run?.length ?? 0) > 0 ||
    (t.optionalNeeds?.run?.length ?? 0) > 0;
}

type ProbeKind = "bash" | "jobs" | "check_types" | "check_syntax" | "grep" | "browser";

// How each process-starting tool is probed. A sub-agent starts no process of
// its own: it calls the tools of the same box, each probed here.
function probeOf(name: string): ProbeKind | "runs other tools" | undefined {
  if (name === "bash") return "bash";
  if (["bash_background", "bash_read", "bash_wait", "bash_list", "bash_stop"].includes(name)) return "jobs";
  if (name === "check_types" || name === "check_syntax" || name === "grep") return name;
  if (name.startsWith("browser_")) return "browser";
  if (name === "agent_run" || name === "agent_run_parallel") return "runs other tools";
  return undefined;
}

test("every tool that starts a process has a probe in the matrix", { timeout: 60_000 }, () => {
  const starters = tools.filter(startsProcesses);
  assert.ok(starters.length >= 10, `${starters.length} tools start processes`);
  for (const t of starters) assert.ok(probeOf(t.name), `${t.name} starts a process but the matrix has no probe for it`);
});

const status = await bubblewrapStatus();
const noSandbox = status.path ? false : `needs a working bubblewrap: ${status.reason}`;

/** A planted file: where, its folder, its marker. */
interface Place {
  name: string;
  dir: string;
  file: string;
  tsFile: string;
}

const RUN = randomUUID().slice(0, 8);

// The folders are planted in host places (the server's cwd, the repository,
// among them), so they must go even when this process is killed before its
// `after` runs: a detached watcher, started before the first folder exists,
// removes every `tf-matrix-RUN-*` under the parents once this process is gone.
function reapWhenGone(parents: readonly string[]): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ` +
    `for p in "$@"; do rm -rf -- "$p"/tf-matrix-${RUN}-*; done`;
  const watcher = spawn("sh", ["-c", script, "sh", ...parents], { detached: true, stdio: "ignore" });
  watcher.unref();
}
const MARK = `TFMARK${RUN}`;
// The marker as a pattern that does not spell it, so that no request (echoed in a result) holds the marker.
const MARK_PATTERN = `TFMAR[K]${RUN}`;

describe("the sandbox's read view, through every tool that starts a process", {
  skip: noSandbox,
  timeout: 480_000,
}, () => {
  let root: string;
  let workspace: string;
  let session: Session;
  const places: Place[] = [];
  const skipped: string[] = [];
  const made: string[] = [];
  const box = new ToolBox().withDefaults("cmd", "diagnostic", "search", "browser");

  async function plant(name: string, parent: string): Promise<void> {
    let dir: string;
    try {
      await fsp.mkdir(parent, { recursive: true });
      dir = await fsp.mkdtemp(path.join(parent, `tf-matrix-${RUN}-`));
    } catch (error) {
      skipped.push(`${name} (${parent}: ${(error as Error).message})`);
      return;
    }
    made.push(dir);
    const file = path.join(dir, "secret.txt");
    const tsFile = path.join(dir, "secret.ts");
    await fsp.writeFile(file, `${MARK}-${name}\n`);
    await fsp.writeFile(tsFile, `export const leaked: 1 = "${MARK}-${name}";\n`);
    places.push({ name, dir, file, tsFile });
  }

  before(async () => {
    root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-matrix-")));
    made.push(root);
    // The workspace is one tenant's folder under a tenant root.
    workspace = path.join(root, "tenants", "a");
    await fsp.mkdir(workspace, { recursive: true });
    await fsp.writeFile(path.join(workspace, "own.txt"), "OWNCONTENT\n");
    await fsp.writeFile(path.join(workspace, "own.ts"), `export const mine: 1 = "OWNCONTENT";\n`);
    const hosts: [string, string][] = [
      ["another tenant", path.join(root, "tenants", "b")],
      ["a folder beside the workspace", path.join(root, "beside")],
      ...["/srv", "/opt", "/var", "/mnt", "/media"].map((host): [string, string] => [host, host]),
      ["another user's home", "/home"],
      ["the caller's home", os.homedir()],
      // The server's own folder (this process's cwd), outside the workspace.
      ["the server's cwd", process.cwd()],
    ];
    reapWhenGone(hosts.map(([, parent]) => parent));
    for (const [name, parent] of hosts) await plant(name, parent);
    session = new Session({ workspace, autoConfirm: true, sandbox: "required" });
    if (skipped.length > 0) console.error(`process matrix: places not planted: ${skipped.join("; ")}`);
  });

  after(async () => {
    await session?.close();
    for (const dir of made.reverse()) await fsp.rm(dir, { recursive: true, force: true });
  });

  async function call(name: string, args: Record<string, unknown>): Promise<string> {
    const result = await box.call(session, name, args);
    return JSON.stringify(result);
  }

  function assertSealed(output: string, place: Place, probe: string): void {
    assert.ok(!output.includes(MARK), `${probe} read the file planted in ${place.name} (${place.file}): ${output}`);
  }

  test("bash: cat, ls, find and rg neither read nor list the planted files", { timeout: 480_000 }, async () => {
    assert.ok(places.length >= 5, `planted in ${places.length} places`);
    const control = await call("bash", { command: "cat own.txt; rg -uuu OWNCONTENT ." });
    assert.match(control, /OWNCONTENT/, "the workspace's own file is readable");
    assert.match(control, /"sandboxed":true/);
    for (const place of places) {
      const out = await call("bash", {
        command: `cat ${place.file}; cat ${place.dir}/*; find ${place.dir} ${path.dirname(place.dir)} -maxdepth 2; ` +
          `rg -uuu '${MARK_PATTERN}' ${place.dir} ${path.dirname(place.dir)}; grep -r '${MARK_PATTERN}' ${place.dir}`,
      });
      assertSealed(out, place, "bash");
      // The line ran (the analysis let it through), so the sandbox is what kept the file out.
      assert.match(out, /"sandboxed":true/, `the probe did not run in the sandbox: ${out}`);
      // Not listable: the folder's name is not in what ls prints of its parent, nor anywhere find looks.
      const listed = await box.call(session, "bash", {
        command: `ls -A ${
          path.dirname(place.dir)
        } 2>/dev/null; find / -maxdepth 4 -name 'tf-matrix-${RUN}-*' 2>/dev/null`,
      });
      const stdout = String((listed.output as { stdout?: string } | undefined)?.stdout ?? "");
      assert.ok(!stdout.includes(path.basename(place.dir)), `bash lists ${place.dir}: ${stdout}`);
    }
  });

  test("jobs: a background job's output, through every job tool, holds none of it", { timeout: 480_000 }, async () => {
    const start = async (command: string) => {
      const result = await box.call(session, "bash_background", { command });
      return { started: JSON.stringify(result), id: String((result.output as { id?: string }).id) };
    };
    const control = await start("cat own.txt");
    assert.match(await call("bash_wait", { id: control.id, timeout_s: 20 }), /OWNCONTENT/);
    for (const place of places) {
      const job = await start(`cat ${place.file}; rg -uuu '${MARK_PATTERN}' ${place.dir}; sleep 0.2`);
      const outputs = [
        job.started,
        await call("bash_wait", { id: job.id, timeout_s: 20 }),
        await call("bash_read", { id: job.id }),
        await call("bash_list", {}),
        await call("bash_stop", { id: job.id }),
      ];
      assert.match(job.started, /"sandboxed":true/, `the job did not start in the sandbox: ${job.started}`);
      for (const out of outputs) assertSealed(out, place, "a job tool");
    }
  });

  test("check_types: a file importing the planted module gets nothing of it", { timeout: 480_000 }, async () => {
    await fsp.writeFile(path.join(workspace, "control.ts"), `import { mine } from "./own.ts";\nconsole.log(mine);\n`);
    assert.match(await call("check_types", { path: "control.ts" }), /OWNCONTENT/, "a workspace import is read");
    for (const place of places) {
      const probe = `probe-${place.name.replace(/\W+/g, "-")}.ts`;
      await fsp.writeFile(
        path.join(workspace, probe),
        `import { leaked } from "file://${place.tsFile}";\nimport "${place.tsFile}";\nconsole.log(leaked);\n`,
      );
      assertSealed(await call("check_types", { path: probe }), place, "check_types");
      assertSealed(await call("check_types", { path: place.tsFile }), place, "check_types (the path itself)");
    }
  });

  test(
    "check_syntax: a script naming the planted file, and the file itself, give nothing of it",
    { timeout: 480_000 },
    async () => {
      for (const place of places) {
        await fsp.writeFile(path.join(workspace, "probe.sh"), `source ${place.file}\ncat ${place.file}\n`);
        assertSealed(await call("check_syntax", { path: "probe.sh" }), place, "check_syntax");
        assertSealed(await call("check_syntax", { path: place.file }), place, "check_syntax (the path itself)");
      }
    },
  );

  test("grep: the planted file and its folder are out of reach", { timeout: 480_000 }, async () => {
    assert.match(await call("grep", { pattern: "OWNCONTENT", path: "." }), /OWNCONTENT/);
    for (const place of places) {
      assertSealed(await call("grep", { pattern: MARK_PATTERN, path: place.file }), place, "grep");
      assertSealed(await call("grep", { pattern: MARK_PATTERN, path: place.dir }), place, "grep (folder)");
    }
  });

  test("grep's ripgrep runs in the read view: a stand-in ripgrep that cats every planted file gets none", {
    timeout: 480_000,
  }, async () => {
    // The stand-in answers the version probe like ripgrep 14, then reads the control file and every planted
    // file and folder, and reports what it read as paths it could not read (which grep names in its result);
    // then it names the planted files as matches, so grep itself would read them if it followed its output.
    const bin = path.join(root, "bin");
    await fsp.mkdir(bin, { recursive: true });
    const rg = path.join(bin, "rg");
    const targets = ["own.txt", ...places.flatMap((place) => [place.file, place.dir])];
    await fsp.writeFile(
      rg,
      '#!/bin/sh\ncase "$1" in --version) echo "ripgrep 14.1.0"; exit 0;; esac\n' +
        `for f in ${targets.map((t) => `'${t}'`).join(" ")}; do\n` +
        '  for c in $(cat "$f" 2>/dev/null) $(ls -A "$f" 2>/dev/null); do\n' +
        '    echo "rg: ./$c: Permission denied (os error 13)" >&2\n' +
        "  done\ndone\n" +
        // And it names each planted file as a match, by a path that climbs out: grep must not read it.
        places.map((place) => `printf './%s\\0' '../../../../../../../..${place.file}'\n`).join("") +
        "exit 2\n",
      { mode: 0o755 },
    );
    const standIn = new ToolBox().register(grepTool({ engine: "ripgrep", ripgrepPath: rg }));
    const result = await standIn.call(session, "grep", { pattern: `OWN|${MARK_PATTERN}`, path: "." });
    const out = JSON.stringify(result);
    assert.equal((result.output as { engine?: string }).engine, "ripgrep", out);
    assert.match(out, /OWNCONTENT/, "the stand-in reads the workspace, so it ran");
    for (const place of places) assertSealed(out, place, "grep's ripgrep");
  });

  test("browser: file: URLs and a page that frames and fetches them get nothing; the browser's root lacks them", {
    timeout: 480_000,
    skip: noBrowser,
  }, async () => {
    for (const place of places) {
      const page = path.join(workspace, "page.html");
      await fsp.writeFile(
        page,
        `<p>page</p><iframe src="file://${place.file}"></iframe><pre id="got"></pre>` +
          `<script>fetch("file://${place.file}").then((r) => r.text()).then((t) => got.textContent = t, ` +
          `(e) => got.textContent = "blocked")</script>`,
      );
      const outputs = [
        await call("browser_navigate", { url: `file://${place.file}` }),
        await call("browser_navigate", { url: `file://${place.dir}/` }),
        await call("browser_navigate", { url: `file://${page}` }),
        await call("browser_snapshot", {}),
      ];
      for (const out of outputs) assertSealed(out, place, "the browser");
    }
    // Inside the browser's sandbox the planted folders do not exist at all.
    const pids = descendantsWith(BROWSER_MARKER);
    assert.ok(pids.length > 0, "the browser runs");
    const chromium = pids.find((pid) => /chrom/.test(readFileSync(`/proc/${pid}/comm`, "utf8")));
    assert.ok(chromium, "the chromium process");
    for (const place of places) {
      const inside: boolean = await fsp.stat(`/proc/${chromium}/root${place.dir}`).then(() => true, () => false);
      assert.equal(inside, false, `${place.dir} exists inside the browser's sandbox`);
    }
    await call("browser_close", {});
  });
});

describe("the policy's hidden paths are masked in every process, checkers' and the browser's included", {
  skip: noSandbox,
  timeout: 120_000,
}, () => {
  let workspace: string;
  let session: Session;
  const box = new ToolBox().withDefaults("cmd", "diagnostic", "browser");
  before(async () => {
    workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-hidden-")));
    await fsp.mkdir(path.join(workspace, "secrets"));
    await fsp.writeFile(path.join(workspace, "secrets", "key.ts"), `export const key: 1 = "${MARK}-hidden";\n`);
    await fsp.writeFile(
      path.join(workspace, "uses.ts"),
      `import { key } from "./secrets/key.ts";\nconsole.log(key);\n`,
    );
    const rules = PolicyRules.fromLayers([{ name: "managed", config: { paths: { deny: ["secrets/**"] } } }], workspace);
    session = new Session({ workspace, autoConfirm: true, sandbox: "required", rules });
  });
  after(async () => {
    await session?.close();
    await fsp.rm(workspace, { recursive: true, force: true });
  });

  test("bash and check_types read nothing of a hidden file", { timeout: 120_000 }, async () => {
    const outputs = [
      JSON.stringify(await box.call(session, "bash", { command: "cat secrets/key.ts; ls -A secrets; true" })),
      JSON.stringify(await box.call(session, "check_types", { path: "uses.ts" })),
    ];
    for (const out of outputs) assert.ok(!out.includes(MARK), `a hidden file was read: ${out}`);
  });

  test("inside the browser's sandbox the hidden folder is empty", { timeout: 120_000, skip: noBrowser }, async () => {
    await fsp.writeFile(path.join(workspace, "page.html"), "<p>page</p>");
    await box.call(session, "browser_navigate", { url: `file://${workspace}/page.html` });
    const chromium = descendantsWith(BROWSER_MARKER).find((pid) =>
      /chrom/.test(readFileSync(`/proc/${pid}/comm`, "utf8"))
    );
    assert.ok(chromium, "the chromium process");
    const inside = await fsp.readdir(`/proc/${chromium}/root${workspace}/secrets`);
    assert.deepEqual(inside, [], "the hidden folder is masked in the browser's sandbox");
    assert.equal(await fsp.readFile(`/proc/${chromium}/root${workspace}/page.html`, "utf8"), "<p>page</p>");
    await box.call(session, "browser_close", {});
  });
});
