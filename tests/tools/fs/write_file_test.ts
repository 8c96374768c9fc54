import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fsp from "node:fs/promises";
import path from "node:path";
import { callbackHost, denyAllHost } from "../../../policy/hosts.ts";
import type { ChoiceRequest } from "../../../core/mod.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";
import { ok, unchanged } from "./_helpers.ts";
import { asked, at, l, person, sha, useToolLayout, withHost } from "./_tool_layout.ts";

useToolLayout();

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

// A racer (tests/_link_swapper.ts) swaps a.txt for a link to a file outside the workspace and back. The write
// question's diff read the file's text now by its path, which followed the link swapped in after the resolution: the
// outside file's text was put to the person (a few times in 50,000 questions).
describe("write_file's question against a file swapped for a link during the call", () => {
  test("the diff it shows never holds the text of the file the link leads to", { timeout: 60_000 }, async () => {
    let questions = 0;
    let shown = 0;
    const leaked: string[] = [];
    const host = callbackHost({
      choose: <T extends string>(request: ChoiceRequest<T>) => {
        const text = JSON.stringify(request);
        // Kept, not thrown: a host's error would only fail that call.
        if (text.includes("QUESTIONSECRET")) leaked.push(text);
        questions++;
        if (text.includes('"before":"inside\\n"')) shown++;
        return "deny" as T;
      },
    });
    await withHost(host);
    const secret = path.join(l.outside, "question-secret.txt");
    await fsp.writeFile(secret, "QUESTIONSECRET\n");
    await fsp.writeFile(at("a.txt"), "inside\n");
    const file = (await fsp.lstat(at("a.txt"))).ino;
    await whileSwappedForLink(l.workdir, "a.txt", secret, async () => {
      const deadline = performance.now() + 15_000;
      while (performance.now() < deadline) await l.call("write_file", { path: "a.txt", content: "new\n" });
    });
    assert.deepEqual(leaked, [], "a question showed the file outside");
    // Every question was denied, so the file keeps its text. A call that found the name free for a moment (the
    // racer renames the file away and back) creates a file without asking; it must never replace the file that
    // is back by then (it did: the file's text became the new content, and the questions showed it).
    assert.equal((await fsp.lstat(at("a.txt"))).ino, file, "the file was replaced");
    assert.equal(await fsp.readFile(at("a.txt"), "utf8"), "inside\n");
    // The race must have let questions show the file's own text, or it proved nothing.
    assert.ok(shown > 0 && questions > shown, `${shown} of ${questions} questions showed the text`);
  });
});
