// A call whose replica is killed mid-call is answered, by another replica, with the request id its client sent:
// type and value, as JSON-RPC asks. A string id that reads as a number ("42"), one that reads as a quoted string, and a
// numeric id of 16 digits come back as they went, on the resumed stream and in the call's outcome read by its id.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { callUri, openStore } from "../../adapters/mcp/mod.ts";
import { type Replica, replicaArgs, startReplica, stopReplica } from "./_fleet.ts";
import { connect, writeTokens } from "./_http_harness.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";

const TOKEN = "acme-token-0123456789";
const IDS = ["42", '"q"', 1234567890123456];

/** The first event id of a POST's stream (its priming event); the connection is then dropped, as a network cut. */
async function primedThenCut(url: URL, headers: Record<string, string>, body: string): Promise<string> {
  const abort = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: { accept: "application/json, text/event-stream", "content-type": "application/json", ...headers },
    body,
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the stream ended before its first event: ${text}`);
    text += value;
    const id = /^id: (.+)$/m.exec(text)?.[1];
    if (id) {
      abort.abort();
      return id;
    }
  }
}

/** The first JSON-RPC answer on the stream resumed after `lastEventId`. */
async function resumed(url: URL, headers: Record<string, string>, lastEventId: string): Promise<{ id: unknown }> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", "last-event-id": lastEventId, ...headers },
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the resumed stream ended without an answer: ${text}`);
    text += value;
    const data = text.split("\n").find((line) => line.startsWith("data: ") && line.includes('"result"'));
    if (data) {
      abort.abort();
      return JSON.parse(data.slice("data: ".length));
    }
  }
}

describe("the answer for a call whose replica was killed", { timeout: 120_000, skip: DENO_PROCESS_ONLY }, () => {
  const dir = mkdtempSync(join(tmpdir(), "toolfence-fleet-ids-"));
  let replicas: Replica[] = [];

  before(async () => {
    mkdirSync(join(dir, "tenants"));
    mkdirSync(join(dir, "tmp"));
    await writeTokens(join(dir, "tokens.json"), [{ token: TOKEN, tenant: "acme" }]);
    const store = `sqlite:${join(dir, "store.db")}`;
    // The tenant's saved rule runs sleep without a question, which no client here could answer.
    const shared = await openStore(store);
    await shared.saveGrant({ tenant: "acme", kind: "command", subject: "sleep", data: {}, savedAt: Date.now() });
    await shared.close();
    const args = replicaArgs(dir, store);
    replicas = await Promise.all([startReplica(args), startReplica(args)]);
  }, { timeout: 60_000 });

  after(async () => {
    await Promise.all(replicas.map((replica) => stopReplica(replica, "SIGKILL")));
    rmSync(dir, { recursive: true, force: true });
  }, { timeout: 30_000 });

  it("echoes each request id with its type and value", { timeout: 90_000 }, async () => {
    const [a, b] = replicas;
    const opener = await connect(a.url, TOKEN);
    const sessionId = (opener.transport as unknown as { sessionId: string }).sessionId;
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    };
    const eventIds = [];
    for (const id of IDS) {
      const call = { name: "bash", arguments: { command: "sleep 20" } };
      eventIds.push(
        await primedThenCut(a.url, headers, JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: call })),
      );
    }
    const onB = new Client({ name: "fleet-ids-test", version: "1.0.0" });
    await onB.connect(
      new StreamableHTTPClientTransport(b.url, {
        sessionId,
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    const outcome = async (id: string | number) => {
      const [content] = (await onB.readResource({ uri: callUri(id) })).contents as { text: string }[];
      return JSON.parse(content.text) as { requestId: unknown; state: string; answer: { id: unknown } | null };
    };
    const until = async (id: string | number, state: string) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const found = await outcome(id);
        if (found.state === state) return found;
        assert.ok(
          Date.now() < deadline && found.state !== "done",
          `the call ${JSON.stringify(id)} is ${found.state}, not ${state}: ${JSON.stringify(found.answer)}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    for (const id of IDS) await until(id, "running");
    await stopReplica(a, "SIGKILL");
    for (const [n, id] of IDS.entries()) {
      const found = await until(id, "interrupted");
      assert.strictEqual(found.requestId, id);
      assert.strictEqual(found.answer!.id, id);
      // The answer appended to the call's stream, which the client resumes on B.
      assert.strictEqual((await resumed(b.url, headers, eventIds[n])).id, id);
    }
    await onB.close();
  });
});
