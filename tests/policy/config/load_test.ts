// Policy files: validation with positions, layering and precedence, shadow
// mode, examples, the published JSON Schema. (Editing that keeps comments:
// edit_test.ts.)

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  decideCommand,
  loadPolicy,
  parsePolicyFile,
  PolicyExampleError,
  PolicyFileError,
  policyJsonSchema,
  PolicyRules,
  policySettings,
  runPolicyExamples,
  STARTER_POLICY,
  userPolicyFile,
} from "../../../policy/mod.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

function problems(text: string): string[] {
  try {
    parsePolicyFile("t.json", text, "project");
  } catch (error) {
    assert.ok(error instanceof PolicyFileError);
    assert.equal(error.code, "invalid_policy_file");
    return error.message.split("\n");
  }
  assert.fail(`no error for ${text}`);
}

describe("validation", () => {
  test("every problem has the file, line, column, key and what was expected", { timeout: 60_000 }, () => {
    assert.deepEqual(problems('{\n  "commands": {\n    "deny": [3]\n  }\n}'), [
      "t.json:3:14: commands.deny[0]: expected a string or an object, received 3",
    ]);
    assert.deepEqual(problems('{\n  "comands": {}\n}'), [
      't.json:2:3: comands: unknown key "comands"; expected one of: $schema, enforce, override, readOnly, commands, ' +
      "paths, tools, sandbox, network, answers, audit, store, examples",
    ]);
    assert.deepEqual(problems('{ "commands": { "deny": [{ "pattern": "x", "enforc": true }] } }'), [
      't.json:1:44: commands.deny[0].enforc: unknown key "enforc"; expected one of: pattern, enforce, override, reason',
    ]);
    assert.deepEqual(problems('{ "sandbox": { "mode": "offf" } }'), [
      't.json:1:24: sandbox.mode: expected ("auto" | "required" | "off"), received "offf"',
    ]);
    assert.deepEqual(problems('{ "sandbox": { "timeoutSeconds": 0 } }'), [
      "t.json:1:34: sandbox.timeoutSeconds: expected >=1, received 0",
    ]);
    assert.deepEqual(problems('{ "paths": { "deny": ["../x"] } }'), [
      "t.json:1:23: paths.deny[0]: a glob cannot hold `..`",
    ]);
    assert.deepEqual(problems('{ "examples": [{ "command": "ls", "path": "x", "expect": "allow" }] }'), [
      "t.json:1:16: examples[0]: an example has a command or a path, not both",
    ]);
  });

  test("syntax errors are positioned; comments and trailing commas are fine", { timeout: 60_000 }, () => {
    assert.deepEqual(problems('{\n  "commands": {\n    "deny": ["x",\n'), [
      "t.json:4:1: not valid JSON: a value was expected",
      "t.json:4:1: not valid JSON: `]` was expected",
      "t.json:4:1: not valid JSON: `}` was expected",
      "t.json:4:1: not valid JSON: `}` was expected",
    ]);
    assert.deepEqual(problems("[]"), ["t.json:1:1: expected an object at the top level"]);
    assert.deepEqual(problems(""), ["t.json:1:1: the file is empty"]);
    const layer = parsePolicyFile("t.json", '{ /* c */ "commands": { "deny": ["x",], }, // end\n}', "project");
    assert.deepEqual(layer.config.commands?.deny, ["x"]);
  });

  test("a key given twice is an error, not a silent overwrite", { timeout: 60_000 }, () => {
    assert.deepEqual(problems('{\n  "commands": { "deny": ["git push"], "deny": [] }\n}'), [
      't.json:2:39: commands.deny: duplicate key "deny" (first at line 2, column 17)',
    ]);
  });

  test("__proto__ is a key like any other, and refused as unknown", { timeout: 60_000 }, () => {
    assert.match(problems('{ "__proto__": { "readOnly": false } }')[0], /unknown key "__proto__"/);
  });

  test("the starter file is valid and its examples pass", { timeout: 60_000 }, async () => {
    const layer = parsePolicyFile("toolfence.json", STARTER_POLICY, "project");
    const results = await runPolicyExamples(PolicyRules.fromLayers([layer], "/w"));
    assert.ok(results.length >= 4);
    assert.deepEqual(results.filter((r) => !r.ok), []);
  });
});

