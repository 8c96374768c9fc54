// A person's "allow from now on" on an HTTP server of several tenants reaches their own tenant only. Real
// servers on loopback, wired as `main.ts serve --http` wires them (the workspace's toolfence.json read by
// sessionPolicy, its `answers.save` giving saveRuleFor's save), questions answered through the console's
// queue as a person answers them. The shared toolfence.json is read by every tenant's sessions: alice's
// person saving "touch made.txt" there made bob's "touch made.txt" run unasked once the server restarted.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { MemoryStore, type Store } from "../../core/mod.ts";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { type HttpServeOptions, type HttpServer, JwtVerifier, serveHttp, TokenFile } from "../../adapters/mcp/http.ts";
import { consoleHost, MemoryQuestionQueue, type PendingQuestion } from "../../adapters/mcp/console/mod.ts";
import { saveRuleFor, sessionPolicy } from "../../cli/session_policy.ts";
import { connect, type TenantSpec, textOf, writeTokens } from "./_http_harness.ts";

const ALICE = "alice-agent-token-0123456789";
const BOB = "bob-agent-token-0123456789ab";
const TWO: TenantSpec[] = [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }];
const POLICY = JSON.stringify({ answers: { save: "project" } }, null, 2) + "\n";

interface Setup {
  dir: string;
  workspace: string;
  policyFile: string;
  tokenFile: string;
}

async function setUp(tenants: TenantSpec[]): Promise<Setup> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-tenant-grants-")));
  const workspace = join(dir, "workspace");
  await Promise.all([mkdir(workspace), mkdir(join(dir, "tenants")), mkdir(join(dir, "tmp"))]);
  const policyFile = join(workspace, "toolfence.json");
  await writeFile(policyFile, POLICY);
  const tokenFile = join(dir, "tokens.json");
  await writeTokens(tokenFile, tenants);
  return { dir, workspace, policyFile, tokenFile };
}

/** A server as `serve --http` starts one: the policy files read now, questions waiting in `queue`. */
async function serve(
  setup: Setup,
  queue: MemoryQuestionQueue,
  options: Partial<HttpServeOptions> = {},
): Promise<HttpServer> {
  const none = join(setup.dir, "none.json");
  const files = await sessionPolicy(setup.workspace, { managed: none, user: none });
  const saveRule = saveRuleFor(setup.workspace, files.settings);
  assert.ok(saveRule, "answers.save names the project file");
  return await serveHttp(new ToolBox().withDefaults("fs", "cmd"), {
    port: 0,
    workspace: setup.workspace,
    tempParent: join(setup.dir, "tmp"),
    tokens: await TokenFile.open(setup.tokenFile),
    sandbox: "off",
    // Several tenants' commands without the sandbox, as the questions and grants tested here need.
    allowUnsandboxedTenants: true,
    rules: files.rules,
    hostFor: (tenant, elicitation) => consoleHost(queue, tenant, { elicitation }),
    saveRule,
    ...options,
  });
}

async function question(queue: MemoryQuestionQueue, tenant: string): Promise<PendingQuestion> {
  for (let waited = 0; waited < 20_000; waited += 20) {
    const [first] = queue.pending(tenant);
    if (first) return first;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`no question for ${tenant}`);
}

/** Runs `command`; true when it asked (the question is denied), false when it ran without asking. */
async function asks(client: Client, queue: MemoryQuestionQueue, tenant: string, command: string): Promise<boolean> {
  const call = client.callTool({ name: "bash", arguments: { command } });
  const first = await Promise.race([call.then(() => "ran" as const), question(queue, tenant)]);
  if (first === "ran") return false;
  assert.equal(queue.answer(tenant, first.id, "deny"), true);
  assert.equal((await call).isError, true);
  return true;
}

const labels = (asked: PendingQuestion) => asked.options.map((option) => option.label);

