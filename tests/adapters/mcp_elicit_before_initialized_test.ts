// A server sends no request but pings before the client's notifications/initialized (the MCP lifecycle). Seen live:
// a client that called a tool as soon as initialize was answered got `elicitation/create` (a permission question)
// on the call's stream before it had sent notifications/initialized. Questions now wait for it, and are refused when
// it never comes.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./_http_harness.ts";

const TOKEN = "alice-token-0123456789abcdef";
const VERSION = "2025-11-25";

/** What a raw HTTP client reads of a response's SSE body, until `done` holds or `ms` have passed. */
async function readUntil(body: ReadableStream<Uint8Array>, done: (text: string) => boolean, ms: number) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + ms;
  while (!done(text)) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = await Promise.race([
      reader.read(),
      new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), left)),
    ]);
    clearTimeout(timer);
    if (read === "late" || read.done) break;
    text += decoder.decode(read.value, { stream: true });
  }
  return { text, reader };
}

async function session(url: URL) {
  const headers = (id?: string): Record<string, string> => ({
    authorization: `Bearer ${TOKEN}`,
    "mcp-protocol-version": VERSION,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(id ? { "mcp-session-id": id } : {}),
  });
  const init = await fetch(url, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: VERSION,
        capabilities: { elicitation: { form: {} } },
        clientInfo: { name: "raw", version: "1" },
      },
    }),
  });
  assert.equal(init.status, 200);
  await init.text();
  const id = init.headers.get("mcp-session-id")!;
  const post = (message: unknown) =>
    fetch(url, { method: "POST", headers: headers(id), body: JSON.stringify(message) });
  // Straight to a call whose command needs a question (mkdir is not on the allowlist), no notifications/initialized.
  const call = await post({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "bash", arguments: { command: "mkdir asked" } },
  });
  assert.equal(call.status, 200);
  return { post, call };
}

describe("questions and the client's notifications/initialized", { timeout: 60_000 }, () => {
  test("a question waits for notifications/initialized, then is asked", { timeout: 60_000 }, async () => {
    const harness = await startServer([{ token: TOKEN, tenant: "alice" }], { autoConfirm: false });
    try {
      const { post, call } = await session(harness.server.url);
      const early = await readUntil(call.body!, (text) => text.includes("elicitation/create"), 1_500);
      assert.doesNotMatch(early.text, /elicitation\/create/, "asked before notifications/initialized");
      early.reader.releaseLock();
      assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202);
      const asked = await readUntil(call.body!, (text) => text.includes("elicitation/create"), 20_000);
      const question = /data: (\{.*"elicitation\/create".*\})/.exec(asked.text);
      assert.ok(question, asked.text);
      const { id } = JSON.parse(question[1]);
      assert.equal((await post({ jsonrpc: "2.0", id, result: { action: "decline" } })).status, 202);
      asked.reader.releaseLock();
      const answered = await readUntil(call.body!, (text) => text.includes('"id":2'), 20_000);
      assert.match(answered.text, /not_approved|permission_denied|declined/, answered.text);
      await answered.reader.cancel();
    } finally {
      await harness.close();
    }
  });

  test("a client that never sends it is asked nothing: the question is refused", { timeout: 60_000 }, async () => {
    const harness = await startServer([{ token: TOKEN, tenant: "alice" }], {
      autoConfirm: false,
      elicitationTimeoutMs: 1_000,
    });
    try {
      const { call } = await session(harness.server.url);
      const { text, reader } = await readUntil(call.body!, (t) => t.includes('"id":2'), 20_000);
      await reader.cancel();
      assert.doesNotMatch(text, /elicitation\/create/);
      assert.match(text, /permission_denied/, text);
    } finally {
      await harness.close();
    }
  });
});
