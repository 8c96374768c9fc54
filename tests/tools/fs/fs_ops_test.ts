import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ChoiceRequest } from "../../../core/host.ts";
import type { ToolResult } from "../../../core/result.ts";
import { Session } from "../../../policy/session.ts";
import { callbackHost, denyAllHost } from "../../../policy/hosts.ts";
import { fsTools } from "../../../tools/fs/mod.ts";
import { type Layout, makeLayout, ok, unchanged } from "./_helpers.ts";
import { IS_DENO } from "../../_runtime.ts";

let l: Layout;
const asked: string[] = [];
const at = (...parts: string[]) => path.join(l.workdir, ...parts);
const sha = (text: string) => createHash("sha256").update(text).digest("hex");

// A host where a person answers `answer` to every write question.
function person(answer: "grant" | "once" | "deny") {
  return callbackHost({
    choose: <T extends string>(request: ChoiceRequest<T>) => {
      asked.push(request.message);
      return answer as T;
    },
  });
}

async function withHost(host: ReturnType<typeof person> | ReturnType<typeof denyAllHost>) {
  await l.cleanup();
  l = await makeLayout(fsTools(), { host, autoConfirm: false });
}

beforeEach(async () => {
  asked.length = 0;
  l = await makeLayout(fsTools());
});
afterEach(() => l.cleanup());

describe("write_file", () => {
  test("creates a file and its parent folders without asking", { timeout: 60_000 }, async () => {
    await withHost(denyAllHost());
    const out = ok(await l.call("write_file", { path: "a/b/c.txt", content: "héllo\n" }));
    assert.deepEqual(out, { path: at("a/b/c.txt"), created: true, bytes: 7, sha256: sha("héllo\n") });
    assert.equal(await fsp.readFile(at("a/b/c.txt"), "utf8"), "héllo\n");
  });

  test(
    "overwriting asks; a denial changes nothing, a person's grant covers later writes",
    { timeout: 60_000 },
    async () => {
      await withHost(denyAllHost());
      const denied = await unchanged(l.root, () => l.call("write_file", { path: "inside.txt", content: "new" }));
      assert.equal(denied.status, "skipped");
      assert.equal(denied.errorCode, "permission_denied");
      await withHost(person("grant"));
      ok(await l.call("write_file", { path: "inside.txt", content: "one" }));
      ok(await l.call("write_file", { path: "inside.txt", content: "two" }));
      assert.equal(asked.length, 1, "the grant answered the second write");
      assert.equal(await fsp.readFile(at("inside.txt"), "utf8"), "two");
      await withHost(person("deny"));
      const no = await unchanged(l.root, () => l.call("write_file", { path: "inside.txt", content: "x" }));
      assert.equal(no.errorCode, "permission_denied");
    },
  );

  test("keeps the mode of the file it replaces", { timeout: 60_000 }, async () => {
    await fsp.chmod(at("inside.txt"), 0o751);
    ok(await l.call("write_file", { path: "inside.txt", content: "x" }));
    assert.equal((await fsp.stat(at("inside.txt"))).mode & 0o777, 0o751);
  });

  test("expected_sha256: a stale hash changes nothing, the current one writes", { timeout: 60_000 }, async () => {
    const stale = await unchanged(
      l.root,
      () => l.call("write_file", { path: "inside.txt", content: "x", expected_sha256: sha("other") }),
    );
    assert.equal(stale.errorCode, "hash_conflict");
    assert.match(stale.error!, /has changed/);
    const missing = await l.call("write_file", { path: "new.txt", content: "x", expected_sha256: sha("x") });
    assert.equal(missing.errorCode, "hash_conflict");
    assert.match(missing.error!, /does not exist/);
    const bad = await l.call("write_file", { path: "inside.txt", content: "x", expected_sha256: "abc" });
    assert.equal(bad.errorCode, "invalid_arguments");
    ok(
      await l.call("write_file", { path: "inside.txt", content: "x", expected_sha256: sha("inside\n").toUpperCase() }),
    );
    assert.equal(await fsp.readFile(at("inside.txt"), "utf8"), "x");
  });

  test("a folder or a FIFO at the path is refused and left alone", { timeout: 60_000 }, async () => {
    const dir = await unchanged(l.root, () => l.call("write_file", { path: "sub", content: "x" }));
    assert.equal(dir.errorCode, "is_directory");
    execFileSync("mkfifo", [at("pipe")]);
    const fifo = await unchanged(l.root, () => l.call("write_file", { path: "pipe", content: "x" }));
    assert.equal(fifo.errorCode, "not_regular_file");
    const under = await unchanged(l.root, () => l.call("write_file", { path: "inside.txt/x", content: "x" }));
    assert.notEqual(under.status, "success");
  });

  test("writes through a symlink inside the workspace land on its target", { timeout: 60_000 }, async () => {
    ok(await l.call("write_file", { path: "link-in", content: "via link\n" }));
    assert.ok((await fsp.lstat(at("link-in"))).isSymbolicLink());
    assert.equal(await fsp.readFile(at("inside.txt"), "utf8"), "via link\n");
  });
});

