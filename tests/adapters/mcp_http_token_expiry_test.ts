// A session lives no longer than the JWT shown for it. Seen live (main.ts serve --http --oauth-issuer, a token of
// alice's expiring 2 s after it was signed): 34 s later, with her requests answered 401 "the token has expired", the
// session's GET stream was still open, a `sleep 50` call in flight ran to its end and answered on its stream, and a
// background job writing a line each 200 ms went on writing. Within jose's 30 s clock leeway a request showing the
// expired token was still served (a tool call 2 s past `exp` ran). Now the session ends at `exp`, as a revoked token's
// does: streams closed, calls cancelled, jobs killed; the token itself gets 401 invalid_token. A request of the
// session showing a later token of the same tenant (a refreshed one) keeps the session.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { JwtVerifier } from "../../adapters/mcp/http.ts";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { connect, type Harness, INIT, raw, startServer, textOf } from "./_http_harness.ts";
import { markerSeconds, pidsWithArgs } from "../tools/cmd/_helpers.ts";

const ISSUER = "https://auth.example.test";
const RESOURCE = "http://127.0.0.1/mcp-expiry";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const VERSION = "2025-06-18";
const sqliteModule = "node:sqlite";
const sqliteMissing = await import(sqliteModule).then(() => undefined, () => "this runtime has no node:sqlite");

