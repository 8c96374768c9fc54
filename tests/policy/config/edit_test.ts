// Editing a policy file: adding and removing a rule keeps its comments and
// layout.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  addRuleToFile,
  addRuleToText,
  parsePolicyFile,
  PolicyFileError,
  removeRuleFromFile,
  removeRuleFromText,
} from "../../../policy/mod.ts";
import type { ToolError } from "../../../core/errors.ts";

describe("editing", () => {
  test("add and remove keep comments and layout", { timeout: 60_000 }, () => {
    const text = '{\n  // why we deny\n  "commands": {\n    "deny": ["git push"] // no pushing\n  }\n}\n';
    const added = addRuleToText(text, { section: "commands", list: "deny" }, "curl");
    assert.match(added, /\/\/ why we deny/);
    assert.match(added, /\/\/ no pushing/);
    assert.deepEqual(parsePolicyFile("t", added, "project").config.commands?.deny, ["git push", "curl"]);
    assert.equal(addRuleToText(added, { section: "commands", list: "deny" }, " curl "), added, "no duplicate");
    const withPath = addRuleToText(added, { section: "paths", list: "deny" }, "secrets/**");
    assert.deepEqual(parsePolicyFile("t", withPath, "project").config.paths?.deny, ["secrets/**"]);
    const { text: removed, removed: count } = removeRuleFromText(
      withPath,
      { section: "commands", list: "deny" },
      "git push",
    );
    assert.equal(count, 1);
    assert.match(removed, /\/\/ why we deny/);
    assert.deepEqual(parsePolicyFile("t", removed, "project").config.commands?.deny, ["curl"]);
    assert.throws(() => addRuleToText(text, { section: "paths", list: "deny" }, "../x"), PolicyFileError);
  });
});

describe("editing a file", () => {
  test("a link at the file's name is never read through: its target's text is not carried into the workspace", {
    timeout: 60_000,
  }, async () => {
    const base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-edit-")));
    try {
      const workdir = path.join(base, "W");
      await fsp.mkdir(workdir);
      // Outside: a file of policy shape (another project's, the user's); a command made the project's file a link.
      const outside = path.join(base, "outside.json");
      const text = '{ "commands": { "allow": ["outside-only-rule"] } }\n';
      await fsp.writeFile(outside, text);
      await fsp.symlink(outside, path.join(workdir, "toolfence.json"));
      await assert.rejects(
        addRuleToFile(path.join(workdir, "toolfence.json"), { section: "commands", list: "allow" }, "npm test"),
        (error: ToolError) => error.code === "symlink_target",
      );
      assert.ok((await fsp.lstat(path.join(workdir, "toolfence.json"))).isSymbolicLink());
      assert.equal(await fsp.readFile(outside, "utf8"), text);
      await assert.rejects(
        removeRuleFromFile(path.join(workdir, "toolfence.json"), { section: "commands", list: "allow" }, "x"),
        (error: ToolError) => error.code === "symlink_target",
      );
    } finally {
      await fsp.rm(base, { recursive: true, force: true });
    }
  });
});