describe("layers", () => {
  let dir: string;
  before(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-layers-")));
    await mkdir(join(dir, "ws"));
    await mkdir(join(dir, "etc"));
    await mkdir(join(dir, "xdg", "toolfence"), { recursive: true });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const layer = (name: "managed" | "cli" | "project" | "user", config: object) =>
    parsePolicyFile(`${name}.json`, JSON.stringify(config), name);

  test("deny beats ask beats allow across layers, whatever their order", { timeout: 60_000 }, async () => {
    const rules = PolicyRules.fromLayers([
      layer("user", { commands: { deny: ["npm publish"] } }),
      layer("project", { commands: { allow: ["npm publish"] } }),
    ], "/w");
    assert.equal((await decideCommand("npm publish", { rules })).decision, "deny");
    const asks = PolicyRules.fromLayers([
      layer("project", { commands: { allow: ["rm -rf build"] } }),
      layer("user", { commands: { ask: ["rm"] } }),
    ], "/w");
    assert.equal((await decideCommand("rm -rf build", { rules: asks })).decision, "ask");
  });

  test("a higher layer's override loosens lower layers, never a higher one", { timeout: 60_000 }, async () => {
    const loosened = PolicyRules.fromLayers([
      layer("user", { commands: { deny: ["rm -rf build"] } }),
      layer("project", { commands: { allow: [{ pattern: "rm -rf build", override: true }] } }),
    ], "/w");
    assert.equal((await decideCommand("rm -rf build", { rules: loosened })).decision, "allow");
    const managed = PolicyRules.fromLayers([
      layer("managed", { commands: { deny: ["rm -rf"] } }),
      layer("project", { override: true, commands: { allow: ["rm -rf build"] } }),
    ], "/w");
    const decided = await decideCommand("rm -rf build", { rules: managed });
    assert.equal(decided.decision, "deny");
    assert.match(decided.reason, /managed file managed\.json:1:/);
    // An override acts on its own command only: another command of the line keeps its deny.
    const mixed = PolicyRules.fromLayers([
      layer("user", { commands: { deny: ["git push"] } }),
      layer("project", { commands: { allow: [{ pattern: "git status", override: true }] } }),
    ], "/w");
    assert.equal((await decideCommand("git status && git push", { rules: mixed })).decision, "deny");
  });

  test(
    "a glob allow rule allows the commands it matches as the allowlist would: flags judged, project code sandboxed",
    {
      timeout: 60_000,
    },
    async () => {
      // A glob rule adds each command it matched as an exact entry; exactness must not excuse the flag rules or
      // the sandbox that a prefix entry of the same command would need.
      const cases: [string, string][] = [
        ["tar -t*", "tar -tf a.tar --use-compress-program=id"],
        ["tar *", "tar -xf a.tar --to-command=id"],
        ["gawk *", `gawk 'BEGIN{system("id")}'`],
        ["git *", "git -c core.pager=id log"],
        ["npm run test:*", "npm run test:unit"],
        ["make *", "make all"],
      ];
      for (const [pattern, line] of cases) {
        const rules = PolicyRules.fromLayers([layer("project", { commands: { allow: [pattern] } })], "/w");
        const decided = await decideCommand(line, { rules, workspaceRoot: "/w", sandbox: "off" });
        assert.equal(decided.decision, "ask", `${pattern} allowed ${line}: ${decided.reason}`);
      }
      // What the rule is for still runs: a listing, and with the sandbox the project's own script.
      const tar = PolicyRules.fromLayers([layer("project", { commands: { allow: ["tar -t*"] } })], "/w");
      assert.equal((await decideCommand("tar -tf a.tar", { rules: tar, workspaceRoot: "/w" })).decision, "allow");
      const npm = PolicyRules.fromLayers([layer("project", { commands: { allow: ["npm run test:*"] } })], "/w");
      const sandboxed = await decideCommand("npm run test:unit", {
        rules: npm,
        workspaceRoot: "/w",
        sandbox: "required",
      });
      assert.equal(sandboxed.check?.sandbox.needed, true);
      assert.equal(sandboxed.check?.commands[0].allowedBy, "sandbox: = npm run test:unit");
      // The allowlist's own exact entries keep their meaning: a version query runs no project code.
      for (const line of ["node --version", "git --help", "git --version"]) {
        const decided = await decideCommand(line, { workspaceRoot: "/w", sandbox: "off" });
        assert.equal(decided.decision, "allow", `${line}: ${decided.reason}`);
      }
    },
  );

  test("the project file cannot loosen the managed file's paths or tools", { timeout: 60_000 }, () => {
    const rules = PolicyRules.fromLayers([
      layer("managed", {
        paths: { deny: ["secrets/**"] },
        tools: { disable: ["bash"] },
        sandbox: { mode: "required" },
      }),
      layer("project", {
        override: true,
        paths: { readOnly: ["secrets/**"] },
        tools: { enable: ["bash"] },
        sandbox: { mode: "off" },
      }),
    ], "/w");
    assert.equal(rules.decidePath("/w/secrets/a").decision, "deny");
    const settings = policySettings(rules);
    assert.deepEqual(settings.disabledTools, ["bash"]);
    assert.equal(settings.sandbox, "required");
  });

  test("shadow mode records what a rule would do without applying it", { timeout: 60_000 }, async () => {
    const rules = PolicyRules.fromLayers([
      layer("project", { commands: { deny: [{ pattern: "git push", enforce: false }] } }),
      layer("user", { enforce: false, paths: { deny: ["**/.env"] } }),
    ], "/w");
    const decided = await decideCommand("git push", { rules });
    assert.notEqual(decided.decision, "deny");
    assert.equal(decided.rules.shadow?.decision, "deny");
    const p = rules.decidePath("/w/.env");
    assert.equal(p.decision, "allow");
    assert.equal(p.shadow?.kind, "deny");
    assert.deepEqual(rules.hiddenGlobs(), []);
  });

  test("loadPolicy reads managed, --config, project and XDG user files; a missing --config is an error", {
    timeout: 60_000,
  }, async () => {
    await writeFile(join(dir, "etc", "config.json"), '{ "commands": { "deny": ["curl"] } }');
    await writeFile(join(dir, "ws", "toolfence.json"), '{ // project\n "commands": { "allow": ["curl localhost"] } }');
    await writeFile(join(dir, "xdg", "toolfence", "config.json"), '{ "paths": { "deny": ["**/.env"] } }');
    await writeFile(join(dir, "cli.json"), '{ "commands": { "ask": ["git commit"] } }');
    const user = userPolicyFile({ XDG_CONFIG_HOME: join(dir, "xdg"), HOME: "/nowhere" });
    assert.equal(user, join(dir, "xdg", "toolfence", "config.json"));
    assert.equal(userPolicyFile({ HOME: "/home/me" }), "/home/me/.config/toolfence/config.json");
    const rules = await loadPolicy(join(dir, "ws"), {
      managed: join(dir, "etc", "config.json"),
      cli: join(dir, "cli.json"),
      user,
    });
    assert.deepEqual(rules.layers.map((l) => l.name), ["managed", "cli", "project", "user"]);
    assert.equal((await decideCommand("curl localhost", { rules })).decision, "deny");
    assert.equal(rules.decidePath(join(dir, "ws", "a", ".env")).decision, "deny");
    await assert.rejects(
      loadPolicy(join(dir, "ws"), { managed: "/nonexistent", cli: join(dir, "missing.json"), user: "/nonexistent" }),
      /missing\.json:1:1: the --config file does not exist/,
    );
  });

  test("a broken file stops loading with its message, never a fallback", { timeout: 60_000 }, async () => {
    await writeFile(join(dir, "ws", "toolfence.json"), '{\n  "commands": { "deny": "git push" }\n}');
    await assert.rejects(
      loadPolicy(join(dir, "ws"), { managed: "/nonexistent", user: "/nonexistent" }),
      (error: unknown) =>
        error instanceof PolicyFileError &&
        error.message ===
          `${join(dir, "ws", "toolfence.json")}:2:25: commands.deny: expected Array, received "git push"`,
    );
  });

  test("a failing example stops loading and names itself", { timeout: 60_000 }, async () => {
    await writeFile(
      join(dir, "ws", "toolfence.json"),
      '{\n  "commands": { "deny": ["git push"] },\n  "examples": [\n    { "name": "push is fine", "command": "git push", "expect": "allow" }\n  ]\n}',
    );
    await assert.rejects(
      loadPolicy(join(dir, "ws"), { managed: "/nonexistent", user: "/nonexistent" }),
      (error: unknown) =>
        error instanceof PolicyExampleError &&
        error.message.startsWith(
          `${join(dir, "ws", "toolfence.json")}:4:5: example "push is fine": expected allow, got deny (`,
        ),
    );
    const rules = await loadPolicy(join(dir, "ws"), { managed: "/nonexistent", user: "/nonexistent", examples: false });
    assert.equal(rules.commandRules.length, 1);
  });
});

test("the published JSON Schema is the one made from the valibot schema", { timeout: 60_000 }, async () => {
  const published = JSON.parse(await readFile(join(ROOT, "policy", "toolfence.schema.json"), "utf8"));
  assert.deepEqual(published, policyJsonSchema());
  assert.equal(published.additionalProperties, false);
});
