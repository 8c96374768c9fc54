// The memory the sessions' artifacts share is shared fairly between tenants. The pool dropped the oldest artifact
// of the store (session) holding the most: live, under serve --http with tenants alice and bob, bob's one session
// kept a 100 MB output as an artifact, alice opened 32 sessions (her cap) each keeping a 99 MB output, and bob's
// read_artifact of his answered unknown_artifact. Now a store counts as its tenant's: the tenant holding the most
// gives up first, so alice's sessions push out their own outputs.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { MemoryArtifactPool } from "@toolfence/core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect, startServer, textOf } from "./_http_harness.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef000";
const KB = 1000;

// One bash output of `bytes` bytes, kept whole as an artifact; its id.
async function output(client: Client, bytes: number, fill: string): Promise<string> {
  const result = await client.callTool({
    name: "bash",
    arguments: { command: `head -c ${bytes} /dev/zero | tr '\\0' ${fill}` },
  });
  assert.equal(result.isError, undefined, textOf(result));
  const id = /sha256:[0-9a-f]{64}/.exec(textOf(result))?.[0];
  assert.ok(id, `no artifact in ${textOf(result).slice(0, 300)}`);
  return id;
}

describe("the artifact pool between tenants", { timeout: 120_000 }, () => {
  test("a tenant's many sessions push out their own outputs, not another tenant's one", {
    timeout: 110_000,
  }, async () => {
    const pool = new MemoryArtifactPool(2 * 1024 * 1024);
    const h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      artifactPool: pool,
      callsPerMinute: 10_000,
    });
    const clients: Client[] = [];
    try {
      const bob = await connect(h.server.url, BOB);
      clients.push(bob);
      const bobs = await output(bob, 400 * KB, "B");
      // Eight sessions of alice's, each holding a little less than bob's one: 3.1 MB, past the 2 MiB pool.
      const alices: string[] = [];
      for (let i = 0; i < 8; i++) {
        const alice = await connect(h.server.url, ALICE);
        clients.push(alice);
        alices.push(await output(alice, 390 * KB + i, "A"));
      }
      assert.ok(pool.heldBytes <= pool.maxBytes, `the pool holds ${pool.heldBytes}`);
      const read = await bob.callTool({ name: "read_artifact", arguments: { id: bobs, offset: 400 * KB - 3 } });
      assert.equal(read.isError, undefined, `bob's artifact: ${textOf(read).slice(0, 300)}`);
      assert.match(textOf(read), /BBB/);
      // Alice's sessions gave up theirs (the pool holds bob's and at most four of hers), each keeping its newest...
      let gone = 0;
      for (const [i, id] of alices.entries()) {
        const read = await clients[i + 1].callTool({ name: "read_artifact", arguments: { id, limit: 10 } });
        if (read.isError) {
          assert.match(textOf(read), /unknown_artifact/);
          gone++;
        }
      }
      assert.ok(gone >= 4, `${gone} of alice's 8 outputs went`);
      // ... but the one just stored.
      const newest = await clients.at(-1)!.callTool({ name: "read_artifact", arguments: { id: alices.at(-1)! } });
      assert.equal(newest.isError, undefined, textOf(newest).slice(0, 300));
    } finally {
      for (const client of clients) await client.close();
      await h.close();
    }
  });

  test("a tenant's file history (the before-images of its overwrites) counts as that tenant's too", {
    timeout: 110_000,
  }, async () => {
    // The history's images were stores of their own in the pool: eight sessions of alice's overwriting a file each
    // held one image a little smaller than bob's output, and bob's output went.
    const pool = new MemoryArtifactPool(2 * 1024 * 1024);
    const h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      artifactPool: pool,
      callsPerMinute: 10_000,
    });
    const clients: Client[] = [];
    try {
      const bob = await connect(h.server.url, BOB);
      clients.push(bob);
      const bobs = await output(bob, 400 * KB, "B");
      for (let i = 0; i < 8; i++) {
        const alice = await connect(h.server.url, ALICE);
        clients.push(alice);
        for (const fill of ["a", "b"]) {
          const path = `f${i}.txt`;
          const wrote = await alice.callTool({
            name: "write_file",
            arguments: { path, content: fill.repeat(390 * KB) },
          });
          assert.equal(wrote.isError, undefined, textOf(wrote).slice(0, 300));
        }
      }
      // The images are in the server's pool (bob's 400 kB alone would leave it four fifths empty), as alice's.
      assert.ok(pool.heldBytes > 1.5 * 1024 * 1024, `the pool holds ${pool.heldBytes}`);
      assert.ok(pool.heldBytes <= pool.maxBytes, `the pool holds ${pool.heldBytes}`);
      const read = await bob.callTool({ name: "read_artifact", arguments: { id: bobs, offset: 400 * KB - 3 } });
      assert.equal(read.isError, undefined, `bob's artifact: ${textOf(read).slice(0, 300)}`);
      assert.match(textOf(read), /BBB/);
    } finally {
      for (const client of clients) await client.close();
      await h.close();
    }
  });
});
