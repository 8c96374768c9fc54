// A tenant racing a folder of its own against a link to another tenant's folder, over MCP HTTP with the OS sandbox
// required: its file tools' answers never name the other tenant's folder nor say whether a file of it exists. Before,
// alice's background job (mv d r; ln -s BOB/notes d; mv d junk; mv r d, in a loop) made read_file, file_info and
// list_dir on d answer "The folder .../alice/d changed while it was being written (it now leads to
// .../bob/notes)" (66 times in 8 s) and "a part of d/x.txt is not a directory" where the link led to bob's file.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect, type Harness, startServer, textOf } from "./_http_harness.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";

const status = await bubblewrapStatus();
const noSandbox = status.path ? false : `needs a working bubblewrap: ${status.reason}`;

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const RACE_MS = 4_000;
// Under load the swapper can hold the link for every call of many rounds: the race goes on, up to this, until it has
// both let a call through and refused one.
const RACE_MAX_MS = 40_000;

describe("a tenant's folder raced against a link to another tenant's", { skip: noSandbox, timeout: 120_000 }, () => {
  let h: Harness;
  let bob: string;
  before(async () => {
    h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      sandbox: "required",
      allowUnsandboxedTenants: false,
      callsPerMinute: 1_000_000,
    });
    bob = join(h.dir, "tenants", "bob");
    await mkdir(join(bob, "notes"), { recursive: true });
    await writeFile(join(bob, "notes", "x.txt"), "BOBSECRET\n");
    await writeFile(join(bob, "secret.txt"), "BOBSECRET\n");
  });
  after(() => h?.close());

  for (const [kind, target] of [["a folder", "notes"], ["a file", "secret.txt"]]) {
    test(`the link leads to ${kind} of bob's: nothing of it in alice's answers`, { timeout: 120_000 }, async () => {
      const alice = await connect(h.server.url, ALICE);
      try {
        await alice.callTool({ name: "bash", arguments: { command: "mkdir -p d; echo mine > d/x.txt" } });
        const job = await alice.callTool({
          name: "bash_background",
          arguments: {
            command: `i=0; while :; do i=$((i+1)); mv d r; ln -s ${
              join(bob, target)
            } d; mv d $TMPDIR/j$i; mv r d; done`,
          },
        });
        const id = (job.structuredContent as { id: string }).id;
        try {
          const codes = new Map<string, number>();
          const started = performance.now();
          const proved = () => (codes.get("ok") ?? 0) > 0 && codes.size > 1;
          const racing = () => {
            const elapsed = performance.now() - started;
            return elapsed < RACE_MS || (!proved() && elapsed < RACE_MAX_MS);
          };
          while (racing()) {
            const results = await Promise.all([
              alice.callTool({ name: "read_file", arguments: { path: "d/x.txt" } }),
              alice.callTool({ name: "file_info", arguments: { path: "d/x.txt" } }),
              alice.callTool({ name: "list_dir", arguments: { path: "d" } }),
              alice.callTool({ name: "write_file", arguments: { path: "d/y.txt", content: "y" } }),
            ]);
            for (const result of results) {
              const text = textOf(result);
              assert.ok(!text.includes(bob), `an answer named bob's folder: ${text}`);
              assert.ok(!text.includes("BOBSECRET"), `an answer held bob's bytes: ${text}`);
              assert.ok(!/a part of .* is not a directory/.test(text), `an answer told of bob's file: ${text}`);
              const code = /^Error \[(\w+)\]/.exec(text)?.[1] ?? (result.isError ? "error" : "ok");
              codes.set(code, (codes.get(code) ?? 0) + 1);
            }
          }
          // The race let calls through and refused others, or it proved nothing.
          assert.ok(proved(), JSON.stringify([...codes]));
        } finally {
          await alice.callTool({ name: "bash_stop", arguments: { id } });
        }
      } finally {
        await alice.close();
      }
    });
  }
});
