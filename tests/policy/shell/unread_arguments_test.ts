// A program the checker knows by a flag rule is known only as far as that rule reads its words: the rule of a
// program the allowlist does not name was never run, and a rule that finds a problem stops reading there. With the
// sandbox off and an automatic answer, `gawk '{print > ".npmrc"}' a`, `xxd -r a .npmrc` and `curl -o .npmrc URL`
// wrote the protected file on the automatic yes: what they named was taken for reads.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { installed } from "../../tools/cmd/_helpers.ts";

/** A dump xxd -r turns back into bytes. */
const DUMP = "00000000: 6869 0a                                      hi.\n";

async function freshWorkspace(): Promise<string> {
  const folder = await realpath(await mkdtemp(join(tmpdir(), "toolfence-unread-")));
  await writeFile(join(folder, "a"), DUMP);
  return folder;
}

/** Runs a line with real bash in `folder`, its own home, no input; bounded. */
function runLine(line: string, folder: string): void {
  spawnSync("timeout", ["5", "bash", "-c", line], {
    cwd: folder,
    stdio: ["ignore", "ignore", "ignore"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: folder },
    timeout: 60_000,
  });
}

/** Whether an automatic answer runs the line: allowed, or asked with yes as default and no person required. */
async function runsOnAutomaticAnswer(line: string, folder: string): Promise<{ runs: boolean; reason: string }> {
  const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
  const runs = decided.decision === "allow" ||
    (decided.decision === "ask" && decided.prompt?.requirePerson !== true && decided.prompt?.defaultChoice === true);
  return { runs, reason: decided.reason };
}

describe("a flag rule that did not read a program's words", { timeout: 120_000 }, () => {
  test(
    "the files a program names when its rule was not run or stopped may be written: a protected one needs a person",
    {
      timeout: 120_000,
    },
    async () => {
      const folder = await freshWorkspace();
      try {
        const lines = [
          // Not on the allowlist: their rules never ran.
          `gawk '{print > ".npmrc"}' a`,
          `gawk -o.npmrc 1 a`,
          `curl -o .npmrc file://${folder}/a`,
          `curl -s -D .npmrc file://${folder}/a`,
          `wget -O .npmrc http://127.0.0.1:1/`,
          ...(installed("mawk") ? [`mawk '{print > ".npmrc"}' a`] : []),
          // On the allowlist, its rule stopped at `-r` before the output file.
          "xxd -r a .npmrc",
          "xxd -r -p a .npmrc",
          // install -d makes a folder of every operand, not only the last.
          "install -d .npmrc x",
        ];
        for (const line of lines) {
          const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
          assert.equal(decided.decision, "ask", `${line}: ${decided.reason}`);
          assert.equal(decided.prompt?.requirePerson, true, `${line}: ${decided.reason}`);
          assert.match(decided.reason, /protected path \.npmrc|a path only known when it runs .*protected/, line);
          // In the sandbox, which keeps protected paths read-only, the automatic answer decides as before.
          const sandboxed = await decideCommand(line, { workspaceRoot: folder, sandbox: "auto" });
          assert.notEqual(sandboxed.prompt?.requirePerson, true, `${line} (sandbox): ${sandboxed.reason}`);
        }
        // What the lines do when run: each writes .npmrc.
        for (const line of lines) {
          await rm(join(folder, ".npmrc"), { recursive: true, force: true });
          runLine(line, folder);
          assert.ok((await readdir(folder)).includes(".npmrc"), `${line} wrote .npmrc`);
        }
        // A read-only use runs as before.
        for (const line of ["xxd a", "xxd -p a", "awk '{print $1}' a"]) {
          const decided = await decideCommand(line, { workspaceRoot: folder, sandbox: "off" });
          assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
        }
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    },
  );

  test("every option letter in every spelling: a line an automatic answer runs writes no protected file", {
    timeout: 120_000,
  }, async () => {
    // Each program, each option letter with a protected name as its value (separate, attached, after an operand,
    // or as an operand after one): a line an automatic answer would run is run for real, and must not make .npmrc.
    const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const programs = ["xxd", "curl", "wget", "gawk", "install"].filter(installed);
    let ran = 0;
    for (const program of programs) {
      const lines = [...letters].flatMap((letter) => [
        `${program} -${letter} .npmrc a`,
        `${program} -${letter}.npmrc a`,
        `${program} a -${letter} .npmrc`,
        `${program} -${letter} a .npmrc`,
      ]);
      for (const line of [...lines, `${program} a .npmrc`, `${program} .npmrc`]) {
        const folder = await freshWorkspace();
        try {
          const { runs, reason } = await runsOnAutomaticAnswer(line, folder);
          if (!runs) continue;
          ran++;
          runLine(line, folder);
          assert.ok(!(await readdir(folder)).includes(".npmrc"), `${line} wrote .npmrc on an automatic yes: ${reason}`);
        } finally {
          await rm(folder, { recursive: true, force: true });
        }
      }
    }
    // The lines that only read did run (the check is not vacuous).
    assert.ok(ran > 50, `only ${ran} lines ran`);
  });
});
