// The browser group through `main.ts serve` over stdio, started with the
// narrow flags the tools document (never -A): a workspace page opens and reads,
// and shutting the server down (the client closing, or SIGTERM) leaves no
// browser process behind.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BROWSER_MARKER } from "../../../tools/browser/_browser_session.ts";
import { alive, descendantsWith, noBrowser } from "./_fixtures.ts";
import { printedFlags } from "../../policy/_narrow_run.ts";
import { DENO_PROCESS_ONLY } from "../../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

// Served under exactly the flags `main.ts flags --groups browser` prints, so that they are known to be enough.
async function serve(workspace: string) {
  const temp = await fs.realpath(tmpdir());
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      "run",
      ...await printedFlags(workspace, temp, ["browser"]),
      join(ROOT, "main.ts"),
      "serve",
      "--workspace",
      workspace,
      "--temp-dir",
      temp,
      "--groups",
      "browser",
    ],
    stderr: "pipe",
  });
  const client = new Client({ name: "browser-stdio-test", version: "1" });
  await client.connect(transport);
  return { client, transport };
}

async function text(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args }) as CallToolResult;
  const body = result.content.map((c) => (c as { text?: string }).text ?? "").join("\n");
  assert.ok(!result.isError, `${name}: ${body}`);
  return body;
}

// Under Node (the npm build) there is no `deno run` to serve main.ts under its flags.

describe("browser over main.ts serve", { skip: noBrowser || DENO_PROCESS_ONLY }, () => {
  for (const ending of ["the client closes", "SIGTERM"] as const) {
    test(
      `a workspace page opens under narrow flags; after ${ending} no browser is left`,
      { timeout: 60_000 },
      async () => {
        const workspace = await fs.realpath(await fs.mkdtemp(join(tmpdir(), "toolfence-browser-stdio-")));
        try {
          await fs.writeFile(join(workspace, "page.html"), "<title>Served</title><h1>Over stdio</h1>");
          const { client, transport } = await serve(workspace);
          await text(client, "browser_navigate", { url: `file://${workspace}/page.html` });
          assert.match(await text(client, "browser_snapshot", {}), /heading "Over stdio"/);
          // By pid: a browser that outlived the server would no longer descend from this process.
          const pids = descendantsWith(BROWSER_MARKER);
          assert.ok(pids.length > 0, "the browser runs");
          if (ending === "SIGTERM") process.kill(transport.pid!, "SIGTERM");
          await client.close();
          assert.ok(await waitUntil(() => !pids.some(alive), 10_000), `no browser left: ${pids.filter(alive)}`);
        } finally {
          await fs.rm(workspace, { recursive: true, force: true });
        }
      },
    );
  }
});
