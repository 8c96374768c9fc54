// Nothing is missed in silence: what a search cannot look at (a folder whose
// path is past the system's limit, a name that is not UTF-8 and so cannot be
// opened under Deno) is named in the result with the reason, by glob and by
// both grep engines. The trees are made with bash, which can go deeper than
// any path a single system call takes and can name a file with any bytes.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { grepTool } from "../../../tools/search/grep.ts";
import { globTool } from "../../../tools/search/glob.ts";
import { findRipgrep } from "../../../tools/search/_ripgrep.ts";
import { type Layout, makeLayout, ok } from "../fs/_helpers.ts";
import { IS_DENO } from "../../_runtime.ts";

const run = promisify(execFile);
const rg = await findRipgrep();
const DEPTH = 1500; // "abc/" × 1500 = 6,000 bytes, past Linux's 4,095

let l: Layout;
before(async () => {
  l = await makeLayout([globTool, grepTool({ engine: "builtin" }), {
    ...grepTool({ engine: "ripgrep" }),
    name: "rg_grep",
  }]);
  await fsp.writeFile(path.join(l.workdir, "top.txt"), "needle at the top\n");
  await run("bash", [
    "-c",
    // Each step is a relative path well under the limit; together they pass it.
    `cd "$1" && mkdir deep && cd deep && step=$(printf 'abc/%.0s' $(seq 500)) && ` +
    `for ((i = 0; i < ${DEPTH / 500}; i++)); do mkdir -p "$step" && cd "$step" || exit 1; done && ` +
    "echo needle at the bottom > bottom.txt",
    "bash",
    l.workdir,
  ]);
  await run("bash", [
    "-c",
    `cd "$1" && mkdir odd && printf 'needle in an odd name\\n' > odd/$'caf\\xe9'.txt`,
    "bash",
    l.workdir,
  ]);
});
after(async () => {
  // fs.rm cannot reach past the path limit; rm walks with openat.
  await run("rm", ["-rf", path.join(l.workdir, "deep")]);
  await l.cleanup();
});

type Skipped = { path: string; reason: string };

describe("what a search cannot read is reported, never missed in silence", () => {
  test("glob names the folder past the path limit, with the reason", { timeout: 60_000 }, async () => {
    const out = ok(await l.call("glob", { pattern: "**/bottom.txt" }));
    assert.deepEqual(out.matches, []);
    const tooLong = (out.skipped as Skipped[]).find((s) => /longer than the system limit of 4095 bytes/.test(s.reason));
    assert.ok(tooLong, JSON.stringify(out).slice(0, 500));
    assert.match(tooLong.path, /^deep\/abc\/abc/);
    assert.ok(tooLong.path.length < 300, "long paths are shortened in the result");
    assert.match(String(out.note), /not searched/);
  });

  test(
    "glob names a file whose name is not UTF-8 (Deno cannot open it by any name)",
    { timeout: 60_000, skip: !IS_DENO },
    async () => {
      const out = ok(await l.call("glob", { pattern: "odd/*" }));
      assert.deepEqual(out.matches, []);
      assert.match(JSON.stringify(out.skipped), /not valid UTF-8/);
    },
  );

  for (const tool of ["grep", "rg_grep"]) {
    test(`${tool} reports both instead of "No matches" for what it could not search`, {
      timeout: 60_000,
      skip: tool === "rg_grep" && !rg,
    }, async () => {
      const out = ok(await l.call(tool, { pattern: "needle" }));
      assert.deepEqual((out.matches as { path: string }[]).map((m) => m.path), ["top.txt"]);
      const reasons = (out.skipped as Skipped[]).map((s) => `${s.path}: ${s.reason}`).join("\n");
      assert.match(reasons, /^deep\/abc.*longer than the system limit/m);
      if (IS_DENO) assert.match(reasons, /^odd\/caf\uFFFD\.txt: .*not valid UTF-8/m);
      assert.match(String(out.note), /not searched/);
    });
  }

  test("a search with nothing skipped says nothing about skipping", { timeout: 60_000 }, async () => {
    const out = ok(await l.call("grep", { pattern: "needle", path: "top.txt" }));
    assert.equal(out.skipped, undefined);
    assert.equal(out.skipped_count, undefined);
  });
});
