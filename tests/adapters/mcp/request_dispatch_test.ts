// The stdio server hands a message its transport judged a request straight to the SDK's request handling, without
// the SDK's three type guards. That holds only while the SDK itself would have taken it as a request: neither a
// result response nor an error response (strict schemas, no `method`), and a request. Generated messages (every mix
// of jsonrpc, id, method, params, result and error, with odd values and extra keys) are judged by the transport and
// by the SDK's guards: every one judged a request is one the SDK's dispatch sends to _onrequest, and nothing else is
// judged a request.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from "@modelcontextprotocol/sdk/types.js";
import { isJudgedRequest, judgeValue } from "../../../adapters/mcp/_jsonrpc_frame.ts";

const odd = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 4 }),
  fc.constant([]),
  fc.constant({}),
  fc.constant({ code: 1, message: "m" }),
  fc.constant({ _meta: { progressToken: 1 } }),
  fc.constant({ _meta: { progressToken: {} } }),
);
// A key present with a value `often` times in 4 (else absent).
const sometimes = <T>(arb: fc.Arbitrary<T>, often: number) =>
  fc.tuple(fc.integer({ min: 0, max: 3 }), arb).map(([n, v]) => (n < often ? v : undefined));
const message = fc.record({
  jsonrpc: sometimes(fc.oneof({ weight: 6, arbitrary: fc.constant("2.0") }, { weight: 1, arbitrary: odd }), 4),
  id: sometimes(fc.oneof({ weight: 4, arbitrary: fc.oneof(fc.nat(), fc.string({ maxLength: 3 })) }, odd), 3),
  method: sometimes(
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom("tools/call", "ping", "notifications/cancelled") }, odd),
    3,
  ),
  params: sometimes(fc.oneof(fc.constant({ name: "read_file", arguments: { path: "a" } }), odd), 2),
  result: sometimes(fc.oneof(fc.constant({}), odd), 1),
  error: sometimes(fc.oneof(fc.constant({ code: -32600, message: "m" }), odd), 1),
  extra: sometimes(odd, 1),
}).map((fields) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)));

describe("requests judged by the stdio transport", () => {
  test("are exactly those the SDK's own dispatch takes as requests", { timeout: 60_000 }, () => {
    let requests = 0;
    fc.assert(
      fc.property(message, (value) => {
        const frame = judgeValue(value);
        const judged = frame.kind === "message" && isJudgedRequest(frame.message);
        const sdkTakesAsRequest = !isJSONRPCResultResponse(value) && !isJSONRPCErrorResponse(value) &&
          isJSONRPCRequest(value);
        if (judged) requests++;
        // Judged a request: the SDK's dispatch would call _onrequest with it too.
        if (judged) assert.ok(sdkTakesAsRequest, JSON.stringify(value));
        // Passed on but not judged a request: the SDK's own dispatch still sees it, and does not take it as one.
        if (frame.kind === "message" && !judged) assert.ok(!sdkTakesAsRequest, JSON.stringify(value));
      }),
      { numRuns: 20_000, seed: 20261205 },
    );
    assert.ok(requests > 1000, `${requests} requests judged`);
  });

  test("a notification or a response is never judged a request", { timeout: 60_000 }, () => {
    const notification = { jsonrpc: "2.0", method: "notifications/initialized" };
    const result = { jsonrpc: "2.0", id: 1, result: {} };
    const error = { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "m" } };
    for (const value of [notification, result, error]) {
      const frame = judgeValue(value);
      assert.equal(frame.kind, "message");
      assert.equal(isJudgedRequest(value), false, JSON.stringify(value));
      assert.ok(!isJSONRPCRequest(value) || isJSONRPCNotification(value));
    }
    const request = { jsonrpc: "2.0", id: 2, method: "ping" };
    assert.equal(judgeValue(request).kind, "message");
    assert.equal(isJudgedRequest(request), true);
    // Another object with the same content was not judged: only the very value passed on is.
    assert.equal(isJudgedRequest({ ...request }), false);
  });
});
