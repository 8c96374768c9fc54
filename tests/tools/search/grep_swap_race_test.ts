// grep's built-in engine opens each file its walk found through the file
// door's openFound, in the file's pinned folder and following no link on the
// way. A racer swaps a folder of the workspace for a link to a twin folder
// outside it (same names, secret content) while grep searches the workspace:
// no answer may hold a byte of the twin's content. (With grep's own open,
// O_NOFOLLOW on the final name only, the fifth try returned the twin's lines.)

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { grepTool } from "../../../tools/search/grep.ts";
import { exited } from "../../_exited.ts";
import { type Layout, makeLayout } from "../fs/_helpers.ts";

const FILES = 300;
const TRIES = 40;

let l: Layout;

before(async () => {
  l = await makeLayout([grepTool({ engine: "builtin" })]);
  const inside = path.join(l.workdir, "race");
  const twin = path.join(l.outside, "race-twin");
  await fsp.mkdir(inside);
  await fsp.mkdir(twin);
  for (let i = 0; i < FILES; i++) {
    await fsp.writeFile(path.join(inside, `f${i}.txt`), "NEEDLE inside\n");
    await fsp.writeFile(path.join(twin, `f${i}.txt`), "NEEDLE TWINSECRET\n");
  }
});
after(() => l.cleanup());

describe("grep against a folder swapped for a link during the search", () => {
  test(`${TRIES} searches while a racer swaps the folder: never the twin's content`, { timeout: 180_000 }, async () => {
    // The racer swaps race/ for a link to the twin and back, as fast as it can.
    const racer = spawn(
      "bash",
      [
        "-c",
        'while :; do mv race race.real; ln -s "$1" race; rm race; mv race.real race; done',
        "racer",
        path.join(l.outside, "race-twin"),
      ],
      { cwd: l.workdir, stdio: "ignore", detached: true },
    );
    const racerExit = exited(racer);
    let answered = 0;
    try {
      for (let i = 0; i < TRIES; i++) {
        const result = await l.call("grep", { pattern: "NEEDLE", max_matches: 1000 });
        const text = JSON.stringify(result);
        assert.ok(!text.includes("TWINSECRET"), `try ${i} read the twin outside the workspace: ${text.slice(0, 400)}`);
        if (result.status === "success") answered++;
      }
    } finally {
      // The whole group: a mv or ln the loop had just started would otherwise outlive it and race the cleanup.
      process.kill(-racer.pid!, "SIGKILL");
      await racerExit;
      // Leave race/ in place whatever state the racer stopped in.
      await fsp.rm(path.join(l.workdir, "race"), { force: true, recursive: false }).catch(() => {});
      await fsp.rename(path.join(l.workdir, "race.real"), path.join(l.workdir, "race")).catch(() => {});
    }
    // The race must have let some searches through, or it proved nothing about reads.
    assert.ok(answered > 0, "no search succeeded while racing");
  });
});