describe("temp_dir", () => {
  test("is created on first use, and writes in it never ask", { timeout: 60_000 }, async () => {
    await withHost(denyAllHost());
    const { path: temp } = ok(await l.call("temp_dir", {})) as { path: string };
    assert.ok(fs.statSync(temp).isDirectory());
    ok(await l.call("write_file", { path: `${temp}/scratch.txt`, content: "1" }));
    ok(await l.call("write_file", { path: `${temp}/scratch.txt`, content: "2" }));
    ok(await l.call("move", { src: `${temp}/scratch.txt`, dst: `${temp}/moved.txt` }));
    ok(await l.call("delete", { path: `${temp}/moved.txt` }));
    assert.equal((ok(await l.call("temp_dir", {})) as { path: string }).path, temp);
  });
});

describe("mkdir", () => {
  test("creates nested folders; an existing folder is fine; a file is not", { timeout: 60_000 }, async () => {
    assert.deepEqual(ok(await l.call("mkdir", { path: "x/y/z" })), { path: at("x/y/z"), created: true });
    assert.deepEqual(ok(await l.call("mkdir", { path: "x/y" })), { path: at("x/y"), created: false });
    const file = await unchanged(l.root, () => l.call("mkdir", { path: "inside.txt" }));
    assert.equal(file.errorCode, "not_directory");
  });
});

describe("delete", () => {
  test("a file asks; denial leaves it", { timeout: 60_000 }, async () => {
    await withHost(denyAllHost());
    const result = await unchanged(l.root, () => l.call("delete", { path: "inside.txt" }));
    assert.equal(result.errorCode, "permission_denied");
  });

  test("a folder that is not empty needs recursive, then goes with all its entries", { timeout: 60_000 }, async () => {
    const refused = await unchanged(l.root, () => l.call("delete", { path: "sub" }));
    assert.equal(refused.errorCode, "directory_not_empty");
    await fsp.mkdir(at("sub", "inner"));
    await fsp.symlink(path.join(l.outside, "dir"), at("sub", "inner", "out"));
    const out = ok(await l.call("delete", { path: "sub", recursive: true }));
    assert.equal(out.deleted, "directory");
    assert.equal(out.entries, 3);
    assert.equal(fs.existsSync(at("sub")), false);
    assert.equal(fs.existsSync(path.join(l.outside, "dir", "s.txt")), true, "links inside are not followed");
    ok(await l.call("mkdir", { path: "empty" }));
    assert.equal(ok(await l.call("delete", { path: "empty" })).deleted, "directory");
  });

  test(
    "a real `deno run` with only --allow-read and --allow-write for the workspace deletes a folder and lives",
    { timeout: 60_000, skip: IS_DENO ? false : "needs deno" },
    async () => {
      await fsp.mkdir(at("sub", "inner"));
      await fsp.writeFile(at("sub", "inner", "x.txt"), "x\n");
      const probe = fileURLToPath(new URL("./_delete_probe.ts", import.meta.url));
      const flags = [`--allow-read=${l.workdir}`, `--allow-write=${l.workdir}`];
      const payload = JSON.stringify({ workdir: l.workdir, args: { path: "sub", recursive: true } });
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          "deno",
          ["run", "--no-prompt", ...flags, probe, payload],
          { timeout: 60_000 },
          (error, out, stderr) => error ? reject(new Error(`the probe died: ${stderr}`)) : resolve(out),
        );
      });
      const result = JSON.parse(stdout) as ToolResult;
      assert.equal(result.status, "success", result.error);
      assert.deepEqual(result.output, { path: at("sub"), deleted: "directory", entries: 3 });
      assert.equal(fs.existsSync(at("sub")), false);
    },
  );

  test(
    "a deletion the operating system stops halfway says what it deleted and what remains",
    { timeout: 60_000 },
    async (t) => {
      await fsp.mkdir(at("sub", "locked"));
      await fsp.writeFile(at("sub", "locked", "kept.txt"), "kept\n");
      for (let i = 0; i < 20; i++) await fsp.writeFile(at("sub", `f${i}.txt`), `${i}\n`);
      // An immutable folder: not even root may delete what is in it.
      try {
        execFileSync("chattr", ["+i", at("sub", "locked")], { stdio: "ignore" });
      } catch {
        t.skip("needs chattr +i (root, and a file system that supports it)");
        return;
      }
      try {
        const result = await l.call("delete", { path: "sub", recursive: true });
        assert.equal(result.errorCode, "os_permission_denied");
        const remaining = fs.readdirSync(at("sub"), { recursive: true }).length;
        // Entries in readdir order: the locked folder may come first, and then nothing went.
        if (remaining === 23) assert.doesNotMatch(result.error!, /were deleted/);
        else {assert.match(
            result.error!,
            new RegExp(`; ${23 - remaining} of its 23 entries were deleted, ${remaining} remain`),
          );}
        assert.ok(fs.existsSync(at("sub", "locked", "kept.txt")));
      } finally {
        execFileSync("chattr", ["-i", at("sub", "locked")]);
      }
    },
  );

  test("the workspace itself and missing paths are refused", { timeout: 60_000 }, async () => {
    const root = await unchanged(l.root, () => l.call("delete", { path: ".", recursive: true }));
    assert.equal(root.errorCode, "permission_denied");
    assert.match(root.error!, /root of the workspace/);
    assert.equal((await l.call("delete", { path: "nope.txt" })).errorCode, "not_found");
  });
});

