// The tools that answer images are offered by `serve`: an MCP client takes
// image content, so a served session has `vision` unless `--capabilities none`
// says otherwise. Over stdio (main.ts serve under its narrow flags) and
// Streamable HTTP, with the official SDK client: the browser group has its 13
// tools, and request_image answers MCP image content, cropped when asked.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { decode as decodePng, encode as encodePng } from "fast-png";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { serveHttp } from "../../adapters/mcp/mod.ts";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { narrowFlags } from "./_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const MAIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "main.ts");
const GROUPS = "fs,browser";
const BROWSER_TOOLS = 13;

let workspace: string;
before(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-vision-")));
  const data = new Uint8Array(8 * 6 * 4).fill(200);
  await writeFile(join(workspace, "dot.png"), encodePng({ width: 8, height: 6, data, channels: 4, depth: 8 }));
});
after(async () => {
  await rm(workspace, { recursive: true, force: true });
});

async function check(client: Client, vision: boolean): Promise<void> {
  const names = (await client.listTools()).tools.map((t) => t.name);
  const browser = names.filter((name) => name.startsWith("browser_"));
  assert.equal(browser.length, vision ? BROWSER_TOOLS : BROWSER_TOOLS - 1, browser.join(" "));
  assert.equal(names.includes("browser_screenshot"), vision);
  assert.equal(names.includes("request_image"), vision);
  const calling = client.callTool({ name: "request_image", arguments: { src: "dot.png" } });
  if (!vision) {
    // Not offered, not callable: the protocol error of an unknown tool (the specification's, for a name not listed).
    await assert.rejects(calling, { code: -32602, message: /Unknown tool: request_image/ });
    return;
  }
  const result = await calling as CallToolResult;
  assert.equal(result.isError, undefined, JSON.stringify(result.content));
  const image = result.content.find((c) => c.type === "image") as { data: string; mimeType: string } | undefined;
  assert.ok(image, JSON.stringify(result.content));
  assert.equal(image.mimeType, "image/png");
  assert.ok(image.data.length > 0);
  // A crop is cut out before scaling, and its size is what the client gets.
  const cropped = await client.callTool({
    name: "request_image",
    arguments: { src: "dot.png", crop: { x: 2, y: 1, width: 4, height: 3 } },
  }) as CallToolResult;
  assert.equal(cropped.isError, undefined, JSON.stringify(cropped.content));
  const part = cropped.content.find((c) => c.type === "image") as { data: string } | undefined;
  const png = decodePng(Uint8Array.from(atob(part!.data), (c) => c.charCodeAt(0)));
  assert.deepEqual([png.width, png.height], [4, 3]);
  assert.match(JSON.stringify(cropped.content), /crop 4×3 at 2,1 of original 8×6 px/);
}

async function overStdio(extra: string[], run: (client: Client) => Promise<void>): Promise<void> {
  const flags = await narrowFlags(workspace, GROUPS);
  const client = new Client({ name: "vision-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["run", ...flags, MAIN, "serve", "--workspace", workspace, "--groups", GROUPS, ...extra],
      stderr: "pipe",
    }),
  );
  try {
    await run(client);
  } finally {
    await client.close();
  }
}

describe("image tools over MCP", { timeout: 60_000 }, () => {
  test("stdio: offered by default", { timeout: 60_000, skip: DENO_PROCESS_ONLY }, async () => {
    await overStdio([], (client) => check(client, true));
  });

  test("stdio: --capabilities none leaves them out", { timeout: 60_000, skip: DENO_PROCESS_ONLY }, async () => {
    await overStdio(["--capabilities", "none"], (client) => check(client, false));
  });

  for (const vision of [true, false]) {
    test(
      `Streamable HTTP: ${vision ? "offered by default" : "capabilities [] leaves them out"}`,
      { timeout: 60_000 },
      async () => {
        const box = new ToolBox().withDefaults("fs", "browser");
        const server = await serveHttp(box, {
          port: 0,
          workspace,
          allowNoAuth: true,
          sandbox: "off",
          ...(vision ? {} : { capabilities: [] }),
        });
        const client = new Client({ name: "vision-test", version: "1" });
        try {
          await client.connect(new StreamableHTTPClientTransport(server.url));
          await check(client, vision);
        } finally {
          await client.close();
          await server.shutdown();
        }
      },
    );
  }
});
