// The MCP server in process, with the official SDK client on a linked
// in-memory transport: progress, images, artifacts as resources, concurrent
// calls, and the elicitation host's answers.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as v from "valibot";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  ListToolsResultSchema,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "../../../core/tool.ts";
import { ToolBox } from "../../../toolbox.ts";
import { createMcpServer, type McpServerOptions } from "../../../adapters/mcp/mod.ts";
import { answerUnknownMethods } from "../../../adapters/mcp/_param_errors.ts";

const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="),
  (c) => c.charCodeAt(0),
);

const order: string[] = [];
const box = new ToolBox({ maxOutputChars: 1_000 }).register(
  tool({
    name: "steps",
    description: "Reports progress.",
    input: v.object({}),
    readOnly: true,
    run: (_args, ctx) => {
      ctx.progress("starting");
      ctx.progress("half way", 0.5);
      ctx.progress("done", 1);
      return "finished";
    },
  }),
  tool({
    name: "picture",
    description: "Defers an image.",
    input: v.object({}),
    readOnly: true,
    run: async (_args, ctx) => {
      await ctx.deferImage(PNG, "a dot");
      return "see the image";
    },
  }),
  tool({
    name: "big",
    description: "Returns more than the cap.",
    input: v.object({}),
    readOnly: true,
    run: () => "line\n".repeat(1_000),
  }),
  tool({
    name: "slow_write",
    description: "Not concurrency-safe.",
    input: v.object({ id: v.string() }),
    run: async ({ id }) => {
      order.push(`start ${id}`);
      await new Promise((r) => setTimeout(r, 30));
      order.push(`end ${id}`);
      return id;
    },
  }),
  tool({
    name: "approve_me",
    description: "Needs approval.",
    input: v.object({}),
    needsApproval: true,
    run: () => "approved and run",
  }),
  tool({
    name: "pick",
    description: "Asks a question with options.",
    input: v.object({}),
    run: async (_args, ctx) =>
      (await ctx.session.choose({
        title: "Pick",
        message: "Which colour?",
        options: [{ value: "red", label: "Red" }, { value: "blue", label: "Blue" }],
        defaultChoice: "red",
      })).choice,
  }),
);

