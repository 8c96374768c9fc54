// find's expression reader against the installed GNU find: generated
// expressions (primaries whose values look like the dangerous ones, operators,
// and the primaries that run, delete or write) run in a scratch folder; every
// expression the reader finds harmless leaves the folder as it was.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import fc from "fast-check";
import { readFindExpression } from "../../../policy/shell/_find_expression.ts";
import type { BashWord } from "../../../policy/shell/_tree.ts";
import { DIFFERENTIAL_DENO_ONLY } from "../../_runtime.ts";

const SEED = Number(process.env.TEST_SEED ?? 20261201);
const RUNS = Number(process.env.FIND_EXPRESSION_RUNS ?? 300);

const word = (value: string): BashWord => ({ text: value, value, mayBeOption: value.startsWith("-") });
const words = (line: string) => line.split(" ").filter((part) => part !== "").map(word);

function manifest(folder: string): string[] {
  return fs.readdirSync(folder, { recursive: true, encoding: "utf8" }).sort();
}

describe("find expressions as GNU find reads them", { timeout: 120_000 }, () => {
  test("primaries that run, delete or write ask; the files others read are recorded", { timeout: 120_000 }, () => {
    for (
      const line of [
        ". -exec rm {} ;",
        ". -name x -o -execdir sh -c x {} +",
        ". -ok rm {} ;",
        ". -okdir rm {} ;",
        ". -delete",
        ". -fprint out",
        ". -fprint0 out",
        ". -fprintf out %p",
        ". -fls out",
        ". -frobnicate",
        ". -exec rm {}",
      ]
    ) {
      assert.ok(readFindExpression(words(line)).problem !== undefined, line);
    }
    assert.deepEqual(readFindExpression(words("-L src lib -name -delete -newer /etc/passwd -newermt 2020-01-01")), {
      files: [
        { value: "src", access: "read", origin: "find starting point" },
        { value: "lib", access: "read", origin: "find starting point" },
        { value: "/etc/passwd", access: "read", origin: "find -newer" },
      ],
    });
    // The starting points the list names are only known when find runs (undefined).
    assert.deepEqual(
      readFindExpression(words("-files0-from /x/list -samefile y -anewer z")).files.map((f) => f.value),
      [
        "/x/list",
        undefined,
        "y",
        "z",
      ],
    );
    assert.equal(readFindExpression(words("-D tree -O3 . -path ./-exec -prune -o -print")).problem, undefined);
    const glob: BashWord = { text: "*.ts", value: undefined, mayBeOption: true };
    assert.match(readFindExpression([word("."), word("-name"), glob]).problem ?? "", /several words/);
  });

  test(
    `${RUNS} generated expressions: every one read as harmless changes nothing (seed ${SEED})`,
    { timeout: 120_000, skip: DIFFERENTIAL_DENO_ONLY },
    (t) => {
      if (spawnSync("find", ["--version"], { encoding: "utf8" }).stdout?.includes("GNU") !== true) {
        return t.skip("GNU find is not installed");
      }
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "find-expression-"));
      const value = fc.constantFrom("a.txt", "-delete", "-exec", "*.txt", ";", "-fprint", "1", "f");
      const primary = fc.oneof(
        fc.constantFrom("-print", "-true", "-false", "-prune", "-empty", "!", "-o", "-a", "-not", "-quit", "-ls"),
        fc.tuple(fc.constantFrom("-name", "-path", "-iname", "-regex", "-printf", "-type", "-lname"), value).map((
          [name, argument],
        ) => `${name} ${argument}`),
        fc.constantFrom("-newer a.txt", "-samefile b.txt", "-newermt 2020-01-01", "-cnewer a.txt"),
        fc.constantFrom("-delete", "-exec touch made ;", "-execdir touch made {} +", "-fprint out", "-fls out"),
        fc.constantFrom("-fprintf out %p", "-fprint0 out"),
      );
      const expression = fc.array(primary, { minLength: 1, maxLength: 5 }).map((parts) => `. ${parts.join(" ")}`);
      let harmless = 0;
      let flagged = 0;
      try {
        fc.assert(
          fc.property(expression, (line) => {
            const folder = fs.mkdtempSync(path.join(root, "case-"));
            for (const name of ["a.txt", "b.txt", "f"]) fs.writeFileSync(path.join(folder, name), name);
            const before = manifest(folder);
            spawnSync("find", line.split(" "), { cwd: folder, encoding: "utf8", timeout: 5000 });
            const after = manifest(folder);
            fs.rmSync(folder, { recursive: true, force: true });
            const reading = readFindExpression(words(line));
            if (reading.problem !== undefined) {
              flagged++;
              return;
            }
            harmless++;
            assert.deepEqual(after, before, `find ${line} was read as harmless but changed the folder`);
          }),
          { seed: SEED, numRuns: RUNS },
        );
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
      console.log(`find expressions: ${RUNS} generated, ${harmless} read as harmless, ${flagged} asking`);
      assert.ok(harmless >= RUNS / 10 && flagged >= RUNS / 10, `${harmless} harmless, ${flagged} asking`);
    },
  );
});
