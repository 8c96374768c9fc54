// A progress token may be any string or number (MCP's ProgressToken): 1.5 was refused with -32602 by the SDK's
// schemas, which take integers alone. A call with a token that is no integer runs, and each of its progress
// notifications echoes the token as sent; integer and string tokens as before; an object is still refused.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { raw, startServer } from "./_http_harness.ts";

const TOKEN = "progress-token-0123456789abcdef";

// The JSON-RPC messages of an answer's event stream, or its one JSON message.
function messagesOf(
  text: string,
): { method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number } }[] {
  const data = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6));
  return (data.length > 0 ? data : [text]).filter((line) => line.trim() !== "").map((line) => JSON.parse(line));
}

describe("a progress token", () => {
  test("that is no integer is taken, and echoed as sent", { timeout: 60_000 }, async () => {
    const box = new ToolBox().register(tool({
      name: "steps",
      description: "Reports progress.",
      input: v.object({}),
      readOnly: true,
      run: (_args, ctx) => {
        ctx.progress("half way", 0.5);
        ctx.progress("done", 1);
        return "finished";
      },
    }));
    const h = await startServer([{ token: TOKEN, tenant: "t" }], { stateless: true }, box);
    try {
      const call = (id: number, progressToken: unknown) =>
        raw(h.server.url, {
          headers: { authorization: `Bearer ${TOKEN}`, "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: { name: "steps", arguments: {}, _meta: { progressToken } },
          }),
        });
      for (const [n, token] of [1.5, -0.25, 1e-7, 7, "s"].entries()) {
        const messages = messagesOf((await call(n + 1, token)).text);
        const progress = messages.filter((m) => m.method === "notifications/progress");
        assert.equal(progress.length, 2, JSON.stringify(messages));
        for (const p of progress) assert.strictEqual(p.params!.progressToken, token);
        assert.ok(messages.some((m) => m.result !== undefined), JSON.stringify(messages));
      }
      const refused = await call(9, { a: 1 });
      assert.equal(messagesOf(refused.text)[0].error?.code, -32602, refused.text);
    } finally {
      await h.close();
    }
  });
});
