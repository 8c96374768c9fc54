// Tenants' workspaces lie apart. A token file may name each tenant's workspace; one that held another tenant's
// (alice /srv/w, bob /srv/w/bob) had alice's read_file print bob's files, as all in a workspace is the session's.
// So did a workspace holding the tenant root (every tenant's folder) or, on a server of several tenants, the
// folder of the session temp dirs (every tenant's temp dir, with its commands' outputs). Now no session of such a
// tenant opens, and the refusal names no other tenant's folder; tenants apart, or sharing one folder as the
// operator said, work as before. Nor may a tenant's own folder lie in a folder every sandbox shows read-only (the
// system folders, a policy's `sandbox.read`): until 2026-12-06, with the tenant root in such a folder, alice's
// sandboxed `cat ../bob/secret.txt` printed bob's file. Nor may tenant names that differ only in case (alice, Alice)
// have folders under the tenant root: on a file system that ignores case they are one, and Alice's session opened in
// alice's.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, textOf } from "./_http_harness.ts";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { type HttpServer, serveHttp, TokenFile, tokenHash } from "../../adapters/mcp/http.ts";
import { PolicyRules } from "../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";

const sandboxed = (await bubblewrapStatus()).path !== undefined;

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const SECRET = `BOBSECRET${Date.now()}`;

