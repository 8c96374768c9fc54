import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import { searchTools } from "../../../tools/search/mod.ts";
import { type Layout, makeLayout, ok } from "../fs/_helpers.ts";
import { whileSwappedForLink } from "../../_link_swapper.ts";

let l: Layout;
const glob = async (args: Record<string, unknown>) => ok(await l.call("glob", args));

before(async () => {
  l = await makeLayout(searchTools());
  const put = async (rel: string, text = "x\n") => {
    await fsp.mkdir(path.dirname(path.join(l.workdir, rel)), { recursive: true });
    await fsp.writeFile(path.join(l.workdir, rel), text);
  };
  await put(".gitignore", "dist/\n*.tmp\n");
  await put("top.ts");
  await put("src/a.ts");
  await put("src/b.tsx");
  await put("src/lib/c.ts");
  await put("src/.hidden/d.ts");
  await put("src/note.tmp");
  await put("dist/bundle.ts");
  await put(".git/hooks/pre-commit.ts");
  await put(".git/HEAD");
  await fsp.symlink("src", path.join(l.workdir, "src-link"));
  await fsp.symlink("top.ts", path.join(l.workdir, "top-link.ts"));
});
after(() => l.cleanup());

describe("glob", () => {
  test("** crosses folders, * does not; results are sorted and relative to the root", { timeout: 60_000 }, async () => {
    const all = await glob({ pattern: "**/*.ts" });
    assert.equal(all.root, l.workdir);
    assert.deepEqual(all.matches, ["src/.hidden/d.ts", "src/a.ts", "src/lib/c.ts", "top-link.ts", "top.ts"]);
    assert.equal(all.truncated, false);
    assert.deepEqual((await glob({ pattern: "*.ts" })).matches, ["top-link.ts", "top.ts"]);
    assert.deepEqual((await glob({ pattern: "*.{ts,tsx}", path: "src" })).matches, ["a.ts", "b.tsx"]);
    assert.deepEqual((await glob({ pattern: "lib/*", path: "src" })).matches, ["lib/c.ts"]);
  });

  test(".gitignore is honoured unless skip_ignored is false; .git is never listed", { timeout: 60_000 }, async () => {
    assert.deepEqual((await glob({ pattern: "**/*.tmp" })).matches, []);
    const everything = await glob({ pattern: "**", skip_ignored: false });
    const listed = everything.matches as string[];
    assert.ok(listed.includes("dist/bundle.ts"));
    assert.ok(listed.includes("src/note.tmp"));
    assert.ok(!listed.some((p) => p === ".git" || p.startsWith(".git/")), ".git never appears");
    assert.doesNotMatch(JSON.stringify(await glob({ pattern: "**", type: "any" })), /"\.git\//);
  });

  test("type picks files, folders (ending in / for any), or both", { timeout: 60_000 }, async () => {
    assert.deepEqual((await glob({ pattern: "src/**", type: "directory" })).matches, ["src", "src/.hidden", "src/lib"]);
    const any = (await glob({ pattern: "src/*", type: "any" })).matches as string[];
    assert.deepEqual(any, ["src/.hidden/", "src/a.ts", "src/b.tsx", "src/lib/"]);
  });

  test("symlinks are never followed: inside targets count as what they point to, others are left out", {
    timeout: 60_000,
  }, async () => {
    const any = (await glob({ pattern: "*", type: "any" })).matches as string[];
    assert.ok(any.includes("src-link/"), "a link to a folder inside is a folder");
    assert.ok(any.includes("top-link.ts"));
    for (const name of ["link-out", "dir-out", "dangling", "loop-a", "loop-b"]) assert.ok(!any.includes(name), name);
    const deep = (await glob({ pattern: "**/c.ts" })).matches;
    assert.deepEqual(deep, ["src/lib/c.ts"], "the folder link is not walked into");
    assert.doesNotMatch(JSON.stringify(await glob({ pattern: "**", skip_ignored: false })), /s\.txt|secret/);
  });

  test("the cap says when it cut", { timeout: 60_000 }, async () => {
    const out = await glob({ pattern: "**/*.ts", max_results: 2 });
    assert.deepEqual(out.matches, ["src/.hidden/d.ts", "src/a.ts"]);
    assert.equal(out.truncated, true);
    assert.match(String(out.note), /first 2 of 5/);
  });

  test("patterns that leave the root, and roots that are not folders, are refused", { timeout: 60_000 }, async () => {
    for (const pattern of ["/etc/*", "../*", "src/../../x"]) {
      assert.equal((await l.call("glob", { pattern })).errorCode, "invalid_glob", pattern);
    }
    assert.equal((await l.call("glob", { pattern: "*", path: "top.ts" })).errorCode, "not_directory");
  });
});

// A racer (tests/_link_swapper.ts) swaps race/inner for a link to a folder outside the workspace and back. The walk
// read each folder by its path, which followed the link swapped in after the folder was found: the outside folder's
// names were listed within a few hundred walks.
describe("glob against a folder swapped for a link during the walk", () => {
  test("never a name of the folder the link leads to", { timeout: 60_000 }, async () => {
    const race = path.join(l.workdir, "race");
    const twin = path.join(l.outside, "race-twin");
    await fsp.mkdir(path.join(race, "inner"), { recursive: true });
    await fsp.mkdir(twin, { recursive: true });
    await fsp.writeFile(path.join(race, "inner", "f.txt"), "x\n");
    await fsp.writeFile(path.join(twin, "TWINNAME.txt"), "x\n");
    let walks = 0;
    let listed = 0;
    try {
      await whileSwappedForLink(race, "inner", twin, async () => {
        const deadline = performance.now() + 4_000;
        while (performance.now() < deadline) {
          const text = JSON.stringify(await l.call("glob", { pattern: "**", path: "race" }));
          assert.ok(!text.includes("TWINNAME"), `walk ${walks} listed the folder outside: ${text}`);
          walks++;
          if (text.includes("inner/f.txt")) listed++;
        }
      });
    } finally {
      await fsp.rm(race, { recursive: true, force: true });
    }
    // The race must have let walks into the folder, and kept some out, or it proved nothing.
    assert.ok(listed > 0 && listed < walks, `${listed} of ${walks} walks listed the folder`);
  });

  test("a .gitignore that is a link is not read: its target's lines rule nothing", { timeout: 60_000 }, async () => {
    // The target's lines would leave out every .txt file; read through the link, they told what the file outside
    // holds by what the results lacked.
    const folder = path.join(l.workdir, "linked-ignore");
    await fsp.mkdir(path.join(folder, "sub"), { recursive: true });
    await fsp.writeFile(path.join(l.outside, "ignore-rules"), "*.txt\n");
    await fsp.symlink(path.join(l.outside, "ignore-rules"), path.join(folder, ".gitignore"));
    await fsp.writeFile(path.join(folder, "sub", "kept.txt"), "x\n");
    try {
      assert.deepEqual((await glob({ pattern: "**/*.txt", path: "linked-ignore" })).matches, ["sub/kept.txt"]);
      assert.deepEqual((await glob({ pattern: "*.txt", path: "linked-ignore/sub" })).matches, ["kept.txt"]);
    } finally {
      await fsp.rm(folder, { recursive: true, force: true });
    }
  });
});
