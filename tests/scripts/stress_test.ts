import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const stressScript = path.join(repoRoot, "scripts", "stress.ts");
// The npm build's tree has no deno.json and its tests are compiled: the list names the source files.
const noSource = !existsSync(path.join(repoRoot, "deno.json")) && "reads the source repository's scripts/stress.ts";

test("every racing test the stress run names exists (a moved test file would end the run at once)", {
  skip: noSource,
  timeout: 60_000,
}, () => {
  const text = readFileSync(stressScript, "utf8");
  const list = /RACING_TESTS[^=]*=\s*\[([^\]]*)\]/.exec(text)?.[1] ?? "";
  const files = [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  assert.ok(files.length >= 5, `RACING_TESTS lists ${files.length} files`);
  for (const file of files) assert.ok(existsSync(path.join(repoRoot, file)), `${file} is in RACING_TESTS but missing`);
});
