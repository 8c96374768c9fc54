// importPeer: a peer that is not installed is a peer_missing error naming the install command, under Deno
// (the import map lacks it) and under Node against the npm build (node_modules lacks it); anything else is rethrown.

import { test } from "node:test";
import assert from "node:assert/strict";
import { importPeer, missingPeerError } from "../../core/peer.ts";
import { ToolError } from "../../core/errors.ts";

// Not a package anywhere: the import fails as a missing peer's does. A variable, so the type check lets it through.
const ABSENT = "toolfence-absent-peer";
const peer = { name: ABSENT, range: "^2.1.0", neededBy: "@toolfence/adapters/example" };

test("a peer that is not installed is peer_missing, naming the package and range to install", {
  timeout: 30_000,
}, async () => {
  const error = await importPeer(peer, () => import(ABSENT)).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof ToolError, String(error));
  assert.equal(error.code, "peer_missing");
  assert.equal(
    error.message,
    "@toolfence/adapters/example needs toolfence-absent-peer, which is not installed: " +
      "npm install toolfence-absent-peer@^2.1.0",
  );
  assert.deepEqual(error.details, { package: ABSENT, range: "^2.1.0", neededBy: "@toolfence/adapters/example" });
  assert.equal((error.cause as { code?: string }).code, "ERR_MODULE_NOT_FOUND");
  assert.equal(missingPeerError(peer).recoverable, false);
});

test("a subpath of a missing peer is the peer missing too", { timeout: 30_000 }, async () => {
  const error = await importPeer(peer, () => import(`${ABSENT}/tools`)).then(() => undefined, (e: unknown) => e);
  assert.equal((error as ToolError).code, "peer_missing");
});

test("a missing package that is not the peer, and other failures, are rethrown as they are", {
  timeout: 30_000,
}, async () => {
  // The peer is there but lacks one of its own dependencies: that is the peer's install, not ours to name.
  const other = await importPeer({ ...peer, name: "valibot" }, () => import(ABSENT)).then(() => 0, (e: unknown) => e);
  assert.equal((other as { code?: string }).code, "ERR_MODULE_NOT_FOUND");
  assert.ok(!(other instanceof ToolError));
  const thrown = new SyntaxError("Unexpected token");
  await assert.rejects(importPeer(peer, () => Promise.reject(thrown)), (e) => e === thrown);
  const v = await importPeer({ ...peer, name: "valibot" }, () => import("valibot"));
  assert.equal(typeof v.object, "function");
});
