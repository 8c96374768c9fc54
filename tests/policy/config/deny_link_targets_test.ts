// A denied name that is a link (`app/.env -> ../conf/prod.txt`, a denied folder name leading to a folder): the
// sandbox hides the file or folder the link leads to (deniedEntries: "a denied link stands for where it leads"), so
// the file tools must too. Before, `cat conf/prod.txt` in bash answered Permission denied while read_file of
// conf/prod.txt printed the secret, and list_dir, grep and copy showed the folder a denied link led to.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";

const SECRET = "sk-live-link-target-0123456789-SECRET";
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const box = new ToolBox().withDefaults("fs", "search", "cmd", "diagnostic");

let dir: string;
let rules: PolicyRules;

before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-link-targets-")));
  await mkdir(join(dir, "app"));
  await mkdir(join(dir, "conf"));
  await mkdir(join(dir, "vault", "deep"), { recursive: true });
  await writeFile(join(dir, "conf", "prod.txt"), `TOKEN=${SECRET}\n`);
  await writeFile(join(dir, "conf", "chained.txt"), `TOKEN=${SECRET}\n`);
  await writeFile(join(dir, "conf", "main.ts"), "console.log('hi');\n");
  await writeFile(join(dir, "vault", "deep", "key.txt"), SECRET);
  // A denied name linked to a file no rule names; one through a chain of links; a denied folder name linked to a
  // folder no rule names.
  await symlink("../conf/prod.txt", join(dir, "app", ".env"));
  await symlink("chain2", join(dir, "app", ".env.local"));
  await symlink("../conf/chained.txt", join(dir, "app", "chain2"));
  await symlink("vault", join(dir, "secrets"));
  const text = '{ "paths": { "deny": ["**/.env", "**/.env.*", "secrets/**"] } }';
  await writeFile(join(dir, "toolfence.json"), text);
  rules = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const session = () => new Session({ workspace: dir, rules, autoConfirm: true });

describe("where a denied link leads", () => {
  test("the file tools refuse it as they refuse the link, and list or search nothing of it", {
    timeout: 60_000,
  }, async () => {
    const s = session();
    try {
      const reads: [string, Record<string, unknown>][] = [];
      for (const path of ["conf/prod.txt", "conf/chained.txt", "app/chain2", "vault/deep/key.txt", "./vault/deep/"]) {
        reads.push(["read_file", { path }], ["file_info", { path }], ["copy", { src: path, dst: "out" }]);
        reads.push(["diff_files", { a: "conf/main.ts", b: path }], ["edit_file", {
          path,
          old_text: "T",
          new_text: "x",
        }]);
        reads.push(["write_file", { path, content: "overwritten" }]);
      }
      reads.push(["list_dir", { path: "vault" }], ["list_dir", { path: "vault/deep" }], ["copy", {
        src: "conf",
        dst: "c2",
      }]);
      reads.push(["move", { src: "vault", dst: "v2" }], ["grep", { pattern: "SECRET", path: "conf/prod.txt" }]);
      for (const [tool, args] of reads) {
        const result = await box.call(s, tool, args);
        const text = JSON.stringify(result);
        assert.notEqual(result.status, "success", `${tool} ${JSON.stringify(args)}: ${text}`);
        assert.ok(!text.includes(SECRET), `${tool} ${JSON.stringify(args)}: ${text}`);
      }
      const grepped = JSON.stringify(await box.call(s, "grep", { pattern: "SECRET" }));
      assert.ok(!grepped.includes(SECRET), grepped);
      const listed = JSON.stringify(await box.call(s, "list_dir", { path: "conf" }));
      assert.ok(!/prod\.txt|chained\.txt/.test(listed), listed);
      const globbed = JSON.stringify(await box.call(s, "glob", { pattern: "**/*.txt" }));
      assert.ok(!/prod\.txt|chained\.txt|key\.txt/.test(globbed), globbed);
      // What no denied link leads to reads as ever.
      const benign = await box.call(s, "read_file", { path: "conf/main.ts" });
      assert.equal(benign.status, "success", benign.error);
      assert.match(String((benign.output as { content: string }).content), /console\.log/);
    } finally {
      await s.close();
    }
  });

  test("inside the sandbox it is hidden as well", { timeout: 60_000, skip: !hasBwrap }, async () => {
    const s = session();
    try {
      for (
        const command of ["cat conf/prod.txt conf/chained.txt", "cat vault/deep/key.txt", "grep -rs SECRET . || true"]
      ) {
        const result = await box.call(s, "bash", { command: `${command}; true` });
        assert.ok(!JSON.stringify(result).includes(SECRET), `${command}: ${JSON.stringify(result.output)}`);
      }
    } finally {
      await s.close();
    }
  });
});

