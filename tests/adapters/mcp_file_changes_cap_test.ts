// A command's `filesystemChanges` in `_meta["toolfence/result"]`, as the official client sees it over HTTP, is capped.
// Seen live: `seq 1 100000 | xargs touch` answered 100,001 entries, 17,189,356 characters of `_meta`. Past
// META_FILE_CHANGES the head and the tail are kept, the cut is said with its count, and the whole list is an artifact,
// as for an output over the cap.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, startServer } from "./_http_harness.ts";
import { META_FILE_CHANGES } from "../../adapters/mcp/server.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";

const status = await bubblewrapStatus();
const noSandbox = status.path ? false : `needs a working bubblewrap: ${status.reason}`;
const TOKEN = "alice-token-0123456789abcdef";

describe("filesystemChanges in an MCP result's _meta", { skip: noSandbox, timeout: 180_000 }, () => {
  test(
    "over the cap: the first and last half, the truncation marker and the counts",
    { timeout: 180_000 },
    async () => {
      // The sandbox keeps protected paths read-only, so a line writing paths known only when it runs needs no person.
      const harness = await startServer([{ token: TOKEN, tenant: "alice" }], { sandbox: "auto" });
      const client = await connect(harness.server.url, TOKEN, { elicit: true });
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { answer: true } }));
      try {
        const run = async (files: number) => {
          const result = await client.callTool(
            {
              name: "bash",
              arguments: { command: `mkdir d${files} && cd d${files} && seq 1 ${files} | xargs touch` },
            },
            undefined,
            { timeout: 150_000 },
          ) as CallToolResult;
          const meta = (result._meta as Record<string, Record<string, unknown>>)["toolfence/result"];
          assert.equal(meta.status, "success", JSON.stringify(result.content));
          return meta;
        };
        const small = await run(20);
        assert.equal((small.filesystemChanges as unknown[]).length, 21);
        assert.equal(small.filesystemChangesTruncated, undefined);
        assert.equal(small.filesystemChangesOmitted, undefined);

        const files = META_FILE_CHANGES + 500;
        const big = await run(files);
        const kept = big.filesystemChanges as { path: string; change: string }[];
        assert.equal(kept.length, META_FILE_CHANGES);
        assert.equal(big.filesystemChangesTruncated, true);
        assert.equal(big.filesystemChangesTotal, files + 1);
        assert.equal(big.filesystemChangesOmitted, files + 1 - META_FILE_CHANGES);
        assert.equal(new Set(kept.map((change) => change.path)).size, META_FILE_CHANGES);
        assert.ok(kept.every((entry) => entry.path.startsWith(`d${files}`) && entry.change === "created"));
        // The head: the folder, made first.
        assert.equal(kept[0].path, `d${files}`);
        // The whole list is an artifact of the session, as an output over its cap is.
        const id = String(big.filesystemChangesArtifact);
        assert.match(id, /^sha256:[0-9a-f]{64}$/);
        const read = await client.readResource({ uri: `artifact://sha256/${id.slice("sha256:".length)}` });
        const whole = JSON.parse((read.contents[0] as { text: string }).text) as { path: string }[];
        assert.equal(whole.length, files + 1);
        assert.deepEqual(whole.slice(0, META_FILE_CHANGES / 2), kept.slice(0, META_FILE_CHANGES / 2));
        assert.deepEqual(whole.slice(-META_FILE_CHANGES / 2), kept.slice(-META_FILE_CHANGES / 2));
        assert.equal(small.filesystemChangesArtifact, undefined);
      } finally {
        await client.close();
        await harness.close();
      }
    },
  );
});
