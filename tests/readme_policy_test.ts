// The README's "Configuring the policy" example file is a valid policy file
// whose examples pass, so that what the README shows is what the loader takes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parsePolicyFile, PolicyRules, runPolicyExamples } from "../policy/mod.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

test("the README's example policy file validates and its examples pass", { timeout: 60_000 }, async () => {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Configuring the policy"));
  const match = /```jsonc\n([\s\S]*?)\n```/.exec(section);
  assert.ok(match, "the section has a jsonc block");
  const layer = parsePolicyFile("README.md", match[1], "project");
  assert.ok((layer.config.examples?.length ?? 0) >= 8);
  const dir = await mkdtemp(join(tmpdir(), "toolfence-readme-"));
  try {
    const results = await runPolicyExamples(PolicyRules.fromLayers([layer], dir));
    assert.deepEqual(results.filter((r) => !r.ok), []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
