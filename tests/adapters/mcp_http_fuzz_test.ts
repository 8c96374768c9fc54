// Protocol fuzzing over HTTP (issue #21's robustness, on the HTTP transport):
// random and mutated bodies and headers against a real session. After each,
// every refusal must be an HTTP error with a JSON-RPC error body that says why,
// and the session must still answer ping and a real call. Host values are
// generated too: none but the server's own may pass.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { type Harness, INIT, raw, startServer } from "./_http_harness.ts";

const TOKEN = "fuzz-token-0123456789abcdef0123";

describe("HTTP protocol fuzz", () => {
  let h: Harness;
  let session: string;
  const headers = () => ({
    authorization: `Bearer ${TOKEN}`,
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-06-18",
  });

  before(async () => {
    h = await startServer([{ token: TOKEN, tenant: "fuzz" }], { maxBodyBytes: 32 * 1024 });
    const opened = await raw(h.server.url, { body: INIT, headers: { authorization: `Bearer ${TOKEN}` } });
    session = String(opened.headers["mcp-session-id"]);
    const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
    assert.equal((await raw(h.server.url, { body: initialized, headers: headers() })).status, 202);
  });
  after(() => h.close());

  async function stillServes(): Promise<void> {
    const ping = await raw(h.server.url, { body: '{"jsonrpc":"2.0","id":"p","method":"ping"}', headers: headers() });
    assert.equal(ping.status, 200, ping.text);
    assert.match(ping.text, /"id":"p"/);
    const call = await raw(h.server.url, {
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "c",
        method: "tools/call",
        params: { name: "datetime", arguments: {} },
      }),
      headers: headers(),
    });
    assert.equal(call.status, 200);
    assert.match(call.text, /"id":"c"/);
  }

  const valid = {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "read_file", arguments: { path: "a.txt" } },
  };
  const body = fc.oneof(
    fc.jsonValue().map((value) => JSON.stringify(value)),
    fc.uint8Array({ maxLength: 300 }),
    fc.string({ maxLength: 200 }),
    // A valid frame with one member replaced by anything.
    fc.tuple(fc.constantFrom("jsonrpc", "id", "method", "params"), fc.jsonValue()).map(([key, value]) =>
      JSON.stringify({ ...valid, [key]: value })
    ),
    // A valid frame cut anywhere, or with a NUL put in.
    fc.nat(120).map((at) => JSON.stringify(valid).slice(0, at)),
    fc.nat(120).map((at) => {
      const text = JSON.stringify(valid);
      return text.slice(0, at) + "\u0000" + text.slice(at);
    }),
    // Deep and huge values.
    fc.integer({ min: 1, max: 5000 }).map((depth) =>
      `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`
    ),
    fc.integer({ min: 30_000, max: 80_000 }).map((size) =>
      JSON.stringify({ ...valid, params: { name: "write_file", arguments: { path: "b", content: "x".repeat(size) } } })
    ),
  );
  const contentType = fc.constantFrom("application/json", "text/plain", "application/json; charset=utf-8", "");

  test("every body gets an answer with a reason, and the session goes on", { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(body, contentType, async (sent, type) => {
        const answer = await raw(h.server.url, {
          body: sent,
          headers: { ...headers(), ...(type ? { "content-type": type } : { "content-type": "" }) },
        });
        assert.ok([200, 202, 400, 404, 406, 413, 415].includes(answer.status), `${answer.status} ${answer.text}`);
        if (answer.status >= 400) {
          const reply = answer.json();
          assert.equal(reply.jsonrpc, "2.0");
          assert.equal(typeof reply.error?.code, "number");
          assert.ok(reply.error!.message.length > 0 && reply.error!.message.length < 400, reply.error!.message);
          assert.doesNotMatch(reply.error!.message, /ZodError|"expected":|\n {4}at /);
        }
        await stillServes();
      }),
      { numRuns: 150 },
    );
  });

  test("no generated Host gets past the Host check", { timeout: 60_000 }, async () => {
    const own = new Set([`127.0.0.1:${h.server.port}`, `localhost:${h.server.port}`, `[::1]:${h.server.port}`]);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.domain(),
          fc.ipV4(),
          fc.tuple(fc.constantFrom("127.0.0.1", "localhost", "[::1]", "127.0.0.2"), fc.nat(65535)).map(
            ([name, port]) => `${name}:${port}`,
          ),
          fc.constantFrom(`localhost.:${h.server.port}`, `127.0.0.1.evil.example:${h.server.port}`),
        ),
        async (host) => {
          fc.pre(!own.has(host.toLowerCase()));
          const answer = await raw(h.server.url, { body: INIT, headers: { host, authorization: `Bearer ${TOKEN}` } });
          assert.equal(answer.status, 403, host);
        },
      ),
      { numRuns: 100 },
    );
  });
});
