// What a program request reads besides the workspace (a checker's file, ripgrep's folder in the temp dir) was bound
// into its sandbox by path, and bubblewrap resolved the path itself, after the tool had judged it: a background
// command that swapped a folder on the way for a link to another tenant's folder (d -> ../bob/sub) had bubblewrap
// bind that tenant's file. Seen over MCP HTTP (tenants alice and bob, --sandbox required): alice's check_types of
// d/config.ts answered a SyntaxError at line 1, column 14 of bob's sub/config.ts ("BOBSECRET-42 is ..."), 5 times in
// 300 calls, and bwrap's "Can't bind mount /oldroot/.../bob/sub/config.ts" named his file. Now each is opened
// without following a link on its way and bound by its descriptor.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { Session } from "../../policy/session.ts";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed } from "./_sandbox_run.ts";

const SECRET = `BOBSECRET_${Date.now()}`;
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
// Checks that reached the checker (most calls are refused earlier, the folder changing under them): before, about one
// in twenty-five read the other tenant's file.
const CHECKS = Number(process.env.PROGRAM_RACE_CHECKS ?? 60);

let base: string;
let ws: string;
let other: string;

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-program-race-")));
  ws = join(base, "alice");
  other = join(base, "bob");
  await mkdir(ws);
  await mkdir(join(other, "sub"), { recursive: true });
  // A type error whose message names the secret: "Cannot find name 'BOBSECRET_...'".
  await writeFile(join(other, "sub", "config.ts"), `export const v = ${SECRET};\n`);
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("a program's file on a folder swapped for a link while the sandbox is made", { skip: !hasBwrap }, () => {
  // The moment the race aims at, held still: the file was judged in d, and d is a link to the other tenant's folder
  // by the time bubblewrap binds it. The file lies outside the workspace (as in the temp dir), so that only its own
  // mount shows it.
  test("binds the file that was judged, not where a link put in its place leads", { timeout: 60_000 }, async () => {
    const temp = join(base, "temp");
    await mkdir(join(temp, "d"), { recursive: true });
    await writeFile(join(temp, "d", "config.ts"), "mine\n");
    const file = join(temp, "d", "config.ts");
    const wrapped = await sandboxArgv(["cat", file], {
      workdir: ws,
      writable: [],
      readable: [ws],
      readOnlyEntries: [file],
      workspace: ws,
      mode: "required",
    });
    try {
      await rename(join(temp, "d"), join(temp, "d.real"));
      await symlink("../bob/sub", join(temp, "d"));
      const ran = await runSandboxed(wrapped);
      assert.ok(!ran.stdout.includes(SECRET) && !ran.stderr.includes(SECRET), `bound from bob: ${ran.stdout}`);
      assert.equal(ran.stdout, "mine\n", ran.stderr);
    } finally {
      await wrapped.release();
    }
  });

  test("check_types never reads where the link leads", { timeout: 200_000 }, async () => {
    const s = new Session({ workspace: ws, autoConfirm: true, sandbox: "required" });
    const box = new ToolBox().withDefaults("cmd", "diagnostic");
    try {
      const swap = `mkdir -p d; echo 'export const a = 1;' > d/config.ts; ln -s ../bob/sub d.link; ` +
        `perl -e 'while (1) { rename("d", "d.real"); rename("d.link", "d"); rename("d", "d.link"); rename("d.real", "d") }'`;
      const job = await box.call(s, "bash_background", { command: swap });
      assert.equal(job.status, "success", job.error);
      const id = (job.output as { id: string }).id;
      const seen = { checked: 0, refused: 0 };
      const started = Date.now();
      for (let i = 0; seen.checked < CHECKS && Date.now() - started < 150_000; i++) {
        const ran = await Promise.all([1, 2, 3].map(() => box.call(s, "check_types", { path: "d/config.ts" })));
        for (const result of ran) {
          const all = JSON.stringify(result);
          assert.ok(!all.includes(SECRET), `round ${i}: the other tenant's file was read: ${all.slice(0, 500)}`);
          // Checked: deno read a d/config.ts (its own, or, before, the other tenant's); else refused or failed early.
          const output = result.output as { ok?: boolean; diagnostics?: unknown[] } | undefined;
          if (output?.ok === true || (output?.diagnostics?.length ?? 0) > 0) seen.checked++;
          else seen.refused++;
        }
      }
      const still = await box.call(s, "bash_read", { id });
      assert.equal((still.output as { status: string }).status, "running", JSON.stringify(still.output));
      assert.ok(seen.checked > 0, JSON.stringify(seen));
      await box.call(s, "bash_stop", { id });
    } finally {
      await s.close();
    }
  });

  // The program's private folder (checks/private in the session temp dir, its HOME and DENO_DIR) was bound writable
  // by path: alice's background command swapped it for a link to bob's workspace, and her check_types wrote its
  // cache there (a "deno" folder appeared in bob's workspace within the first three calls).
  test("a program's private folder is the one made, not where a link put in its place leads", {
    timeout: 60_000,
  }, async () => {
    const temp = join(base, "temp2");
    const own = join(temp, "private");
    await mkdir(own, { recursive: true });
    const wrapped = await sandboxArgv(["sh", "-c", `echo made > ${own}/made.txt`], {
      workdir: ws,
      writable: [],
      writableFolders: [own],
      readable: [ws],
      workspace: ws,
      mode: "required",
    });
    try {
      await rename(own, join(temp, "private.real"));
      await symlink("../bob", own);
      const ran = await runSandboxed(wrapped);
      assert.deepEqual(await readdir(other), ["sub"], `bob's folder was written: ${ran.stderr}`);
      assert.deepEqual(await readdir(join(temp, "private.real")), ["made.txt"], ran.stderr);
    } finally {
      await wrapped.release();
    }
  });

  test("check_types never writes where a link put in place of its private folder leads", {
    timeout: 200_000,
  }, async () => {
    const s = new Session({ workspace: ws, autoConfirm: true, sandbox: "required" });
    const box = new ToolBox().withDefaults("cmd", "diagnostic");
    try {
      await writeFile(join(ws, "a.ts"), "export const a: number = 1;\n");
      const first = await box.call(s, "check_types", { path: "a.ts" });
      assert.equal(first.status, "success", first.error);
      const temp = await s.workspace.tempDir();
      const up = "../".repeat(join(temp, "checks").split("/").length - 1);
      const swap = `cd ${temp}/checks && ln -s ${up}${other.slice(1)} p.link && ` +
        `perl -e 'while (1) { rename("private", "p.real"); rename("p.link", "private"); rename("private", "p.link"); rename("p.real", "private") }'`;
      const job = await box.call(s, "bash_background", { command: swap });
      assert.equal(job.status, "success", job.error);
      const id = (job.output as { id: string }).id;
      for (let i = 0; i < 20; i++) {
        await Promise.all([1, 2, 3].map(() => box.call(s, "check_types", { path: "a.ts" })));
        assert.deepEqual(await readdir(other), ["sub"], `round ${i}: check_types wrote into the other folder`);
      }
      const still = await box.call(s, "bash_read", { id });
      assert.equal((still.output as { status: string }).status, "running", JSON.stringify(still.output));
      await box.call(s, "bash_stop", { id });
    } finally {
      await s.close();
    }
  });
});
