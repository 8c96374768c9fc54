import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import type { ChoiceRequest } from "../../../core/host.ts";
import { callbackHost, denyAllHost } from "../../../policy/hosts.ts";
import { patchTools } from "../../../tools/patch/mod.ts";
import { type Layout, makeLayout, ok, unchanged } from "../fs/_helpers.ts";

let l: Layout;
const at = (...parts: string[]) => path.join(l.workdir, ...parts);
const text = (name: string) => fsp.readFile(at(name), "utf8");
const apply = (patch: string, directory?: string) =>
  l.call("apply_patch", directory === undefined ? { patch } : { patch, directory });

async function refused(patch: string, code: string, directory?: string) {
  const result = await unchanged(l.root, () => apply(patch, directory));
  assert.equal(result.errorCode, code, result.error);
  return result;
}

beforeEach(async () => {
  l = await makeLayout(patchTools());
  await fsp.mkdir(at("src"));
  await fsp.writeFile(at("src", "a.ts"), "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n");
  await fsp.writeFile(at("src", "b.ts"), "alpha\nbeta\ngamma\n");
});
afterEach(() => l.cleanup());

describe("unified diffs", () => {
  test("several files with a/ b/ prefixes, creating and deleting through /dev/null", { timeout: 60_000 }, async () => {
    const out = ok(
      await apply(
        [
          "--- a/src/a.ts",
          "+++ b/src/a.ts",
          "@@ -2,3 +2,3 @@",
          " line 2",
          "-line 3",
          "+line three",
          " line 4",
          "@@ -6,2 +6,3 @@",
          " line 6",
          "+line 6.5",
          " line 7",
          "--- a/src/b.ts",
          "+++ /dev/null",
          "@@ -1,3 +0,0 @@",
          "-alpha",
          "-beta",
          "-gamma",
          "--- /dev/null",
          "+++ b/docs/new.md",
          "@@ -0,0 +1,2 @@",
          "+# New",
          "+text",
          "",
        ].join("\n"),
      ),
    );
    assert.equal(
      await text("src/a.ts"),
      "line 1\nline 2\nline three\nline 4\nline 5\nline 6\nline 6.5\nline 7\nline 8\n",
    );
    assert.equal(fs.existsSync(at("src", "b.ts")), false);
    assert.equal(await text("docs/new.md"), "# New\ntext\n");
    assert.deepEqual(out.files, [
      { path: at("src/a.ts"), action: "updated", added: 2, removed: 1 },
      { path: at("src/b.ts"), action: "deleted", added: 0, removed: 3 },
      { path: at("docs/new.md"), action: "added", added: 2, removed: 0 },
    ]);
    assert.equal(out.format, "unified");
  });

  test("wrong line numbers and wrong hunk counts still apply where the lines are", { timeout: 60_000 }, async () => {
    ok(await apply("--- src/b.ts\n+++ src/b.ts\n@@ -40,7 +40,9 @@\n beta\n-gamma\n+GAMMA\n"));
    assert.equal(await text("src/b.ts"), "alpha\nbeta\nGAMMA\n");
  });

  test("git headers: renames, new and deleted files, quoted names", { timeout: 60_000 }, async () => {
    const patch = [
      "diff --git a/src/b.ts b/lib/b2.ts",
      "similarity index 80%",
      "rename from src/b.ts",
      "rename to lib/b2.ts",
      "index 123..456 100644",
      "--- a/src/b.ts",
      "+++ b/lib/b2.ts",
      "@@ -1,3 +1,3 @@",
      " alpha",
      "-beta",
      "+BETA",
      " gamma",
      'diff --git "a/sp ace.txt" "b/sp ace.txt"',
      "new file mode 100644",
      "--- /dev/null",
      '+++ "b/sp ace.txt"',
      "@@ -0,0 +1 @@",
      "+spaced",
      "\\ No newline at end of file",
    ].join("\n");
    const out = ok(await apply(patch));
    assert.equal(await text("lib/b2.ts"), "alpha\nBETA\ngamma\n");
    assert.equal(fs.existsSync(at("src", "b.ts")), false);
    assert.equal(await text("sp ace.txt"), "spaced");
    assert.deepEqual((out.files as { action: string }[]).map((f) => f.action), ["moved", "added"]);
  });

  test("\\ No newline at end of file on either side", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("n.txt"), "a\nb");
    ok(await apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"));
    assert.equal(await text("n.txt"), "a\nc\n");
    ok(await apply("--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-c\n+d\n\\ No newline at end of file\n"));
    assert.equal(await text("n.txt"), "a\nd");
  });

  test(
    "lines added where a file ends get their newline unless the patch says otherwise",
    { timeout: 60_000 },
    async () => {
      await fsp.writeFile(at("empty.txt"), "");
      ok(await apply("--- a/empty.txt\n+++ b/empty.txt\n@@ -0,0 +1 @@\n+\n"));
      assert.equal(await text("empty.txt"), "\n");
      await fsp.writeFile(at("tail.txt"), "a\nb");
      ok(await apply("--- a/tail.txt\n+++ b/tail.txt\n@@ -1,2 +1 @@\n a\n-b\n\\ No newline at end of file\n"));
      assert.equal(await text("tail.txt"), "a\n");
    },
  );

  test("CRLF files, a byte-order mark and the mode are kept", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("w.txt"), "\ufeffone\r\ntwo\r\n");
    await fsp.chmod(at("w.txt"), 0o700);
    ok(await apply("--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three\n"));
    assert.equal(await text("w.txt"), "\ufeffone\r\nTWO\r\nthree\r\n");
    assert.equal((await fsp.stat(at("w.txt"))).mode & 0o777, 0o700);
  });
});

