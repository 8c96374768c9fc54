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
