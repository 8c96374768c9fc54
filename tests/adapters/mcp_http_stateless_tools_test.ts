// A stateless server (each request a session of its own) offers no tool that builds on what a session keeps between
// calls: bash_background's job was killed with the answer, and bash_read, bash_wait, bash_list, bash_stop, the
// browser tools and read_artifact named a job, a page or an artifact that the next request's session never had. They
// are not listed, and a call of one is an unknown tool, as for any tool not listed; a server with sessions lists them.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { raw, type RawAnswer, startServer } from "./_http_harness.ts";
import { ToolBox } from "../../toolbox.ts";

const TOKEN = "stateless-token-0123456789abcdef";
const KEPT = [
  "bash_background",
  "bash_read",
  "bash_wait",
  "bash_list",
  "bash_stop",
  "read_artifact",
  "browser_navigate",
  "browser_snapshot",
  "browser_click",
];

// The one JSON-RPC message of an answer, sent as JSON or as one event of a stream.
function messageOf(
  answer: RawAnswer,
): { result?: { tools?: { name: string }[] }; error?: { code: number; message: string } } {
  const data = /^data: (.*)$/m.exec(answer.text)?.[1];
  return JSON.parse(data ?? answer.text);
}

describe("the tools of a stateless server", () => {
  test("leave out those that need state between requests", { timeout: 60_000 }, async () => {
    const box = () => new ToolBox().withDefaults("fs", "cmd", "framework", "browser");
    const post = (url: URL, id: number, method: string, params: Record<string, unknown> = {}) =>
      raw(url, {
        headers: { authorization: `Bearer ${TOKEN}`, "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      });
    const stateless = await startServer([{ token: TOKEN, tenant: "t" }], { stateless: true }, box());
    try {
      const names = messageOf(await post(stateless.server.url, 1, "tools/list")).result!.tools!.map((t) => t.name);
      assert.ok(names.includes("bash") && names.includes("read_file"), names.join(" "));
      for (const name of KEPT) assert.ok(!names.includes(name), `${name} is listed`);
      assert.ok(!names.some((name) => name.startsWith("browser_")), names.join(" "));
      for (const [n, name] of ["bash_list", "bash_background", "read_artifact", "browser_navigate"].entries()) {
        const args = name === "bash_background" ? { command: "ls" } : name === "read_artifact" ? { id: "x" } : {};
        const error = messageOf(await post(stateless.server.url, 2 + n, "tools/call", { name, arguments: args })).error;
        assert.equal(error?.code, -32602, name);
        assert.match(error!.message, new RegExp(`Unknown tool: ${name}`));
      }
    } finally {
      await stateless.close();
    }
    // With sessions they are offered.
    const kept = await startServer([{ token: TOKEN, tenant: "t" }], {}, box());
    try {
      const init = await raw(kept.server.url, {
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        }),
      });
      const session = String(init.headers["mcp-session-id"]);
      const listed = await raw(kept.server.url, {
        headers: { authorization: `Bearer ${TOKEN}`, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      const names = messageOf(listed).result!.tools!.map((t) => t.name);
      for (const name of KEPT) assert.ok(names.includes(name), `${name} is not listed`);
    } finally {
      await kept.close();
    }
  });
});
