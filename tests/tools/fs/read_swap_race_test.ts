// read_file opens its file through the file door's openRead, whose open is its
// own re-check: in the file's folder pinned at the real path that was judged,
// following no link on the way. A racer swaps a folder of the workspace for a
// link to a twin folder outside it (same names, secret content) and back, as
// fast as perl can rename, while read_file reads a file in it: no answer may
// hold a byte of the twin's content. (With a plain open of the resolved path,
// the twin's line came back within the first 60 reads in each of four runs.)

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { readFileTool } from "../../../tools/fs/read_file.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";
import { type Layout, makeLayout } from "./_helpers.ts";

// Reads for this long; each one is a chance for the swap to land between the resolution and the open.
const READ_MS = 4_000;

// A racer (tests/_link_swapper.ts) swaps race/ for a link to the twin and back.
let l: Layout;

before(async () => {
  l = await makeLayout([readFileTool]);
  const twin = path.join(l.outside, "race-twin");
  await fsp.mkdir(path.join(l.workdir, "race"));
  await fsp.mkdir(twin);
  await fsp.writeFile(path.join(l.workdir, "race", "f.txt"), "inside\n");
  await fsp.writeFile(path.join(twin, "f.txt"), "TWINSECRET\n");
});
after(() => l.cleanup());

describe("read_file against a folder swapped for a link during the read", () => {
  test("reads while a racer swaps the folder: never the twin's content", { timeout: 60_000 }, async () => {
    let reads = 0;
    let answered = 0;
    await whileSwappedForLink(l.workdir, "race", path.join(l.outside, "race-twin"), async () => {
      const deadline = performance.now() + READ_MS;
      while (performance.now() < deadline) {
        const result = await l.call("read_file", { path: "race/f.txt" });
        const text = JSON.stringify(result);
        assert.ok(!text.includes("TWINSECRET"), `read ${reads} returned the twin outside the workspace: ${text}`);
        reads++;
        if (result.status === "success") answered++;
      }
    });
    // The race must have let reads through, and refused some, or it proved nothing.
    assert.ok(answered > 0 && answered < reads, `${answered} of ${reads} reads answered`);
  });
});
