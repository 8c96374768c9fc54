// The folders above a hidden path are bound onto themselves in each command's sandbox (pins). Bound by path,
// bubblewrap resolved the source itself, after the walk: a background command of the same session that made p/.env
// (so that p is pinned by the next command, not by its own sandbox) and swapped p for a link to another tenant's
// workspace got that workspace bound writable at p in the next command's sandbox. Seen over MCP HTTP: alice's
// `cat p/secret.txt` printed bob's BOBSECRET-1. Each pin is now bound by a descriptor of the folder itself.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import process from "node:process";
import { ToolBox } from "../../toolbox.ts";
import { Session } from "../../policy/session.ts";
import { parsePolicyFile } from "../../policy/config/load.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed } from "./_sandbox_run.ts";

const SECRET = `OTHER-TENANT-SECRET-${Date.now()}`;
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const box = new ToolBox().withDefaults("cmd");
const ROUNDS = Number(process.env.PIN_RACE_ROUNDS ?? 150);

let base: string;
let ws: string;
let other: string;

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-pin-race-")));
  ws = join(base, "alice");
  other = join(base, "bob");
  await mkdir(ws);
  await mkdir(other);
  await writeFile(join(other, "secret.txt"), `${SECRET}\n`);
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("a pinned folder swapped for a link while the sandbox is made", { skip: !hasBwrap }, () => {
  // The moment the race aims at, held still: the walk found p/<base>/.env and pinned p and p/<base>; p is a link
  // by the time bubblewrap binds it, whose `..`s climb to the host's / from the host's side and to the sandbox's root
  // from bubblewrap's own (p -> ../../../tmp). Before, bubblewrap bound the host's /tmp, with the other tenant's
  // folder and every session's temp dir in it, writable over the sandbox's private one.
  test("a pin binds the folder that was walked, not where a link put in its place leads", {
    timeout: 60_000,
  }, async () => {
    const held = join(base, "held");
    const name = basename(base);
    await mkdir(join(held, "p", name), { recursive: true });
    await writeFile(join(held, "p", name, ".env"), "mine\n");
    await writeFile(join(base, ".env"), "");
    const wrapped = await sandboxArgv(["bash", "-c", `cat ${other}/secret.txt 2>&1; true`], {
      workdir: held,
      writable: [held],
      workspace: held,
      hiddenPaths: ["**/.env"],
      mode: "required",
    });
    try {
      await rename(join(held, "p"), join(held, "p.real"));
      await symlink(`${"../".repeat(held.split("/").length - 1)}${held.split("/")[1]}`, join(held, "p"));
      const ran = await runSandboxed(wrapped);
      assert.ok(!ran.stdout.includes(SECRET), `the host's folder was bound: ${ran.stdout}`);
    } finally {
      await wrapped.release();
    }
  });

  test("never binds where the link leads", { timeout: 240_000 }, async () => {
    const text = '{ "paths": { "deny": ["**/.env"] } }';
    const rules = PolicyRules.fromLayers([parsePolicyFile(join(ws, "toolfence.json"), text, "project")], ws);
    const s = new Session({ workspace: ws, rules, autoConfirm: true, sandbox: "required" });
    try {
      // The denied name is made by the command (it names no denied path), after its own sandbox was made.
      const swap = `mkdir -p p; f=$(printf '.%s' env); echo mine > p/$f; ln -s ${other} p.link; ` +
        `perl -e 'while (1) { rename("p", "p.real"); rename("p.link", "p"); rename("p", "p.link"); rename("p.real", "p") }'`;
      const job = await box.call(s, "bash_background", { command: swap });
      assert.equal(job.status, "success", job.error);
      const id = (job.output as { id: string }).id;
      const seen = { read: 0, refused: 0 };
      for (let i = 0; i < ROUNDS; i++) {
        const ran = await box.call(s, "bash", {
          command: `cat p/secret.txt p.real/secret.txt ${other}/secret.txt 2>/dev/null; true`,
        });
        const all = JSON.stringify(ran);
        assert.ok(!all.includes(SECRET), `round ${i}: another tenant's file read through the pin: ${all}`);
        if (ran.status === "success") seen.read++;
        else seen.refused++;
      }
      // The swap ran all along (else nothing was tried).
      const still = await box.call(s, "bash_read", { id });
      assert.equal((still.output as { status: string }).status, "running", JSON.stringify(still.output));
      assert.ok(seen.read > 0, JSON.stringify(seen));
      await box.call(s, "bash_stop", { id });
    } finally {
      await s.close();
    }
  });
});
