// A folder of the workspace swapped for a link after its path was resolved: what the confined operations answer
// depends on the folder's own names, never on where the link leads. Before, chdir() followed the link and its
// outcome came back as it was: a link to a file was ENOTDIR (the tools' "a part of d/x.txt is not a directory"), a
// link to nothing ENOENT, a link to a folder path_changed naming the folder's real path ("it now leads to
// /srv/tenants/bob/notes"). Over MCP a tenant racing its own folder against a link learned that way whether another
// tenant's file or folder exists, and the real path of any folder of the host.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import {
  createConfined,
  inFolder,
  lstatConfined,
  mkdirsConfined,
  openReadCheckedConfined,
  openReadConfined,
  readdirConfined,
  unlinkConfined,
} from "../../internal/confined_fs.ts";

let root: string;
let W: string;
let outside: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-link-oracle-")));
  W = path.join(root, "W");
  outside = path.join(root, "bob");
  await fsp.mkdir(W);
  await fsp.mkdir(path.join(outside, "notes"), { recursive: true });
  await fsp.writeFile(path.join(outside, "notes", "x.txt"), "BOB\n");
  await fsp.writeFile(path.join(outside, "secret.txt"), "BOB\n");
  // One link per kind of place it leads to: a folder, a file, nothing.
  await fsp.symlink(path.join(outside, "notes"), path.join(W, "to-folder"));
  await fsp.symlink(path.join(outside, "secret.txt"), path.join(W, "to-file"));
  await fsp.symlink(path.join(outside, "nothing"), path.join(W, "to-nothing"));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

// The answer of an operation: its code and its message with the link's own name put as L.
function answer(link: string, fn: () => unknown): string {
  try {
    const value = fn();
    if (typeof value === "number") fs.closeSync(value);
    return `returned ${value === undefined ? "undefined" : typeof value}`;
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return `${code}: ${message.replaceAll(link, "L")}`;
  }
}

const OPERATIONS: [string, (folder: string) => unknown][] = [
  ["inFolder", (folder) => inFolder(folder, () => "entered")],
  ["lstatConfined", (folder) => lstatConfined(path.join(folder, "x.txt"))],
  ["openReadConfined", (folder) => openReadConfined(path.join(folder, "x.txt"))],
  ["openReadCheckedConfined", (folder) => openReadCheckedConfined(path.join(folder, "x.txt"), () => {})],
  ["readdirConfined", (folder) => readdirConfined(folder)],
  ["createConfined", (folder) => createConfined(path.join(folder, "new.txt")).fd],
  ["unlinkConfined", (folder) => unlinkConfined(path.join(folder, "x.txt"))],
  ["mkdirsConfined", (folder) => mkdirsConfined(path.join(folder, "m"), [W])],
];

describe("a folder that is a link now", () => {
  test("every confined operation answers alike wherever the link leads, naming nothing outside", {
    timeout: 30_000,
  }, async () => {
    const home = process.cwd();
    for (const [name, operation] of OPERATIONS) {
      const answers = ["to-folder", "to-file", "to-nothing"].map((link) =>
        answer(link, () => operation(path.join(W, link)))
      );
      assert.ok(answers.every((a) => a === answers[0]), `${name} answered by where the link leads: ${answers}`);
      assert.match(answers[0], /^path_changed: /, name);
      assert.ok(!answers[0].includes(outside), `${name} named the outside: ${answers[0]}`);
      assert.equal(process.cwd(), home, `${name} left the working folder elsewhere`);
    }
    // Nothing was made, nor removed, where the links lead.
    assert.deepEqual((await fsp.readdir(outside)).sort(), ["notes", "secret.txt"]);
    assert.deepEqual(await fsp.readdir(path.join(outside, "notes")), ["x.txt"]);
  });

  test(
    "a folder of the workspace that is missing, or a file, is still said as it is",
    { timeout: 30_000 },
    async () => {
      await fsp.writeFile(path.join(W, "plain.txt"), "x");
      assert.equal((answer("", () => inFolder(path.join(W, "gone"), () => 1))).split(":")[0], "ENOENT");
      assert.equal(lstatConfined(path.join(W, "gone", "x.txt")), undefined);
      assert.equal((answer("", () => inFolder(path.join(W, "plain.txt"), () => 1))).split(":")[0], "ENOTDIR");
      assert.equal(lstatConfined(path.join(W, "plain.txt", "x.txt")), undefined);
      assert.equal(inFolder(W, () => "entered"), "entered");
    },
  );
});