describe("tenants' workspaces lie apart", { timeout: 120_000 }, () => {
  let base: string;
  before(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-tenant-workspaces-")));
  });
  after(async () => {
    if (base) await rm(base, { recursive: true, force: true });
  });

  let counter = 0;
  async function serve(
    workspaces: { alice?: string; bob?: string },
    options: { tenantRoot?: string; tempParent?: string } = {},
  ): Promise<HttpServer> {
    const tokens = join(base, `tokens-${counter++}.json`);
    await writeFile(
      tokens,
      JSON.stringify({
        tokens: [
          { sha256: tokenHash(ALICE), tenant: "alice", ...(workspaces.alice ? { workspace: workspaces.alice } : {}) },
          { sha256: tokenHash(BOB), tenant: "bob", ...(workspaces.bob ? { workspace: workspaces.bob } : {}) },
        ],
      }),
    );
    const temp = join(base, "tmp");
    await mkdir(temp, { recursive: true });
    return await serveHttp(new ToolBox().withDefaults("fs", "search"), {
      port: 0,
      tokens: await TokenFile.open(tokens),
      tempParent: options.tempParent ?? temp,
      ...(options.tenantRoot ? { tenantRoot: options.tenantRoot } : { workspace: join(base, "unused") }),
      autoConfirm: true,
      sandbox: "off",
    });
  }

  // What alice's session can do with bob's file: the session refused, or the file out of reach.
  async function aliceReads(server: HttpServer, path: string): Promise<string> {
    try {
      const alice = await connect(server.url, ALICE);
      try {
        return textOf(await alice.callTool({ name: "read_file", arguments: { path } }));
      } finally {
        await alice.close();
      }
    } catch (error) {
      return `refused: ${(error as Error).message}`;
    }
  }

  // Walked as the kernel walks it, a path through bob's folder that came back to alice's answered by what bob's
  // entry was: alice's read_file of `<root>/bob/x/../../alice/f` read f where x was a folder, a file or nothing, and
  // failed where x was a link leading elsewhere. The other tenants' folders are closed to her paths.
  test("a path through another tenant's folder answers the same whatever lies there", { timeout: 60_000 }, async () => {
    const root = join(base, "closed-root");
    await mkdir(join(root, "alice"), { recursive: true });
    await mkdir(join(root, "bob", "dir"), { recursive: true });
    await writeFile(join(root, "alice", "f.txt"), "alice's\n");
    await writeFile(join(root, "bob", "file"), SECRET);
    await symlink("/", join(root, "bob", "link"));
    await symlink("loop", join(root, "bob", "loop"));
    const server = await serve({}, { tenantRoot: root });
    try {
      const answers = new Set<string>();
      for (const name of ["dir", "file", "link", "loop", "missing"]) {
        const probe = `${root}/bob/${name}/../../alice/f.txt`;
        answers.add((await aliceReads(server, probe)).replaceAll(probe, "PROBE"));
      }
      assert.equal(answers.size, 1, [...answers].join(" | "));
      assert.match([...answers][0], /not within the agent's workspace/);
    } finally {
      await server.shutdown();
    }
  });

  test("a workspace holding another tenant's, or lying in it, opens no session", { timeout: 60_000 }, async () => {
    const outer = join(base, "outer");
    const inner = join(outer, "bob");
    await mkdir(inner, { recursive: true });
    await writeFile(join(inner, "secret.txt"), `${SECRET}\n`);
    await mkdir(join(base, "unused"), { recursive: true });
    const server = await serve({ alice: outer, bob: inner });
    try {
      const text = await aliceReads(server, "bob/secret.txt");
      assert.doesNotMatch(text, new RegExp(SECRET), text);
      assert.match(text, /refused: .*holds the workspace of another tenant; tenants' workspaces must lie apart/, text);
      assert.ok(!text.includes(inner), text);
      // Bob's session, in a workspace that lies in alice's, is refused too.
      await assert.rejects(connect(server.url, BOB), /lies in the workspace of another tenant/);
    } finally {
      await server.shutdown();
    }
  });

  test("a workspace holding the tenant root, or the session temp dirs, opens no session", {
    timeout: 60_000,
  }, async () => {
    const top = join(base, "top");
    const root = join(top, "tenants");
    await mkdir(join(root, "bob"), { recursive: true });
    await writeFile(join(root, "bob", "secret.txt"), `${SECRET}\n`);
    const server = await serve({ alice: top }, { tenantRoot: root });
    try {
      const text = await aliceReads(server, "tenants/bob/secret.txt");
      assert.doesNotMatch(text, new RegExp(SECRET), text);
      assert.match(text, /holds the tenant root/, text);
    } finally {
      await server.shutdown();
    }
    // The session temp dirs made in alice's workspace: bob's temp dir (and its outputs) would lie in it.
    const own = join(base, "own");
    await mkdir(join(own, "tmp"), { recursive: true });
    const temps = await serve({ alice: own, bob: join(base, "bobs") }, { tempParent: join(own, "tmp") });
    await mkdir(join(base, "bobs"), { recursive: true });
    try {
      const text = await aliceReads(temps, "tmp");
      assert.match(text, /holds the folder of the session temp dirs/, text);
    } finally {
      await temps.shutdown();
    }
  });

  test("workspaces apart, under the tenant root, or one folder shared, work as before", {
    timeout: 60_000,
  }, async () => {
    const a = join(base, "apart-a");
    const b = join(base, "apart-b");
    const shared = join(base, "shared");
    for (const folder of [a, b, shared]) await mkdir(folder, { recursive: true });
    await writeFile(join(a, "mine.txt"), "alice's own\n");
    await writeFile(join(shared, "ours.txt"), "ours\n");
    const root = join(base, "root");
    await mkdir(root, { recursive: true });
    const cases: [{ alice?: string; bob?: string }, { tenantRoot?: string }, string, RegExp][] = [
      [{ alice: a, bob: b }, {}, "mine.txt", /alice's own/],
      [{ alice: shared, bob: shared }, {}, "ours.txt", /ours/],
      [{}, { tenantRoot: root }, ".", /"directories"/],
      // A folder in alice's own folder under the tenant root.
      [{ alice: join(root, "alice", "sub") }, { tenantRoot: root }, ".", /"directories"/],
    ];
    await mkdir(join(root, "alice", "sub"), { recursive: true });
    for (const [workspaces, options, path, expected] of cases) {
      const server = await serve(workspaces, options);
      try {
        const alice = await connect(server.url, ALICE);
        try {
          const tool = path === "." ? "list_dir" : "read_file";
          const text = textOf(await alice.callTool({ name: tool, arguments: { path } }));
          assert.match(text, expected, `${JSON.stringify(workspaces)}: ${text}`);
        } finally {
          await alice.close();
        }
      } finally {
        await server.shutdown();
      }
    }
  });
  test("a tenant whose folder differs only in case from another's under the tenant root opens no session", {
    timeout: 60_000,
  }, async () => {
    const root = join(base, "cased");
    await mkdir(root, { recursive: true });
    const tokens = join(base, "tokens-cased.json");
    await writeFile(
      tokens,
      JSON.stringify({
        tokens: [{ sha256: tokenHash(ALICE), tenant: "alice" }, { sha256: tokenHash(BOB), tenant: "Alice" }],
      }),
    );
    const server = await serveHttp(new ToolBox().withDefaults("fs", "search"), {
      port: 0,
      tokens: await TokenFile.open(tokens),
      tenantRoot: root,
      autoConfirm: true,
      sandbox: "off",
    });
    try {
      const alice = await connect(server.url, ALICE);
      try {
        await alice.callTool({ name: "write_file", arguments: { path: "mine.txt", content: `${SECRET}\n` } });
      } finally {
        await alice.close();
      }
      // Before: Alice's session opened (in alice's folder, on a file system that ignores case).
      await assert.rejects(connect(server.url, BOB), /differs only in case from another tenant's/);
      assert.deepEqual(await readdir(root), ["alice"], "the refused tenant made a folder");
      // The folder's own tenant keeps it.
      const again = await connect(server.url, ALICE);
      try {
        assert.match(textOf(await again.callTool({ name: "read_file", arguments: { path: "mine.txt" } })), /BOBSECRET/);
      } finally {
        await again.close();
      }
    } finally {
      await server.shutdown();
    }
  });

  test("a tenant's own folder in a folder every sandbox shows opens no session", { timeout: 60_000 }, async () => {
    const view = join(base, "view");
    const root = join(view, "tenants");
    await mkdir(join(root, "bob"), { recursive: true });
    await writeFile(join(root, "bob", "secret.txt"), `${SECRET}\n`);
    const tokens = join(base, "tokens-view.json");
    await writeFile(
      tokens,
      JSON.stringify({
        tokens: [{ sha256: tokenHash(ALICE), tenant: "alice" }, { sha256: tokenHash(BOB), tenant: "bob" }],
      }),
    );
    const rules = PolicyRules.fromLayers([{ name: "project", config: { sandbox: { read: [view] } } }], root);
    const server = await serveHttp(new ToolBox().withDefaults("fs", "cmd"), {
      port: 0,
      tokens: await TokenFile.open(tokens),
      tenantRoot: root,
      rules,
      autoConfirm: true,
      sandbox: sandboxed ? "required" : "off",
    });
    try {
      let text: string;
      try {
        const alice = await connect(server.url, ALICE);
        try {
          text = textOf(await alice.callTool({ name: "bash", arguments: { command: "cat ../bob/secret.txt; true" } }));
        } finally {
          await alice.close();
        }
      } catch (error) {
        text = `refused: ${(error as Error).message}`;
      }
      assert.doesNotMatch(text, new RegExp(SECRET), text);
      assert.match(text, /refused: .*lies in a folder every tenant's commands see \(.*view\)/, text);
    } finally {
      await server.shutdown();
    }
  });
});
