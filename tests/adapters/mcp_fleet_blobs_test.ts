// Two tenants whose commands print the same bytes keep a blob each in the fleet's store: a blob shared across tenants
// made a put of bytes another tenant had stored quicker (no write), and the time of alice's answer told whether bob
// had seen those bytes (an 18 MB `cat`: about 130 ms when bob's session had made the same output, 250 ms when not).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { openStore } from "../../adapters/mcp/open_store.ts";
import { openSqlite } from "../../adapters/mcp/_sqlite_driver.ts";
import { connect, startServer } from "./_http_harness.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";

describe("a fleet store's artifact bytes", () => {
  test("are kept once per tenant: the same output of two tenants is two blobs", { timeout: 60_000 }, async () => {
    const scratch = await mkdtemp(join(tmpdir(), "toolfence-blobs-"));
    const file = join(scratch, "store.db");
    const store = await openStore(`sqlite:${file}`);
    const harness = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], { store });
    try {
      // An output over the cap: its whole is kept as an artifact, and shared in the store.
      const output = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n");
      const artifactsOf = async (token: string, tenant: string): Promise<string[]> => {
        await mkdir(join(harness.dir, "tenants", tenant), { recursive: true });
        await writeFile(join(harness.dir, "tenants", tenant, "same.txt"), output);
        const client = await connect(harness.server.url, token);
        try {
          const result = await client.callTool({
            name: "bash",
            arguments: { command: "cat same.txt" },
          }) as CallToolResult;
          const meta = (result._meta as Record<string, { status: string; artifacts: string[] }>)["toolfence/result"];
          assert.equal(meta.status, "success", JSON.stringify(result.content));
          assert.equal(meta.artifacts.length, 1);
          const read = await client.readResource({ uri: `artifact://sha256/${meta.artifacts[0].slice(7)}` });
          assert.equal((read.contents[0] as { text: string }).text, output);
          return meta.artifacts;
        } finally {
          await client.close();
        }
      };
      const bobs = await artifactsOf(BOB, "bob");
      const alices = await artifactsOf(ALICE, "alice");
      assert.deepEqual(alices, bobs, "the same bytes have the same artifact id");
      const db = await openSqlite(file);
      try {
        const rows = await db.query("SELECT sha256 FROM blobs");
        const hash = bobs[0].slice("sha256:".length);
        assert.deepEqual(rows.map((row) => String(row.sha256)).sort(), [`${hash}:alice`, `${hash}:bob`]);
      } finally {
        await db.close();
      }
    } finally {
      await harness.close();
      await store.close();
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
