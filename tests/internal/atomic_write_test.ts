import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { atomicWrite } from "../../internal/atomic_write.ts";
import { exists, type Layout, makeLayout } from "../policy/_fixtures.ts";

let L: Layout;
beforeEach(async () => {
  L = await makeLayout();
});
afterEach(() => L.cleanup());

async function leftovers(folder: string): Promise<string[]> {
  return (await fsp.readdir(folder)).filter((name) => name.startsWith(".toolfence-"));
}

describe("atomicWrite", () => {
  test("creates a new file from text or bytes", { timeout: 60_000 }, async () => {
    const file = path.join(L.workdir, "new.txt");
    await atomicWrite(file, "hello\n");
    assert.equal(await fsp.readFile(file, "utf8"), "hello\n");
    await atomicWrite(file, new Uint8Array([0, 1, 2, 255]));
    assert.deepEqual([...await fsp.readFile(file)], [0, 1, 2, 255]);
    assert.deepEqual(await leftovers(L.workdir), []);
  });

  test("keeps the mode of the file it replaces, exactly (not masked by the umask)", { timeout: 60_000 }, async () => {
    const file = path.join(L.workdir, "script.sh");
    await fsp.writeFile(file, "old");
    await fsp.chmod(file, 0o754);
    await atomicWrite(file, "new");
    assert.equal((await fsp.stat(file)).mode & 0o7777, 0o754);
    await fsp.chmod(file, 0o777);
    await atomicWrite(file, "newer");
    assert.equal((await fsp.stat(file)).mode & 0o7777, 0o777);
  });

  test("an explicit mode wins", { timeout: 60_000 }, async () => {
    const file = path.join(L.workdir, "secret.json");
    await atomicWrite(file, "{}", { mode: 0o600 });
    assert.equal((await fsp.stat(file)).mode & 0o777, 0o600);
  });

  test(
    "replaces the inode: a reader holding the old file still sees the old content",
    { timeout: 60_000 },
    async () => {
      const file = path.join(L.workdir, "file.txt");
      const before = await fsp.stat(file);
      const reader = await fsp.open(file, "r");
      await atomicWrite(file, "replaced\n");
      assert.equal(await reader.readFile("utf8"), "inside\n");
      await reader.close();
      assert.notEqual((await fsp.stat(file)).ino, before.ino);
      assert.equal(await fsp.readFile(file, "utf8"), "replaced\n");
    },
  );

  test("a symlink at the path is replaced, never written through", { timeout: 60_000 }, async () => {
    const link = path.join(L.workdir, "link");
    await fsp.symlink(path.join(L.outside, "secret.txt"), link);
    await atomicWrite(link, "mine\n");
    assert.equal((await fsp.lstat(link)).isSymbolicLink(), false);
    assert.equal(await fsp.readFile(path.join(L.outside, "secret.txt"), "utf8"), "secret outside\n");
  });

  test("a failed write leaves the target untouched and no temp file behind", { timeout: 60_000 }, async () => {
    const folderTarget = path.join(L.workdir, "sub");
    await assert.rejects(atomicWrite(folderTarget, "x"));
    assert.ok((await fsp.stat(folderTarget)).isDirectory());
    assert.deepEqual(await leftovers(L.workdir), []);
    await assert.rejects(atomicWrite(path.join(L.workdir, "missing", "x.txt"), "x"), { code: "ENOENT" });
  });

  test("works for the longest legal file name", { timeout: 60_000 }, async () => {
    const file = path.join(L.workdir, "n".repeat(255));
    await atomicWrite(file, "x");
    assert.equal(await fsp.readFile(file, "utf8"), "x");
  });

  test(
    "a folder swapped for a symlink during the write is noticed; nothing lands outside",
    { timeout: 60_000 },
    async () => {
      const folder = path.join(L.workdir, "racy");
      await fsp.mkdir(folder);
      const pending = atomicWrite(path.join(folder, "big.bin"), new Uint8Array(64 * 1024 * 1024));
      // Swap as soon as the temp file exists, while the data is still being written.
      while ((await leftovers(folder)).length === 0) await new Promise((r) => setImmediate(r));
      await fsp.rename(folder, folder + "-moved");
      await fsp.symlink(L.outside, folder);
      const error = await pending.then(() => undefined, (e) => e);
      assert.equal(error?.code, "path_changed");
      assert.equal(await exists(path.join(L.outside, "big.bin")), false);
    },
  );

  test("a folder that is not its real path is refused before anything is written", { timeout: 60_000 }, async () => {
    await fsp.symlink(L.outside, path.join(L.workdir, "dirlink"));
    const error = await atomicWrite(path.join(L.workdir, "dirlink", "x.txt"), "x").then(() => undefined, (e) => e);
    assert.equal(error?.code, "path_changed");
    assert.equal(await exists(path.join(L.outside, "x.txt")), false);
    assert.deepEqual(await leftovers(L.outside), []);
  });
});