describe("move", () => {
  test("renames, moves into an existing folder, and creates missing parents", { timeout: 60_000 }, async () => {
    const renamed = ok(await l.call("move", { src: "inside.txt", dst: "renamed.txt" }));
    assert.deepEqual(renamed, { from: at("inside.txt"), to: at("renamed.txt"), type: "file", replaced: false });
    ok(await l.call("move", { src: "renamed.txt", dst: "sub" }));
    assert.equal(await fsp.readFile(at("sub", "renamed.txt"), "utf8"), "inside\n");
    ok(await l.call("move", { src: "sub", dst: "deeper/still/sub2" }));
    assert.ok(fs.existsSync(at("deeper/still/sub2/deep.txt")));
  });

  test("replacing a file asks; refusals and impossible moves change nothing", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("other.txt"), "other\n");
    await withHost(person("deny"));
    await fsp.writeFile(at("other.txt"), "other\n");
    const denied = await unchanged(l.root, () => l.call("move", { src: "inside.txt", dst: "other.txt" }));
    assert.equal(denied.errorCode, "permission_denied");
    await fsp.mkdir(at("sub", "nested"));
    const intoItself = await unchanged(l.root, () => l.call("move", { src: "sub", dst: "sub/nested" }));
    assert.equal(intoItself.errorCode, "invalid_destination");
    await fsp.mkdir(at("box"));
    await fsp.mkdir(at("box", "sub"));
    const ontoFolder = await unchanged(l.root, () => l.call("move", { src: "sub", dst: "box" }));
    assert.equal(ontoFolder.errorCode, "already_exists");
    const missing = await unchanged(l.root, () => l.call("move", { src: "ghost", dst: "x" }));
    assert.equal(missing.errorCode, "not_found");
    const ontoLink = await unchanged(l.root, () => l.call("move", { src: "inside.txt", dst: "link-in" }));
    assert.equal(ontoLink.errorCode, "invalid_destination");
  });

  test("a person's 'once' replaces the file", { timeout: 60_000 }, async () => {
    await withHost(person("once"));
    await fsp.writeFile(at("other.txt"), "other\n");
    const out = ok(await l.call("move", { src: "inside.txt", dst: "other.txt" }));
    assert.equal(out.replaced, true);
    assert.equal(await fsp.readFile(at("other.txt"), "utf8"), "inside\n");
    assert.equal(asked.length, 2, "moving the source away and replacing the target both ask");
  });

  test("moves across file systems (the temp dir on another device)", { timeout: 60_000 }, async (t) => {
    const shm = "/dev/shm";
    if (!fs.existsSync(shm) || fs.statSync(shm).dev === fs.statSync(l.workdir).dev) {
      t.skip("needs /dev/shm on a different device than the temp folder");
      return;
    }
    const ws = await fsp.mkdtemp(path.join(shm, "toolfence-ws-"));
    const session = new Session({ workspace: ws, autoConfirm: true });
    try {
      const { path: temp } = ok(await l.box.call(session, "temp_dir", {})) as { path: string };
      await fsp.mkdir(path.join(temp, "tree"));
      await fsp.writeFile(path.join(temp, "tree", "f.txt"), "across\n");
      await fsp.symlink("f.txt", path.join(temp, "tree", "l"));
      ok(await l.box.call(session, "move", { src: path.join(temp, "tree"), dst: "tree" }));
      assert.equal(await fsp.readFile(path.join(ws, "tree", "f.txt"), "utf8"), "across\n");
      assert.equal(await fsp.readlink(path.join(ws, "tree", "l")), "f.txt");
      assert.equal(fs.existsSync(path.join(temp, "tree")), false);
    } finally {
      await session.close();
      await fsp.rm(ws, { recursive: true, force: true });
    }
  });
});

