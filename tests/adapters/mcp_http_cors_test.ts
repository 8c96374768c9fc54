// A browser client of MCP over HTTP on an origin given with --allowed-origin
// (allowedOrigins). The Origin check let such a page's requests through, but
// the server spoke no CORS: the browser's preflight (OPTIONS, which carries no
// token) was answered 401, so no POST was ever sent, and no answer carried
// Access-Control-Allow-Origin, so the page could read neither it nor its
// Mcp-Session-Id. The official SDK client runs here through a fetch that does
// what a browser does with a cross-origin request (the preflight for what is
// not a simple request, the answer's Access-Control-Allow-Origin, only the
// exposed headers readable).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Harness, INIT, raw, startServer, textOf } from "./_http_harness.ts";

const APP = "http://app.example:3000";
const TOKEN = "cors-token-0123456789abcdef";

const SAFELISTED = ["cache-control", "content-language", "content-length", "content-type", "expires", "pragma"];

/** fetch as a page on `origin` makes it: a preflight first where the Fetch standard asks for one, and CORS checked. */
function browserFetch(origin: string, preflights: string[]): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init?.method ?? "GET").toUpperCase();
    const headers = new Headers(init?.headers);
    const unsafe = [...headers.keys()].filter((name) =>
      !["accept", "accept-language", "content-language"].includes(name) &&
      !(name === "content-type" &&
        /^(text\/plain|multipart\/form-data|application\/x-www-form-urlencoded)\b/.test(headers.get(name)!))
    );
    if (!["GET", "HEAD", "POST"].includes(method) || unsafe.length > 0) {
      const pre = await fetch(url, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": method,
          ...(unsafe.length > 0 ? { "access-control-request-headers": unsafe.sort().join(",") } : {}),
        },
      });
      await pre.body?.cancel();
      preflights.push(`${method} ${pre.status}`);
      if (pre.status < 200 || pre.status > 299) {
        throw new TypeError(`Failed to fetch: preflight answered ${pre.status}`);
      }
      if (pre.headers.get("access-control-allow-origin") !== origin) throw new TypeError("Failed to fetch: preflight");
      const methods = (pre.headers.get("access-control-allow-methods") ?? "").toUpperCase().split(/\s*,\s*/);
      if (!["GET", "HEAD", "POST"].includes(method) && !methods.includes(method)) {
        throw new TypeError(`Failed to fetch: ${method} not allowed`);
      }
      const allowed = (pre.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/\s*,\s*/);
      const missing = unsafe.filter((name) => !allowed.includes(name));
      if (missing.length > 0) throw new TypeError(`Failed to fetch: headers not allowed: ${missing.join(", ")}`);
    }
    headers.set("origin", origin);
    const response = await fetch(url, { ...init, headers });
    if (response.headers.get("access-control-allow-origin") !== origin) {
      await response.body?.cancel();
      throw new TypeError(`Failed to fetch: no Access-Control-Allow-Origin on a ${response.status}`);
    }
    const exposed = (response.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/\s*,\s*/);
    const readable = new Headers();
    for (const [name, value] of response.headers) {
      if (SAFELISTED.includes(name) || exposed.includes(name)) readable.set(name, value);
    }
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: readable });
  };
}

describe("MCP over HTTP from a browser page on an allowed origin (CORS)", () => {
  let harness: Harness;
  before(async () => {
    harness = await startServer([{ token: TOKEN, tenant: "alice" }], { allowedOrigins: [APP] });
  });
  after(async () => await harness?.close());

  test("the official client, run as a page would run it, opens a session, calls a tool and ends it", {
    timeout: 60_000,
  }, async () => {
    const preflights: string[] = [];
    const transport = new StreamableHTTPClientTransport(harness.server.url, {
      fetch: browserFetch(APP, preflights),
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    const client = new Client({ name: "page", version: "1" });
    await client.connect(transport);
    try {
      // The session id was readable (exposed), so every later request went in the session.
      assert.ok(transport.sessionId);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === "list_dir"));
      const listed = await client.callTool({ name: "list_dir", arguments: {} });
      assert.equal(listed.isError, undefined, textOf(listed));
      await transport.terminateSession();
      assert.equal(transport.sessionId, undefined);
      assert.ok(preflights.includes("POST 204"), preflights.join("; "));
      assert.ok(preflights.includes("DELETE 204"), preflights.join("; "));
      assert.equal(harness.server.sessionCount(), 0);
    } finally {
      await client.close();
    }
  });

  test("a page on another origin is refused, preflight and request, with no CORS headers", {
    timeout: 60_000,
  }, async () => {
    const transport = new StreamableHTTPClientTransport(harness.server.url, {
      fetch: browserFetch("http://evil.example", []),
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    await assert.rejects(new Client({ name: "evil", version: "1" }).connect(transport), /preflight answered 403/);
    const post = await raw(harness.server.url, {
      headers: { origin: "http://evil.example", authorization: `Bearer ${TOKEN}` },
      body: INIT,
    });
    assert.equal(post.status, 403);
    assert.equal(post.headers["access-control-allow-origin"], undefined);
  });

  test("the preflight needs no token; a refusal of the token is readable by the page, WWW-Authenticate with it", {
    timeout: 60_000,
  }, async () => {
    const pre = await raw(harness.server.url, {
      method: "OPTIONS",
      headers: {
        origin: APP,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,mcp-protocol-version",
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers["access-control-allow-origin"], APP);
    assert.equal(pre.headers["vary"], "Origin");
    const refused = await raw(harness.server.url, { headers: { origin: APP }, body: INIT });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers["access-control-allow-origin"], APP);
    assert.match(String(refused.headers["access-control-expose-headers"]), /www-authenticate/);
    assert.match(String(refused.headers["www-authenticate"]), /^Bearer /);
    // No Origin, no CORS: what clients that are not browsers get is unchanged.
    const plain = await raw(harness.server.url, { body: INIT });
    assert.equal(plain.headers["access-control-allow-origin"], undefined);
  });
});
