// The browsers of a tenant's sessions together are capped (MAX_WORKSPACE_BROWSERS, by workspace: each tenant has its
// own). A browser has no cgroup, so it is outside the workspace's shared memory and process limits that bound the
// commands of all a tenant's sessions: before, each session started its own, and one tenant's eight sessions over MCP
// HTTP ran eight Chromiums (3.4 GiB resident together), 32 at the default session cap, 20 tabs each.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { readFileSync } from "node:fs";
import { ToolBox } from "../../toolbox.ts";
import { browserTools } from "../../tools/browser/mod.ts";
import { BROWSER_MARKER, MAX_WORKSPACE_BROWSERS } from "../../tools/browser/_browser_session.ts";
import { descendantsWith, noBrowser } from "../tools/browser/_fixtures.ts";
import { connect, startServer, textOf } from "./_http_harness.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef00";

// The call's `_meta` says how it ended.
function codeOf(result: unknown): string | undefined {
  const meta = (result as { _meta?: Record<string, { errorCode?: string }> })._meta;
  return meta?.["toolfence/result"]?.errorCode;
}

const navigate = (client: Client) =>
  client.callTool({ name: "browser_navigate", arguments: { url: "about:blank" } }, undefined, { timeout: 60_000 });

describe("a tenant's browsers over MCP HTTP", { timeout: 180_000 }, () => {
  test("one tenant's sessions run at most MAX_WORKSPACE_BROWSERS browsers; another tenant's are its own", {
    timeout: 170_000,
    skip: noBrowser,
  }, async () => {
    const h = await startServer(
      [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }],
      {},
      new ToolBox().register(...browserTools({ sandbox: "off" })),
    );
    const clients: Client[] = [];
    try {
      const alice: Client[] = [];
      for (let i = 0; i <= MAX_WORKSPACE_BROWSERS; i++) alice.push(await connect(h.server.url, ALICE));
      clients.push(...alice);
      // Started at once: a place is taken and counted in one synchronous step, so no more than the cap pass together.
      const results = await Promise.all(alice.map(navigate));
      const refused = results.filter((r) => r.isError);
      assert.equal(refused.length, 1, results.map(textOf).join("\n"));
      assert.equal(codeOf(refused[0]), "too_many_browsers", textOf(refused[0]));
      assert.match(textOf(refused[0]), /browser_close/);
      const pids = () => descendantsWith(BROWSER_MARKER);
      // A process of a browser (a renderer) may end between the listing and the read: it names no browser then.
      const markOf = (pid: number) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").match(/--toolfence-browser=[\w-]+/)?.[0];
        } catch {
          return undefined;
        }
      };
      const browsersOf = (list: number[]) => new Set(list.map(markOf).filter((mark) => mark !== undefined));
      assert.equal(browsersOf(pids()).size, MAX_WORKSPACE_BROWSERS);

      // Bob's workspace is his own: alice's browsers take none of his places.
      const bob = await connect(h.server.url, BOB);
      clients.push(bob);
      const his = await navigate(bob);
      assert.equal(his.isError, undefined, textOf(his));

      // A browser closed gives its place back: the refused session starts one now.
      const first = results.findIndex((r) => !r.isError);
      const closed = await alice[first].callTool({ name: "browser_close", arguments: {} });
      assert.equal(closed.isError, undefined, textOf(closed));
      const again = await navigate(alice[results.indexOf(refused[0])]);
      assert.equal(again.isError, undefined, textOf(again));
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      await h.close();
    }
  });
});
