// The optional peers of the npm packages are loaded only by dynamic import: a static import of one that is not
// installed fails before any code runs, with Node's bare ERR_MODULE_NOT_FOUND instead of importPeer's
// peer_missing naming the package. And the range importPeer names is the one the member's deno.json imports at.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
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

const sources = [
  ...MEMBERS.flatMap((m) => librarySources(path.join(root, m))),
  ...["mod.ts", "mcp.ts", "toolbox.ts", "main.ts"].map((f) => path.join(root, f)),
  ...librarySources(path.join(root, "cli")),
].filter(existsSync);

describe("optional peers", () => {
  test("the library imports an optional peer statically only for its types", { timeout: 60_000 }, () => {
    const valueImports: string[] = [];
    // Static import and export declarations, whole (a named list may span lines); `import type` and
    // `export type` are erased, so they load nothing.
    const declaration = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s*"([^"]+)";?/gms;
    for (const file of sources) {
      for (const match of readFileSync(file, "utf8").matchAll(declaration)) {
        const [, , typeOnly, names, specifier] = match;
        if (typeOnly || !OPTIONAL_PEERS.has(packageNameOf(specifier))) continue;
        // `import { type A, type B }` loads the module too (only `import type` is erased whole).
        valueImports.push(`${path.relative(root, file)}: ${names.replace(/\s+/g, " ")} from "${specifier}"`);
      }
    }
    assert.deepEqual(valueImports, [], "load these through importPeer (core/peer.ts) and import only their types");
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
