// `toolfence prune` against a real SQLite store: removes the sessions over for longer than the age given and keeps
// the others, prints the counts; refuses an age that is not one, or under an hour, before it opens the store.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../adapters/mcp/mod.ts";
import { parseAge, pruneCommand } from "../../cli/prune.ts";
import { CliUsageError } from "../../cli/usage.ts";
import { captured } from "./_captured.ts";

const sqliteModule = "node:sqlite";
const sqliteMissing = await import(sqliteModule).then(() => undefined, () => "this runtime has no node:sqlite");
const HOUR = 3_600_000;

describe("toolfence prune", { skip: sqliteMissing }, () => {
  let dir: string;
  let store: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolfence-prune-cli-"));
    store = `sqlite:${join(dir, "store.db")}`;
    const shared = await openStore(store);
    const now = Date.now();
    for (const [id, lastActive] of [["old", now - 49 * HOUR], ["recent", now - 2 * HOUR]] as const) {
      await shared.createSession({
        id,
        tenant: "acme",
        generation: 0,
        owner: "replica-1",
        createdAt: lastActive,
        lastActive,
        endedAt: null,
        data: {},
      });
    }
    await shared.endSession("old", now - 48 * HOUR);
    await shared.close();
  }, { timeout: 60_000 });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  }, { timeout: 60_000 });

  it("removes the sessions over for longer than the age, and prints what went", { timeout: 60_000 }, async () => {
    const { code, out } = await captured(() => pruneCommand(["--store", store, "--older-than", "1d"]));
    assert.equal(code, 0);
    const printed = JSON.parse(out);
    assert.equal(printed.sessions, 1);
    assert.ok(Math.abs(Date.parse(printed.before) - (Date.now() - 24 * HOUR)) < 60_000, printed.before);
    const shared = await openStore(store);
    try {
      assert.equal(await shared.session("acme", "old"), undefined);
      assert.equal((await shared.session("acme", "recent"))?.id, "recent");
    } finally {
      await shared.close();
    }
  });

  it("reads an age in minutes, hours or days, at least an hour", { timeout: 60_000 }, () => {
    assert.equal(parseAge("90m"), 90 * 60_000);
    assert.equal(parseAge("12h"), 12 * HOUR);
    assert.equal(parseAge("30d"), 30 * 24 * HOUR);
    for (
      const [age, message] of [
        ["30", /an age such as 30d/],
        ["1w", /an age such as 30d/],
        ["-1d", /an age such as 30d/],
        ["1.5h", /an age such as 30d/],
        ["59m", /under an hour/],
        ["0d", /under an hour/],
      ] as const
    ) {
      assert.throws(
        () => parseAge(age),
        (error: unknown) => error instanceof CliUsageError && message.test(error.message),
      );
    }
  });

  it("says what is missing from the command line", { timeout: 60_000 }, async () => {
    await assert.rejects(pruneCommand(["--older-than", "1d"]), /give --store ADDRESS/);
    await assert.rejects(pruneCommand(["--store", store]), /--older-than AGE/);
    await assert.rejects(pruneCommand(["--store", store, "--older-than", "5m"]), /under an hour/);
    await assert.rejects(pruneCommand(["--store", store, "--older-than", "1d", "now"]), /Unexpected argument "now"/);
  });
});