// The way to where a denied link leads: a link or folder its text (or a link met on the way) names. Removed or
// renamed, the denied link led nowhere, and what it hid was shown: with `app/.env -> ../via/prod.txt`,
// `via -> conf`, deleting (or moving) `via` through the file tools, or the folder `x` of
// `app/.env.b -> ../x/../conf/prod.txt`, had read_file print conf/prod.txt, and `rm via; rmdir x` in a sandboxed
// command had the next command's `cat conf/prod.txt` print it.
describe("the way to where a denied link leads", () => {
  const WAY_SECRET = "sk-live-denied-link-way-SECRET";
  let ways: string;
  let wayRules: PolicyRules;
  before(async () => {
    ways = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-link-ways-")));
    for (const folder of ["app", "conf", "x", "d", "free"]) await mkdir(join(ways, folder));
    await writeFile(join(ways, "conf", "prod.txt"), `TOKEN=${WAY_SECRET}\n`);
    await writeFile(join(ways, "conf", "other.txt"), `TOKEN=${WAY_SECRET} other\n`);
    await symlink("conf", join(ways, "via"));
    await symlink("../via/prod.txt", join(ways, "app", ".env"));
    await symlink("../x/../conf/prod.txt", join(ways, "app", ".env.b"));
    // A link on the way that lies in a folder: the folder goes with it.
    await symlink("../conf", join(ways, "d", "via"));
    await symlink("../d/via/other.txt", join(ways, "app", ".env.c"));
    // A link no denied link goes through.
    await symlink("conf", join(ways, "free", "link"));
    const text = '{ "paths": { "deny": ["**/.env", "**/.env.*"] } }';
    wayRules = PolicyRules.fromLayers([parsePolicyFile(join(ways, "toolfence.json"), text, "project")], ways);
  });
  after(async () => {
    await rm(ways, { recursive: true, force: true });
  });

  test("the file tools neither move nor delete it, and what the link hides stays hidden", {
    timeout: 60_000,
  }, async () => {
    const s = new Session({ workspace: ways, rules: wayRules, autoConfirm: true, sandbox: "off" });
    try {
      const changes: [string, Record<string, unknown>][] = [
        ["delete", { path: "via" }],
        ["move", { src: "via", dst: "via2" }],
        ["delete", { path: "x" }],
        ["move", { src: "x", dst: "y" }],
        ["delete", { path: "d/via" }],
        ["delete", { path: "d", recursive: true }],
        ["move", { src: "d", dst: "free/d" }],
      ];
      for (const [tool, args] of changes) {
        const result = await box.call(s, tool, args);
        assert.equal(
          result.errorCode,
          "permission_denied",
          `${tool} ${JSON.stringify(args)}: ${JSON.stringify(result)}`,
        );
      }
      for (const path of ["conf/prod.txt", "conf/other.txt"]) {
        const read = await box.call(s, "read_file", { path });
        assert.equal(read.errorCode, "permission_denied", JSON.stringify(read));
        assert.ok(!JSON.stringify(read).includes(WAY_SECRET));
      }
      // A link no denied link goes through is the tools' as ever.
      const freed = await box.call(s, "delete", { path: "free/link" });
      assert.equal(freed.status, "success", JSON.stringify(freed));
      await symlink("conf", join(ways, "free", "link"));
    } finally {
      await s.close();
    }
  });

  test("inside the sandbox a folder on the way is pinned", { timeout: 60_000, skip: !hasBwrap }, async () => {
    const s = new Session({ workspace: ways, rules: wayRules, autoConfirm: true, sandbox: "required" });
    try {
      const broke = await box.call(s, "bash", { command: "rmdir x; mv x y; mv d d2; true" });
      assert.equal(broke.status, "success", JSON.stringify(broke));
      const read = await box.call(s, "bash", { command: "cat conf/prod.txt conf/other.txt; ls; true" });
      assert.ok(!JSON.stringify(read).includes(WAY_SECRET), JSON.stringify(read.output));
      assert.match(JSON.stringify(read.output), /\\nx\\n/);
    } finally {
      await s.close();
    }
  });
});