describe("a JWT's sessions end when it expires", { timeout: 180_000 }, () => {
  let h: Harness;
  let jwks: Server;
  let sign: (sub: string, expiresInSec: number) => Promise<string>;
  let verifier: JwtVerifier;

  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...await exportJWK(publicKey), kid: "k1", alg: "RS256", use: "sig" };
    jwks = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((done) => jwks.listen(0, "127.0.0.1", done));
    const port = (jwks.address() as { port: number }).port;
    sign = (sub, expiresInSec) =>
      new SignJWT({ sub, scope: "tools:read tools:write tools:commands" })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(ISSUER)
        .setAudience(RESOURCE)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSec)
        .sign(privateKey);
    // The default clock leeway (30 s): it is not a leeway on `exp`.
    verifier = new JwtVerifier({ issuer: ISSUER, jwksUrl: `http://127.0.0.1:${port}/jwks`, resource: RESOURCE });
    h = await startServer([], { tokens: undefined, jwt: verifier, resourceUrl: RESOURCE, idleTimeoutMs: 300_000 });
  });
  after(async () => {
    await h.close();
    await new Promise((done) => jwks.close(done));
  });

  const post = (token: string, session: string, body: unknown) =>
    raw(h.server.url, {
      headers: { authorization: `Bearer ${token}`, "mcp-session-id": session, "mcp-protocol-version": VERSION },
      body: JSON.stringify(body),
    });

  async function openRaw(token: string): Promise<string> {
    const init = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${token}` } });
    assert.equal(init.status, 200, init.text);
    const session = String(init.headers["mcp-session-id"]);
    const ready = await post(token, session, { jsonrpc: "2.0", method: "notifications/initialized" });
    assert.equal(ready.status, 202, ready.text);
    return session;
  }

  test("its stream closes, its call in flight is cancelled, its job killed; its token then gets 401", {
    timeout: 90_000,
  }, async () => {
    await mkdir(join(h.dir, "tenants", "alice"), { recursive: true });
    const bob = await connect(h.server.url, await sign("bob", 300));
    // Signed with 16 s to go (exp is in whole seconds): room for a loaded machine to open both sessions, the job,
    // the call and the stream before it ends (8 s was not, once, in CI under Node 22). The waits below run by the
    // token's clock: each looks until shortly before exp, not for a count of tries.
    const token = await sign("alice", 16);
    const expiresAt = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).exp * 1000;
    const client = await connect(h.server.url, token);
    const session = await openRaw(token);
    try {
      const job = await client.callTool({
        name: "bash_background",
        arguments: { command: "while true; do echo x >> expiry.log; sleep 0.2; done" },
      });
      assert.equal(job.isError, undefined, textOf(job));
      const marker = markerSeconds();
      const inFlight = client.callTool(
        { name: "bash", arguments: { command: `sleep ${marker}`, timeout_s: 120 } },
        undefined,
        {
          timeout: 60_000,
        },
      ).then((result) => textOf(result), (error: Error) => `rejected: ${error.message}`);
      // The raw session's GET stream, opened with the token.
      const get = await fetch(h.server.url, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: "text/event-stream",
          "mcp-session-id": session,
          "mcp-protocol-version": VERSION,
        },
      });
      assert.equal(get.status, 200);
      const streamEnd = (async () => {
        const reader = get.body!.getReader();
        while (!(await reader.read().catch(() => ({ done: true }))).done);
        return Date.now();
      })();
      const log = join(h.dir, "tenants", "alice", "expiry.log");
      const size = async () => (await stat(log).catch(() => ({ size: 0 }))).size;
      const beforeExp = () => Date.now() < expiresAt - 500;
      while (beforeExp() && (await size()) === 0) await sleep(100);
      assert.ok((await size()) > 0, "the job writes its log");
      while (beforeExp() && (await pidsWithArgs("sleep", marker)).length === 0) await sleep(100);
      assert.ok((await pidsWithArgs("sleep", marker)).length > 0, "the call in flight runs");

      // The stream ends at exp (within the time a loaded machine takes), not at the session's idle expiry.
      const ended = await Promise.race([streamEnd, sleep(25_000).then(() => undefined)]);
      assert.ok(ended !== undefined, "the session's GET stream closed");
      assert.ok(ended >= expiresAt - 50, `the stream closed at exp or after (${ended - expiresAt} ms)`);
      const answer = await inFlight;
      assert.match(answer, /access token expired/, answer);
      for (let i = 0; i < 50 && (await pidsWithArgs("sleep", marker)).length > 0; i++) await sleep(100);
      assert.deepEqual(await pidsWithArgs("sleep", marker), [], "the call's process is gone");
      const stopped = await size();
      await sleep(1_000);
      assert.equal(await size(), stopped, "the job stopped writing");

      // Every request showing the expired token, on either session: 401, invalid_token, whatever it asks.
      for (
        const [id, body] of [
          [session, {
            jsonrpc: "2.0",
            id: 7,
            method: "tools/call",
            params: { name: "bash", arguments: { command: "id" } },
          }],
          [session, { jsonrpc: "2.0", id: 8, method: "ping" }],
          [client.transport!.sessionId!, { jsonrpc: "2.0", id: 9, method: "tools/list" }],
        ] as const
      ) {
        const refused = await post(token, id, body);
        assert.equal(refused.status, 401, refused.text);
        assert.match(String(refused.headers["www-authenticate"]), /error="invalid_token"/);
        assert.match(refused.json().error!.message, /expired/);
      }
      const resumed = await raw(h.server.url, {
        method: "GET",
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", "mcp-session-id": session },
      });
      assert.equal(resumed.status, 401);
      // The session is gone: a fresh token of alice's finds it ended.
      const fresh = await sign("alice", 300);
      assert.equal((await post(fresh, session, { jsonrpc: "2.0", id: 10, method: "ping" })).status, 404);

      // Bob's session, whose token counts, goes on.
      const mine = await bob.callTool({ name: "bash", arguments: { command: "echo still" } });
      assert.match(textOf(mine), /still/);
    } finally {
      await client.close().catch(() => {});
      await bob.close();
    }
  });

  test("a refreshed token shown on the session keeps it past the first one's exp", { timeout: 60_000 }, async () => {
    const first = await sign("carol", 4);
    const session = await openRaw(first);
    const later = await sign("carol", 300);
    const ping = await post(later, session, { jsonrpc: "2.0", id: 2, method: "ping" });
    assert.equal(ping.status, 200, ping.text);
    await sleep(5_500);
    assert.equal((await post(first, session, { jsonrpc: "2.0", id: 3, method: "ping" })).status, 401);
    const call = await post(later, session, {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "bash", arguments: { command: "echo kept" } },
    });
    assert.equal(call.status, 200, call.text);
    assert.match(call.text, /kept/);
    // An older token shown after does not shorten it.
    const shorter = await sign("carol", 4);
    assert.equal((await post(shorter, session, { jsonrpc: "2.0", id: 5, method: "ping" })).status, 200);
    await sleep(5_000);
    assert.equal((await post(later, session, { jsonrpc: "2.0", id: 6, method: "ping" })).status, 200);
  });

  test("a token expiring past the longest timer (40 days) keeps its session", { timeout: 30_000 }, async () => {
    const token = await sign("frank", 40 * 24 * 3600);
    const session = await openRaw(token);
    await sleep(500);
    const ping = await post(token, session, { jsonrpc: "2.0", id: 2, method: "ping" });
    assert.equal(ping.status, 200, ping.text);
  });

  test("a stateless server's call in flight is cancelled at its token's exp", { timeout: 60_000 }, async () => {
    const stateless = await startServer([], {
      tokens: undefined,
      jwt: verifier,
      resourceUrl: RESOURCE,
      stateless: true,
    });
    try {
      const marker = markerSeconds();
      const answer = await raw(stateless.server.url, {
        headers: { authorization: `Bearer ${await sign("dave", 4)}`, "mcp-protocol-version": VERSION },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "bash", arguments: { command: `sleep ${marker}`, timeout_s: 120 } },
        }),
      });
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.text, /access token expired/);
      assert.deepEqual(await pidsWithArgs("sleep", marker), []);
    } finally {
      await stateless.close();
    }
  });

  test("in a fleet, a replica whose copy's token expired leaves the session to the one shown a fresh token", {
    timeout: 60_000,
    skip: sqliteMissing,
  }, async () => {
    const address = `sqlite:${join(h.dir, "fleet.db")}`;
    const replicas: Harness[] = [];
    try {
      for (const replicaId of ["a", "b"]) {
        replicas.push(
          await startServer([], {
            tokens: undefined,
            jwt: verifier,
            resourceUrl: RESOURCE,
            store: await openStore(address),
            replicaId,
          }),
        );
      }
      const [a, b] = replicas;
      const short = await sign("erin", 4);
      const init = await raw(a.server.url, { body: INIT, headers: { authorization: `Bearer ${short}` } });
      const session = String(init.headers["mcp-session-id"]);
      const at = (replica: Harness, token: string, id: number) =>
        raw(replica.server.url, {
          headers: { authorization: `Bearer ${token}`, "mcp-session-id": session, "mcp-protocol-version": VERSION },
          body: JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }),
        });
      const fresh = await sign("erin", 300);
      // B takes the session over, shown a fresh token; A's copy keeps the short one's exp.
      assert.equal((await at(b, fresh, 2)).status, 200);
      await sleep(5_500);
      assert.equal(a.server.sessionCount(), 0, "A's copy ended at its token's exp");
      // The session lives on in the store: B serves it, and A takes it over again.
      assert.equal((await at(b, fresh, 3)).status, 200);
      assert.equal((await at(a, fresh, 4)).status, 200);
    } finally {
      for (const replica of replicas) await replica.close();
    }
  });
});
