// `toolfence call --history DIR --checkpoint` and `--restore ID`: a checkpoint
// taken by one process and restored by a later one, exact bytes and modes.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO, DENO_PROCESS_ONLY } from "./_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(ROOT, "main.ts");

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(DENO, ["run", "-A", MAIN, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => stdout += chunk);
    child.stderr.on("data", (chunk) => stderr += chunk);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

let root: string;
describe("checkpoints across main.ts processes", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), "toolfence-cli-history-")));
  });
  after(async () => await rm(root, { recursive: true, force: true }));

  test("a checkpoint taken by one call is restored by a later process", { timeout: 60_000 }, async () => {
    const workspace = join(root, "W");
    const history = join(root, "history");
    await rm(workspace, { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(workspace));
    await writeFile(join(workspace, "a.txt"), "one\n");
    await chmod(join(workspace, "a.txt"), 0o640);
    const common = ["--workspace", workspace, "--history", history, "--auto-confirm", "--sandbox", "off"];
    const first = await run(["call", ...common, "--checkpoint", "write_file", '{"path":"a.txt","content":"two\\n"}']);
    assert.equal(first.code, 0, first.stderr);
    const id = /checkpoint (cp-[0-9a-f-]+)/.exec(first.stderr)?.[1];
    assert.ok(id, first.stderr);
    const second = await run(["call", ...common, "delete", '{"path":"a.txt"}']);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(await readdir(workspace), []);
    const restored = await run(["call", ...common, "--restore", id]);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(JSON.parse(restored.stdout).reverted.length, 2);
    assert.equal(await readFile(join(workspace, "a.txt"), "utf8"), "one\n");
    assert.equal((await stat(join(workspace, "a.txt"))).mode & 0o777, 0o640);
    // A file changed by hand since: the restore refuses and changes nothing.
    const again = await run(["call", ...common, "--checkpoint", "write_file", '{"path":"a.txt","content":"three\\n"}']);
    const id2 = /checkpoint (cp-[0-9a-f-]+)/.exec(again.stderr)?.[1]!;
    await writeFile(join(workspace, "a.txt"), "by hand\n");
    const refused = await run(["call", ...common, "--restore", id2]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /a\.txt was changed since/);
    assert.equal(await readFile(join(workspace, "a.txt"), "utf8"), "by hand\n");
  });

  test("usage: --restore without --history, and a history inside the workspace", { timeout: 60_000 }, async () => {
    assert.equal((await run(["call", "--restore", "cp-x"])).code, 2);
    const inside = await run(["call", "--workspace", root, "--history", join(root, "h"), "--restore", "cp-x"]);
    assert.equal(inside.code, 2);
    assert.match(inside.stderr, /inside/);
  });

  test(
    "a refused history folder leaves no debris: nested, through a link, or already there",
    { timeout: 60_000 },
    async () => {
      const workspace = join(root, "debris");
      await import("node:fs/promises").then((fs) => fs.mkdir(join(workspace, "kept"), { recursive: true }));
      await import("node:fs/promises").then((fs) => fs.symlink(workspace, join(root, "link-to-debris")));
      const before = await readdir(workspace, { recursive: true });
      for (
        const history of [join(workspace, "h"), join(workspace, "a", "b", "c"), join(root, "link-to-debris", "x", "y")]
      ) {
        const refused = await run(["call", "--workspace", workspace, "--history", history, "datetime"]);
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(refused.stderr, /inside/);
        assert.deepEqual(await readdir(workspace, { recursive: true }), before, history);
      }
      // A folder that was there already stays, refused.
      const kept = await run(["call", "--workspace", workspace, "--history", join(workspace, "kept"), "datetime"]);
      assert.equal(kept.code, 2);
      assert.deepEqual(await readdir(workspace, { recursive: true }), before);
    },
  );
});
