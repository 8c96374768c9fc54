// The MCP server tells the client's model how commands will run: the sandbox
// state, in the instructions of `initialize`, whether or not bubblewrap was
// probed before the server was made.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ToolBox } from "../../toolbox.ts";
import { createMcpServer } from "../../adapters/mcp/server.ts";
import { sandboxState } from "../../policy/sandbox.ts";
import { IS_DENO } from "../_runtime.ts";

async function instructionsOf(options: { sandbox?: "auto" | "off" | "required"; instructions?: string }) {
  const dir = await mkdtemp(path.join(tmpdir(), "toolfence-mcp-sandbox-"));
  const served = createMcpServer(new ToolBox(), { workspace: dir, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "1" });
  try {
    await served.server.connect(serverSide);
    await client.connect(clientSide);
    return client.getInstructions() ?? "";
  } finally {
    await client.close();
    await served.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test("the instructions state the sandbox, after the caller's own", { timeout: 60_000 }, async () => {
  const auto = await sandboxState("auto");
  const text = await instructionsOf({ instructions: "Be brief." });
  assert.ok(text.startsWith("Be brief.\n\n"), text);
  assert.ok(text.endsWith(auto.summary), text);
  assert.match(await instructionsOf({ sandbox: "off" }), /OS sandbox: off/);
  const required = await instructionsOf({ sandbox: "required" });
  assert.match(required, auto.working ? /OS sandbox: on/ : /no shell command or checker will start/);
});

test("a server made before bubblewrap was probed still states it at initialize", {
  timeout: 60_000,
  skip: IS_DENO ? false : "starts a fresh Deno process",
}, async () => {
  const extension = path.extname(new URL(import.meta.url).pathname);
  const url = (p: string) => new URL(`../../${p}${extension}`, import.meta.url).href;
  const script = `
    import { Client } from "@modelcontextprotocol/sdk/client/index.js";
    import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
    import { ToolBox } from ${JSON.stringify(url("core/toolbox"))};
    import { createMcpServer } from ${JSON.stringify(url("adapters/mcp/server"))};
    const served = createMcpServer(new ToolBox(), { workspace: ${JSON.stringify(tmpdir())} });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    await served.server.connect(b);
    await client.connect(a);
    console.log(JSON.stringify(client.getInstructions()));
    await client.close();
    await served.close();
  `;
  const out = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      ["eval", "--config", new URL("../../deno.json", import.meta.url).pathname, script],
      { timeout: 60_000 },
      (error, stdout, stderr) => error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
  assert.equal(JSON.parse(out.trim()), (await sandboxState("auto")).summary);
});
