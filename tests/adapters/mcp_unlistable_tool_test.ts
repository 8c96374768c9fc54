// A tool MCP cannot show (a class tool whose input schema is an array, or a union at its root, no object schema) is
// left out of tools/list, which lists every other tool, and a call of it is an unknown tool; the operator reads why
// once on stderr. Before, tools/list failed whole over it, and the client had no tool at all.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import * as v from "valibot";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { createMcpServer } from "../../adapters/mcp/mod.ts";
import { textOf } from "./_http_harness.ts";

describe("a tool MCP cannot show", () => {
  test("is left out of tools/list, unknown to tools/call, and named once on stderr", { timeout: 30_000 }, async () => {
    const box = new ToolBox().register(
      {
        name: "list_input",
        description: "Takes an array.",
        inputSchema: { type: "array", items: { type: "string" } },
        readOnly: true,
        execute: () => "ran",
      } as never,
      {
        name: "union_input",
        description: "Takes an object or a string.",
        inputSchema: { anyOf: [{ type: "object" }, { type: "string" }] },
        readOnly: true,
        execute: () => "ran",
      } as never,
      tool({ name: "fine", description: "Fine.", input: v.object({}), readOnly: true, run: () => "fine" }),
    );
    const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-unlistable-"));
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof write;
    const sessions = [];
    try {
      // Two sessions of one server process, each listing twice: the operator is told once per tool.
      for (let n = 0; n < 2; n++) {
        const served = createMcpServer(box, { workspace: dir });
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        const client = new Client({ name: "t", version: "1" });
        await served.server.connect(serverSide);
        await client.connect(clientSide);
        sessions.push({ served, client });
        for (let m = 0; m < 2; m++) {
          assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ["fine"]);
        }
        assert.equal(textOf(await client.callTool({ name: "fine", arguments: {} })), "fine");
        for (const name of ["list_input", "union_input"]) {
          await assert.rejects(
            client.callTool({ name, arguments: {} }),
            (error: { code?: number; message: string }) =>
              error.code === -32602 && error.message.includes(`Unknown tool: ${name}`),
          );
        }
      }
    } finally {
      process.stderr.write = write;
      for (const { served, client } of sessions) {
        await client.close();
        await served.close();
      }
      await rm(dir, { recursive: true, force: true });
    }
    const told = written.join("").split("\n").filter((line) => line.includes("is not listed over MCP"));
    assert.equal(told.length, 2, told.join("\n"));
    assert.match(told[0], /the tool list_input is not listed over MCP: .*object schema/);
    assert.match(told[1], /the tool union_input is not listed over MCP: .*object schema/);
  });
});
