import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { DEFAULT_COMMAND_ALLOWLIST } from "../../policy/shell/allowlist.ts";
import { PolicyState } from "../../policy/state.ts";
import { type Layout, makeLayout } from "./_fixtures.ts";

let L: Layout;
beforeEach(async () => {
  L = await makeLayout();
});
afterEach(() => L.cleanup());

describe("PolicyState: command allowlist", () => {
  test("defaults to the default allowlist; an explicit list replaces it", { timeout: 60_000 }, () => {
    assert.deepEqual(new PolicyState().commandAllowlist(), DEFAULT_COMMAND_ALLOWLIST);
    assert.deepEqual(new PolicyState({ commandAllowlist: ["ls"] }).commandAllowlist(), ["ls"]);
  });

  test(
    "add normalises whitespace and ignores duplicates; remove reports whether it removed",
    { timeout: 60_000 },
    () => {
      const state = new PolicyState({ commandAllowlist: [] });
      state.addCommand("  npm   run\ttest ");
      state.addCommand("npm run test");
      assert.deepEqual(state.commandAllowlist(), ["npm run test"]);
      assert.equal(state.removeCommand("npm  run test"), true);
      assert.equal(state.removeCommand("npm run test"), false);
      assert.throws(() => state.addCommand("   "), TypeError);
    },
  );

  test("the returned lists are snapshots, not handles on the state", { timeout: 60_000 }, () => {
    const state = new PolicyState({ commandAllowlist: ["ls"] });
    const list = state.commandAllowlist();
    assert.throws(() => (list as string[]).push("rm"));
    state.addCommand("cat");
    assert.deepEqual(list, ["ls"]);
  });
});

describe("PolicyState: write grants", () => {
  test("a folder grant covers everything beneath it, by path components", { timeout: 60_000 }, () => {
    const state = new PolicyState();
    state.grantWrite("/w/src/");
    assert.equal(state.isWriteGranted("/w/src"), true);
    assert.equal(state.isWriteGranted("/w/src/a/b.ts"), true);
    assert.equal(state.isWriteGranted("/w/src-old/b.ts"), false);
    assert.equal(state.isWriteGranted("/w/sr"), false);
    assert.equal(state.isWriteGranted("/w"), false);
    assert.equal(state.isWriteGranted("src/a.ts"), false);
  });

  test("grants must be absolute; revoke removes exactly one entry", { timeout: 60_000 }, () => {
    const state = new PolicyState();
    assert.throws(() => state.grantWrite("relative/path"), TypeError);
    assert.throws(() => state.grantWrite("/w/\0x"), TypeError);
    state.grantWrite("/w/a.txt");
    state.grantWrite("/w/a.txt");
    state.grantWrite("/w/dir");
    assert.deepEqual(state.writeGrants(), ["/w/a.txt", "/w/dir"]);
    assert.equal(state.revokeWrite("/w/dir/x"), false);
    assert.equal(state.revokeWrite("/w/dir"), true);
    assert.equal(state.isWriteGranted("/w/dir/x"), false);
  });
});

describe("PolicyState: JSON", () => {
  test("round-trips through JSON and a file, saved readable only by its owner", { timeout: 60_000 }, async () => {
    const state = new PolicyState({ commandAllowlist: ["ls", "git status"], writeGrants: ["/w/a"] });
    assert.deepEqual(PolicyState.fromJSON(JSON.parse(JSON.stringify(state))).toJSON(), state.toJSON());
    const file = path.join(L.workdir, "policy.json");
    await state.save(file);
    assert.equal((await fsp.stat(file)).mode & 0o777, 0o600);
    assert.deepEqual((await PolicyState.load(file)).toJSON(), {
      commandAllowlist: ["ls", "git status"],
      writeGrants: ["/w/a"],
    });
  });

  test("save works through a symlinked folder", { timeout: 60_000 }, async () => {
    await fsp.symlink(L.workdir, path.join(L.root, "alias"));
    await new PolicyState({ commandAllowlist: ["ls"] }).save(path.join(L.root, "alias", "p.json"));
    assert.deepEqual((await PolicyState.load(path.join(L.workdir, "p.json"))).commandAllowlist(), ["ls"]);
  });

  test("fromJSON refuses anything it does not fully understand", { timeout: 60_000 }, () => {
    for (
      const bad of [
        null,
        [],
        "x",
        { commandAllowlist: ["ls"] },
        { commandAllowlist: ["ls"], writeGrants: [1] },
        { commandAllowlist: "ls", writeGrants: [] },
        { commandAllowlist: [], writeGrants: ["relative"] },
        { commandAllowlist: [""], writeGrants: [] },
        { commandAllowlist: [], writeGrants: [], extra: true },
      ]
    ) {
      assert.throws(() => PolicyState.fromJSON(bad), TypeError, JSON.stringify(bad));
    }
  });

  test("load names the file when it is not valid", { timeout: 60_000 }, async () => {
    const file = path.join(L.workdir, "broken.json");
    await fsp.writeFile(file, "{ not json");
    await assert.rejects(PolicyState.load(file), new RegExp(`${file} is not valid JSON`));
    await fsp.writeFile(file, JSON.stringify({ commandAllowlist: [], writeGrants: [], sandbox: "off" }));
    await assert.rejects(PolicyState.load(file), /unknown key "sandbox"/);
  });

  test("clone is independent", { timeout: 60_000 }, () => {
    const state = new PolicyState({ commandAllowlist: ["ls"] });
    const copy = state.clone();
    copy.addCommand("cat");
    copy.grantWrite("/w");
    assert.deepEqual(state.toJSON(), { commandAllowlist: ["ls"], writeGrants: [] });
  });
});
