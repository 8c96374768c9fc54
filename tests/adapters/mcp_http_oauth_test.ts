// OAuth resource-server mode with real JWTs: a local RSA key signs them, and a
// JWKS server on loopback publishes the public half, as an authorization
// server would.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { JwtVerifier, tenantName } from "../../adapters/mcp/http.ts";
import { MemoryQuestionQueue, serveConsole } from "../../adapters/mcp/console/mod.ts";
import { connect, type Harness, INIT, raw, startServer, textOf } from "./_http_harness.ts";

const ISSUER = "https://auth.example.test";

describe("OAuth resource server", () => {
  let h: Harness;
  let jwks: Server;
  let sign: (claims: Record<string, unknown>, options?: { exp?: string | number; aud?: string }) => Promise<string>;
  let foreignSign: typeof sign;
  let resource: string;
  let verifier: JwtVerifier;

  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const other = await generateKeyPair("RS256");
    const jwk = { ...await exportJWK(publicKey), kid: "k1", alg: "RS256", use: "sig" };
    jwks = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((done) => jwks.listen(0, "127.0.0.1", done));
    const jwksPort = (jwks.address() as { port: number }).port;
    // The audience must be known before the port is, so the resource URL is given.
    resource = "http://127.0.0.1/mcp-resource";
    const make = (key: CryptoKey, kid: string): typeof sign => (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid })
        .setIssuer(String(claims.iss ?? ISSUER))
        .setAudience(options.aud ?? resource)
        .setIssuedAt()
        .setExpirationTime(options.exp ?? "5m")
        .sign(key);
    sign = make(privateKey, "k1");
    foreignSign = make(other.privateKey, "k1");
    verifier = new JwtVerifier({ issuer: ISSUER, jwksUrl: `http://127.0.0.1:${jwksPort}/jwks`, resource });
    h = await startServer([], {
      tokens: undefined,
      jwt: verifier,
      resourceUrl: resource,
    });
  });
  after(async () => {
    await h.close();
    await new Promise((done) => jwks.close(done));
  });

  test("Protected Resource Metadata names the issuer and the scopes", { timeout: 60_000 }, async () => {
    const meta = await raw(new URL("/.well-known/oauth-protected-resource/mcp-resource", h.server.url), {
      method: "GET",
    });
    assert.equal(meta.status, 200);
    const body = JSON.parse(meta.text);
    assert.equal(body.resource, resource);
    assert.deepEqual(body.authorization_servers, [ISSUER]);
    assert.deepEqual(body.scopes_supported, ["tools:read", "tools:write", "tools:commands"]);
    const none = await raw(h.server.url, { body: INIT });
    assert.equal(none.status, 401);
    assert.equal(
      none.headers["www-authenticate"],
      `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp-resource"`,
    );
  });

  test("a valid JWT gets its scopes' tools", { timeout: 60_000 }, async () => {
    const token = await sign({ sub: "alice", scope: "tools:read tools:write" });
    const client = await connect(h.server.url, token);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("write_file") && names.includes("read_file"));
      assert.ok(!names.includes("bash"));
      const wrote = await client.callTool({ name: "write_file", arguments: { path: "j.txt", content: "jwt\n" } });
      assert.equal(wrote.isError, undefined, textOf(wrote));
    } finally {
      await client.close();
    }
  });

  const refused: [string, () => Promise<string>, RegExp][] = [
    [
      "expired",
      () => sign({ sub: "alice", scope: "tools:read" }, { exp: Math.floor(Date.now() / 1000) - 120 }),
      /expired/,
    ],
    [
      "wrong audience",
      () => sign({ sub: "alice", scope: "tools:read" }, { aud: "http://other/mcp" }),
      /not for this server/,
    ],
    ["wrong issuer", () => sign({ sub: "alice", scope: "tools:read", iss: "https://evil.test" }), /not issued by/],
    ["foreign key", () => foreignSign({ sub: "alice", scope: "tools:read" }), /signature does not verify/],
    ["no subject", () => sign({ scope: "tools:read" }), /no sub claim/],
    ["not a JWT", () => Promise.resolve("abc.def.ghi"), /not a valid JWT|could not be verified/],
  ];
  for (const [name, make, reason] of refused) {
    test(`a JWT with ${name} gets 401 invalid_token with the reason`, { timeout: 60_000 }, async () => {
      const answer = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${await make()}` } });
      assert.equal(answer.status, 401, answer.text);
      assert.match(String(answer.headers["www-authenticate"]), /error="invalid_token"/);
      assert.match(answer.json().error!.message, reason);
    });
  }

  test("a JWT without any toolfence scope gets 403 insufficient_scope", { timeout: 60_000 }, async () => {
    const answer = await raw(h.server.url, {
      body: INIT,
      headers: { authorization: `Bearer ${await sign({ sub: "alice", scope: "openid email" })}` },
    });
    assert.equal(answer.status, 403);
    assert.match(String(answer.headers["www-authenticate"]), /error="insufficient_scope"/);
  });

  // A JWT's sessions are its tenant's (a refreshed token keeps them), but a token holding less than the one that
  // opened a session did not make what it holds: a `tools:read` JWT of the same subject listed and read the whole
  // output of the full token's commands (resources/read of their artifacts) and ended the session with DELETE.
  test("a session answers a JWT of its tenant that holds every scope of the one that opened it", {
    timeout: 60_000,
  }, async () => {
    const full = await connect(
      h.server.url,
      await sign({ sub: "carol", scope: "tools:read tools:write tools:commands" }),
    );
    try {
      const ran = await full.callTool({
        name: "bash",
        arguments: { command: "head -c 300000 /dev/zero | tr '\\0' S; echo; echo private-output" },
      });
      assert.match(textOf(ran), /artifact/, textOf(ran));
      const id = (full.transport as unknown as { sessionId: string }).sessionId;
      const as = async (scope: string) => ({
        authorization: `Bearer ${await sign({ sub: "carol", scope })}`,
        "mcp-session-id": id,
        "mcp-protocol-version": "2025-06-18",
      });
      const list = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "resources/list" });
      for (const scope of ["tools:read", "tools:read tools:write", "tools:commands"]) {
        const listed = await raw(h.server.url, { headers: await as(scope), body: list });
        assert.equal(listed.status, 404, `${scope}: ${listed.text}`);
        assert.doesNotMatch(listed.text, /artifact:/);
        const ended = await raw(h.server.url, { method: "DELETE", headers: await as(scope) });
        assert.equal(ended.status, 404, scope);
      }
      // A refreshed token with the same scopes (or more) keeps the session.
      const refreshed = await raw(h.server.url, {
        headers: await as("tools:commands tools:write tools:read"),
        body: list,
      });
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.match(refreshed.text, /artifact:\/\/sha256\//);
      assert.equal((await full.listTools()).tools.length > 0, true);
    } finally {
      await full.close().catch(() => {});
    }
  });

  test("subjects become folder-safe tenant names that cannot collide", { timeout: 60_000 }, () => {
    assert.equal(tenantName("alice"), "alice");
    assert.match(tenantName("../etc"), /^h-[0-9a-f]{32}$/);
    assert.match(tenantName("user@example.com"), /^h-[0-9a-f]{32}$/);
    const hashed = tenantName("a/b");
    assert.notEqual(tenantName(hashed), hashed);
    // Nor in another case: on a file system that ignores case, H-<hash> is the folder of h-<hash>.
    assert.notEqual(tenantName(hashed.toUpperCase()).toLowerCase(), hashed);
    assert.match(tenantName(hashed.toUpperCase()), /^h-[0-9a-f]{32}$/);
  });

  test("the web console signs in a person's JWT (console scope alone) and refuses an agent's", {
    timeout: 60_000,
  }, async () => {
    const web = await serveConsole({ port: 0, queue: new MemoryQuestionQueue(), jwt: verifier });
    try {
      const login = (token: string) =>
        fetch(new URL("/login", web.url), {
          method: "POST",
          body: new URLSearchParams({ token }),
          headers: { origin: web.url.origin },
          redirect: "manual",
        });
      const person = await login(await sign({ sub: "alice", scope: "console" }));
      assert.equal(person.status, 303);
      await person.body?.cancel();
      const agent = await login(await sign({ sub: "alice", scope: "tools:read console" }));
      assert.equal(agent.status, 401);
      assert.match(await agent.text(), /agent&#39;s token/);
      const neither = await login(await sign({ sub: "alice", scope: "tools:read" }));
      assert.equal(neither.status, 401);
      assert.match(await neither.text(), /console scope/);
      // And a console-only JWT opens nothing at the MCP endpoint.
      const init = await raw(h.server.url, {
        body: INIT,
        headers: { authorization: `Bearer ${await sign({ sub: "alice", scope: "console" })}` },
      });
      assert.equal(init.status, 403);
    } finally {
      await web.close();
    }
  });

  test("a console session ends when the JWT that opened it expires", { timeout: 60_000 }, async () => {
    const web = await serveConsole({ port: 0, queue: new MemoryQuestionQueue(), jwt: verifier });
    try {
      const token = await sign({ sub: "alice", scope: "console" }, { exp: Math.floor(Date.now() / 1000) + 2 });
      const login = await fetch(new URL("/login", web.url), {
        method: "POST",
        body: new URLSearchParams({ token }),
        headers: { origin: web.url.origin },
        redirect: "manual",
      });
      assert.equal(login.status, 303);
      const cookie = login.headers.get("set-cookie")!.split(";")[0];
      const read = () => fetch(new URL("/api/questions", web.url), { headers: { cookie } });
      const before = await read();
      assert.equal(before.status, 200);
      await before.body?.cancel();
      await new Promise((done) => setTimeout(done, 3000));
      const after = await read();
      assert.equal(after.status, 401);
      await after.body?.cancel();
    } finally {
      await web.close();
    }
  });
});
