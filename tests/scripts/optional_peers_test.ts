// The optional peers of the npm packages: an entry point imports a framework (or the MCP stack) statically only in the
// modules that need its values, each listed here, so that the umbrella and the other entry points load none of them.
// No module of the library awaits at its top level: one that does makes every entry point whose graph reaches it
// impossible to require() (ERR_REQUIRE_ASYNC_MODULE on Node 22.12+ and 24); peers used later load through importPeer
// at first use. And the range importPeer names is the one the member's deno.json imports at.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { OPTIONAL_PEERS, packageNameOf } from "../../scripts/_npm_package.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MEMBERS = ["core", "internal", "policy", "tools", "adapters"];

function librarySources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules") out.push(...librarySources(full));
    else if (/\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name) && !/[._]test\.ts$/.test(entry.name)) {
      out.push(full);
    }
  }
  return out;
}

/**
 * The modules that import an optional peer's values statically, and which: the framework entry points build their
 * tools synchronously from the framework's values, and the MCP and console stacks are loaded whole by `toolfence
 * serve` through importPeer (cli/mcp_module.ts, adapters/mcp/http_cli.ts), which names a missing one.
 */
const STATIC_PEERS: Record<string, readonly string[]> = {
  "adapters/ai_sdk.ts": ["ai"],
  "adapters/openai_agents.ts": ["@openai/agents"],
  "adapters/_langchain_tool.ts": ["@langchain/core"],
  "adapters/langgraph.ts": ["@langchain/langgraph"],
  "adapters/mastra.ts": ["@mastra/core"],
  "adapters/google_adk.ts": ["@google/adk"],
  "adapters/claude_agent.ts": ["@anthropic-ai/claude-agent-sdk", "zod"],
  "adapters/mcp/_sdk.ts": ["@modelcontextprotocol/sdk"],
  "adapters/mcp/_http_jwt.ts": ["jose"],
  "adapters/mcp/console/serve_console.ts": ["hono"],
};

const sources = [
  ...MEMBERS.flatMap((m) => librarySources(path.join(root, m))),
  ...["mod.ts", "mcp.ts", "toolbox.ts", "main.ts"].map((f) => path.join(root, f)),
  ...librarySources(path.join(root, "cli")),
].filter(existsSync);

describe("optional peers", () => {
  test("the library imports an optional peer statically only where it is listed", { timeout: 60_000 }, () => {
    const valueImports: string[] = [];
    // Static import and export declarations, whole (a named list may span lines); `import type` and
    // `export type` are erased, so they load nothing.
    const declaration = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s*"([^"]+)";?/gms;
    for (const file of sources) {
      for (const match of readFileSync(file, "utf8").matchAll(declaration)) {
        const [, , typeOnly, names, specifier] = match;
        const peer = packageNameOf(specifier);
        if (typeOnly || !OPTIONAL_PEERS.has(peer)) continue;
        // `import { type A, type B }` loads the module too (only `import type` is erased whole).
        const where = path.relative(root, file).split(path.sep).join("/");
        if (!STATIC_PEERS[where]?.includes(peer)) {
          valueImports.push(`${where}: ${names.replace(/\s+/g, " ")} from "${specifier}"`);
        }
      }
    }
    assert.deepEqual(
      valueImports,
      [],
      "import a peer's values statically only in a module of STATIC_PEERS, else through importPeer at first use",
    );
  });

  test("no module of the library awaits at its top level", { timeout: 60_000 }, () => {
    const found: string[] = [];
    for (const file of sources) {
      const where = path.relative(root, file).split(path.sep).join("/");
      // The bin's program: run, never imported.
      if (where === "main.ts") continue;
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) || ts.isClassStaticBlockDeclaration(node)) return;
        if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier)) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          found.push(`${where}:${line + 1}: ${node.getText(source).slice(0, 60).replace(/\s+/g, " ")}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(found, [], "load lazily (at first use), or import statically: a top-level await breaks require()");
  });

  test("each peer importPeer names has the range its member's deno.json imports it at", { timeout: 60_000 }, () => {
    const named: string[] = [];
    for (const file of sources) {
      const member = MEMBERS.find((m) => path.relative(root, file).startsWith(m + path.sep));
      if (member === undefined) continue;
      const imports = JSON.parse(readFileSync(path.join(root, member, "deno.json"), "utf8")).imports as Record<
        string,
        string
      >;
      // A Peer written out in code (not in a JSDoc example's lines).
      const peers = /^(?!\s*\*).*?name: "([^"]+)",\s*range: "([^"]+)"/gm;
      for (const [, name, range] of readFileSync(file, "utf8").matchAll(peers)) {
        named.push(name);
        assert.equal(`npm:${name}@${range}`, imports[name], `${path.relative(root, file)}: ${name}`);
        assert.ok(OPTIONAL_PEERS.has(name), `${name} is loaded through importPeer but is not an optional peer`);
      }
    }
    // The adapters' frameworks and the MCP stack, and the core's @opentelemetry/api.
    for (const name of ["ai", "@langchain/core", "@modelcontextprotocol/sdk", "jose", "@opentelemetry/api"]) {
      assert.ok(named.includes(name), `${name} has no Peer with its range`);
    }
  });
});
