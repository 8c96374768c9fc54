// A slice of the file door's path matrix (tests/_door_matrix.ts) through real
// MCP servers: `main.ts serve` over stdio with the policy file given by
// --config, and the Streamable HTTP server with a tenant root, where `ws` is
// one tenant and `other` another. Every tool that takes a path × every rule ×
// three spellings of it (the full matrix runs through the library in
// tests/policy/door_matrix_test.ts).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { parsePolicyFile } from "../../policy/config/load.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import { narrowFlags } from "./_raw_server.ts";
import { connect, type Harness, startServer } from "./_http_harness.ts";
import {
  argumentsFor,
  checkCall,
  type Layout,
  mustRefuse,
  pathTools,
  plant,
  POLICY,
  restoreLinks,
  type Rule,
  spellings,
} from "../_door_matrix.ts";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = join(ROOT, "main.ts");
const GROUPS = ["fs", "search", "patch"];
const RULES: Rule[] = ["outside", "denied", "tenant", "hidden", "read-only", "protected"];

const tools = pathTools(new ToolBox().withDefaults(...GROUPS).list());

// Per rule: a plain spelling, an absolute or `..` one, and one through a link where the rule has one.
function slice(layout: Layout, rule: Rule): string[] {
  const all = spellings(layout)[rule];
  const linked = all.find((s) => s.startsWith("l_") && s.includes("/")) ?? all.find((s) => s.startsWith("l_"));
  return [...new Set([all[0], all[1], ...(linked ? [linked] : [])])];
}

async function runSlice(
  layout: Layout,
  client: Client,
  transport: string,
): Promise<{ problems: string[]; calls: number }> {
  const listed = new Set((await client.listTools()).tools.map((t) => t.name));
  for (const name of ["read_file", "write_file", "list_dir", "glob", "grep"]) {
    assert.ok(listed.has(name), `${transport} does not serve ${name}`);
  }
  const problems: string[] = [];
  let calls = 0;
  for (const entry of tools) {
    if (!listed.has(entry.tool.name)) continue;
    for (const arg of entry.pathArgs) {
      for (const rule of RULES) {
        for (const spelled of slice(layout, rule)) {
          const label = `${transport} ${rule} ${entry.tool.name} ${arg}=${JSON.stringify(spelled)}`;
          const args = await argumentsFor(layout, entry, arg, spelled, calls++);
          const result = await client.callTool({ name: entry.tool.name, arguments: args });
          problems.push(...checkCall(layout, label, JSON.stringify(result), spelled));
          if (mustRefuse(rule, spelled) && !result.isError) problems.push(`${label}: not refused`);
          restoreLinks(layout);
        }
      }
    }
  }
  return { problems, calls };
}

describe("the file door's path matrix over MCP", { timeout: 120_000 }, () => {
  let layout: Layout;
  before(async () => {
    layout = await plant();
  });
  after(async () => {
    await layout.close();
  });

  test("stdio: main.ts serve with the policy file, every tool × every rule", {
    timeout: 90_000,
    skip: DENO_PROCESS_ONLY,
  }, async () => {
    // The policy file lies outside the workspace: its read is granted beside the workspace's.
    const flags = (await narrowFlags(layout.ws, GROUPS.join(","))).map((flag) =>
      flag.startsWith("--allow-read=") ? `${flag},${layout.policyFile}` : flag
    );
    const transport = new StdioClientTransport({
      command: DENO,
      args: [
        "run",
        ...flags,
        MAIN,
        "serve",
        "--workspace",
        layout.ws,
        "--groups",
        GROUPS.join(","),
        "--config",
        layout.policyFile,
        "--auto-confirm",
      ],
      cwd: ROOT,
      stderr: "pipe",
    });
    const client = new Client({ name: "door-matrix", version: "1.0.0" }, { capabilities: {} });
    await client.connect(transport);
    try {
      const { problems, calls } = await runSlice(layout, client, "stdio");
      assert.ok(calls > 50, `only ${calls} calls`);
      assert.deepEqual(problems, []);
    } finally {
      await client.close();
    }
  });

  test("HTTP: a tenant of the tenant root, every tool × every rule", { timeout: 90_000 }, async () => {
    const rules = PolicyRules.fromLayers(
      [parsePolicyFile(layout.policyFile, JSON.stringify(POLICY), "cli")],
      layout.ws,
    );
    const harness: Harness = await startServer([{ token: "t-ws", tenant: "ws" }], { tenantRoot: layout.root, rules });
    const client = await connect(harness.server.url, "t-ws");
    try {
      const { problems, calls } = await runSlice(layout, client, "http");
      assert.ok(calls > 50, `only ${calls} calls`);
      assert.deepEqual(problems, []);
    } finally {
      await client.close();
      await harness.close();
    }
  });
});
