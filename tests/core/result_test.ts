import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { isToolResult, makeResult, toModelText, ToolResultContractError } from "../../core/result.ts";

describe("ToolResult", () => {
  test("defaults and plain JSON", { timeout: 60_000 }, () => {
    const r = makeResult({ status: "success", toolName: "t", output: { a: 1 } });
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r);
    assert.equal(r.schemaVersion, 2);
    assert.equal(r.effectState, "no_effect_declared");
    assert.equal(r.declaredEffects, null);
    assert.equal(r.reconciliationRequired, false);
    assert.equal(r.retryDisposition, "not_needed");
    assert.equal(r.attempts, 1, "the seed's default: one attempt");
    assert.equal(r.truncated, false);
    assert.deepEqual(r.artifacts, []);
    assert.equal(isToolResult(r), true);
  });

  const broken: [string, Parameters<typeof makeResult>[0], RegExp][] = [
    ["success with error", { status: "success", toolName: "t", error: "x" }, /success has no error/],
    [
      "error without code",
      { status: "error", toolName: "t", error: "x", errorKind: "execution" },
      /needs errorKind and errorCode/,
    ],
    [
      "error without message",
      { status: "error", toolName: "t", errorKind: "execution", errorCode: "c" },
      /needs an error message/,
    ],
    [
      "skipped outside policy",
      { status: "skipped", toolName: "t", error: "x", errorKind: "execution", errorCode: "c" },
      /skipped is a policy outcome/,
    ],
    [
      "timed_out as policy",
      { status: "timed_out", toolName: "t", error: "x", errorKind: "policy", errorCode: "timeout" },
      /execution outcome/,
    ],
    [
      "workerStillRunning on error",
      { status: "error", toolName: "t", error: "x", errorKind: "execution", errorCode: "c", workerStillRunning: true },
      /workerStillRunning only with timed_out or cancelled/,
    ],
    ["negative attempts", { status: "success", toolName: "t", attempts: -1 }, /attempts/],
    [
      "truncated without omitted",
      { status: "success", toolName: "t", truncated: true },
      /truncated exactly when omitted/,
    ],
    // deno-lint-ignore no-explicit-any
    ["unknown status", { status: "weird" as any, toolName: "t" }, /unknown status/],
  ];
  for (const [name, init, rule] of broken) {
    test(`contract: ${name}`, { timeout: 60_000 }, () => {
      assert.throws(
        () => makeResult(init),
        (e: unknown) => e instanceof ToolResultContractError && rule.test(e.message),
      );
    });
  }

  test("toModelText: strings as is, JSON otherwise, empty for no output", { timeout: 60_000 }, () => {
    assert.equal(toModelText(makeResult({ status: "success", toolName: "t", output: "hi" })), "hi");
    assert.equal(toModelText(makeResult({ status: "success", toolName: "t", output: [1, 2] })), "[1,2]");
    assert.equal(toModelText(makeResult({ status: "success", toolName: "t" })), "");
  });

  test(
    "toModelText: failures carry status, code, message and hint but never details or metadata",
    { timeout: 60_000 },
    () => {
      const r = makeResult({
        status: "skipped",
        toolName: "t",
        error: "Write to a.txt was denied",
        errorKind: "policy",
        errorCode: "permission_denied",
        recoveryHint: "Ask the user.",
        details: { secret: "developer-only" },
        metadata: { internal: "also hidden" },
      });
      const text = toModelText(r);
      assert.equal(text, "Skipped [permission_denied]: Write to a.txt was denied\nHint: Ask the user.");
    },
  );
});
