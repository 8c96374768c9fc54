// Each agent framework is loaded by its own entry point only: the module graph
// of the adapters' main entry reaches none of them, and each framework entry
// reaches its own framework and no other (read from `deno info`, which lists
// the npm packages a module graph imports).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT } from "../../scripts/public_api.ts";
import { IS_DENO } from "../_runtime.ts";

const FRAMEWORKS = [
  "@openai/agents",
  "@langchain/core",
  "@langchain/langgraph",
  "@mastra/core",
  "@anthropic-ai/claude-agent-sdk",
  "@google/adk",
];

/**
 * The npm packages the module graph of `file` imports, by name. In auto mode: the project's manual mode lists the
 * files of node_modules instead, the packages' own dependencies among them.
 */
function npmImportsOf(file: string): Set<string> {
  const args = ["info", "--json", "--node-modules-dir=auto", path.join(ROOT, file)];
  const out = spawnSync("deno", args, { cwd: ROOT, encoding: "utf8" });
  assert.equal(out.status, 0, out.stderr);
  const info = JSON.parse(out.stdout) as { modules: { specifier: string }[] };
  const names = new Set<string>();
  for (const { specifier } of info.modules) {
    const match = /^npm:\/?(@[^/@]+\/[^/@]+|[^/@]+)/.exec(specifier);
    if (match) names.add(match[1]);
  }
  return names;
}

describe("the agent frameworks are loaded only by their own entry points", {
  skip: IS_DENO ? false : "reads the source repository's module graph with deno info",
}, () => {
  test("@toolfence/adapters (main) and the umbrella import no framework", { timeout: 60_000 }, () => {
    for (const file of ["adapters/mod.ts", "mod.ts"]) {
      const imported = npmImportsOf(file);
      assert.deepEqual(FRAMEWORKS.filter((name) => imported.has(name)), [], file);
    }
  });

  const entries: [string, string[]][] = [
    ["adapters/openai_agents.ts", ["@openai/agents"]],
    ["adapters/langchain.ts", ["@langchain/core"]],
    ["adapters/langgraph.ts", ["@langchain/core", "@langchain/langgraph"]],
    ["adapters/mastra.ts", ["@mastra/core"]],
    ["adapters/claude_agent.ts", ["@anthropic-ai/claude-agent-sdk"]],
    ["adapters/google_adk.ts", ["@google/adk"]],
  ];
  for (const [file, own] of entries) {
    test(`${file} imports ${own.join(" and ")} and no other framework`, { timeout: 60_000 }, () => {
      const imported = npmImportsOf(file);
      assert.deepEqual(FRAMEWORKS.filter((name) => imported.has(name)).sort(), [...own].sort());
    });
  }
});