describe("a person's allow from now on on a server of several tenants", () => {
  test(
    "with a store, it is saved for its tenant there alone: the other tenant still asks, before and after a restart",
    {
      timeout: 60_000,
    },
    async () => {
      const setup = await setUp(TWO);
      const store: Store = new MemoryStore();
      const queue = new MemoryQuestionQueue();
      const tenantRoot = join(setup.dir, "tenants");
      let server = await serve(setup, queue, { tenantRoot, store });
      try {
        const alice = await connect(server.url, ALICE);
        const call = alice.callTool({ name: "bash", arguments: { command: "touch made.txt" } });
        const asked = await question(queue, "alice");
        assert.equal(queue.answer("alice", asked.id, "save"), true);
        const made = await call;
        assert.equal(made.isError, undefined, textOf(made));
        assert.ok(existsSync(join(tenantRoot, "alice", "made.txt")));
        await alice.close();
        // The policy file every tenant's sessions read did not gain alice's rule.
        assert.equal(await readFile(setup.policyFile, "utf8"), POLICY);
        assert.deepEqual(
          (await store.grants("alice")).map(({ kind, subject }) => [kind, subject]),
          [["command", "touch made.txt"]],
        );
        assert.deepEqual(await store.grants("bob"), []);
        const bob = await connect(server.url, BOB);
        assert.equal(await asks(bob, queue, "bob", "touch made.txt"), true, "bob's command asks");
        await bob.close();
        // The question said where the answer goes: alice's grants in the store, not the shared file.
        const save = labels(asked).find((label) => /from now on/.test(label));
        assert.match(save ?? "", /saved to the fleet's store, for alice only/);
        assert.ok(!save?.includes(setup.policyFile), save);
        // A restart reads the policy file again: bob still asks; alice's sessions take her grant from the store.
        await server.shutdown();
        server = await serve(setup, queue, { tenantRoot, store });
        const bobAgain = await connect(server.url, BOB);
        assert.equal(await asks(bobAgain, queue, "bob", "touch made.txt"), true, "bob's command asks after a restart");
        await bobAgain.close();
        const aliceAgain = await connect(server.url, ALICE);
        assert.equal(await asks(aliceAgain, queue, "alice", "touch made.txt"), false, "alice's grant holds");
        await aliceAgain.close();
      } finally {
        await server.shutdown();
        await rm(setup.dir, { recursive: true, force: true });
      }
    },
  );

  test("without a store, allow from now on is not offered, and nothing is saved", { timeout: 60_000 }, async () => {
    const setup = await setUp(TWO);
    const queue = new MemoryQuestionQueue();
    const server = await serve(setup, queue, { tenantRoot: join(setup.dir, "tenants") });
    try {
      const alice = await connect(server.url, ALICE);
      const call = alice.callTool({ name: "bash", arguments: { command: "touch made.txt" } });
      const asked = await question(queue, "alice");
      assert.ok(!labels(asked).some((label) => /from now on/.test(label)), String(labels(asked)));
      assert.ok(!asked.options.some((option) => option.value === "save"));
      assert.equal(queue.answer("alice", asked.id, "save"), "invalid_choice");
      assert.equal(queue.answer("alice", asked.id, asked.options[0].value), true);
      assert.equal((await call).isError, undefined);
      await alice.close();
      assert.equal(await readFile(setup.policyFile, "utf8"), POLICY);
    } finally {
      await server.shutdown();
      await rm(setup.dir, { recursive: true, force: true });
    }
  });

  test("OAuth tokens, or a tenant root, make a server of several tenants though only one has come", {
    timeout: 60_000,
  }, async () => {
    const setup = await setUp([TWO[0]]);
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk = { ...await exportJWK(publicKey), kid: "k1", alg: "RS256", use: "sig" };
    const jwks = createServer((_req, res) => res.end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((done) => jwks.listen(0, "127.0.0.1", done));
    const issuer = "https://auth.example.test";
    const resource = "http://127.0.0.1/mcp-resource";
    const jwt = new JwtVerifier({
      issuer,
      jwksUrl: `http://127.0.0.1:${(jwks.address() as { port: number }).port}/jwks`,
      resource,
    });
    const token = await new SignJWT({ sub: "alice", scope: "tools:read tools:write tools:commands" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" }).setIssuer(issuer).setAudience(resource).setIssuedAt()
      .setExpirationTime("5m").sign(privateKey);
    const servers: [HttpServer, string][] = [];
    try {
      const queue = new MemoryQuestionQueue();
      servers.push([await serve(setup, queue, { tokens: undefined, jwt, resourceUrl: resource }), token]);
      servers.push([await serve(setup, queue, { tenantRoot: join(setup.dir, "tenants") }), ALICE]);
      for (const [server, bearer] of servers) {
        const alice = await connect(server.url, bearer);
        const call = alice.callTool({ name: "bash", arguments: { command: "touch made.txt" } });
        const asked = await question(queue, "alice");
        assert.ok(!labels(asked).some((label) => /from now on/.test(label)), String(labels(asked)));
        assert.equal(queue.answer("alice", asked.id, "no"), true);
        assert.equal((await call).isError, true);
        await alice.close();
      }
      assert.equal(await readFile(setup.policyFile, "utf8"), POLICY);
    } finally {
      for (const [server] of servers) await server.shutdown();
      await new Promise((done) => jwks.close(done));
      await rm(setup.dir, { recursive: true, force: true });
    }
  });

  test("a server of one tenant saves to the policy file, and refuses to once its token file names a second", {
    timeout: 60_000,
  }, async () => {
    const setup = await setUp([TWO[0]]);
    const queue = new MemoryQuestionQueue();
    const server = await serve(setup, queue);
    try {
      const alice = await connect(server.url, ALICE);
      const call = alice.callTool({ name: "bash", arguments: { command: "touch made.txt" } });
      const asked = await question(queue, "alice");
      assert.ok(labels(asked).some((label) => label.includes(`saved to ${setup.policyFile}`)), String(labels(asked)));
      assert.equal(queue.answer("alice", asked.id, "save"), true);
      assert.equal((await call).isError, undefined);
      assert.match(await readFile(setup.policyFile, "utf8"), /"touch made\.txt"/);
      // Bob joins the token file while alice's session, opened when she was alone, goes on: her next save is
      // refused, and the command it would have allowed does not run.
      await writeTokens(setup.tokenFile, TWO);
      await new Promise((done) => setTimeout(done, 1100));
      const later = alice.callTool({ name: "bash", arguments: { command: "touch later.txt" } });
      const again = await question(queue, "alice");
      assert.equal(queue.answer("alice", again.id, "save"), true);
      const refused = await later;
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /not run.*not saved.*more than one tenant/s);
      assert.doesNotMatch(await readFile(setup.policyFile, "utf8"), /touch later\.txt/);
      assert.ok(!existsSync(join(setup.workspace, "later.txt")));
      await alice.close();
    } finally {
      await server.shutdown();
      await rm(setup.dir, { recursive: true, force: true });
    }
  });
});
