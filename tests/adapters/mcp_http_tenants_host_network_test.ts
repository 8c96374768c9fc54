// Tenants apart from the server's host: on a server of several tenants, tenant alice's browser asked alice's own
// client whether it might connect to a loopback address; her "allow" let it read a service listening on the
// server's loopback (`browser_navigate http://127.0.0.1:<port>` then `browser_snapshot` printed the service's
// secret). A tenant's person has no say over the server's machine and network: there the question is refused
// without asking, saying why, and a server of one tenant still asks.

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type net from "node:net";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { serveHttp, TokenFile } from "../../adapters/mcp/http.ts";
import { connect, textOf, writeTokens } from "./_http_harness.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";
import { findBrowser } from "../../tools/browser/_launch.ts";

const status = await bubblewrapStatus();
const skip = (() => {
  if (!status.path) return `needs a working bubblewrap: ${status.reason}`;
  try {
    findBrowser();
    return false;
  } catch {
    return "needs a Chromium on PATH (apt-get install chromium-headless-shell)";
  }
})();

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const SECRET = `HOSTSECRET${Date.now()}`;

async function attempt(tenants: { token: string; tenant: string }[]): Promise<{ text: string; asked: string[] }> {
  const hits: string[] = [];
  const service = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    res.end(`<p>${SECRET}</p>`);
  });
  await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", () => resolve()));
  const port = (service.address() as net.AddressInfo).port;
  const dir = await mkdtemp(join(tmpdir(), "toolfence-http-net-"));
  const server = await (async () => {
    await writeTokens(join(dir, "tokens.json"), tenants);
    await mkdir(join(dir, "tenants"));
    await mkdir(join(dir, "tmp"));
    // Several tenants get their folders under a tenant root; one works in a workspace of its own.
    return await serveHttp(new ToolBox().withDefaults("fs", "browser"), {
      port: 0,
      ...(tenants.length > 1 ? { tenantRoot: join(dir, "tenants") } : { workspace: join(dir, "tenants") }),
      tempParent: join(dir, "tmp"),
      tokens: await TokenFile.open(join(dir, "tokens.json")),
      sandbox: "required",
    });
  })();
  const asked: string[] = [];
  const alice = await connect(server.url, ALICE, { elicit: true });
  try {
    // Alice's client allows whatever it is asked.
    alice.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { answer: "allow" } };
    });
    const opened = await alice.callTool({ name: "browser_navigate", arguments: { url: `http://127.0.0.1:${port}/` } });
    const read = opened.isError ? "" : textOf(await alice.callTool({ name: "browser_snapshot", arguments: {} }));
    return { text: `${textOf(opened)}\n${read}\nservice asked for: ${hits.join(",")}`, asked };
  } finally {
    await alice.close();
    await server.shutdown();
    await new Promise<void>((resolve) => service.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  }
}

test("a tenant's browser never reaches the server's loopback, however its client answers", {
  skip,
  timeout: 120_000,
}, async () => {
  const { text, asked } = await attempt([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
  assert.doesNotMatch(text, new RegExp(SECRET), text);
  assert.match(text, /url_not_allowed/, text);
  assert.match(text, /serves several tenants/, text);
  assert.match(text, /network\.allow/, text);
  assert.match(text, /service asked for: \n|service asked for: $/, text);
  assert.deepEqual(asked, [], "the tenant's client was not asked");
});

test("a server of one tenant still asks, and its person's allow holds", { skip, timeout: 120_000 }, async () => {
  const { text, asked } = await attempt([{ token: ALICE, tenant: "alice" }]);
  assert.equal(asked.length, 1, text);
  assert.match(text, new RegExp(SECRET), text);
});
