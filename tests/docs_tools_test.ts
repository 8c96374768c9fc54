// docs/tools.md is what scripts/docs_tools.ts writes from the registry: every
// built-in tool is in it with its parameters, and the file is up to date.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TOOLS_REFERENCE_PATH, toolsReference } from "../scripts/docs_tools.ts";
import { BUILTIN_GROUPS, SUBAGENT_TOOLS } from "../tools/mod.ts";
import { IS_DENO } from "./_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
// The docs stay in the checkout; the npm build does not carry them.

test("docs/tools.md is up to date with the registry", {
  timeout: 60_000,
  skip: !IS_DENO && "the docs are in the checkout, not in the npm build",
}, async () => {
  const current = await readFile(join(ROOT, TOOLS_REFERENCE_PATH), "utf8");
  assert.equal(
    current,
    toolsReference(),
    "docs/tools.md is out of date: run deno run --allow-read --allow-write=docs scripts/docs_tools.ts",
  );
});

test("the reference names every built-in tool, each parameter and what it needs", { timeout: 60_000 }, () => {
  const text = toolsReference();
  const tools = [...Object.values(BUILTIN_GROUPS).flatMap((make) => make()), ...SUBAGENT_TOOLS(() => undefined)];
  assert.ok(tools.length >= 40, `${tools.length} tools`);
  for (const tool of tools) {
    const start = text.indexOf(`### \`${tool.name}\`\n`);
    assert.ok(start >= 0, `${tool.name} has a section`);
    const end = text.indexOf("\n### ", start + 1);
    const section = text.slice(start, end < 0 ? undefined : end);
    for (const parameter of Object.keys(tool.inputSchema.properties ?? {})) {
      assert.ok(section.includes(`| \`${parameter}\` |`), `${tool.name}: parameter ${parameter}`);
    }
    assert.match(section, /^- needs: /m, `${tool.name}: needs`);
    assert.ok(section.includes(`- permissions: ${(tool.permissions ?? []).join(", ") || "none"};`), tool.name);
  }
});
