// filesystemChanges over MCP, as a client sees them: the official SDK
// `Client` over `StdioClientTransport` starts `deno run` on main.ts serve with
// the narrow flags `main.ts flags` prints, in a real temporary workspace; each
// call's `_meta["toolfence/result"].filesystemChanges` is compared with the
// disk, read independently before and after.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { narrowFlags } from "./_raw_server.ts";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { FileChange } from "../../core/effects.ts";
import { assertChangesMatch, diskState } from "../tools/_file_changes.ts";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = join(ROOT, "main.ts");
const GROUPS = "fs,patch,cmd";

let workspace: string;
let client: Client;

describe("main.ts serve: file changes", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-mcp-changes-")));
    await writeFile(join(workspace, "notes.md"), "alpha\nbeta\ngamma\n");
    await writeFile(join(workspace, "tool.sh"), "#!/bin/sh\necho tool\n");
    await chmod(join(workspace, "tool.sh"), 0o750);
    const flags = await narrowFlags(workspace, GROUPS);
    const transport = new StdioClientTransport({
      command: DENO,
      args: ["run", ...flags, MAIN, "serve", "--workspace", workspace, "--groups", GROUPS],
      cwd: ROOT,
      stderr: "pipe",
    });
    client = new Client({ name: "toolfence-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    // A person who allows each write and each command this once.
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const params = request.params;
      if (!("requestedSchema" in params)) throw new Error("a form was expected");
      return params.requestedSchema.properties.answer.type === "string"
        ? { action: "accept", content: { answer: "once" } }
        : { action: "accept", content: { answer: true } };
    });
    await client.connect(transport);
  });

  after(async () => {
    await client.close();
    await rm(workspace, { recursive: true, force: true });
  });

  async function checked(name: string, args: Record<string, unknown>): Promise<FileChange[]> {
    const disk = diskState(workspace);
    const result = await client.callTool({ name, arguments: args }) as CallToolResult;
    const meta =
      (result._meta as Record<string, { status: string; filesystemChanges: FileChange[] }>)["toolfence/result"];
    assert.equal(meta.status, "success", JSON.stringify(result.content));
    assert.ok(Array.isArray(meta.filesystemChanges));
    assertChangesMatch(meta.filesystemChanges, disk, diskState(workspace), { unknownBefore: name === "bash" });
    return meta.filesystemChanges;
  }

  describe("MCP: filesystemChanges match the disk", { concurrency: false }, () => {
    test("write_file, edit_file, apply_patch, move, copy, mkdir, delete", { timeout: 60_000 }, async () => {
      assert.equal((await checked("write_file", { path: "docs/a.md", content: "a\n" })).length, 2);
      assert.equal((await checked("edit_file", { path: "notes.md", old_text: "beta", new_text: "BETA" })).length, 1);
      const patch = "*** Begin Patch\n*** Add File: p.txt\n+p\n*** Update File: notes.md\n*** Move to: moved.md\n" +
        "@@\n-gamma\n+GAMMA\n*** End Patch\n";
      const patched = await checked("apply_patch", { patch });
      assert.ok(patched.some((c) => c.change === "moved" && c.path === "moved.md" && c.from === "notes.md"));
      assert.equal((await checked("move", { src: "tool.sh", dst: "bin/tool.sh" })).length, 2);
      assert.equal((await checked("copy", { src: "docs", dst: "docs2" })).length, 2);
      assert.equal((await checked("mkdir", { path: "x/y" })).length, 2);
      assert.equal((await checked("delete", { path: "docs2", recursive: true })).length, 2);
    });

    test("bash in the sandbox", { timeout: 60_000 }, async () => {
      const changes = await checked("bash", {
        command: "echo new > made.txt && echo more >> moved.md && mv p.txt q.txt && rm docs/a.md && chmod 600 made.txt",
      });
      assert.deepEqual(changes.map((c) => `${c.change} ${c.path}`).sort(), [
        "created made.txt",
        "deleted docs/a.md",
        "modified moved.md",
        "moved q.txt",
      ]);
    });

    test("a call that changes nothing reports []", { timeout: 60_000 }, async () => {
      assert.deepEqual(await checked("read_file", { path: "moved.md" }), []);
      assert.deepEqual(await checked("bash", { command: "ls" }), []);
    });
  });
});