describe("copy", () => {
  test("copies a file with its mode, and a folder with its files, links and folders", { timeout: 60_000 }, async () => {
    await fsp.chmod(at("inside.txt"), 0o640);
    const file = ok(await l.call("copy", { src: "inside.txt", dst: "copy.txt" }));
    assert.equal(file.files, 1);
    assert.equal((await fsp.stat(at("copy.txt"))).mode & 0o777, 0o640);
    await fsp.symlink("deep.txt", at("sub", "rel-link"));
    execFileSync("mkfifo", [at("sub", "pipe")]);
    const tree = ok(await l.call("copy", { src: "sub", dst: "sub-copy" }));
    assert.deepEqual(
      { files: tree.files, directories: tree.directories, links: tree.links, skipped: tree.skipped },
      { files: 1, directories: 1, links: 1, skipped: ["pipe"] },
    );
    assert.equal(await fsp.readlink(at("sub-copy", "rel-link")), "deep.txt");
    ok(await l.call("copy", { src: "inside.txt", dst: "sub" }));
    assert.ok(fs.existsSync(at("sub", "inside.txt")), "an existing folder receives the copy");
  });

  test("replacing asks; impossible copies change nothing", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("other.txt"), "other\n");
    await withHost(denyAllHost());
    await fsp.writeFile(at("other.txt"), "other\n");
    const denied = await unchanged(l.root, () => l.call("copy", { src: "inside.txt", dst: "other.txt" }));
    assert.equal(denied.errorCode, "permission_denied");
    const intoItself = await unchanged(l.root, () => l.call("copy", { src: "sub", dst: "sub/again" }));
    assert.equal(intoItself.errorCode, "invalid_destination");
    const folderOntoFile = await unchanged(l.root, () => l.call("copy", { src: "sub", dst: "other.txt" }));
    assert.equal(folderOntoFile.errorCode, "already_exists");
    execFileSync("mkfifo", [at("pipe")]);
    const fifo = await unchanged(l.root, () => l.call("copy", { src: "pipe", dst: "pipe2" }));
    assert.equal(fifo.errorCode, "not_regular_file");
  });
});

describe("list_dir and file_info", () => {
  test("list_dir sorts names by kind; details add sizes and times", { timeout: 60_000 }, async () => {
    const plain = ok(await l.call("list_dir", { path: "." }));
    assert.deepEqual(plain.directories, ["sub"]);
    assert.deepEqual(plain.files, ["inside.txt"]);
    assert.deepEqual(plain.symlinks, ["dangling", "dir-out", "link-in", "link-out", "loop-a", "loop-b"]);
    const detailed = ok(await l.call("list_dir", { path: "sub", details: true }));
    const [deep] = detailed.files as { name: string; size: number; modified: string }[];
    assert.equal(deep.name, "deep.txt");
    assert.equal(deep.size, 5);
    assert.ok(!Number.isNaN(Date.parse(deep.modified)));
    assert.equal((await l.call("list_dir", { path: "inside.txt" })).errorCode, "not_directory");
  });

  test("file_info describes files, folders and binary content", { timeout: 60_000 }, async () => {
    const info = ok(await l.call("file_info", { path: "inside.txt" }));
    assert.equal(info.type, "file");
    assert.equal(info.content, "text");
    assert.equal(info.encoding, "UTF-8");
    assert.equal(info.sha256, sha("inside\n"));
    assert.match(String(info.mode), /^0[0-7]{3}$/);
    assert.equal(ok(await l.call("file_info", { path: "sub" })).entries, 1);
    await fsp.writeFile(at("a.gz"), Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]));
    const gz = ok(await l.call("file_info", { path: "a.gz" }));
    assert.equal(gz.content, "binary");
    assert.equal(gz.binary_type, "gzip archive");
    assert.equal((await l.call("file_info", { path: "nope" })).errorCode, "not_found");
  });
});
