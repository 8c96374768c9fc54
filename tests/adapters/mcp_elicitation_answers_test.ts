// A permission question sent by elicitation and answered badly (a result that is no elicitation result, the client's
// error, a form without the field, a dismissal, no answer in time) or made moot by the call's cancellation: the model
// reads why the action was not taken, and a cancelled call leaves no late result behind. The real `main.ts serve`
// in raw bytes (what a careless client sends reaches the server as written), and, for the question's timeout, which
// no flag sets, the server in process behind the official client.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { type RawServer, type Reply, startRawServer } from "./_raw_server.ts";
import { DENO_PROCESS_ONLY } from "../_runtime.ts";
import { ToolBox } from "../../toolbox.ts";
import { createMcpServer } from "../../adapters/mcp/mod.ts";

// A command that reaches the network is asked about whatever the allowlist holds; nothing listens at "x".
const NETWORK_COMMAND = "uname | nc x 1";

async function until<T>(find: () => T | undefined, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

function textOf(reply: Reply): string {
  const content = (reply.result as { content?: { type: string; text?: string }[] } | undefined)?.content ?? [];
  return content.map((item) => item.text ?? `[${item.type}]`).join("\n");
}

describe("elicitation answers over stdio (raw bytes to main.ts serve)", { skip: DENO_PROCESS_ONLY }, () => {
  let workspace: string;
  let server: RawServer;
  let nextId = 1;

  before(async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-elicit-answers-")));
    server = await startRawServer(workspace, { groups: "fs,cmd", initialize: false });
    const init = await server.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: { elicitation: {} },
      clientInfo: { name: "raw-elicit", version: "1" },
    }, 30_000);
    assert.ok(init.result, JSON.stringify(init));
    await server.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  });

  after(async () => {
    await server.close();
    await rm(workspace, { recursive: true, force: true });
  });

  /** Sends a tools/call and waits for the question it asks; returns the call's id and the question's. */
  async function asking(name: string, args: Record<string, unknown>): Promise<{ call: number; question: Reply }> {
    const call = nextId++;
    const from = server.replies.length;
    await server.write(
      JSON.stringify({ jsonrpc: "2.0", id: call, method: "tools/call", params: { name, arguments: args } }) + "\n",
    );
    const question = await until(
      () => server.replies.slice(from).find((r) => r.method === "elicitation/create"),
      `question for call ${call}`,
    );
    return { call, question };
  }

  const answers: [string, (id: unknown) => unknown, RegExp][] = [
    [
      "a result that is no elicitation result",
      (id) => ({ jsonrpc: "2.0", id, result: { action: "bogus" } }),
      /the client's answer is not an elicitation result \(action: Invalid option: expected one of "accept"\|"decline"\|"cancel"\)/,
    ],
    [
      "the client's error",
      (id) => ({ jsonrpc: "2.0", id, error: { code: -1, message: "the form could not be shown" } }),
      /the question got no usable answer \(the form could not be shown\)/,
    ],
    [
      "a form without its field",
      (id) => ({ jsonrpc: "2.0", id, result: { action: "accept", content: { decision: "yes please" } } }),
      /the question got no usable answer \(Elicitation response content does not match .*answer/,
    ],
    ["a dismissal", (id) => ({ jsonrpc: "2.0", id, result: { action: "cancel" } }), /the user dismissed the question/],
  ];

  for (const [what, answer, why] of answers) {
    test(`a command's question answered with ${what} says so`, { timeout: 60_000 }, async () => {
      const { call, question } = await asking("bash", { command: NETWORK_COMMAND });
      await server.write(JSON.stringify(answer(question.id)) + "\n");
      const reply = await server.reply(call, 30_000);
      const text = textOf(reply);
      assert.equal(reply.result?.isError, true, text);
      assert.match(text, /^Skipped \[permission_denied\]: The command was not run: /);
      assert.match(text, why);
      // It was asked: "nobody could be asked" is what a session without a client to ask reads.
      assert.doesNotMatch(text, /nobody could be asked/);
    });
  }

  test("a write's question answered with no elicitation result says so too", { timeout: 60_000 }, async () => {
    await writeFile(join(workspace, "kept.txt"), "kept\n");
    const { call, question } = await asking("write_file", { path: "kept.txt", content: "changed\n" });
    await server.write(JSON.stringify({ jsonrpc: "2.0", id: question.id, result: { action: "bogus" } }) + "\n");
    const text = textOf(await server.reply(call, 30_000));
    assert.match(text, /Write permission: refused because the client's answer is not an elicitation result \(action:/);
    assert.doesNotMatch(text, /"code": "invalid_value"/, "no zod dump");
    assert.equal(await readFile(join(workspace, "kept.txt"), "utf8"), "kept\n");
  });

  for (
    const [name, args] of [["bash", { command: NETWORK_COMMAND }], ["write_file", { path: "kept.txt", content: "x" }]]
  ) {
    test(`${name} cancelled while its question waits ends as cancelled, with no late result`, {
      timeout: 60_000,
    }, async () => {
      await writeFile(join(workspace, "kept.txt"), "kept\n");
      const from = server.replies.length;
      const { call, question } = await asking(name as string, args as Record<string, unknown>);
      await server.write(
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: call, reason: "R".repeat(100_000) },
        }) + "\n",
      );
      // The server withdraws its question, with a reason of its own (the client's 100 KB one came back whole), then
      // logs the cancelled call.
      const withdrawn = await until(
        () =>
          server.replies.slice(from).find((r) =>
            r.method === "notifications/cancelled" && (r.params as { requestId?: unknown }).requestId === question.id
          ),
        "the question's cancellation",
      );
      assert.equal((withdrawn.params as { reason?: unknown }).reason, "the call that asked it was cancelled");
      await until(
        () =>
          server.replies.slice(from).find((r) =>
            r.method === "notifications/message" &&
            (r.params as { data?: { event?: string; callId?: string } }).data?.event === "cancelled"
          ),
        "the cancelled call's notice",
      );
      // One more round trip: anything the stopped call settled with has been sent by now.
      assert.ok((await server.request("ping")).result);
      const late = server.replies.slice(from).filter((r) =>
        r.method === "notifications/toolfence/late_result" ||
        (r.params as { data?: { event?: string } } | undefined)?.data?.event === "late_result"
      );
      // Before, the SDK's rejection of the withdrawn question reached the tool as a failure: bash reported a late
      // command_start_failed needing reconciliation for a command that never started.
      assert.deepEqual(late, [], JSON.stringify(late).slice(0, 600));
      assert.equal(server.replies.slice(from).some((r) => r.id === call), false, "a cancelled request gets no answer");
      assert.equal(await readFile(join(workspace, "kept.txt"), "utf8"), "kept\n");
    });
  }
});

