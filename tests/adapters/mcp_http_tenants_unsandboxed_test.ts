// Tenants apart without the OS sandbox: on a server of several tenants with `sandbox: "off"`, tenant bob's
// bash read tenant alice's files. The command analysis asks for a path outside bob's workspace, and with
// autoConfirm (or bob's own person answering) it ran: `cat <tenantRoot>/alice/secret.txt` printed the secret.
// Bob's person is bob's side, so a question is no wall between tenants: the tools that run programs refuse
// there, saying why, and a server of one tenant runs commands as before.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Harness, startServer, textOf } from "./_http_harness.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";

const status = await bubblewrapStatus();
const noSandbox = status.path ? false : `needs a working bubblewrap: ${status.reason}`;

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const SECRET = `ALICESECRET${Date.now()}`;
const TWO = [{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }];

describe("tenants' commands without the OS sandbox", { timeout: 120_000 }, () => {
  let h: Harness;
  let root: string;
  before(async () => {
    h = await startServer(TWO, { sandbox: "off", allowUnsandboxedTenants: false });
    root = join(h.dir, "tenants");
    await mkdir(join(root, "alice"), { recursive: true });
    await writeFile(join(root, "alice", "secret.txt"), `${SECRET}\n`);
  });
  after(async () => {
    await h?.close();
  });

  test("bob's commands never print alice's secret, and say why", { timeout: 60_000 }, async () => {
    const bob = await connect(h.server.url, BOB);
    try {
      const probes = [
        `cat ${root}/alice/secret.txt`,
        `cat ../alice/secret.txt`,
        `cd .. && cat alice/secret.txt`,
        `cat $(echo ../alice/secret.txt)`,
        `ln -s .. up; cat up/alice/secret.txt`,
        `echo mine`,
      ];
      for (const command of probes) {
        const ran = await bob.callTool({ name: "bash", arguments: { command } });
        const text = textOf(ran);
        assert.doesNotMatch(text, new RegExp(SECRET), `${command}: ${text}`);
        assert.equal(ran.isError, true, `${command}: ${text}`);
        assert.match(text, /serves several tenants/, text);
        assert.match(text, /sandbox/, text);
      }
      const job = await bob.callTool({
        name: "bash_background",
        arguments: { command: `cat ${root}/alice/secret.txt` },
      });
      assert.equal(job.isError, true, textOf(job));
      assert.doesNotMatch(textOf(job), new RegExp(SECRET));
      // The file tools keep to bob's workspace, and work there.
      const read = await bob.callTool({ name: "read_file", arguments: { path: `${root}/alice/secret.txt` } });
      assert.equal(read.isError, true, textOf(read));
      assert.doesNotMatch(textOf(read), new RegExp(SECRET));
      await bob.callTool({ name: "write_file", arguments: { path: "own.txt", content: "bob's own" } });
      assert.match(textOf(await bob.callTool({ name: "read_file", arguments: { path: "own.txt" } })), /bob's own/);
    } finally {
      await bob.close();
    }
  });
});

describe("a server of one tenant without the OS sandbox", { timeout: 120_000 }, () => {
  let h: Harness;
  let workspace: string;
  before(async () => {
    workspace = await mkdtemp(join(tmpdir(), "toolfence-one-tenant-"));
    h = await startServer([{ token: ALICE, tenant: "alice" }], {
      sandbox: "off",
      allowUnsandboxedTenants: false,
      tenantRoot: undefined,
      workspace,
    });
  });
  after(async () => {
    await h?.close();
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  test("runs its commands", { timeout: 60_000 }, async () => {
    const alice = await connect(h.server.url, ALICE);
    try {
      const ran = await alice.callTool({ name: "bash", arguments: { command: "echo mine > a.txt; cat a.txt" } });
      assert.notEqual(ran.isError, true, textOf(ran));
      assert.match(textOf(ran), /mine/);
      assert.equal((ran.structuredContent as { sandboxed?: boolean }).sandboxed, false, textOf(ran));
    } finally {
      await alice.close();
    }
  });
});

describe("tenants' commands where the sandbox works", { skip: noSandbox, timeout: 120_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startServer(TWO, { sandbox: "auto", allowUnsandboxedTenants: false });
  });
  after(async () => {
    await h?.close();
  });

  test("run, sandboxed", { timeout: 60_000 }, async () => {
    const bob = await connect(h.server.url, BOB);
    try {
      const ran = await bob.callTool({ name: "bash", arguments: { command: "echo mine" } });
      assert.notEqual(ran.isError, true, textOf(ran));
      assert.equal((ran.structuredContent as { sandboxed?: boolean }).sandboxed, true, textOf(ran));
    } finally {
      await bob.close();
    }
  });
});
