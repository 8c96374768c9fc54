import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { readProgramFile, removeProgramFolder } from "../../policy/program_folder.ts";
import { exited } from "../_exited.ts";
import { whileSwappedForLink } from "../_link_swapper.ts";

const ROOT = path.resolve(import.meta.dirname!, "../..");

describe("removeProgramFolder", () => {
  test("removes the folder and everything in it, links as links; a missing one is no error", {
    timeout: 30_000,
  }, async () => {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), "tf-program-folder-"));
    try {
      const outside = path.join(root, "outside");
      await fsp.mkdir(outside);
      await fsp.writeFile(path.join(outside, "keep.txt"), "keep\n");
      const dir = path.join(root, "private");
      await fsp.mkdir(path.join(dir, "profile", "Default"), { recursive: true });
      await fsp.writeFile(path.join(dir, "profile", "Default", "a"), "a");
      await fsp.symlink(outside, path.join(dir, "profile", "link"));
      await removeProgramFolder(dir);
      await assert.rejects(fsp.lstat(dir), { code: "ENOENT" });
      assert.deepEqual(await fsp.readdir(outside), ["keep.txt"]);
      await removeProgramFolder(dir);
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });

  test("a folder written to while it goes is removed once the writing stops (a program's children outlive it)", {
    timeout: 60_000,
  }, async () => {
    // A browser's renderers may write in its profile for a moment after its main process ended: a folder emptied
    // and written to again was not empty at its rmdir, and the browser's folder stayed after the session ended.
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), "tf-program-folder-"));
    try {
      for (let round = 0; round < 5; round++) {
        const dir = path.join(root, `private-${round}`);
        await fsp.mkdir(dir);
        for (let i = 0; i < 200; i++) await fsp.writeFile(path.join(dir, `old-${i}`), "x");
        // Files made one after another for about a second, as long as the folder is there.
        const writer = spawn("bash", [
          "-c",
          'for i in $(seq 1 500); do : > "$0/new-$i" 2>/dev/null || exit 0; sleep 0.002; done',
          dir,
        ], {
          stdio: "ignore",
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
        await removeProgramFolder(dir);
        await assert.rejects(fsp.lstat(dir), { code: "ENOENT" }, `round ${round}`);
        await exited(writer);
      }
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });

  test("a folder whose entries another process removes while it goes is removed (a program deleting its own files)", {
    timeout: 60_000,
  }, async () => {
    // A browser removes its own lock and temporary files as it exits: an entry listed and then gone before its unlink
    // (ENOENT) failed the removal, and the browser's folder stayed after the session ended.
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), "tf-program-folder-"));
    try {
      for (let round = 0; round < 5; round++) {
        const dir = path.join(root, `private-${round}`);
        for (const sub of ["a", "b", "c"]) {
          await fsp.mkdir(path.join(dir, sub), { recursive: true });
          for (let i = 0; i < 300; i++) await fsp.writeFile(path.join(dir, sub, `old-${i}`), "x");
        }
        for (let i = 0; i < 300; i++) await fsp.writeFile(path.join(dir, `old-${i}`), "x");
        const remover = spawn("bash", ["-c", 'rm -f "$0"/old-* "$0"/*/old-*', dir], {
          stdio: "ignore",
        });
        await removeProgramFolder(dir);
        await assert.rejects(fsp.lstat(dir), { code: "ENOENT" }, `round ${round}`);
        await exited(remover);
      }
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });

  test("a folder in it swapped for a link while it goes never takes a file outside with it", {
    timeout: 180_000,
  }, async () => {
    // The browser's private folder is written by the sandboxed browser, which could swap a folder there for a link
    // (again and again) while the folder is removed; Node's fs.rm(dir, { recursive: true }) lists and unlinks by
    // path and follows it (in 12 rounds it deleted outside files under Node 22 and 24).
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), "tf-program-folder-"));
    try {
      const outside = path.join(root, "outside");
      await fsp.mkdir(outside);
      const names = Array.from({ length: 200 }, (_, i) => `keep-${i}.txt`);
      for (const name of names) await fsp.writeFile(path.join(outside, name), "keep\n");
      for (let round = 0; round < 12; round++) {
        const dir = path.join(root, `private-${round}`);
        const sub = path.join(dir, "sub");
        await fsp.mkdir(sub, { recursive: true });
        for (const name of names) await fsp.writeFile(path.join(sub, name), "private\n");
        await whileSwappedForLink(dir, "sub", outside, () => removeProgramFolder(dir).catch(() => {}), {
          relink: true,
        });
        await fsp.rm(dir, { recursive: true, force: true });
        assert.deepEqual((await fsp.readdir(outside)).sort(), [...names].sort(), `round ${round}`);
      }
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });

  test("product code removes no folder with fs.rm's recursion, which follows a folder swapped for a link", {
    timeout: 30_000,
    skip: "Deno" in globalThis ? false : "reads the source tree (the npm build holds only the built files)",
  }, async () => {
    // The only one left: the egress proxy's socket folder, which no sandboxed process can write (its socket is
    // bound read-only, by itself).
    const allowed = new Set(["tools/cmd/_egress.ts"]);
    const found: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      for (const entry of await fsp.readdir(path.join(ROOT, rel), { withFileTypes: true })) {
        const child = path.posix.join(rel, entry.name);
        if (entry.isDirectory()) await walk(child);
        else if (entry.name.endsWith(".ts") && !allowed.has(child)) {
          const text = (await fsp.readFile(path.join(ROOT, child), "utf8")).split("\n")
            .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join("\n");
          if (/\b(rm|rmSync|cp|cpSync)\([^)]*recursive:\s*true/.test(text)) found.push(child);
        }
      }
    };
    for (const folder of ["core", "internal", "policy", "tools", "adapters", "cli"]) await walk(folder);
    assert.deepEqual(found, []);
  });
});

