// `toolfence grants` against a real SQLite store: lists a tenant's grants and no other tenant's, revokes one
// (exit 1 when it is not there), and refuses bad usage with exit code 2's error before it opens the store.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../adapters/mcp/mod.ts";
import { grantsCommand } from "../../cli/grants.ts";
import { CliUsageError } from "../../cli/usage.ts";
import { captured } from "./_captured.ts";

const sqliteModule = "node:sqlite";
const sqliteMissing = await import(sqliteModule).then(() => undefined, () => "this runtime has no node:sqlite");

/** Runs the command with its output captured. */
const grants = (...args: string[]) => captured(() => grantsCommand(args));

describe("toolfence grants", { skip: sqliteMissing }, () => {
  let dir: string;
  let store: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolfence-grants-cli-"));
    store = `sqlite:${join(dir, "store.db")}`;
    const shared = await openStore(store);
    for (
      const [tenant, kind, subject] of [["acme", "command", "npm test"], ["acme", "write", "/srv/out"], [
        "other",
        "command",
        "make",
      ]] as const
    ) {
      await shared.saveGrant({ tenant, kind, subject, data: {}, savedAt: Date.parse("2026-12-01T10:00:00Z") });
    }
    await shared.close();
  }, { timeout: 60_000 });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  }, { timeout: 60_000 });

  it("lists the tenant's grants, and no other tenant's", { timeout: 60_000 }, async () => {
    const listed = await grants("--store", store, "--tenant", "acme");
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(
      listed.out.trim().split("\n").map((line) => [JSON.parse(line).kind, JSON.parse(line).subject]),
      [["command", "npm test"], ["write", "/srv/out"]],
    );
    const pretty = await grants("--store", store, "--tenant", "other", "--pretty");
    assert.equal(pretty.out, '2026-12-01T10:00:00.000Z command "make"\n');
    assert.equal((await grants("--store", store, "--tenant", "nobody")).out, "");
  });

  it("revokes a grant of the kind given, once", { timeout: 60_000 }, async () => {
    // A command grant of that subject there is not: the write grant is only revoked as one.
    const wrongKind = await grants("--store", store, "--tenant", "acme", "--revoke", "/srv/out");
    assert.equal(wrongKind.code, 1);
    assert.match(wrongKind.err, /acme has no command grant "\/srv\/out"/);
    const revoked = await grants("--store", store, "--tenant", "acme", "--revoke", "/srv/out", "--kind", "write");
    assert.equal(revoked.code, 0, revoked.err);
    assert.match(revoked.out, /revoked the write grant "\/srv\/out" of acme/);
    assert.equal(
      (await grants("--store", store, "--tenant", "acme", "--revoke", "/srv/out", "--kind", "write")).code,
      1,
    );
    // Another tenant's grant of the same subject is not acme's to revoke.
    assert.equal((await grants("--store", store, "--tenant", "acme", "--revoke", "make")).code, 1);
    const left = await grants("--store", store, "--tenant", "other");
    assert.match(left.out, /"make"/);
  });

  it("says what is wrong with the command line", { timeout: 60_000 }, async () => {
    const usage = async (args: string[], message: RegExp) => {
      await assert.rejects(grants(...args), (error: unknown) => {
        assert.ok(error instanceof CliUsageError);
        assert.match(error.message, message);
        assert.equal(error.command, "grants");
        return true;
      });
    };
    await usage(["--tenant", "acme"], /give --store ADDRESS/);
    await usage(["--store", store], /--tenant NAME/);
    await usage(["--store", store, "--tenant", "acme", "--kind", "write"], /give --revoke SUBJECT too/);
    await usage(["--store", store, "--tenant", "acme", "--revoke", "x", "--kind", "file"], /command, write, rule/);
    await usage(["--store", store, "--tenant", "acme", "extra"], /Unexpected argument "extra"/);
    await usage(["--store", store, "--tenant", "acme", "--what"], /--what/);
  });

  it("says when the store cannot be opened", { timeout: 60_000 }, async () => {
    const missing = await grants("--store", "postgres-no://x", "--tenant", "acme");
    assert.equal(missing.code, 1);
    assert.match(missing.err, /the store postgres-no:\/\/x cannot be read/);
  });
});
