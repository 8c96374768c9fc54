// What the MCP specification asks of a server, probed as clients meet it: the
// official SDK client over real Streamable HTTP (in process, random loopback
// ports) and over stdio (main.ts serve), and raw requests for what the SDK
// client would not send.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ListToolsResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { tool } from "../../../core/tool.ts";
import type { Fence } from "../../../core/fence.ts";
import { ToolBox } from "../../../toolbox.ts";
import { type HttpServer, serveHttp } from "../../../adapters/mcp/http.ts";

// A fence that closes the network and nothing else.
const NO_NET: Fence = {
  query: (permission) => ({ allowed: permission !== "net", flag: "--allow-net" }),
  closedEntirely: (permission) => permission === "net",
};

const box = new ToolBox().register(
  tool({
    name: "echo",
    description: "Says its text back.",
    input: v.object({ text: v.string() }),
    readOnly: true,
    run: ({ text }) => text,
  }),
  tool({
    name: "look",
    description: "Needs a model that sees images.",
    input: v.object({}),
    requires: ["vision"],
    readOnly: true,
    run: () => "looked",
  }),
  tool({
    name: "wait_for_cancel",
    description: "Runs until cancelled.",
    input: v.object({}),
    readOnly: true,
    run: (_args, ctx) =>
      new Promise<string>((resolve) => ctx.signal.addEventListener("abort", () => resolve("stopped"), { once: true })),
  }),
  tool({
    name: "pause",
    description: "Answers after a while.",
    input: v.object({ ms: v.number() }),
    readOnly: true,
    run: ({ ms }) => new Promise<string>((resolve) => setTimeout(() => resolve("paused"), ms)),
  }),
  tool({
    name: "fetch_page",
    description: "Needs the network.",
    input: v.object({}),
    needs: { net: ["example.com"] },
    run: () => "fetched",
  }),
);

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof McpError, String(error));
    return error;
  }
  assert.fail("expected a protocol error");
}

// A server on a random loopback port for the tests of one describe block (made before them, shut down after),
// with an SDK client connected to it unless `withClient` is false.
function servedOverHttp(options: Partial<Parameters<typeof serveHttp>[1]> = {}, withClient = true) {
  const fixture = {} as { dir: string; server: HttpServer; client: Client };
  before(async () => {
    fixture.dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-spec-"));
    fixture.server = await serveHttp(box, {
      port: 0,
      workspace: fixture.dir,
      allowNoAuth: true,
      sandbox: "off",
      ...options,
    });
    if (!withClient) return;
    fixture.client = new Client({ name: "spec-test", version: "1" });
    await fixture.client.connect(new StreamableHTTPClientTransport(fixture.server.url));
  });
  after(async () => {
    await fixture.client?.close();
    await fixture.server.shutdown();
    await rm(fixture.dir, { recursive: true, force: true });
  });
  return fixture;
}

describe("MCP over Streamable HTTP, against the specification", () => {
  const served = servedOverHttp({ capabilities: [], fence: NO_NET });

  test("a tool left out of tools/list is called as an unknown one: the same -32602, no hint it exists", {
    timeout: 60_000,
  }, async () => {
    const names = (await served.client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ["echo", "wait_for_cancel", "pause"]);
    const unknown = await rejection(served.client.callTool({ name: "no_such_tool", arguments: {} }));
    assert.equal(unknown.code, -32602);
    for (const name of ["look", "fetch_page"]) {
      const error = await rejection(served.client.callTool({ name, arguments: {} }));
      assert.equal(error.code, unknown.code, name);
      assert.equal(error.message, unknown.message.replace("no_such_tool", name));
      assert.equal(error.data, unknown.data);
      assert.doesNotMatch(error.message, /capabilit|fence|vision|network|allow/i);
    }
    const echoed = await served.client.callTool({ name: "echo", arguments: { text: "still here" } });
    assert.equal(echoed.isError, undefined);
  });
});

