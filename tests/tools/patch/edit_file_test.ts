import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { denyAllHost } from "../../../policy/hosts.ts";
import { patchTools } from "../../../tools/patch/mod.ts";
import { type Layout, makeLayout, ok, unchanged } from "../fs/_helpers.ts";

let l: Layout;
const at = (name: string) => path.join(l.workdir, name);
const sha = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");
const edit = (args: Record<string, unknown>) => l.call("edit_file", args);

// Runs an edit that must fail, proves the workspace unchanged, and returns the result.
async function refused(args: Record<string, unknown>, code: string) {
  const result = await unchanged(l.root, () => edit(args));
  assert.equal(result.errorCode, code, result.error);
  return result;
}

beforeEach(async () => {
  l = await makeLayout(patchTools());
  await fsp.writeFile(at("code.ts"), "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 1;\n}\n");
});
afterEach(() => l.cleanup());

describe("edit_file replaces exactly one match", () => {
  test("the result gives the count, the new sha256 and a short diff", { timeout: 60_000 }, async () => {
    const out = ok(
      await edit({ path: "code.ts", old_text: "function b() {\n  return 1;", new_text: "function b() {\n  return 2;" }),
    );
    const text = await fsp.readFile(at("code.ts"), "utf8");
    assert.equal(text, "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n");
    assert.equal(out.path, at("code.ts"));
    assert.equal(out.replacements, 1);
    assert.equal(out.sha256, sha(text));
    assert.ok(
      String(out.diff).includes("@@ -4,4 +4,4 @@\n \n function b() {\n-  return 1;\n+  return 2;\n }"),
      String(out.diff),
    );
  });

  test("several matches are refused with their count and lines unless replace_all", { timeout: 60_000 }, async () => {
    const result = await refused({ path: "code.ts", old_text: "return 1;", new_text: "return 0;" }, "ambiguous_match");
    assert.match(result.error!, /occurs 2 times .*\(lines 2, 6\)/);
    assert.match(result.recoveryHint!, /replace_all/);
    const out = ok(await edit({ path: "code.ts", old_text: "return 1;", new_text: "return 0;", replace_all: true }));
    assert.equal(out.replacements, 2);
    assert.equal((await fsp.readFile(at("code.ts"), "utf8")).split("return 0;").length, 3);
  });

  test("the replacement is literal", { timeout: 60_000 }, async () => {
    ok(await edit({ path: "code.ts", old_text: "function a()", new_text: "const $& = $1 + $$ + $`" }));
    assert.match(await fsp.readFile(at("code.ts"), "utf8"), /^const \$& = \$1 \+ \$\$ \+ \$` \{/);
  });
});

describe("edit_file failures leave the file byte-for-byte unchanged and say which", () => {
  test("no match, with a hint when only whitespace differs", { timeout: 60_000 }, async () => {
    const plain = await refused({ path: "code.ts", old_text: "return 3;", new_text: "x" }, "no_match");
    assert.match(plain.error!, /not found in code\.ts/);
    const spaced = await refused({ path: "code.ts", old_text: "function b() {\nreturn 1;", new_text: "x" }, "no_match");
    assert.match(spaced.recoveryHint!, /matches lines 5-6 if indentation/);
  });

  test("identical texts, an empty old_text, a missing file", { timeout: 60_000 }, async () => {
    await refused({ path: "code.ts", old_text: "return 1;", new_text: "return 1;" }, "identical_texts");
    await refused({ path: "code.ts", old_text: "", new_text: "x" }, "empty_old_text");
    const missing = await refused({ path: "nope.ts", old_text: "a", new_text: "b" }, "not_found");
    assert.match(missing.recoveryHint!, /write_file/);
    await refused({ path: "sub", old_text: "a", new_text: "b" }, "is_directory");
  });

  test("a stale expected_sha256, then the current one", { timeout: 60_000 }, async () => {
    const args = { path: "code.ts", old_text: "function a", new_text: "function z" };
    await refused({ ...args, expected_sha256: sha("something else") }, "hash_conflict");
    ok(await edit({ ...args, expected_sha256: sha(await fsp.readFile(at("code.ts"))) }));
  });

  test("a denied permission", { timeout: 60_000 }, async () => {
    await l.cleanup();
    l = await makeLayout(patchTools(), { host: denyAllHost(), autoConfirm: false });
    await fsp.writeFile(at("code.ts"), "x = 1\n");
    const result = await refused({ path: "code.ts", old_text: "1", new_text: "2" }, "permission_denied");
    assert.equal(result.status, "skipped");
  });

  test("binary files, other encodings and invalid UTF-8", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("bin.dat"), Buffer.from("abc\0def"));
    await refused({ path: "bin.dat", old_text: "abc", new_text: "x" }, "binary_file");
    await fsp.writeFile(at("u16.txt"), Buffer.from("\ufeffabc", "utf16le"));
    await refused({ path: "u16.txt", old_text: "abc", new_text: "x" }, "unsupported_encoding");
    await fsp.writeFile(at("latin.txt"), Buffer.from("abc caf\xe9", "latin1"));
    await refused({ path: "latin.txt", old_text: "abc", new_text: "x" }, "not_utf8");
  });

  test("paths outside the workspace", { timeout: 60_000 }, async () => {
    for (const p of ["../../etc/passwd", "/etc/passwd", "../W-secrets/x", "link-out", "dir-out/s.txt", "dangling"]) {
      await refused({ path: p, old_text: "secret", new_text: "x" }, "outside_workspace");
    }
    await refused({ path: "loop-a", old_text: "a", new_text: "b" }, "symlink_loop");
    await refused({ path: "code.ts\0", old_text: "a", new_text: "b" }, "invalid_path");
  });
});

describe("edit_file keeps the file's form", () => {
  test(
    "CRLF line endings: text given with \\n matches, and the new lines get \\r\\n",
    { timeout: 60_000 },
    async () => {
      await fsp.writeFile(at("win.txt"), "one\r\ntwo\r\nthree\r\n");
      ok(await edit({ path: "win.txt", old_text: "one\ntwo", new_text: "uno\ndos\ntres" }));
      assert.equal(await fsp.readFile(at("win.txt"), "utf8"), "uno\r\ndos\r\ntres\r\nthree\r\n");
    },
  );

  test(
    "in a CRLF file old_text never matches half of a CRLF, and new line breaks become CRLF",
    { timeout: 60_000 },
    async () => {
      await fsp.writeFile(at("crlf-empty.txt"), "\r\n");
      ok(await edit({ path: "crlf-empty.txt", old_text: "\n", new_text: "" }));
      assert.equal(await fsp.readFile(at("crlf-empty.txt"), "utf8"), "");
      await fsp.writeFile(at("crlf-aa.txt"), "aa\r\n");
      ok(await edit({ path: "crlf-aa.txt", old_text: "aa", new_text: "\n" }));
      assert.equal(await fsp.readFile(at("crlf-aa.txt"), "utf8"), "\r\n\r\n");
    },
  );

  test("a byte-order mark, the mode, and a symlink inside the workspace", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("bom.txt"), Buffer.from("\ufeffhello world\n"));
    await fsp.chmod(at("bom.txt"), 0o754);
    await fsp.symlink("bom.txt", at("bom-link"));
    ok(await edit({ path: "bom-link", old_text: "world", new_text: "there" }));
    const bytes = await fsp.readFile(at("bom.txt"));
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(bytes.subarray(3).toString(), "hello there\n");
    assert.equal((await fsp.stat(at("bom.txt"))).mode & 0o777, 0o754);
    assert.ok((await fsp.lstat(at("bom-link"))).isSymbolicLink());
  });

  test("the presence or absence of a final newline", { timeout: 60_000 }, async () => {
    await fsp.writeFile(at("nl.txt"), "a\nb\n");
    ok(await edit({ path: "nl.txt", old_text: "b\n", new_text: "c" }));
    assert.equal(await fsp.readFile(at("nl.txt"), "utf8"), "a\nc\n");
    await fsp.writeFile(at("nonl.txt"), "a\nb");
    ok(await edit({ path: "nonl.txt", old_text: "b", new_text: "c\n" }));
    assert.equal(await fsp.readFile(at("nonl.txt"), "utf8"), "a\nc");
  });
});
