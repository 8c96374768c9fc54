import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_COMMAND_ALLOWLIST, matchesAllowlist, parseAllowlistEntry } from "../../../policy/shell/allowlist.ts";
import { checkCommand } from "../../../policy/shell/check_command.ts";

describe("matchesAllowlist", () => {
  test("matches by whole tokens, not by string prefix", { timeout: 60_000 }, () => {
    assert.equal(matchesAllowlist(["git", "diff", "--cached"], ["git diff"]), "git diff");
    assert.equal(matchesAllowlist(["git", "diff"], ["git diff"]), "git diff");
    assert.equal(matchesAllowlist(["git", "difftool"], ["git diff"]), undefined);
    assert.equal(matchesAllowlist(["git", "statusx"], ["git status"]), undefined);
    assert.equal(matchesAllowlist(["lsblk"], ["ls"]), undefined);
    assert.equal(matchesAllowlist(["git"], ["git status"]), undefined);
  });

  test("returns the first matching entry as written", { timeout: 60_000 }, () => {
    assert.equal(matchesAllowlist(["git", "log", "-5"], ["ls", "git  log ", "git"]), "git  log ");
    assert.equal(matchesAllowlist(["git", "log"], ["git", "git log"]), "git");
  });

  test("an empty or blank entry never matches", { timeout: 60_000 }, () => {
    assert.equal(matchesAllowlist(["rm", "-rf", "/"], ["", "   "]), undefined);
    assert.equal(matchesAllowlist([], ["ls"]), undefined);
  });
});

describe("DEFAULT_COMMAND_ALLOWLIST", () => {
  test("holds the read-only commands of the seed and the test runners", { timeout: 60_000 }, () => {
    for (
      const entry of [
        "ls",
        "wc",
        "echo",
        "pwd",
        "cat",
        "head",
        "tail",
        "grep",
        "rg",
        "find",
        "git status",
        "git log",
        "git diff",
        "git show",
        "git --no-pager diff",
        "deno test",
        "npm test",
        "python -m pytest",
      ]
    ) {
      assert.ok(DEFAULT_COMMAND_ALLOWLIST.includes(entry), entry);
    }
  });

  test("holds nothing that writes, reaches the network or runs other commands", { timeout: 60_000 }, () => {
    for (
      const name of [
        "rm",
        "mv",
        "cp",
        "tee",
        "touch",
        "curl",
        "wget",
        "ssh",
        "git push",
        "git fetch",
        "git pull",
        "env",
        "xargs",
        "sh",
        "bash",
        "eval",
        "sudo",
        "less",
        "journalctl",
      ]
    ) {
      const words = name.split(" ");
      assert.equal(matchesAllowlist([...words, "x"], DEFAULT_COMMAND_ALLOWLIST), undefined, name);
    }
  });

  test("cannot be changed in place", { timeout: 60_000 }, () => {
    assert.ok(Object.isFrozen(DEFAULT_COMMAND_ALLOWLIST));
  });

  test("every entry on its own runs without asking", { timeout: 60_000 }, async () => {
    for (const entry of DEFAULT_COMMAND_ALLOWLIST) {
      const words = parseAllowlistEntry(entry).words;
      // `[` needs its closing bracket; bare `git config` would set a value.
      const command = words[0] === "[" ? "[ x ]" : entry === "git config" ? "git config --list" : words.join(" ");
      const check = await checkCommand(command, { sandbox: { available: true } });
      assert.equal(check.verdict, "allow", `${entry}: ${check.reasons.join("; ")}`);
      assert.equal(check.commands[0].allowedBy, entry);
    }
  });
});
