// A token's scopes hide every tool its sessions could list, those requiring a capability of the session too: a
// tools:read token's sessions (which have vision) listed browser_screenshot, which starts a browser (tools:commands),
// since the tools hidden by scope were picked among those listed with no capability at all; only its call was refused.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect, startServer } from "./_http_harness.ts";
import { ToolBox } from "../../toolbox.ts";

const READER = "reader-token-0123456789abcdef";

describe("a token's scopes", () => {
  test("hide the tools that require a capability of the session as well", { timeout: 60_000 }, async () => {
    const h = await startServer(
      [{ token: READER, tenant: "t", scopes: ["tools:read"] }],
      {},
      new ToolBox().withDefaults("fs", "browser"),
    );
    const client = await connect(h.server.url, READER);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      // request_image requires vision and only reads: it stays.
      assert.deepEqual(names.sort(), ["file_info", "list_dir", "read_file", "request_image"]);
      await assert.rejects(client.callTool({ name: "browser_screenshot", arguments: {} }), /-32602/);
    } finally {
      await client.close();
      await h.close();
    }
  });
});
