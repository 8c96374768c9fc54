// Fault injection: a full disk. A 1 MiB tmpfs is mounted as the workspace (as
// root; elsewhere the test is skipped with the reason), and writes that do not
// fit go through atomicWrite and the write_file tool: each must fail with a
// clear error, leave the original byte for byte, and leave no temp file.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { atomicWrite } from "../../internal/atomic_write.ts";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { writeFileTool } from "../../tools/fs/write_file.ts";

let dir: string;
let skip: string | false = false;
before(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-full-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir], { stdio: "pipe" });
  } catch (error) {
    skip = `cannot mount a small tmpfs here (needs root): ${(error as Error).message.split("\n")[0]}`;
  }
});
after(async () => {
  if (!skip) execFileSync("umount", [dir]);
  await fsp.rm(dir, { recursive: true, force: true });
});

const leftovers = async () => (await fsp.readdir(dir)).filter((name) => name.startsWith(".toolfence-"));

describe("a full disk", () => {
  test("atomicWrite: ENOSPC, the original intact, no temp file", { timeout: 60_000 }, async (t) => {
    if (skip) return t.skip(skip);
    const file = path.join(dir, "notes.txt");
    const original = "original content\n".repeat(1000);
    await fsp.writeFile(file, original);
    await assert.rejects(atomicWrite(file, "x".repeat(2 * 1024 * 1024)), { code: "ENOSPC" });
    assert.equal(await fsp.readFile(file, "utf8"), original);
    assert.deepEqual(await leftovers(), []);
    // The space the failed write took is free again: a write that fits still works.
    await atomicWrite(file, "small\n");
    assert.equal(await fsp.readFile(file, "utf8"), "small\n");
  });

  test(
    "write_file: error no_space naming the file, the original intact, no temp file",
    { timeout: 60_000 },
    async (t) => {
      if (skip) return t.skip(skip);
      const session = new Session({ workspace: dir, autoConfirm: true });
      const box = new ToolBox().register(writeFileTool);
      try {
        const original = "keep me\n".repeat(5000);
        await fsp.writeFile(path.join(dir, "keep.txt"), original);
        const overwrite = await box.call(session, "write_file", { path: "keep.txt", content: "y".repeat(3 << 20) });
        assert.equal(overwrite.status, "error");
        assert.equal(overwrite.errorCode, "no_space");
        assert.match(overwrite.error!, /no space left on the device while writing keep\.txt/);
        assert.equal(await fsp.readFile(path.join(dir, "keep.txt"), "utf8"), original);
        // A new file in a new folder: neither the file nor the folders remain.
        const created = await box.call(session, "write_file", {
          path: "new/dir/big.txt",
          content: "z".repeat(3 << 20),
        });
        assert.equal(created.errorCode, "no_space");
        const names = await fsp.readdir(dir);
        assert.ok(!names.includes("new"), `the folders made for the failed write remain: ${names}`);
        assert.deepEqual(await leftovers(), []);
        console.log(
          `full disk: 3 writes into a 1 MiB tmpfs refused with ENOSPC / no_space, originals intact, no litter`,
        );
      } finally {
        await session.close();
      }
    },
  );
});
