import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { parseBash } from "../../../policy/shell/parser.ts";
import { type EmbeddedWasm, TREE_SITTER_BASH_WASM, TREE_SITTER_RUNTIME_WASM } from "../../../policy/shell/_wasm.ts";

describe("parseBash", () => {
  test("parses with the embedded tree-sitter-bash grammar", { timeout: 60_000 }, async () => {
    const tree = await parseBash("ls -la | head");
    assert.ok(tree);
    assert.equal(
      tree.rootNode.toString(),
      "(program (pipeline (command name: (command_name (word)) argument: (word)) (command name: (command_name (word)))))",
    );
    tree.delete();
  });

  test("gives up when the time limit passes, and parses normally afterwards", { timeout: 60_000 }, async () => {
    const source = `echo ${"a ".repeat(40_000)}`;
    assert.equal(await parseBash(source, 0), undefined);
    const tree = await parseBash("ls");
    assert.ok(tree);
    assert.equal(tree.rootNode.text, "ls");
    tree.delete();
  });
});

describe("the embedded WebAssembly", () => {
  // Fails when deno.json moves to other versions without running
  // scripts/embed_tree_sitter_wasm.ts again.
  const installed: [EmbeddedWasm, string][] = [
    [TREE_SITTER_RUNTIME_WASM, "web-tree-sitter/tree-sitter.wasm"],
    [TREE_SITTER_BASH_WASM, "tree-sitter-bash/tree-sitter-bash.wasm"],
  ];
  for (const [embedded, specifier] of installed) {
    test(`matches the installed ${specifier}`, { timeout: 60_000 }, async () => {
      const bytes = await readFile(fileURLToPath(import.meta.resolve(specifier)));
      const unpacked = gunzipSync(Buffer.from(embedded.gzipBase64, "base64"));
      assert.equal(unpacked.length, embedded.size);
      assert.equal(createHash("sha256").update(unpacked).digest("hex"), embedded.sha256);
      assert.ok(
        unpacked.equals(bytes),
        `${specifier} differs from policy/shell/_wasm.ts; run scripts/embed_tree_sitter_wasm.ts`,
      );
    });
  }
});