describe("*** Begin Patch", () => {
  test("add, update with @@ anchors and a move, delete", { timeout: 60_000 }, async () => {
    await fsp.writeFile(
      at("src", "c.py"),
      "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n",
    );
    const out = ok(
      await apply(
        [
          "apply_patch <<'EOF'",
          "*** Begin Patch",
          "*** Add File: notes/todo.md",
          "+- one",
          "+- two",
          "*** Update File: src/c.py",
          "*** Move to: lib/c.py",
          "@@ class B:",
          "@@     def f(self):",
          "-        return 1",
          "+        return 2",
          "*** Delete File: src/b.ts",
          "*** Update File: src/a.ts",
          "@@",
          " line 7",
          "-line 8",
          "+line eight",
          "*** End of File",
          "*** End Patch",
          "EOF",
        ].join("\n"),
      ),
    );
    assert.equal(out.format, "begin-patch");
    assert.equal(await text("notes/todo.md"), "- one\n- two\n");
    assert.equal(
      await text("lib/c.py"),
      "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 2\n",
    );
    assert.equal(fs.existsSync(at("src", "c.py")), false);
    assert.equal(fs.existsSync(at("src", "b.ts")), false);
    assert.match(await text("src/a.ts"), /line 7\nline eight\n$/);
  });

  test(
    "context with different trailing whitespace still fits, and keeps the file's own text",
    { timeout: 60_000 },
    async () => {
      await fsp.writeFile(at("t.txt"), "keep me  \nchange\n");
      ok(await apply("*** Begin Patch\n*** Update File: t.txt\n@@\n keep me\n-change\n+changed\n*** End Patch"));
      assert.equal(await text("t.txt"), "keep me  \nchanged\n");
    },
  );
});