describe("MCP over Streamable HTTP, 2025-11-25 tasks", () => {
  const served = servedOverHttp();

  // "Receivers that do not declare the task capability for a request type MUST process requests of that type
  // normally, ignoring any task-augmentation metadata if present." The SDK answered -32603 "does not support task
  // creation".
  test("a task-augmented call to a server without the tasks capability is answered as a plain call", {
    timeout: 60_000,
  }, async () => {
    assert.equal(served.client.getServerCapabilities()?.tasks, undefined);
    const result = await served.client.callTool({ name: "echo", arguments: { text: "as a task" } }, undefined, {
      task: { ttl: 60_000 },
    });
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.content, [{ type: "text", text: "as a task" }]);
    const { tools } = await served.client.request(
      { method: "tools/list", params: { task: { ttl: 60_000 } } } as never,
      ListToolsResultSchema,
    );
    assert.ok(tools.some((t) => t.name === "echo"));
  });
});

// What the client's fetch saw: each request, its status, and when its body ended (read to its end or closed).
interface Seen {
  method: string;
  body: string;
  lastEventId: string | null;
  status?: number;
  ended?: boolean;
}

// The SDK client's fetch, watched; `version` is put into its initialize, as a client of that version would send.
function watchedFetch(seen: Seen[], version?: string): typeof fetch {
  return async (input, init) => {
    let body = typeof init?.body === "string" ? init.body : "";
    if (version && body.includes('"method":"initialize"')) {
      body = body.replace(/"protocolVersion":"[^"]*"/, `"protocolVersion":"${version}"`);
    }
    const entry: Seen = {
      method: init?.method ?? "GET",
      body,
      lastEventId: new Headers(init?.headers).get("last-event-id"),
    };
    seen.push(entry);
    const response = await fetch(input, { ...init, ...(body ? { body } : {}) });
    entry.status = response.status;
    if (!response.body) {
      entry.ended = true;
      return response;
    }
    const reader = response.body.getReader();
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          entry.ended = true;
          controller.close();
        } else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(watched, { status: response.status, headers: response.headers });
  };
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a cancelled call over Streamable HTTP", () => {
  const served = servedOverHttp({}, false);

  // The specification's cancellation: the receiver does not answer a cancelled request. The transport ends a
  // request's stream once it has sent the answer, so without one the stream stayed open for the session's life.
  for (const version of ["2025-11-25", "2025-06-18"]) {
    test(`${version}: its stream ends with no answer; the client neither hangs on it nor reconnects to it`, {
      timeout: 60_000,
    }, async () => {
      const seen: Seen[] = [];
      const errors: Error[] = [];
      const client = new Client({ name: "spec-test", version: "1" });
      client.onerror = (error) => void errors.push(error);
      const transport = new StreamableHTTPClientTransport(served.server.url, { fetch: watchedFetch(seen, version) });
      try {
        await client.connect(transport);
        assert.equal(transport.protocolVersion, version);
        const controller = new AbortController();
        const calling = client.callTool({ name: "wait_for_cancel", arguments: {} }, undefined, {
          signal: controller.signal,
        });
        await until("the call is sent", () => seen.some((s) => s.body.includes('"wait_for_cancel"') && s.status));
        const post = seen.find((s) => s.body.includes('"wait_for_cancel"'))!;
        controller.abort("not needed");
        await assert.rejects(calling, /not needed/);
        await until("the call's stream ends", () => post.ended === true);
        // 2025-11-25 primes every stream with an event id, and the SDK's client resumes a stream that ended without
        // its answer (GET with Last-Event-ID, after its reconnection delay, 1 s): the server says 204, nothing more will
        // come, and the client stops. An older client was given no event id and resumes nothing.
        const resumed = () => seen.filter((s) => s.lastEventId !== null);
        if (version >= "2025-11-25") await until("the client resumes the stream", () => resumed().length > 0, 20_000);
        // Long enough for another reconnection to show.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        if (version >= "2025-11-25") {
          assert.deepEqual(resumed().map((s) => [s.method, s.status, s.ended]), [["GET", 204, true]]);
          // Resumed again (another client of the session, or one that does not stop at 204): 204 again. Before, the
          // first 204 forgot the stream, and the second resumption was held open, with nothing to come, until the
          // session ended (here, until the 5 s signal).
          const again = await fetch(served.server.url, {
            headers: {
              accept: "text/event-stream",
              "mcp-protocol-version": version,
              "mcp-session-id": transport.sessionId!,
              "last-event-id": resumed()[0].lastEventId!,
            },
            signal: AbortSignal.timeout(5_000),
          });
          assert.equal(again.status, 204);
          assert.equal(await again.text(), "");
        } else assert.deepEqual(resumed(), []);
        assert.deepEqual(errors, []);
        const after = await client.callTool({ name: "echo", arguments: { text: "next" } });
        assert.equal(after.isError, undefined);
        // Every stream but the session's own GET stream ends.
        await until(
          "every stream but the session's ends",
          () => seen.every((s) => s.ended || (s.method === "GET" && s.lastEventId === null)),
        );
      } finally {
        await client.close();
      }
    });
  }
});

