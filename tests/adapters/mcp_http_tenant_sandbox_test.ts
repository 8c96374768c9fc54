// Tenants apart for commands: under `serve --http --tenant-root R` with the
// OS sandbox required, one tenant's sandboxed bash (and background job) can
// neither read nor list another tenant's files, nor list R itself.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import process from "node:process";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Harness, startServer, textOf } from "./_http_harness.ts";
import { bubblewrapStatus } from "../../policy/sandbox.ts";

const status = await bubblewrapStatus();
const noSandbox = status.path ? false : `needs a working bubblewrap: ${status.reason}`;

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const SECRET = `BOBSECRET${Date.now()}`;

async function outsideTempAndHome(): Promise<string> {
  const hidden = [tmpdir(), homedir()];
  for (const parent of [process.cwd(), "/srv", "/opt"]) {
    if (hidden.some((h) => parent === h || parent.startsWith(`${h}/`))) continue;
    try {
      return await mkdtemp(join(parent, ".tenants-test-"));
    } catch {
      // not writable here: the next
    }
  }
  throw new Error("no writable folder outside the temp folder and the home folder for the tenant root");
}

describe("tenants' commands under --tenant-root and the OS sandbox", { skip: noSandbox, timeout: 120_000 }, () => {
  let h: Harness;
  let root: string;
  before(async () => {
    // The README's own example: a tenant root in the server's folder (or a /srv-style one), not under the
    // temp folder or a home folder, which the sandbox would hide anyway.
    root = await outsideTempAndHome();
    h = await startServer([{ token: ALICE, tenant: "alice" }, { token: BOB, tenant: "bob" }], {
      sandbox: "required",
      tenantRoot: root,
    });
    const bob = join(root, "bob");
    await mkdir(join(bob, "private"), { recursive: true });
    await writeFile(join(bob, "secret.txt"), `${SECRET}\n`);
    await writeFile(join(bob, "private", "notes.txt"), `${SECRET}\n`);
  });
  after(async () => {
    await h?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  test("alice's bash reads her own files, and nothing of bob's or of the root", { timeout: 120_000 }, async () => {
    const alice = await connect(h.server.url, ALICE);
    try {
      const own = await alice.callTool({ name: "bash", arguments: { command: "echo mine > a.txt; cat a.txt" } });
      assert.match(textOf(own), /mine/, textOf(own));
      // Bob's folder exists on the host, with the secret in it.
      assert.deepEqual((await readdir(join(root, "bob"))).sort(), ["private", "secret.txt"]);
      const pattern = `BOBSECRE[T]`;
      const probes = [
        `cat ${root}/bob/secret.txt ../bob/secret.txt ${root}/bob/private/notes.txt`,
        `ls -A ${root}; ls -A ${root}/bob ..; find ${root} .. -maxdepth 3`,
        `rg -uuu '${pattern}' ${root} .. 2>&1; grep -r '${pattern}' ${root} .. 2>&1`,
        `cd .. && ls -A && cat bob/secret.txt`,
      ];
      for (const command of probes) {
        // `; true`: the call succeeds, so its stdout comes back on its own.
        const ran = await alice.callTool({ name: "bash", arguments: { command: `${command}; true` } });
        const text = textOf(ran);
        assert.equal((ran.structuredContent as { sandboxed?: boolean }).sandboxed, true, text);
        assert.doesNotMatch(text, new RegExp(SECRET), `${command}: ${text}`);
        // Neither bob's folder nor its entries are listed (the command itself names none of these).
        const stdout = (ran.structuredContent as { stdout?: string } | undefined)?.stdout;
        assert.ok(typeof stdout === "string", text);
        assert.doesNotMatch(stdout, /\bnotes\.txt\b|\bprivate\b/, `${command} lists bob's files: ${stdout}`);
        assert.doesNotMatch(stdout, /^bob$/m, `${command} lists the tenant root: ${stdout}`);
      }
      const job = await alice.callTool({
        name: "bash_background",
        arguments: { command: `cat ${root}/bob/secret.txt; ls -A ${root}` },
      });
      const id = String((job.structuredContent as { id?: string }).id);
      const waited = await alice.callTool({ name: "bash_wait", arguments: { id, timeout_s: 20 } });
      assert.doesNotMatch(textOf(waited), new RegExp(SECRET));
      assert.doesNotMatch(String((waited.structuredContent as { stdout?: string }).stdout), /^bob$/m);
    } finally {
      await alice.close();
    }
  });
});