describe("a patch applies whole or changes nothing", () => {
  test("a hunk that does not fit in a later file stops every file", { timeout: 60_000 }, async () => {
    const result = await refused(
      "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-line 1\n+LINE 1\n--- a/src/b.ts\n+++ b/src/b.ts\n@@ -1 +1 @@\n-delta\n+x\n",
      "patch_conflict",
    );
    assert.match(result.error!, /Hunk 1 for src\/b\.ts does not apply: these lines were not found: "delta"/);
  });

  test("a permission denied for a later file stops every file", { timeout: 60_000 }, async () => {
    await l.cleanup();
    l = await makeLayout(patchTools(), { host: denyAllHost(), autoConfirm: false });
    await fsp.mkdir(at("src"));
    await fsp.writeFile(at("src", "b.ts"), "alpha\n");
    const result = await refused(
      "--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1 @@\n+new\n--- a/src/b.ts\n+++ b/src/b.ts\n@@ -1 +1 @@\n-alpha\n+ALPHA\n",
      "permission_denied",
    );
    assert.equal(result.status, "skipped");
  });

  test("a write that fails midway rolls back the files written before it", { timeout: 60_000 }, async () => {
    await l.cleanup();
    // While the person is asked about a.ts, something puts a file where the new folder must go.
    l = await makeLayout(patchTools(), {
      autoConfirm: false,
      host: callbackHost({
        choose: async <T extends string>(request: ChoiceRequest<T>) => {
          await fsp.writeFile(at("blocker"), "a file, not a folder\n");
          return request.defaultChoice;
        },
      }),
    });
    await fsp.mkdir(at("src"));
    await fsp.writeFile(at("src", "a.ts"), "one\n");
    const before = await fsp.readFile(at("src", "a.ts"));
    const result = await apply(
      "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-one\n+ONE\n--- /dev/null\n+++ b/blocker/new.ts\n@@ -0,0 +1 @@\n+x\n",
    );
    assert.equal(result.status, "error");
    assert.match(result.error!, /every file was restored/);
    assert.deepEqual(await fsp.readFile(at("src", "a.ts")), before);
  });

  test("malformed patches, duplicate files, binary patches", { timeout: 60_000 }, async () => {
    await refused("just some text", "invalid_patch");
    await refused("*** Begin Patch\n*** Update File: src/b.ts\n-alpha\n", "invalid_patch");
    await refused("*** Begin Patch\n*** Frobnicate: x\n*** End Patch", "invalid_patch");
    await refused("--- a/x\n+++ b/x\n@@ bad header @@\n-a\n", "invalid_patch");
    const twice =
      "--- a/src/b.ts\n+++ b/src/b.ts\n@@ -1 +1 @@\n-alpha\n+A\n--- a/src/b.ts\n+++ b/src/b.ts\n@@ -2 +2 @@\n-beta\n+B\n";
    await refused(twice, "invalid_patch");
    await refused("diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n", "invalid_patch");
  });

  test("adding an existing file, updating a missing one, deleting changed content", { timeout: 60_000 }, async () => {
    await refused("--- /dev/null\n+++ b/src/b.ts\n@@ -0,0 +1 @@\n+x\n", "already_exists");
    await refused("--- a/src/zz.ts\n+++ b/src/zz.ts\n@@ -1 +1 @@\n-a\n+b\n", "not_found");
    await refused("--- a/src/b.ts\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-alpha\n-beta\n", "patch_conflict");
  });

  test("binary and symlink targets are refused", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("bin.dat"), Buffer.from([1, 2, 0, 3]));
    await refused("--- a/bin.dat\n+++ b/bin.dat\n@@ -1 +1 @@\n-x\n+y\n", "binary_file");
    await refused("--- a/link-in\n+++ b/link-in\n@@ -1 +1 @@\n-inside\n+x\n", "symlink_target");
  });
});

describe("patch paths are confined to the directory and the workspace", () => {
  const update = (p: string) => `--- a/${p}\n+++ b/${p}\n@@ -1 +1 @@\n-secret\n+pwned\n`;
  const add = (p: string) => `--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+pwned\n`;

  test("paths leading out of the directory", { timeout: 60_000 }, async () => {
    await refused(update("../inside.txt"), "outside_directory", "sub");
    await refused(add("../escape.txt"), "outside_directory", "sub");
    await refused(`*** Begin Patch\n*** Add File: ${at("escape.txt")}\n+x\n*** End Patch`, "outside_directory", "sub");
  });

  const cases: [string, string, string[]][] = [
    ["../../etc/passwd", "update", ["outside_workspace"]],
    ["/etc/passwd", "update", ["outside_workspace", "outside_directory"]],
    ["../W-secrets/x", "update", ["outside_workspace"]],
    ["link-out", "update", ["symlink_target"]],
    ["dir-out/s.txt", "update", ["outside_workspace"]],
    ["dir-out/new.txt", "add", ["outside_workspace"]],
    ["dangling", "add", ["symlink_target"]],
    ["loop-a", "update", ["symlink_target"]],
    ["loop-a/x", "add", ["symlink_loop"]],
  ];
  for (const [p, kind, codes] of cases) {
    test(`${kind} ${p}`, { timeout: 60_000 }, async () => {
      const result = await unchanged(l.root, () => apply(kind === "add" ? add(p) : update(p)));
      assert.ok(codes.includes(result.errorCode!), `${result.errorCode}: ${result.error}`);
      assert.equal(fs.existsSync(path.join(l.outside, "new.txt")), false);
    });
  }

  test("the directory itself must lie in the workspace", { timeout: 60_000 }, async () => {
    for (const directory of ["..", "/etc", "dir-out", "../W-secrets"]) {
      await refused(add("x.txt"), "outside_workspace", directory);
    }
    await refused(add("x.txt"), "invalid_path", "sub\0");
    await refused(add("x.txt"), "symlink_loop", "loop-a");
  });
});