describe("a resumed stream over Streamable HTTP", () => {
  const served = servedOverHttp({}, false);

  // MCP: once the answer is sent, the server closes the stream. The SDK's transport replayed a missed answer to a
  // resuming client and then held the stream open as one still awaiting it: nothing would ever come on it, and the
  // client's connection (and a keep-alive timer) stayed until the session ended.
  test("a resumption that replays the call's answer ends after it", { timeout: 60_000 }, async () => {
    const version = "2025-11-25";
    const headers = {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": version,
    };
    const init = await fetch(served.server.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "resume", version: "1" } },
      }),
    });
    await init.text();
    const session = init.headers.get("mcp-session-id")!;
    assert.ok(session);
    const inSession = { ...headers, "mcp-session-id": session };
    const post = (body: unknown) =>
      fetch(served.server.url, { method: "POST", headers: inSession, body: JSON.stringify(body) });
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
    try {
      const call = await post({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "pause", arguments: { ms: 300 } },
      });
      // The connection drops once the stream's first event (its priming event id) has arrived.
      const reader = call.body!.getReader();
      let seen = "";
      while (!/^id: (\S+)$/m.test(seen)) {
        const { done, value } = await reader.read();
        assert.equal(done, false, "the stream is primed with an event id");
        seen += new TextDecoder().decode(value);
      }
      await reader.cancel();
      const lastEventId = /^id: (\S+)$/m.exec(seen)![1];
      await new Promise((resolve) => setTimeout(resolve, 800));
      const resumed = await fetch(served.server.url, {
        method: "GET",
        headers: { ...inSession, accept: "text/event-stream", "last-event-id": lastEventId },
        signal: AbortSignal.timeout(5_000),
      });
      assert.equal(resumed.status, 200);
      const text = await resumed.text().catch((error) => assert.fail(`the resumed stream did not end: ${error}`));
      const answers = text.split("\n").filter((line) => line.startsWith("data: {"))
        .map((line) => JSON.parse(line.slice(6)));
      assert.equal(answers.length, 1, text);
      assert.equal(answers[0].id, 2);
      assert.equal(answers[0].result.content[0].text, "paused");
      // The same again: still the answer, still ended (a second resumption is not a conflict with a stream held open).
      const again = await fetch(served.server.url, {
        method: "GET",
        headers: { ...inSession, accept: "text/event-stream", "last-event-id": lastEventId },
        signal: AbortSignal.timeout(5_000),
      });
      assert.equal(again.status, 200);
      assert.match(await again.text(), /"paused"/);
      // Resumed at the answer itself (the id of its event, as an SSE client that reconnects whenever a stream ends
      // sends): nothing more will come, 204 at once. Before, the transport replayed nothing and held the stream open
      // until the session ended (here, until the 5 s signal).
      const answerId = [...text.matchAll(/^id: (\S+)$/gm)].at(-1)![1];
      assert.notEqual(answerId, lastEventId);
      const atAnswer = await fetch(served.server.url, {
        method: "GET",
        headers: { ...inSession, accept: "text/event-stream", "last-event-id": answerId },
        signal: AbortSignal.timeout(5_000),
      });
      assert.equal(atAnswer.status, 204);
      assert.equal(await atAnswer.text(), "");
    } finally {
      await (await fetch(served.server.url, { method: "DELETE", headers: inSession })).text();
    }
  });
});
