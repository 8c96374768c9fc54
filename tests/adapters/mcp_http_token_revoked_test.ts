// A token removed from the token file ends the sessions it opened, and their background jobs with them. Seen live:
// alice started `while true; do date +%s >> log; sleep 1; done` with bash_background, her token was then removed
// from the file and her requests answered 401, yet the job's log grew from 22 to 66 bytes in the next 5 s: the
// session lived on until idle (30 minutes by default, never while a call ran). Bob's session is left alone.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { connect, raw, startServer, type TenantSpec, textOf, writeTokens } from "./_http_harness.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";

const status = await bubblewrapStatus();
const noSandbox = status.path ? false : `needs a working bubblewrap: ${status.reason}`;

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a revoked token's sessions", { skip: noSandbox, timeout: 120_000 }, () => {
  test("end, with their jobs, while another tenant's go on", { timeout: 50_000 }, async () => {
    await revokedAlice([{ token: BOB, tenant: "bob" }], true);
  });

  test("a token given to another tenant ends the sessions it opened for the first", { timeout: 50_000 }, async () => {
    await revokedAlice([{ token: ALICE, tenant: "carol" }, { token: BOB, tenant: "bob" }], false);
  });

  // A token that lost a scope no longer reaches the sessions it opened (they answer a token holding every scope of
  // the opening one): they end at once, jobs and all, instead of running on unreachable until idle.
  test("a token that lost a scope ends the sessions it opened", { timeout: 50_000 }, async () => {
    await revokedAlice(
      [{ token: ALICE, tenant: "alice", scopes: ["tools:read"] }, { token: BOB, tenant: "bob" }],
      false,
    );
  });
});

async function revokedAlice(next: TenantSpec[], gone: boolean): Promise<void> {
  {
    // Idle expiry (60 s) far past the test: only the revocation can end alice's session here.
    const h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      sandbox: "required",
      allowUnsandboxedTenants: false,
      idleTimeoutMs: 60_000,
    });
    try {
      await mkdir(join(h.dir, "tenants", "alice"), { recursive: true });
      const alice = await connect(h.server.url, ALICE);
      const bob = await connect(h.server.url, BOB);
      const job = await alice.callTool({
        name: "bash_background",
        arguments: { command: "while true; do date +%s >> log; sleep 0.2; done" },
      });
      assert.equal(job.isError, undefined, textOf(job));
      const log = join(h.dir, "tenants", "alice", "log");
      const size = async () => (await stat(log).catch(() => ({ size: 0 }))).size;
      for (let i = 0; i < 100 && (await size()) === 0; i++) await sleep(100);
      assert.ok((await size()) > 0, "alice's job writes its log");

      await writeTokens(h.tokenFile, next);
      // The file is read again at most once a second: alice's requests are refused once it has been (her token given
      // to carol is carol's now, which a request without a session cannot tell: it waits past the recheck instead).
      await sleep(1_100);
      let refused = 0;
      for (let i = 0; i < 50 && refused !== 401 && gone; i++) {
        await sleep(200);
        refused = (await raw(h.server.url, {
          headers: { authorization: `Bearer ${ALICE}` },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        })).status;
      }
      if (gone) assert.equal(refused, 401);

      // Within a sweep (5 s) and the token file's recheck (1 s), alice's session and job are gone.
      let before = -1;
      let after = await size();
      for (let i = 0; i < 40 && after !== before; i++) {
        before = after;
        await sleep(1_000);
        after = await size();
      }
      assert.equal(after, before, "alice's job stopped writing after her token was removed");
      await sleep(1_500);
      assert.equal(await size(), after, "and stays stopped");

      // Bob, whose token stays, is served as before.
      const mine = await bob.callTool({ name: "bash", arguments: { command: "echo still" } });
      assert.match(textOf(mine), /still/);
      await bob.close();
      await alice.close().catch(() => {});
    } finally {
      await h.close();
    }
  }
}
