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
import { McpError } from "@modelcontextprotocol/sdk/types.js";
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

describe("MCP over Streamable HTTP, against the specification", () => {
  let dir: string;
  let server: HttpServer;
  let client: Client;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolfence-mcp-spec-"));
    server = await serveHttp(box, {
      port: 0,
      workspace: dir,
      allowNoAuth: true,
      sandbox: "off",
      capabilities: [],
      fence: NO_NET,
    });
    client = new Client({ name: "spec-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(server.url));
  });
  after(async () => {
    await client.close();
    await server.shutdown();
    await rm(dir, { recursive: true, force: true });
  });

  test("a tool left out of tools/list is called as an unknown one: the same -32602, no hint it exists", {
    timeout: 60_000,
  }, async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(names, ["echo"]);
    const unknown = await rejection(client.callTool({ name: "no_such_tool", arguments: {} }));
    assert.equal(unknown.code, -32602);
    for (const name of ["look", "fetch_page"]) {
      const error = await rejection(client.callTool({ name, arguments: {} }));
      assert.equal(error.code, unknown.code, name);
      assert.equal(error.message, unknown.message.replace("no_such_tool", name));
      assert.equal(error.data, unknown.data);
      assert.doesNotMatch(error.message, /capabilit|fence|vision|network|allow/i);
    }
    const echoed = await client.callTool({ name: "echo", arguments: { text: "still here" } });
    assert.equal(echoed.isError, undefined);
  });
});
