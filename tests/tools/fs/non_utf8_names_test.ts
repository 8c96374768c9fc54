// File names that are not UTF-8. What this runtime gives is pinned first:
// under Deno, node:fs's readdir({ encoding: "buffer" }) and Deno.readDir both
// hand back U+FFFD in place of the bad bytes, and a Buffer path is decoded the
// same lossy way, so no call opens such a file (a write through the byte path
// even makes a second file under the U+FFFD spelling); under Node the bytes
// list and open. So no escaping can round-trip under Deno, and the tools say
// so instead: list_dir and glob name such an entry under `skipped`, with the
// reason; read_file of the lossy spelling finds nothing, and write_file to it
// makes a new file, leaving the other's bytes alone. A name that really holds
// U+FFFD is an ordinary name.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { listDirTool } from "../../../tools/fs/list_dir.ts";
import { readFileTool } from "../../../tools/fs/read_file.ts";
import { writeFileTool } from "../../../tools/fs/write_file.ts";
import { globTool } from "../../../tools/search/glob.ts";
import { type Layout, makeLayout, ok } from "./_helpers.ts";
import { IS_DENO } from "../../_runtime.ts";

const run = promisify(execFile);
/** The name's bytes: `a`, 0xFF (never UTF-8), `b.txt`. */
const BYTES = Buffer.from([0x61, 0xff, 0x62, 0x2e, 0x74, 0x78, 0x74]);
const LOSSY = "a\uFFFDb.txt";

/** The folder's names as bash sees them (bytes, as `%q` quotes them). */
async function bashNames(dir: string): Promise<string[]> {
  const { stdout } = await run("bash", ["-c", 'cd "$1" && for f in *; do printf "%q\\n" "$f"; done', "bash", dir]);
  return stdout.trim().split("\n").sort();
}

let l: Layout;
let dir: string;
before(async () => {
  l = await makeLayout([listDirTool, readFileTool, writeFileTool, globTool]);
  dir = path.join(l.workdir, "odd");
  await run("bash", ["-c", `mkdir "$1" && printf 'the original\\n' > "$1"/$'a\\xffb.txt'`, "bash", dir]);
});
after(async () => await l.cleanup());

describe("names that are not UTF-8", () => {
  test("the runtime: Deno loses the bytes everywhere; Node keeps them", { timeout: 60_000 }, async () => {
    const listed = fs.readdirSync(dir, { encoding: "buffer" });
    const byteName = Buffer.concat([Buffer.from(`${dir}/`), BYTES]);
    if (IS_DENO) {
      assert.deepEqual(listed.map((b) => b.toString("hex")), [Buffer.from(LOSSY).toString("hex")]);
      const runtime = globalThis as unknown as { Deno: { readDirSync(path: string): Iterable<{ name: string }> } };
      const denoNames = [...runtime.Deno.readDirSync(dir)].map((e) => e.name);
      assert.deepEqual(denoNames, [LOSSY]);
      assert.throws(() => fs.readFileSync(byteName), { code: "ENOENT" });
      assert.throws(() => fs.readFileSync(path.join(dir, LOSSY)), { code: "ENOENT" });
      // A write through the byte path lands on a second file, under the lossy spelling.
      const probe = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x63, 0xfe])]);
      fs.writeFileSync(probe, "probe");
      assert.deepEqual(await bashNames(dir), ["$'a\\377b.txt'", "c\uFFFD"]);
      fs.rmSync(path.join(dir, "c\uFFFD"));
    } else {
      assert.deepEqual(listed.map((b) => b.toString("hex")), [BYTES.toString("hex")]);
      assert.equal(fs.readFileSync(byteName, "utf8"), "the original\n");
      // The string form is still lossy under Node, and names nothing.
      assert.deepEqual(fs.readdirSync(dir), [LOSSY]);
      assert.throws(() => fs.readFileSync(path.join(dir, LOSSY)), { code: "ENOENT" });
    }
  });

  test("list_dir and glob name it under skipped, with the reason", { timeout: 60_000 }, async () => {
    for (const details of [false, true]) {
      const out = ok(await l.call("list_dir", { path: "odd", details }));
      assert.deepEqual(out.files, []);
      const skipped = out.skipped as { name: string; reason: string }[];
      assert.deepEqual(skipped.map((entry) => entry.name), [LOSSY]);
      assert.match(skipped[0].reason, /not valid UTF-8, and this runtime can only open files by UTF-8 names/);
    }
    if (IS_DENO) {
      // As tests/tools/search/skipped_test.ts: glob's report of it is pinned under Deno.
      const found = ok(await l.call("glob", { pattern: "odd/*" }));
      assert.deepEqual(found.matches, []);
      assert.match(JSON.stringify(found.skipped), /not valid UTF-8/);
    }
  });

  test("read_file of the lossy spelling finds nothing; write_file to it leaves the original alone", {
    timeout: 60_000,
  }, async () => {
    const read = await l.call("read_file", { path: `odd/${LOSSY}` });
    assert.equal(read.errorCode, "not_found");
    const written = await l.call("write_file", { path: `odd/${LOSSY}`, content: "a new file\n" });
    assert.equal(written.status, "success", written.error);
    assert.deepEqual(await bashNames(dir), ["$'a\\377b.txt'", `a\uFFFDb.txt`]);
    const { stdout } = await run("bash", ["-c", `cat "$1"/$'a\\xffb.txt'`, "bash", dir]);
    assert.equal(stdout, "the original\n");
    // Now a real file has the spelling, so it is listed; the lost one reads the same and stays skipped.
    const out = ok(await l.call("list_dir", { path: "odd" }));
    assert.deepEqual(out.files, [LOSSY]);
    assert.match(JSON.stringify(out.skipped), /another entry's name reads the same/);
    assert.match(String(ok(await l.call("read_file", { path: `odd/${LOSSY}` })).content), /a new file/);
    await fsp.rm(path.join(dir, LOSSY));
  });
});
