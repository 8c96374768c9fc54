// bash's cwd, at the moment a racing command aims at, held still: the cwd was resolved to race/sub, and race is a
// link to a place outside now. Before, the check of the cwd was a stat by its path, which followed the link: where
// it led to a folder the command ran, to a file it answered "is not a folder", to nothing "does not exist", which told
// a tenant racing a folder of its own what lay at another tenant's path.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, realpath, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";

const box = new ToolBox().withDefaults("cmd");

let base: string;
before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "toolfence-cwd-race-")));
  await mkdir(join(base, "ws", "race", "sub"), { recursive: true });
  await mkdir(join(base, "out", "folder", "sub"), { recursive: true });
  await mkdir(join(base, "out", "file"), { recursive: true });
  await writeFile(join(base, "out", "file", "sub"), "a file outside\n");
});
after(() => rm(base, { recursive: true, force: true }));

describe("bash's cwd whose folder is a link after its resolution", () => {
  test("answers alike wherever the link leads", { timeout: 60_000 }, async () => {
    const ws = join(base, "ws");
    const session = new Session({ workspace: ws, autoConfirm: true, sandbox: "off" });
    try {
      const policy = session.policy;
      const resolve = policy.resolveTarget.bind(policy);
      const answers: string[] = [];
      for (const leads of ["folder", "file", "nothing"]) {
        // Once: the swap follows the resolution of the cwd.
        policy.resolveTarget = async (named, options) => {
          policy.resolveTarget = resolve;
          const target = await resolve(named, options);
          await rename(join(ws, "race"), join(ws, "race.real"));
          await symlink(join(base, "out", leads), join(ws, "race"));
          return target;
        };
        const result = await box.call(session, "bash", { command: "pwd", cwd: "race/sub" });
        answers.push(`${result.errorCode}: ${result.error}`);
        policy.resolveTarget = resolve;
        await unlink(join(ws, "race"));
        await rename(join(ws, "race.real"), join(ws, "race"));
      }
      assert.ok(answers.every((a) => a === answers[0]), `answered by where the link leads: ${answers.join(" | ")}`);
      assert.match(answers[0], /^path_changed: /, answers[0]);
      assert.ok(!answers[0].includes(join(base, "out")), answers[0]);
      // The cwd as it is still runs there.
      const ran = await box.call(session, "bash", { command: "pwd", cwd: "race/sub" });
      assert.equal(ran.status, "success", JSON.stringify(ran));
      assert.match(JSON.stringify(ran.output), /race\/sub/);
    } finally {
      await session.close();
    }
  });
});
