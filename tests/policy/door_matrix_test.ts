// The file door's path matrix through the library: every registered tool that
// takes a path (found from the registry, see tests/_door_matrix.ts) × every
// rule × every spelling, and a link swapped in under the tools while they run.
// Every call: refused where the rule says so, and not one byte of protected
// content, nor a hidden name, in anything it answers; every protected file and
// folder as planted.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lstatSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { BUILTIN_GROUPS } from "../../tools/groups.ts";
import { Session } from "../../policy/session.ts";
import { parsePolicyFile } from "../../policy/config/load.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import {
  argumentsFor,
  checkCall,
  type Layout,
  mustRefuse,
  pathTools,
  plant,
  POLICY,
  restoreLinks,
  type Rule,
  spellings,
} from "../_door_matrix.ts";

// Every group but the browser's, which needs a browser binary to start at all (its paths go
// through the same door: tools/browser resolves with ctx.policy).
const GROUPS = Object.keys(BUILTIN_GROUPS).filter((group) => group !== "browser");

let layout: Layout;
let rules: PolicyRules;

before(async () => {
  layout = await plant();
  rules = PolicyRules.fromLayers([parsePolicyFile(layout.policyFile, JSON.stringify(POLICY), "cli")], layout.ws);
});

after(async () => {
  await layout.close();
});

function session(): Session {
  return new Session({ workspace: layout.ws, rules, autoConfirm: true });
}

const box = new ToolBox().withDefaults(...GROUPS);
const tools = pathTools(box.list());

describe("the file door's path matrix, through the library", { timeout: 900_000 }, () => {
  test("the matrix finds the tools that take a path from the registry", { timeout: 5_000 }, () => {
    const names = tools.map((t) => t.tool.name);
    for (const expected of ["read_file", "write_file", "list_dir", "glob", "grep", "edit_file", "apply_patch"]) {
      assert.ok(names.includes(expected), `${expected} not found among ${names.join(", ")}`);
    }
    for (const expected of ["copy", "move", "delete", "mkdir", "file_info", "bash"]) {
      assert.ok(names.includes(expected), `${expected} not found among ${names.join(", ")}`);
    }
  });

  const RULES: Rule[] = ["outside", "denied", "tenant", "hidden", "read-only", "protected"];
  for (const rule of RULES) {
    test(`${rule}: every tool, every path argument, every spelling`, { timeout: 300_000 }, async () => {
      const s = session();
      const problems: string[] = [];
      let calls = 0;
      try {
        for (const entry of tools) {
          for (const arg of entry.pathArgs) {
            for (const spelled of spellings(layout)[rule]) {
              const label = `${entry.tool.name} ${arg}=${JSON.stringify(spelled)}`;
              const args = await argumentsFor(layout, entry, arg, spelled, calls++);
              const result = await box.call(s, entry.tool.name, args);
              problems.push(...checkCall(layout, label, JSON.stringify(result), spelled));
              if (mustRefuse(rule, spelled) && result.status === "success") problems.push(`${label}: not refused`);
              restoreLinks(layout);
            }
          }
        }
      } finally {
        await s.close();
      }
      assert.ok(calls > 50, `only ${calls} calls`);
      assert.deepEqual(problems, []);
    });
  }

  test("a link swapped in during the call: no tool reads or writes through it", { timeout: 240_000 }, async () => {
    // A loop in another process turns race/real from a folder into a link to a protected folder and
    // back, as fast as it can, while each tool works on race/real/f.txt.
    const race = join(layout.ws, "race");
    const targets = [join(layout.base, "out"), join(layout.ws, "secrets")];
    const loop = targets.map((t) => `mv real away && ln -s '${t}' real && rm real && mv away real`).join("; ");
    const swapper = spawn("bash", ["-c", `cd '${race}' && while :; do ${loop}; done`], {
      detached: true,
      stdio: "ignore",
    });
    const s = session();
    const problems: string[] = [];
    let calls = 0;
    try {
      for (let round = 0; round < 4; round++) {
        for (const entry of tools) {
          for (const arg of entry.pathArgs) {
            for (const spelled of ["race/real/f.txt", "race/real"]) {
              const label = `${entry.tool.name} ${arg}=${spelled} (raced)`;
              const args = await argumentsFor(layout, entry, arg, spelled, 10_000 + calls++);
              const answer = await box.call(s, entry.tool.name, args).then(JSON.stringify, (error) => {
                problems.push(`${label}: the call threw ${error}`);
                return String(error);
              });
              problems.push(...checkCall(layout, label, answer));
              restoreLinks(layout);
            }
          }
        }
      }
    } finally {
      process.kill(-swapper.pid!, "SIGKILL");
      await new Promise((resolve) => swapper.exitCode !== null ? resolve(null) : swapper.once("exit", resolve));
      await s.close();
      restoreRace(race);
    }
    assert.ok(calls > 50, `only ${calls} calls`);
    assert.deepEqual(problems, []);
  });
});

// The swap loop may have been stopped between its steps: put the folder back.
function restoreRace(race: string): void {
  const real = join(race, "real");
  try {
    if (lstatSync(real).isSymbolicLink()) rmSync(real);
  } catch {
    // not there
  }
  try {
    lstatSync(real);
  } catch {
    renameSync(join(race, "away"), real);
  }
  // The tools may have moved or deleted the benign file: that was theirs to do.
  assert.ok(lstatSync(real).isDirectory());
}
