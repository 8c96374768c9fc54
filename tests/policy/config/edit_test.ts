// Editing a policy file: adding and removing a rule keeps its comments and
// layout.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { addRuleToText, parsePolicyFile, PolicyFileError, removeRuleFromText } from "../../../policy/mod.ts";

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