describe("readProgramFile", () => {
  test("reads a regular file; a link at the file or above it, a FIFO and a file past the cap are refused", {
    timeout: 30_000,
  }, async () => {
    // The browser's downloads are written by the sandboxed browser, which could leave a link to a file only the
    // server may read where the download was; the server read the download by path (fs.readFile follows it).
    const root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-program-file-")));
    try {
      const secret = path.join(root, "secret");
      await fsp.writeFile(secret, "server's secret\n");
      const dir = path.join(root, "private");
      await fsp.mkdir(path.join(dir, "downloads"), { recursive: true });
      const download = path.join(dir, "downloads", "a");
      await fsp.writeFile(download, "downloaded\n");
      assert.equal(new TextDecoder().decode(await readProgramFile(download, 1 << 20)), "downloaded\n");
      assert.equal((await readProgramFile(download, 11)).length, 11);
      await assert.rejects(readProgramFile(download, 10), { code: "file_too_large" });

      await fsp.rm(download);
      await fsp.symlink(secret, download);
      await assert.rejects(
        readProgramFile(download, 1 << 20),
        (error: NodeJS.ErrnoException) => error.code === "ELOOP",
      );

      // The folder above swapped for a link to a folder holding a file of the same name.
      await fsp.mkdir(path.join(root, "elsewhere"));
      await fsp.writeFile(path.join(root, "elsewhere", "a"), "server's secret\n");
      await fsp.rename(path.join(dir, "downloads"), path.join(dir, "gone"));
      await fsp.symlink(path.join(root, "elsewhere"), path.join(dir, "downloads"));
      await assert.rejects(readProgramFile(download, 1 << 20), { code: "path_changed" });

      const fifo = path.join(dir, "gone", "fifo");
      execFileSync("mkfifo", [fifo]);
      await assert.rejects(readProgramFile(fifo, 1 << 20), { code: "not_a_file" });
    } finally {
      await fsp.rm(root, { recursive: true, force: true });
    }
  });

  test("a file that grows while it is read stops at the cap", { timeout: 30_000 }, async () => {
    const root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "tf-program-file-")));
    const file = path.join(root, "growing");
    const cap = 4 << 20;
    // At the cap less a little when it is looked at, and past it soon after.
    await fsp.writeFile(file, new Uint8Array(cap - 4096));
    const writer = spawn("sh", ["-c", `while :; do printf '%01024d' 0; done >> '${file}'`], { stdio: "ignore" });
    try {
      const outcome = await readProgramFile(file, cap).then((bytes) => bytes.length, (error) => error.code);
      assert.ok(outcome === "file_too_large" || (typeof outcome === "number" && outcome <= cap), String(outcome));
    } finally {
      writer.kill("SIGKILL");
      await exited(writer).catch(() => {});
      await fsp.rm(root, { recursive: true, force: true });
    }
  });
});
