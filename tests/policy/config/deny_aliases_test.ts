// Other names (hard links) of files a policy file denies: made before the session, they show the file's bytes
// under a name no rule matches. The tools refuse them as they refuse the file, the sandbox hides them as it hides
// the file, and a file with other names that is not denied stays readable.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { link, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { deniedEntries, hiddenMountArgs, linkedInodes, otherNames } from "../../../internal/mod.ts";

const SECRET = "sk-live-aliased-0123456789-SECRET";
const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const box = new ToolBox().withDefaults("fs", "search", "cmd");

let dir: string;
let rules: PolicyRules;

before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-aliases-")));
  await mkdir(join(dir, "app"));
  await mkdir(join(dir, "secrets"));
  await mkdir(join(dir, "notes"));
  await writeFile(join(dir, "app", ".env"), `TOKEN=${SECRET}\n`);
  await writeFile(join(dir, "secrets", "key.txt"), SECRET);
  await writeFile(join(dir, "app", "main.ts"), "console.log('hi');\n");
  // Other names: of a denied file, of a file in a denied folder, and of a file nothing denies.
  await link(join(dir, "app", ".env"), join(dir, "notes", "todo.txt"));
  await link(join(dir, "secrets", "key.txt"), join(dir, "readme.txt"));
  await link(join(dir, "app", "main.ts"), join(dir, "notes", "main-copy.ts"));
  const text = '{ "paths": { "deny": ["**/.env", "secrets/**"] } }';
  await writeFile(join(dir, "toolfence.json"), text);
  rules = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const session = () => new Session({ workspace: dir, rules, autoConfirm: true });

describe("other names of denied files", () => {
  test("the walk finds the denied files with other names, and those names", { timeout: 60_000 }, () => {
    const denied = deniedEntries(dir, ["**/.env", "secrets/**"]);
    assert.deepEqual([...denied.keys()].sort(), [join(dir, "app", ".env"), join(dir, "secrets")]);
    const inodes = linkedInodes(denied)!;
    assert.equal(inodes.size, 2);
    assert.deepEqual(otherNames(dir, inodes, denied)!.sort(), [
      join(dir, "notes", "todo.txt"),
      join(dir, "readme.txt"),
    ]);
    const mounts = hiddenMountArgs(dir, ["**/.env", "secrets/**"]);
    for (const alias of ["notes/todo.txt", "readme.txt"]) {
      assert.ok(mounts.covers.join(" ").includes(`/dev/null ${join(dir, alias)}`), mounts.covers.join(" "));
    }
    assert.ok(!mounts.covers.join(" ").includes("main-copy.ts"));
  });

  test(
    "read_file, grep, copy and the folder tools refuse them as they refuse the file",
    { timeout: 60_000 },
    async () => {
      const s = session();
      try {
        for (const path of ["notes/todo.txt", "readme.txt"]) {
          const read = await box.call(s, "read_file", { path });
          assert.equal(read.status, "skipped", `${path}: ${read.error}`);
          assert.equal(read.errorCode, "permission_denied");
          assert.ok(!JSON.stringify(read).includes(SECRET));
          const copied = await box.call(s, "copy", { src: path, dst: `out-${path.replace("/", "-")}` });
          assert.notEqual(copied.status, "success", path);
          assert.ok(!JSON.stringify(copied).includes(SECRET));
        }
        const folder = await box.call(s, "copy", { src: "notes", dst: "notes-copy" });
        assert.notEqual(folder.status, "success", "a folder holding another name of a denied file");
        const grepped = await box.call(s, "grep", { pattern: "SECRET" });
        assert.ok(!JSON.stringify(grepped).includes(SECRET), JSON.stringify(grepped));
        // A file with other names that nothing denies reads as ever.
        const benign = await box.call(s, "read_file", { path: "notes/main-copy.ts" });
        assert.equal(benign.status, "success", benign.error);
        assert.match(String((benign.output as { content: string }).content), /console\.log/);
      } finally {
        await s.close();
      }
    },
  );

  test("inside the sandbox they are hidden as the file is", { timeout: 60_000, skip: !hasBwrap }, async () => {
    const s = session();
    try {
      for (const command of ["cat notes/todo.txt", "cat readme.txt", "grep -rs SECRET . || true", "cat notes/*"]) {
        const result = await box.call(s, "bash", { command });
        assert.ok(!JSON.stringify(result).includes(SECRET), `${command}: ${JSON.stringify(result.output)}`);
      }
      const benign = await box.call(s, "bash", { command: "cat notes/main-copy.ts" });
      assert.equal((benign.output as { stdout: string }).stdout, "console.log('hi');\n");
    } finally {
      await s.close();
    }
  });
});
