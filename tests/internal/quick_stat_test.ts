import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { quickLstat } from "../../internal/quick_stat.ts";

const FIELDS = [
  "dev",
  "ino",
  "mode",
  "nlink",
  "uid",
  "gid",
  "rdev",
  "size",
  "blksize",
  "blocks",
  "atimeMs",
  "mtimeMs",
  "ctimeMs",
  "birthtimeMs",
] as const;
const TYPES = [
  "isFile",
  "isDirectory",
  "isSymbolicLink",
  "isFIFO",
  "isSocket",
  "isCharacterDevice",
  "isBlockDevice",
] as const;

function withFolder(fn: (dir: string) => void): void {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolfence-quick-stat-")));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function assertSame(p: string): void {
  const quick = quickLstat(p);
  const node = fs.lstatSync(p);
  for (const field of FIELDS) assert.equal(quick[field], node[field], `${field} of ${p}`);
  for (const type of TYPES) assert.equal(quick[type](), node[type](), `${type}() of ${p}`);
  for (const time of ["atime", "mtime", "ctime", "birthtime"] as const) {
    assert.equal(quick[time].getTime(), node[time].getTime(), `${time} of ${p}`);
  }
}

test(
  "quickLstat gives what fs.lstatSync gives: files, folders, links (not followed), FIFOs",
  { timeout: 30_000 },
  () => {
    withFolder((dir) => {
      fs.writeFileSync(path.join(dir, "file.txt"), "some text\n");
      fs.mkdirSync(path.join(dir, "folder"));
      fs.symlinkSync("file.txt", path.join(dir, "link"));
      fs.symlinkSync("missing", path.join(dir, "dangling"));
      for (const name of ["file.txt", "folder", "link", "dangling"]) assertSame(path.join(dir, name));
      assert.ok(quickLstat(path.join(dir, "link")).isSymbolicLink());
      assertSame(dir);
      assertSame("/dev/null");
      let fifo = false;
      try {
        execFileSync("mkfifo", [path.join(dir, "fifo")]);
        fifo = true;
      } catch {
        // no mkfifo here: the other types still count
      }
      if (fifo) {
        assertSame(path.join(dir, "fifo"));
        assert.ok(quickLstat(path.join(dir, "fifo")).isFIFO());
      }
    });
  },
);

test("quickLstat throws fs.lstatSync's errors, codes and messages", { timeout: 30_000 }, () => {
  withFolder((dir) => {
    fs.writeFileSync(path.join(dir, "file.txt"), "x");
    for (const missing of [path.join(dir, "nothing"), path.join(dir, "file.txt", "below")]) {
      let expected: NodeJS.ErrnoException | undefined;
      try {
        fs.lstatSync(missing);
      } catch (error) {
        expected = error as NodeJS.ErrnoException;
      }
      assert.ok(expected);
      assert.throws(() => quickLstat(missing), (error: NodeJS.ErrnoException) => {
        assert.equal(error.code, expected!.code);
        assert.equal(error.message, expected!.message);
        assert.equal(error.constructor, expected!.constructor);
        return true;
      });
    }
  });
});
