// One tenant's calls never push another tenant's audit records out of the console's view (nor off the disk): the
// log keeps each tenant's records in a file of its own, rotated by that tenant's volume alone. Seen live: under
// `serve --http --console --audit FILE`, alice's 90 calls of 250 KB arguments (16 seconds) rotated the shared 10 MiB
// file twice, and bob's console audit showed none of his records.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../../toolbox.ts";
import "../../../../tools/mod.ts";
import { AuditLog } from "../../../../policy/audit/audit_log.ts";
import { tenantOfHost } from "../../../../cli/session_policy.ts";
import { serveHttp, TokenFile } from "../../../../adapters/mcp/http.ts";
import { consoleHost, MemoryQuestionQueue, serveConsole } from "../../../../adapters/mcp/console/mod.ts";
import { connect, writeTokens } from "../../_http_harness.ts";

const ALICE = "alice-agent-token-0123456789";
const BOB = "bob-agent-token-0123456789ab";
const BOB_PERSON = "bob-person-token-0123456789a";
const ALICE_PERSON = "alice-person-token-012345678";

describe("the console's audit of several tenants", () => {
  test("a tenant's volume never rotates another's records out of view", { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-audit-tenants-"));
    const closers: (() => Promise<void> | void)[] = [];
    try {
      await mkdir(join(dir, "tenants"));
      await mkdir(join(dir, "tmp"));
      const tokenFile = join(dir, "tokens.json");
      await writeTokens(tokenFile, [
        { token: ALICE, tenant: "alice" },
        { token: BOB, tenant: "bob" },
        { token: ALICE_PERSON, tenant: "alice", scopes: ["console"] },
        { token: BOB_PERSON, tenant: "bob", scopes: ["console"] },
      ]);
      const file = join(dir, "audit.jsonl");
      const box = new ToolBox().withDefaults("fs", "search");
      // As `serve --http --console --audit FILE` makes it (main.ts: auditFor with tenantOfHost), with a small size.
      const audit = new AuditLog({ file, maxBytes: 64 * 1024, tenantOf: tenantOfHost }).attach(box);
      closers.push(() => audit.close());
      const queue = new MemoryQuestionQueue();
      const tokens = await TokenFile.open(tokenFile);
      const mcp = await serveHttp(box, {
        port: 0,
        tenantRoot: join(dir, "tenants"),
        tempParent: join(dir, "tmp"),
        tokens,
        sandbox: "off",
        hostFor: (tenant, elicitation, session) => consoleHost(queue, tenant, { elicitation, session }),
        onDecision: audit.decision.bind(audit),
      });
      closers.push(() => mcp.shutdown());
      const web = await serveConsole({ port: 0, queue, tokens, auditFile: file });
      closers.push(() => web.close());

      const marker = `BOBAUDITMARK${Date.now()}`;
      const bob = await connect(mcp.url, BOB);
      closers.push(() => bob.close());
      await bob.callTool({ name: "read_file", arguments: { path: `${marker}.txt` } });

      const auditOf = async (person: string): Promise<string> => {
        const login = await fetch(new URL("/login", web.url), {
          method: "POST",
          body: new URLSearchParams({ token: person }),
          headers: { origin: web.url.origin },
          redirect: "manual",
        });
        assert.equal(login.status, 303);
        await login.body?.cancel();
        const cookie = login.headers.get("set-cookie")!.split(";")[0];
        const page = await fetch(new URL("/audit", web.url), { headers: { cookie } });
        assert.equal(page.status, 200);
        return await page.text();
      };
      assert.match(await auditOf(BOB_PERSON), new RegExp(marker), "bob sees his call before alice's");

      // Alice's calls: each record about 8 KB, 40 of them five times the log's size.
      const alice = await connect(mcp.url, ALICE);
      closers.push(() => alice.close());
      for (let i = 0; i < 40; i++) {
        await alice.callTool({ name: "grep", arguments: { pattern: `${"a".repeat(8_000)}${i}`, path: "." } });
      }
      const bobs = await auditOf(BOB_PERSON);
      assert.match(bobs, new RegExp(marker), "alice's calls rotated bob's record out of his audit");
      const alices = await auditOf(ALICE_PERSON);
      assert.doesNotMatch(alices, new RegExp(marker), "alice sees bob's record");
    } finally {
      for (const close of closers.reverse()) await close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Seen live: tenant `bob.1`'s own file was `audit.jsonl.tenant-bob.1`, tenant bob's first rotation. Once bob's record
  // was there, bob.1's 40 calls rotated that file as its own (`.1.1`, `.1.2`, ...) and off the disk: the record was in
  // no file any more, and bob's console no longer showed it.
  test("a tenant named like another's rotation (bob.1) never moves or removes its records", {
    timeout: 120_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolfence-audit-names-"));
    const closers: (() => Promise<void> | void)[] = [];
    try {
      await mkdir(join(dir, "tenants"));
      await mkdir(join(dir, "tmp"));
      const tokenFile = join(dir, "tokens.json");
      const EVE = "eve-agent-token-0123456789ab";
      await writeTokens(tokenFile, [
        { token: BOB, tenant: "bob" },
        { token: EVE, tenant: "bob.1" },
        { token: BOB_PERSON, tenant: "bob", scopes: ["console"] },
      ]);
      const file = join(dir, "audit.jsonl");
      const box = new ToolBox().withDefaults("fs", "search");
      const audit = new AuditLog({ file, maxBytes: 64 * 1024, tenantOf: tenantOfHost }).attach(box);
      closers.push(() => audit.close());
      const queue = new MemoryQuestionQueue();
      const tokens = await TokenFile.open(tokenFile);
      const mcp = await serveHttp(box, {
        port: 0,
        tenantRoot: join(dir, "tenants"),
        tempParent: join(dir, "tmp"),
        tokens,
        sandbox: "off",
        hostFor: (tenant, elicitation, session) => consoleHost(queue, tenant, { elicitation, session }),
        onDecision: audit.decision.bind(audit),
      });
      closers.push(() => mcp.shutdown());
      const web = await serveConsole({ port: 0, queue, tokens, auditFile: file });
      closers.push(() => web.close());
      const bob = await connect(mcp.url, BOB);
      closers.push(() => bob.close());
      const eve = await connect(mcp.url, EVE);
      closers.push(() => eve.close());

      const marker = `BOBAUDITMARK${Date.now()}`;
      await bob.callTool({ name: "read_file", arguments: { path: `${marker}.txt` } });
      // Bob's own volume rotates his file once: his record is in his first rotation.
      for (let i = 0; i < 9; i++) {
        await bob.callTool({ name: "grep", arguments: { pattern: `${"b".repeat(8_000)}${i}`, path: "." } });
      }
      const own = AuditLog.tenantFile(file, "bob");
      assert.match(await readFile(`${own}.1`, "utf8"), new RegExp(marker));
      for (let i = 0; i < 40; i++) {
        await eve.callTool({ name: "grep", arguments: { pattern: `${"e".repeat(8_000)}${i}`, path: "." } });
      }
      const bobsFiles = (await readdir(dir)).filter((name) => name.startsWith("audit.jsonl.tenant-bob"));
      assert.deepEqual(bobsFiles.sort(), ["audit.jsonl.tenant-bob", "audit.jsonl.tenant-bob.1"]);
      const kept = await readFile(`${own}.1`, "utf8");
      assert.match(kept, new RegExp(marker), "bob.1's calls moved bob's record away");
      assert.doesNotMatch(kept, /"tenant":"bob\.1"/, "bob.1's records went into bob's file");

      const login = await fetch(new URL("/login", web.url), {
        method: "POST",
        body: new URLSearchParams({ token: BOB_PERSON }),
        headers: { origin: web.url.origin },
        redirect: "manual",
      });
      await login.body?.cancel();
      const cookie = login.headers.get("set-cookie")!.split(";")[0];
      const page = await fetch(new URL("/audit", web.url), { headers: { cookie } });
      assert.match(await page.text(), new RegExp(marker), "bob's console lost his record");
    } finally {
      for (const close of closers.reverse()) await close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("no tenant's file is another's rotation", { timeout: 60_000 }, () => {
    const file = "/var/log/toolfence.jsonl";
    const names = ["bob", "bob.1", "bob.12", "bob.1.2", "a.b", "x-1", "9", "h.0", "bob.", "bob.1a"];
    const files = new Set(names.map((name) => AuditLog.tenantFile(file, name)));
    assert.equal(files.size, names.length);
    for (const name of names) {
      for (let n = 1; n <= 5; n++) assert.ok(!files.has(`${AuditLog.tenantFile(file, name)}.${n}`), `${name}.${n}`);
    }
    assert.equal(AuditLog.tenantFile(file, "bob"), `${file}.tenant-bob`);
    assert.equal(AuditLog.tenantFile(file, "a.b"), `${file}.tenant-a.b`);
  });
});
