// A file whose name is not UTF-8, seen by an MCP client over Streamable HTTP
// with the official SDK client: list_dir and glob name it under `skipped` with
// the reason, never as a file to open (the runtime loses its bytes: see
// tests/tools/fs/non_utf8_names_test.ts), and the server leaves nothing behind.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { serveHttp } from "../../adapters/mcp/mod.ts";
import { ToolBox } from "../../toolbox.ts";

let workspace: string;
before(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-non-utf8-")));
  await promisify(execFile)("bash", ["-c", `printf 'kept\\n' > "$1"/$'a\\xffb.txt'`, "bash", workspace]);
});
after(async () => await rm(workspace, { recursive: true, force: true }));

describe("names that are not UTF-8 over MCP", { timeout: 60_000 }, () => {
  test("Streamable HTTP: list_dir and glob report them as skipped, with the reason", { timeout: 60_000 }, async () => {
    const server = await serveHttp(new ToolBox().withDefaults("fs", "search"), {
      port: 0,
      workspace,
      allowNoAuth: true,
      sandbox: "off",
    });
    const client = new Client({ name: "non-utf8-test", version: "1" });
    try {
      await client.connect(new StreamableHTTPClientTransport(server.url));
      const listed = await client.callTool({ name: "list_dir", arguments: { path: "." } }) as CallToolResult;
      const dir = listed.structuredContent as { files: string[]; skipped?: { name: string; reason: string }[] };
      assert.deepEqual(dir.files, []);
      assert.deepEqual(dir.skipped?.map((s) => s.name), ["a\uFFFDb.txt"]);
      assert.match(dir.skipped![0].reason, /not valid UTF-8/);
      if ("Deno" in globalThis) {
        // As tests/tools/search/skipped_test.ts: glob's report of it is pinned under Deno.
        const found = await client.callTool({ name: "glob", arguments: { pattern: "*" } }) as CallToolResult;
        assert.match(JSON.stringify(found.structuredContent), /not valid UTF-8/);
      }
    } finally {
      await client.close();
      await server.shutdown();
    }
    const { stdout } = await promisify(execFile)("bash", ["-c", 'cd "$1" && printf "%q\\n" *', "bash", workspace]);
    assert.equal(stdout, "$'a\\377b.txt'\n", "the file is as it was, and nothing was added");
    assert.equal((await readdir(workspace)).length, 1);
  });
});
