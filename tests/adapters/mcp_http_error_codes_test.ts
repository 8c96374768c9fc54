// The JSON-RPC codes of the HTTP server's own refusals agree with their words and with the SDK's transport they stand
// in for. Seen live (main.ts serve --http): an initialize sent with an Mcp-Session-Id was answered
// `{"code":-32000,"message":"Invalid Request: initialize opens a new session; ..."}` (Invalid Request is -32600), and a
// request on a deleted (or unknown, or another tenant's) session `{"code":-32000,"message":"Session not found: ..."}`,
// where the SDK's transport answers an unknown session -32001. And a stateless server's answers to a request the SDK's
// transport refuses (an unsupported MCP-Protocol-Version, a wrong Accept or Content-Type) said `"id":null` for a
// request whose id was read, where a session's name it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type Harness, INIT, raw, startServer } from "./_http_harness.ts";

const ALICE = "alice-codes-token-0123456789ab";
const BOB = "bob-codes-token-0123456789abcd";

describe("the codes of the HTTP server's refusals", { timeout: 60_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }]);
  });
  after(async () => await h.close());

  const send = (token: string, session: string | undefined, body?: string, method = "POST") =>
    raw(h.server.url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        "mcp-protocol-version": "2025-06-18",
        ...(session === undefined ? {} : { "mcp-session-id": session }),
      },
      ...(body === undefined ? {} : { body }),
    });

  test("a session not found is 404 with -32001 and the request's id, however it is not found", {
    timeout: 30_000,
  }, async () => {
    const init = await send(ALICE, undefined, INIT);
    assert.equal(init.status, 200, init.text);
    const session = String(init.headers["mcp-session-id"]);
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 42, method: "ping" });
    // Another tenant's session, a made-up one, and the session once deleted: the same answer.
    const answers = [await send(BOB, session, ping), await send(ALICE, crypto.randomUUID(), ping)];
    assert.equal((await send(ALICE, session, undefined, "DELETE")).status, 200);
    answers.push(await send(ALICE, session, ping));
    for (const answer of answers) {
      assert.equal(answer.status, 404, answer.text);
      assert.deepEqual(answer.json().error?.code, -32001);
      assert.equal(answer.json().id, 42);
      assert.match(answer.json().error!.message, /^Session not found/);
    }
    assert.equal(new Set(answers.map((a) => a.text)).size, 1, "one answer for every case");
  });

  test("an initialize sent with a session id is -32600 Invalid request", { timeout: 30_000 }, async () => {
    const init = await send(ALICE, undefined, INIT);
    const session = String(init.headers["mcp-session-id"]);
    const again = await send(ALICE, session, INIT);
    assert.equal(again.status, 400, again.text);
    assert.equal(again.json().error?.code, -32600);
    assert.equal(again.json().id, 1);
    assert.match(again.json().error!.message, /^Invalid request: initialize opens a new session/);
  });

  test("a request the transport refuses is answered with its id, with a session or stateless", {
    timeout: 30_000,
  }, async () => {
    const stateless = await startServer([{ token: ALICE, tenant: "alice" }], { stateless: true });
    try {
      const init = await send(ALICE, undefined, INIT);
      const session = String(init.headers["mcp-session-id"]);
      const ping = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" });
      const refused: [string, Record<string, string>, number][] = [
        ["an unsupported version", { "mcp-protocol-version": "1999-01-01" }, 400],
        ["a wrong Accept", { accept: "text/html" }, 406],
        ["a wrong Content-Type", { "content-type": "text/plain" }, 415],
      ];
      for (const [url, id] of [[h.server.url, session], [stateless.server.url, undefined]] as const) {
        for (const [what, headers, status] of refused) {
          const answer = await raw(url, {
            headers: {
              authorization: `Bearer ${ALICE}`,
              "mcp-protocol-version": "2025-06-18",
              ...(id === undefined ? {} : { "mcp-session-id": id }),
              ...headers,
            },
            body: ping,
          });
          assert.equal(answer.status, status, `${what}: ${answer.text}`);
          assert.equal(answer.json().id, 7, `${what} (${id === undefined ? "stateless" : "session"}): ${answer.text}`);
        }
      }
    } finally {
      await stateless.close();
    }
  });
});
