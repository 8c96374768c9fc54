import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { ok, unchanged } from "./_helpers.ts";
import { at, l, useToolLayout } from "./_tool_layout.ts";

useToolLayout();

describe("mkdir", () => {
  test("creates nested folders; an existing folder is fine; a file is not", { timeout: 60_000 }, async () => {
    assert.deepEqual(ok(await l.call("mkdir", { path: "x/y/z" })), { path: at("x/y/z"), created: true });
    assert.deepEqual(ok(await l.call("mkdir", { path: "x/y" })), { path: at("x/y"), created: false });
    const file = await unchanged(l.root, () => l.call("mkdir", { path: "inside.txt" }));
    assert.equal(file.errorCode, "not_directory");
  });
});
