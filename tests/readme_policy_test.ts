// The example policy file of docs/policy.md is a valid policy file whose
// examples pass, so that what the docs show is what the loader takes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parsePolicyFile, PolicyRules, runPolicyExamples } from "../policy/mod.ts";
import { IS_DENO } from "./_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
// The docs stay in the checkout; the npm build does not carry them.

test("the example policy file of docs/policy.md validates and its examples pass", {
  timeout: 60_000,
  skip: !IS_DENO && "the docs are in the checkout, not in the npm build",
}, async () => {
  const page = await readFile(join(ROOT, "docs", "policy.md"), "utf8");
  const match = /```jsonc\n([\s\S]*?)\n```/.exec(page);
  assert.ok(match, "the page has a jsonc block");
  const layer = parsePolicyFile("docs/policy.md", match[1], "project");
  assert.ok((layer.config.examples?.length ?? 0) >= 8);
  const dir = await mkdtemp(join(tmpdir(), "toolfence-readme-"));
  try {
    const results = await runPolicyExamples(PolicyRules.fromLayers([layer], dir));
    assert.deepEqual(results.filter((r) => !r.ok), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