test("a client declaring URL elicitation alone is told its form cannot be shown", {
  timeout: 60_000,
  skip: DENO_PROCESS_ONLY,
}, async () => {
  // It read "the MCP client cannot ask its user (it does not support elicitation)", though it declared elicitation.
  const workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-elicit-url-")));
  const server = await startRawServer(workspace, { groups: "fs,cmd", initialize: false });
  try {
    const init = await server.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: { url: {} } },
      clientInfo: { name: "url-only", version: "1" },
    }, 30_000);
    assert.ok(init.result, JSON.stringify(init));
    await server.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const reply = await server.request("tools/call", { name: "bash", arguments: { command: NETWORK_COMMAND } }, 30_000);
    assert.match(textOf(reply), /The command was not run: the MCP client cannot show its user a form \(it declared /);
    assert.equal(server.replies.some((r) => r.method === "elicitation/create"), false, "no form was sent");
  } finally {
    await server.close();
    await rm(workspace, { recursive: true, force: true });
  }
});

test("a question the client never answers is refused at its timeout, saying so", { timeout: 60_000 }, async () => {
  const workspace = await mkdtemp(join(tmpdir(), "toolfence-elicit-timeout-"));
  await writeFile(join(workspace, "kept.txt"), "kept\n");
  const served = createMcpServer(new ToolBox().withDefaults("fs", "cmd"), { workspace, elicitationTimeoutMs: 500 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "silent", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => new Promise(() => {}));
  try {
    await served.server.connect(serverSide);
    await client.connect(clientSide);
    const command = await client.callTool({ name: "bash", arguments: { command: NETWORK_COMMAND } }) as CallToolResult;
    const commandText = command.content.map((c) => c.type === "text" ? c.text : "").join("\n");
    assert.equal(command.isError, true);
    assert.match(commandText, /The command was not run: the question got no answer within 0\.5 s\./);
    const write = await client.callTool({
      name: "write_file",
      arguments: { path: "kept.txt", content: "x" },
    }) as CallToolResult;
    const writeText = write.content.map((c) => c.type === "text" ? c.text : "").join("\n");
    assert.match(writeText, /refused because the question got no answer within 0\.5 s/);
    assert.equal(await readFile(join(workspace, "kept.txt"), "utf8"), "kept\n");
  } finally {
    await client.close();
    await served.close();
    await rm(workspace, { recursive: true, force: true });
  }
});