async function connect(
  options: Partial<McpServerOptions> & { elicit?: (params: unknown) => ElicitResult; initializeAs?: string } = {},
) {
  const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-mem-"));
  const { elicit, initializeAs, ...serverOptions } = options;
  const served = createMcpServer(box, { workspace: dir, ...serverOptions });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  if (initializeAs !== undefined) {
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (message, sendOptions) => {
      const asked = "method" in message && message.method === "initialize"
        ? { ...message, params: { ...message.params, protocolVersion: initializeAs } }
        : message;
      return send(asked, sendOptions);
    };
  }
  const client = new Client({ name: "t", version: "1" }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  await served.server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    served,
    async close() {
      await client.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// A server in process and the raw client side of its in-memory transport: requests by id, with no SDK client (which
// would initialize on its own terms).
function rawInMemory(dir: string, toolbox: ToolBox = box) {
  const served = createMcpServer(toolbox, { workspace: dir });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const answers = new Map<number, (message: Record<string, unknown>) => void>();
  clientSide.onmessage = (message) => {
    const { id } = message as { id?: number };
    if (typeof id === "number") answers.get(id)?.(message as Record<string, unknown>);
  };
  const request = (id: number, method: string, params: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      answers.set(id, resolve);
      void clientSide.send({ jsonrpc: "2.0", id, method, params });
    });
  return { served, clientSide, serverSide, request };
}

function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
}

describe("MCP server in process", () => {
  test(
    "progress notifications carry ctx.progress when the request has a progress token",
    { timeout: 60_000 },
    async () => {
      const { client, close } = await connect();
      try {
        const seen: { progress: number; total?: number; message?: string }[] = [];
        const result = await client.callTool({ name: "steps", arguments: {} }, undefined, {
          onprogress: (p) => void seen.push(p),
        }) as CallToolResult;
        assert.deepEqual(result.content, [{ type: "text", text: "finished" }]);
        await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(seen.map((p) => p.message), ["starting", "half way", "done"]);
        assert.deepEqual(seen.slice(1).map((p) => [p.progress, p.total]), [[50, 100], [100, 100]]);
        assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress), "progress only grows");
      } finally {
        await close();
      }
    },
  );

  test("a tool's fraction that is no number from 0 to 1 still sends growing numbers", { timeout: 60_000 }, async () => {
    // NaN went out as "progress": null (JSON has no NaN) and stayed NaN for the rest of the call; 2 went past the total.
    const odd = new ToolBox().register(tool({
      name: "odd_progress",
      description: "Reports odd fractions.",
      input: v.object({}),
      readOnly: true,
      run: (_args, ctx) => {
        for (const fraction of [NaN, 2, Infinity, -1, 0.5, undefined, 1]) ctx.progress(String(fraction), fraction);
        return "done";
      },
    }));
    const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-progress-"));
    const served = createMcpServer(odd, { workspace: dir });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    const errors: string[] = [];
    client.onerror = (error) => void errors.push(error.message);
    try {
      await served.server.connect(serverSide);
      await client.connect(clientSide);
      const seen: { progress: number; total?: number; message?: string }[] = [];
      const result = await client.callTool({ name: "odd_progress", arguments: {} }, undefined, {
        onprogress: (p) => void seen.push(p),
      }) as CallToolResult;
      assert.deepEqual(result.content, [{ type: "text", text: "done" }]);
      await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(errors, []);
      assert.deepEqual(seen.map((p) => p.message), ["NaN", "2", "Infinity", "-1", "0.5", "undefined", "1"]);
      assert.ok(seen.every((p) => Number.isFinite(p.progress)), JSON.stringify(seen));
      assert.ok(seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress), "progress only grows");
      assert.ok(seen.every((p) => p.total === undefined || p.progress <= p.total), "never past its total");
      assert.deepEqual([seen[4].progress, seen[4].total], [50, 100]);
    } finally {
      await client.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("unknown methods: named over the installed SDK, and another SDK's layout still serves", {
    timeout: 60_000,
  }, async () => {
    const { client, close } = await connect();
    try {
      await assert.rejects(client.request({ method: "prompts/list" }, ListToolsResultSchema), {
        code: -32601,
        message: /Method not found: "prompts\/list"; this server answers .*tools\/call/,
      });
    } finally {
      await close();
    }
    // A server without the SDK's private handler map (another SDK version) keeps the SDK's own answer.
    const other = {} as Parameters<typeof answerUnknownMethods>[0];
    assert.doesNotThrow(() => answerUnknownMethods(other));
    assert.equal((other as { fallbackRequestHandler?: unknown }).fallbackRequestHandler, undefined);
  });

  test("deferred images come back as image content after the text", { timeout: 60_000 }, async () => {
    const { client, close } = await connect();
    try {
      const result = await call(client, "picture");
      assert.deepEqual(result.content[0], { type: "text", text: "see the image" });
      assert.deepEqual(result.content[1], {
        type: "image",
        mimeType: "image/png",
        data: btoa(String.fromCharCode(...PNG)),
      });
    } finally {
      await close();
    }
  });

  test(
    "a cut output links to its artifact, which is listed and readable as a resource",
    { timeout: 60_000 },
    async () => {
      const { client, close } = await connect();
      try {
        let changed = 0;
        client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed++);
        const result = await call(client, "big");
        assert.match(
          (result.content[0] as { text: string }).text,
          /characters omitted; the whole output is artifact sha256:/,
        );
        const link = result.content[1] as { type: string; uri: string; mimeType: string };
        assert.equal(link.type, "resource_link");
        assert.match(link.uri, /^artifact:\/\/sha256\/[0-9a-f]{64}$/);
        const { resources } = await client.listResources();
        assert.deepEqual(resources.map((r) => r.uri), [link.uri]);
        const read = await client.readResource({ uri: link.uri });
        assert.equal((read.contents[0] as { text: string }).text, "line\n".repeat(1_000));
        await assert.rejects(client.readResource({ uri: `artifact://sha256/${"0".repeat(64)}` }), /Resource not found/);
        await new Promise((r) => setTimeout(r, 10));
        assert.equal(changed, 1);
      } finally {
        await close();
      }
    },
  );

  test("a client of a version before resource links (2025-03-26) is told of the artifact in text", {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-mem-"));
    const { served, clientSide, serverSide, request } = rawInMemory(dir);
    try {
      await served.server.connect(serverSide);
      await clientSide.start();
      const init = await request(1, "initialize", {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "old", version: "1" },
      });
      assert.equal((init.result as { protocolVersion: string }).protocolVersion, "2025-03-26");
      await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      const answer = await request(2, "tools/call", { name: "big", arguments: {} });
      const content = (answer.result as CallToolResult).content as { type: string; text?: string }[];
      assert.deepEqual(content.map((c) => c.type), ["text", "text"], JSON.stringify(content));
      const uri = /artifact:\/\/sha256\/[0-9a-f]{64}/.exec(content[1].text ?? "")?.[0];
      assert.ok(uri, content[1].text);
      const read = await request(3, "resources/read", { uri });
      const text = (read.result as { contents: { text: string }[] }).contents[0].text;
      assert.equal(text, "line\n".repeat(1_000));
    } finally {
      await clientSide.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("an own __proto__ key crosses the SDK both ways: an argument the tool refuses, an output key kept", {
    timeout: 60_000,
  }, async () => {
    // Before: the SDK's zod parse of tools/call turned the arguments' own `__proto__` key into the copy's prototype,
    // so {"text":"a","__proto__":{...}} ran as {text:"a"} (in process the same arguments are refused), and its check
    // of the result dropped the key from structuredContent while the text content still had it.
    const protoBox = new ToolBox().register(
      tool({
        name: "say",
        description: "Says its text back.",
        input: v.object({ text: v.string() }),
        readOnly: true,
        run: ({ text }) => text,
      }),
      tool({
        name: "config",
        description: "Returns a parsed document.",
        input: v.object({}),
        output: v.record(v.string(), v.unknown()),
        readOnly: true,
        run: () => JSON.parse('{"name":"n","__proto__":{"polluted":true}}') as Record<string, unknown>,
      }),
    );
    const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-mem-"));
    const { served, clientSide, serverSide, request } = rawInMemory(dir, protoBox);
    try {
      await served.server.connect(serverSide);
      await clientSide.start();
      await request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "p" } });
      await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      // As a client's JSON.parse makes them: own keys.
      for (const [id, args] of [[2, '{"text":"a","__proto__":{"text":"b"}}'], [3, '{"__proto__":{"text":"b"}}']]) {
        const answer =
          (await request(id as number, "tools/call", { name: "say", arguments: JSON.parse(args as string) }))
            .result as CallToolResult;
        assert.equal(answer.isError, true, JSON.stringify(answer));
        assert.match((answer.content[0] as { text: string }).text, /__proto__: unexpected argument/);
      }
      const made = (await request(4, "tools/call", { name: "config", arguments: {} })).result as CallToolResult;
      const wire = JSON.parse(JSON.stringify(made)) as CallToolResult;
      assert.equal(wire.isError, undefined, JSON.stringify(wire));
      assert.deepEqual(Object.keys(wire.structuredContent!), ["name", "__proto__"]);
      assert.deepEqual(JSON.parse((wire.content[0] as { text: string }).text), wire.structuredContent);
    } finally {
      await clientSide.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("initialize comes once: a second one is refused (-32600) and the first's version stays", {
    timeout: 60_000,
  }, async () => {
    // Before: the SDK answered a second initialize as the first, negotiating again mid-session (a 2025-03-26
    // client became a 2025-06-18 one, its artifacts links instead of text, and its capabilities replaced).
    const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-mem-"));
    const { served, clientSide, serverSide, request } = rawInMemory(dir);
    const init = (id: number, protocolVersion: string) =>
      request(id, "initialize", { protocolVersion, capabilities: {}, clientInfo: { name: "twice", version: "1" } });
    try {
      await served.server.connect(serverSide);
      await clientSide.start();
      // Two at once: the second is refused while the first is answered.
      const [first, racing] = await Promise.all([init(1, "2025-03-26"), init(2, "2025-06-18")]);
      assert.equal((first.result as { protocolVersion: string }).protocolVersion, "2025-03-26");
      assert.equal((racing.error as { code: number }).code, -32600, JSON.stringify(racing));
      await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      for (const version of ["2025-06-18", "2025-03-26", "1999-01-01"]) {
        const again = await init(10 + version.length + Number(version.slice(0, 4)), version);
        const error = again.error as { code: number; message: string } | undefined;
        assert.equal(error?.code, -32600, JSON.stringify(again));
        assert.match(error!.message, /already initialized.*new connection/);
      }
      const answer = await request(3, "tools/call", { name: "big", arguments: {} });
      const content = (answer.result as CallToolResult).content as { type: string }[];
      assert.deepEqual(content.map((c) => c.type), ["text", "text"], "still told in text, as 2025-03-26 is");
    } finally {
      await clientSide.close();
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test(
    "calls that are not concurrency-safe run one at a time, even when requests overlap",
    { timeout: 60_000 },
    async () => {
      const { client, close } = await connect();
      try {
        order.length = 0;
        const results = await Promise.all(["a", "b"].map((id) => call(client, "slow_write", { id })));
        assert.deepEqual(results.map((r) => (r.content[0] as { text: string }).text), ["a", "b"]);
        assert.deepEqual(order, ["start a", "end a", "start b", "end b"]);
      } finally {
        await close();
      }
    },
  );

  test(
    "approvals: refused without elicitation, asked through it, auto with autoConfirm",
    { timeout: 60_000 },
    async () => {
      let server = await connect();
      try {
        const refused = await call(server.client, "approve_me");
        assert.equal(refused.isError, true);
        assert.match((refused.content[0] as { text: string }).text, /does not support elicitation/);
      } finally {
        await server.close();
      }
      const asked: unknown[] = [];
      server = await connect({
        elicit: (params) => {
          asked.push(params);
          return { action: "accept", content: { answer: true } };
        },
      });
      try {
        const approved = await call(server.client, "approve_me");
        assert.equal(approved.isError, undefined);
        assert.equal(asked.length, 1);
        const declinedServer = await connect({ elicit: () => ({ action: "decline" }) });
        const declined = await call(declinedServer.client, "approve_me");
        await declinedServer.close();
        assert.equal(declined.isError, true);
        assert.match((declined.content[0] as { text: string }).text, /not_approved/);
      } finally {
        await server.close();
      }
      server = await connect({ autoConfirm: true });
      try {
        assert.equal((await call(server.client, "approve_me")).isError, undefined);
      } finally {
        await server.close();
      }
    },
  );

  test("choices: the answer must be one of the options; dismissing refuses", { timeout: 60_000 }, async () => {
    let server = await connect({ elicit: () => ({ action: "accept", content: { answer: "blue" } }) });
    try {
      assert.deepEqual((await call(server.client, "pick")).content, [{ type: "text", text: "blue" }]);
    } finally {
      await server.close();
    }
    // An answer outside the form (the SDK refuses it against the schema) allows nothing: a refusal, not a tool error.
    server = await connect({ elicit: () => ({ action: "accept", content: { answer: "green" } }) });
    try {
      const result = await call(server.client, "pick");
      assert.equal(result.isError, true);
      assert.match((result.content[0] as { text: string }).text, /^Skipped \[permission_denied\].*no usable answer/);
    } finally {
      await server.close();
    }
    server = await connect({ elicit: () => ({ action: "cancel" }) });
    try {
      const result = await call(server.client, "pick");
      assert.equal(result.isError, true);
      assert.match((result.content[0] as { text: string }).text, /permission_denied.*dismissed/);
    } finally {
      await server.close();
    }
  });

  test("no progress notification follows the answer, though a timed-out tool runs on and reports progress", {
    timeout: 60_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-mem-"));
    // Timed out at 100 ms, it ignores its signal and reports progress until it settles at about 500 ms.
    const stubborn = new ToolBox({ graceMs: 20 }).register(tool({
      name: "stubborn",
      description: "Reports progress whatever its signal says.",
      input: v.object({}),
      readOnly: true,
      timeoutMs: 100,
      run: async (_args, ctx) => {
        for (let step = 0; step < 10; step++) {
          ctx.progress(`step ${step}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        return "done";
      },
    }));
    const served = createMcpServer(stubborn, { workspace: dir, sandbox: "off" });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const heard: { method?: string; id?: unknown }[] = [];
    clientSide.onmessage = (message) => void heard.push(message as { method?: string; id?: unknown });
    try {
      await served.server.connect(serverSide);
      await clientSide.start();
      await clientSide.send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await clientSide.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "stubborn", arguments: {}, _meta: { progressToken: "p" } },
      });
      const answered = () => heard.findIndex((m) => m.id === 2);
      for (let waited = 0; answered() < 0 && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      assert.ok(answered() > 0, JSON.stringify(heard));
      // The tool goes on until about 500 ms, then settles: a late result, announced once it has.
      const settled = () => heard.some((m) => m.method === "notifications/toolfence/late_result");
      for (let waited = 0; !settled() && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      assert.ok(settled(), JSON.stringify(heard.map((m) => m.method ?? m.id)));
      const progress = heard.map((m, i) => m.method === "notifications/progress" ? i : -1).filter((i) => i >= 0);
      assert.ok(progress.length > 0, "progress before the answer");
      assert.ok(progress.every((i) => i < answered()), JSON.stringify(heard.map((m) => m.method ?? m.id)));
    } finally {
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a client of 2025-06-18 gets a choice as enum with enumNames, the only single-select field it knows", {
    timeout: 60_000,
  }, async () => {
    const asked: Record<string, unknown>[] = [];
    const elicit = (params: unknown) => {
      asked.push(
        (params as { requestedSchema: { properties: { answer: Record<string, unknown> } } })
          .requestedSchema.properties.answer,
      );
      return { action: "accept" as const, content: { answer: "blue" } };
    };
    // The SDK client asks for the latest version; this one asks for 2025-06-18, which the server accepts.
    const older = await connect({ elicit, initializeAs: "2025-06-18" });
    try {
      assert.deepEqual((await call(older.client, "pick")).content, [{ type: "text", text: "blue" }]);
    } finally {
      await older.close();
    }
    const latest = await connect({ elicit });
    try {
      assert.deepEqual((await call(latest.client, "pick")).content, [{ type: "text", text: "blue" }]);
    } finally {
      await latest.close();
    }
    assert.deepEqual(asked, [
      { type: "string", title: "Answer", enum: ["red", "blue"], enumNames: ["Red", "Blue"], default: "red" },
      {
        type: "string",
        title: "Answer",
        oneOf: [{ const: "red", title: "Red" }, { const: "blue", title: "Blue" }],
        default: "red",
      },
    ]);
  });

  test(
    "lists come in one page: a cursor is refused with -32602, and the artifacts' URI template is listed",
    { timeout: 60_000 },
    async () => {
      const { client, close } = await connect();
      try {
        // A client that follows cursors and gets the first page back would loop for ever.
        for (
          const list of [
            () => client.listTools({ cursor: "next" }),
            () => client.listResources({ cursor: "next" }),
            () => client.listResourceTemplates({ cursor: "next" }),
          ]
        ) await assert.rejects(list(), (error: { code?: number }) => error.code === -32602);
        const { resourceTemplates } = await client.listResourceTemplates();
        assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ["artifact://sha256/{sha256}"]);
      } finally {
        await close();
      }
    },
  );
});
