import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { denyAllHost } from "../../../policy/hosts.ts";
import { ok } from "./_helpers.ts";
import { l, useToolLayout, withHost } from "./_tool_layout.ts";

useToolLayout();

describe("temp_dir", () => {
  test("is created on first use, and writes in it never ask", { timeout: 60_000 }, async () => {
    await withHost(denyAllHost());
    const { path: temp } = ok(await l.call("temp_dir", {})) as { path: string };
    assert.ok(fs.statSync(temp).isDirectory());
    ok(await l.call("write_file", { path: `${temp}/scratch.txt`, content: "1" }));
    ok(await l.call("write_file", { path: `${temp}/scratch.txt`, content: "2" }));
    ok(await l.call("move", { src: `${temp}/scratch.txt`, dst: `${temp}/moved.txt` }));
    ok(await l.call("delete", { path: `${temp}/moved.txt` }));
    assert.equal((ok(await l.call("temp_dir", {})) as { path: string }).path, temp);
  });
});
