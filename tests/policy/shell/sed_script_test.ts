// The sed script reader against the installed GNU sed: for generated scripts
// (commands, addresses, labels, texts and file commands glued by every
// separator, valid or not), `sed --sandbox` refuses exactly the scripts the
// reader says run a program or open a file, whenever plain sed compiles them.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import fc from "fast-check";
import { readSedScript } from "../../../policy/shell/_sed_script.ts";
import { sedScript } from "../../oracle/_languages.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const SEED = Number(process.env.TEST_SEED ?? 20261201);
const RUNS = Number(process.env.SED_SCRIPT_RUNS ?? 600);

function gnuSed(): string | undefined {
  const found = spawnSync("sed", ["--version"], { encoding: "utf8" });
  return found.status === 0 && found.stdout.includes("GNU sed") ? undefined : "GNU sed is not installed";
}

/** Whether sed compiles `pieces` (each an `-e`), run on no input in a scratch folder. */
function compiles(pieces: readonly string[], sandbox: boolean, cwd: string): boolean {
  const args = [...(sandbox ? ["--sandbox"] : []), "-n", ...pieces.flatMap((piece) => ["-e", piece])];
  return spawnSync("sed", args, { cwd, input: "", encoding: "utf8", timeout: 5000 }).status === 0;
}

const script = sedScript(["out", "in.txt", "/dev/stdout", "f;p", "f}", "x e y"]);

describe("sed scripts as GNU sed reads them", { timeout: 120_000 }, () => {
  const unavailable = gnuSed();

  test("labels end at blanks, file names and texts at the end of the line", { timeout: 120_000 }, () => {
    assert.deepEqual(readSedScript([":a e touch x"]).effects, [{ command: "e", access: "run", file: "touch x" }]);
    assert.deepEqual(readSedScript(["b end;w out"]).effects, [{ command: "w", access: "write", file: "out" }]);
    assert.deepEqual(readSedScript(["r f;p"]).effects, [{ command: "r", access: "read", file: "f;p" }]);
    assert.deepEqual(readSedScript(["s/a/b/w x;e id"]).effects, [{
      command: "s///w",
      access: "write",
      file: "x;e id",
    }]);
    assert.deepEqual(readSedScript(["a text; e id"]).effects, []);
    // A trailing backslash continues the text into the next -e.
    assert.deepEqual(readSedScript(["a\\", "e id"]).effects, []);
    assert.deepEqual(readSedScript(["a\\", "x", "e id"]).effects, [{ command: "e", access: "run", file: "id" }]);
    assert.deepEqual(readSedScript(["s/[/]/x/e"]).effects, [{ command: "s///e", access: "run", file: "" }]);
    assert.deepEqual(readSedScript(["0r /etc/hostname"]).effects, [
      { command: "r", access: "read", file: "/etc/hostname" },
    ]);
    assert.match(readSedScript(["s/\\c//"]).problem ?? "", /\\c/);
    assert.match(readSedScript(["p x"]).problem ?? "", /extra characters/);
    assert.match(readSedScript(["}"]).problem ?? "", /unexpected/);
    assert.match(readSedScript(["{p"]).problem ?? "", /unmatched/);
  });

  test(`${RUNS} generated scripts: sed --sandbox refuses exactly those with e, r or w (seed ${SEED})`, {
    timeout: 120_000,
    skip: DIFFERENTIAL_DENO_ONLY,
  }, (t) => {
    if (unavailable) return t.skip(unavailable);
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "sed-script-"));
    let compiled = 0;
    let withEffects = 0;
    let overAsked = 0;
    try {
      fc.assert(
        fc.property(script, (pieces) => {
          const reading = readSedScript(pieces);
          const plain = compiles(pieces, false, cwd);
          const sandboxed = compiles(pieces, true, cwd);
          if (plain) compiled++;
          if (reading.problem !== undefined) {
            // Stricter than sed is safe; count it so that it stays rare.
            if (plain) overAsked++;
            return;
          }
          if (!plain) return;
          if (reading.effects.length > 0) withEffects++;
          assert.equal(
            !sandboxed,
            reading.effects.length > 0,
            `${JSON.stringify(pieces)}: sed --sandbox ${sandboxed ? "accepts" : "refuses"} it, the reader found ${
              JSON.stringify(reading.effects)
            }`,
          );
        }),
        { seed: SEED, numRuns: RUNS },
      );
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
    console.log(
      `sed scripts: ${RUNS} generated, ${compiled} compiled by sed, ${withEffects} with e/r/w, ${overAsked} over-asked`,
    );
    assert.ok(compiled >= RUNS / 5, `only ${compiled} of ${RUNS} generated scripts compile; the generator is too wild`);
    assert.ok(withEffects >= RUNS / 20, `only ${withEffects} scripts with e/r/w compiled`);
    assert.ok(overAsked <= compiled / 20, `${overAsked} of ${compiled} compiling scripts read as unclear`);
  });
});
