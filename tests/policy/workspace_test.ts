import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { type ToolError, UsageError } from "../../core/errors.ts";
import { openReadConfined } from "../../internal/confined_fs.ts";
import { Workspace } from "../../policy/workspace.ts";
import { exists, type Layout, makeLayout, rejectsWith } from "./_fixtures.ts";
import { whileSwappedForLink } from "../_link_swapper.ts";

let L: Layout;
let ws: Workspace;

beforeEach(async () => {
  L = await makeLayout();
  ws = new Workspace(L.workdir, { tempParent: L.tempParent });
});
afterEach(async () => {
  await ws.dispose();
  await L.cleanup();
});

async function refused(input: string): Promise<void> {
  const error = await rejectsWith(ws.resolve(input), "outside_workspace", "policy");
  assert.equal(error.message, `Path ${input} is not within the agent's workspace`);
}

describe("Workspace.resolve: the adversarial path cases", () => {
  test("../../etc/passwd and /etc/passwd are refused", { timeout: 60_000 }, async () => {
    await refused("../../etc/passwd");
    await refused("/etc/passwd");
  });

  test("a sibling folder sharing the workdir's name as a prefix is refused", { timeout: 60_000 }, async () => {
    await refused("../W-secrets/x");
    await refused(path.join(L.secrets, "x"));
    await refused(L.workdir + "-secrets");
  });

  test("a symlink in W to a file outside is refused", { timeout: 60_000 }, async () => {
    await fsp.symlink(path.join(L.outside, "secret.txt"), path.join(L.workdir, "link"));
    await refused("link");
  });

  test("a symlinked folder leading outside is refused, and so is any file under it", { timeout: 60_000 }, async () => {
    await fsp.symlink(L.outside, path.join(L.workdir, "dirlink"));
    await refused("dirlink");
    await refused("dirlink/secret.txt");
    await refused("dirlink/not-yet.txt");
    await refused("dirlink/./deeper/../secret.txt");
  });

  test(
    "a dangling symlink pointing outside is refused, and nothing is created outside",
    { timeout: 60_000 },
    async () => {
      const target = path.join(L.outside, "created-through-link.txt");
      await fsp.symlink(target, path.join(L.workdir, "dangling"));
      await refused("dangling");
      assert.equal(await exists(target), false);
    },
  );

  test("the temp dir is refused before it exists and accepted once created", { timeout: 60_000 }, async () => {
    await refused(path.join(L.tempParent, "x"));
    assert.equal(ws.tempDirCreated, false);
    const temp = await ws.tempDir();
    assert.equal(ws.tempDirCreated, true);
    assert.equal(path.dirname(temp), L.tempParent);
    assert.deepEqual(await ws.resolve(path.join(temp, "x")), {
      path: path.join(temp, "x"),
      area: "temp",
      exists: false,
    });
    assert.deepEqual(await ws.resolve(temp), { path: temp, area: "temp", exists: true });
    // Only the session's own temp dir, not the folder it lives in.
    await refused(path.join(L.tempParent, "x"));
    // Another session's temp dir is not part of this workspace until this one creates its own.
    const other = new Workspace(L.workdir, { tempParent: L.tempParent });
    await rejectsWith(other.resolve(path.join(temp, "x")), "outside_workspace");
    await other.dispose();
  });

  test("a NUL byte is a clear error", { timeout: 60_000 }, async () => {
    const error = await rejectsWith(ws.resolve("file.txt\0.png"), "invalid_path", "semantic");
    assert.match(error.message, /NUL byte/);
  });

  test("a symlink loop is a clear error, quickly", { timeout: 60_000 }, async () => {
    await fsp.symlink("loop2", path.join(L.workdir, "loop1"));
    await fsp.symlink("loop1", path.join(L.workdir, "loop2"));
    await fsp.symlink("self", path.join(L.workdir, "self"));
    const started = performance.now();
    for (const input of ["loop1", "loop2/x", "self", "sub/../self/../x"]) {
      const error = await rejectsWith(ws.resolve(input), "symlink_loop");
      assert.match(error.message, /too many levels of symbolic links/);
    }
    assert.ok(performance.now() - started < 2000);
  });

  test(
    "over-long paths are clear errors (ENAMETOOLONG), checked before and after following links",
    { timeout: 60_000 },
    async () => {
      const longName = "n".repeat(256);
      let error = await rejectsWith(ws.resolve(longName), "invalid_path");
      assert.match(error.message, /too long/);
      error = await rejectsWith(ws.resolve(Array(20).fill("d".repeat(250)).join("/")), "invalid_path");
      assert.match(error.message, /too long/);
      // Each link is short, but what it expands to is not.
      const deep = path.join(L.workdir, Array(16).fill("d".repeat(250)).join("/"));
      await fsp.mkdir(deep, { recursive: true });
      await fsp.symlink(deep, path.join(L.workdir, "deep"));
      error = await rejectsWith(ws.resolve(`deep/${"e".repeat(250)}/f`), "invalid_path");
      assert.match(error.message, /too long/);
      // The longest legal name is fine.
      assert.equal((await ws.resolve("m".repeat(255))).exists, false);
    },
  );
});

describe("Workspace.resolve: kin of the adversarial cases", () => {
  test("W/../W/x is inside; W/./a/../../x is not", { timeout: 60_000 }, async () => {
    assert.equal((await ws.resolve(`${L.workdir}/../W/x`)).path, path.join(L.workdir, "x"));
    assert.equal((await ws.resolve("../W/x")).path, path.join(L.workdir, "x"));
    await refused(`${L.workdir}/./a/../../x`);
    await refused("./a/../../x");
  });

  test("case matters and trailing slashes are harmless", { timeout: 60_000 }, async () => {
    await refused(L.workdir.replace(/W$/, "w") + "/file.txt");
    assert.equal((await ws.resolve("sub/")).path, path.join(L.workdir, "sub"));
    assert.equal((await ws.resolve(L.workdir + "/")).path, L.workdir);
    assert.equal((await ws.resolve("sub//a.txt")).path, path.join(L.workdir, "sub", "a.txt"));
  });

  test("symlinks inside pointing inside are followed to their real path", { timeout: 60_000 }, async () => {
    await fsp.symlink("sub", path.join(L.workdir, "rel"));
    await fsp.symlink(path.join(L.workdir, "file.txt"), path.join(L.workdir, "abs"));
    assert.deepEqual(await ws.resolve("rel/a.txt"), {
      path: path.join(L.workdir, "sub", "a.txt"),
      area: "workdir",
      exists: true,
    });
    assert.equal((await ws.resolve("abs")).path, path.join(L.workdir, "file.txt"));
  });

  test("a chain of links that leaves and comes back is judged by where it ends", { timeout: 60_000 }, async () => {
    await fsp.symlink(path.join(L.workdir, "sub"), path.join(L.outside, "back"));
    await fsp.symlink(path.join(L.outside, "back"), path.join(L.workdir, "away"));
    assert.equal((await ws.resolve("away/a.txt")).path, path.join(L.workdir, "sub", "a.txt"));
    // ... and a chain that comes in and leaves again is refused.
    await fsp.symlink(path.join(L.outside, "secret.txt"), path.join(L.workdir, "sub", "leak"));
    await fsp.symlink(path.join(L.workdir, "sub", "leak"), path.join(L.outside, "in"));
    await fsp.symlink(path.join(L.outside, "in"), path.join(L.workdir, "via"));
    await refused("via");
  });

  test(".. after a symlink goes to the parent of the target, as the kernel does", { timeout: 60_000 }, async () => {
    await fsp.symlink(L.outside, path.join(L.workdir, "dirlink"));
    // Lexically this is W/file.txt; really it is R/file.txt.
    await refused("dirlink/../file.txt");
    // And the other way round: a link into W from a folder nested inside W.
    await fsp.symlink(path.join(L.workdir, "sub"), path.join(L.workdir, "sub", "self"));
    assert.equal((await ws.resolve("sub/self/../file.txt")).path, path.join(L.workdir, "file.txt"));
  });

  test("missing folders followed by .. are judged as they will be once created", { timeout: 60_000 }, async () => {
    assert.deepEqual(await ws.resolve("new/deeper/../x.txt"), {
      path: path.join(L.workdir, "new", "x.txt"),
      area: "workdir",
      exists: false,
    });
    await fsp.symlink(L.outside, path.join(L.workdir, "dirlink"));
    await refused("new/../dirlink/secret.txt");
    await refused("new/../../outside/x");
  });

  test("~ is not expanded: ~/x is a folder named ~ in the workdir", { timeout: 60_000 }, async () => {
    assert.equal((await ws.resolve("~/x")).path, path.join(L.workdir, "~", "x"));
    assert.equal((await ws.resolve("~")).path, path.join(L.workdir, "~"));
  });

  test("the empty string is refused; . is the workdir", { timeout: 60_000 }, async () => {
    const error = await rejectsWith(ws.resolve(""), "invalid_path");
    assert.match(error.message, /use "\."/);
    assert.deepEqual(await ws.resolve("."), { path: L.workdir, area: "workdir", exists: true });
  });

  test("a file used as a folder resolves inside, as not existing", { timeout: 60_000 }, async () => {
    assert.deepEqual(await ws.resolve("file.txt/x"), {
      path: path.join(L.workdir, "file.txt", "x"),
      area: "workdir",
      exists: false,
    });
  });

  test("a workdir given through a symlink is stored as its real path", { timeout: 60_000 }, async () => {
    const alias = path.join(L.root, "alias");
    await fsp.symlink(L.workdir, alias);
    const aliased = new Workspace(alias);
    assert.equal(aliased.workdir, L.workdir);
    assert.equal((await aliased.resolve(path.join(alias, "file.txt"))).path, path.join(L.workdir, "file.txt"));
    await rejectsWith(aliased.resolve(path.join(alias, "..", "outside")), "outside_workspace");
  });

  test(
    "a symlink into the workspace from outside is accepted (the real path is inside)",
    { timeout: 60_000 },
    async () => {
      await fsp.symlink(path.join(L.workdir, "file.txt"), path.join(L.outside, "to-inside"));
      assert.equal((await ws.resolve(path.join(L.outside, "to-inside"))).path, path.join(L.workdir, "file.txt"));
    },
  );

  test("long chains: 40 links resolve, 41 are a loop", { timeout: 60_000 }, async () => {
    for (let i = 0; i < 41; i++) {
      await fsp.symlink(i === 0 ? "file.txt" : `c${i - 1}`, path.join(L.workdir, `c${i}`));
    }
    assert.equal((await ws.resolve("c39")).path, path.join(L.workdir, "file.txt"));
    await rejectsWith(ws.resolve("c40"), "symlink_loop");
  });

  test("followFinalSymlink: false judges a final link by its own location", { timeout: 60_000 }, async () => {
    await fsp.symlink(path.join(L.outside, "secret.txt"), path.join(L.workdir, "link"));
    assert.deepEqual(await ws.resolve("link", { followFinalSymlink: false }), {
      path: path.join(L.workdir, "link"),
      area: "workdir",
      exists: true,
    });
    // Only the final component: a link earlier in the path is still followed.
    await fsp.symlink(L.outside, path.join(L.workdir, "dirlink"));
    await rejectsWith(ws.resolve("dirlink/secret.txt", { followFinalSymlink: false }), "outside_workspace");
    // A trailing slash asks for the target, as it does in the kernel.
    await rejectsWith(ws.resolve("link/", { followFinalSymlink: false }), "outside_workspace");
  });
});

describe("Workspace.resolve: swapped folders", () => {
  test("a temp dir replaced by a symlink is not trusted", { timeout: 60_000 }, async () => {
    const temp = await ws.tempDir();
    await fsp.rm(temp, { recursive: true });
    await fsp.symlink(L.outside, temp);
    await rejectsWith(ws.resolve(path.join(temp, "secret.txt")), "outside_workspace");
    await rejectsWith(ws.resolve(path.join(temp, "new.txt")), "outside_workspace");
    await fsp.rm(temp);
  });

  test(
    "a temp dir inside the workdir: swapping it or its parent for a symlink is noticed",
    { timeout: 60_000 },
    async () => {
      const inner = new Workspace(L.workdir, { tempParent: path.join(L.workdir, "sub") });
      const temp = await inner.tempDir();
      assert.equal((await inner.resolve(path.join(temp, "x"))).area, "temp");
      await fsp.rename(path.join(L.workdir, "sub"), path.join(L.workdir, "sub-moved"));
      await fsp.symlink(L.outside, path.join(L.workdir, "sub"));
      await rejectsWith(inner.resolve(path.join(temp, "x")), "outside_workspace");
      await rejectsWith(inner.resolve("sub/secret.txt"), "outside_workspace");
      await fsp.rm(path.join(L.workdir, "sub"));
      await fsp.rename(path.join(L.workdir, "sub-moved"), path.join(L.workdir, "sub"));
      await inner.dispose();
    },
  );

  test("a workdir replaced by a symlink after the workspace was made is not trusted", { timeout: 60_000 }, async () => {
    await fsp.rename(L.workdir, L.workdir + "-moved");
    await fsp.symlink(L.outside, L.workdir);
    await rejectsWith(ws.resolve("secret.txt"), "workspace_missing");
    await fsp.rm(L.workdir);
    await fsp.rename(L.workdir + "-moved", L.workdir);
  });

  test(
    "a folder above the workdir swapped for a link to where the workdir went: paths are walked from the workdir, " +
      "which is still the same folder, and the confined open refuses the path",
    { timeout: 60_000 },
    async () => {
      await fsp.mkdir(path.join(L.workdir, "sub", "deep"));
      await fsp.writeFile(path.join(L.workdir, "sub", "deep", "b.txt"), "b\n");
      await fsp.rename(L.root, L.root + "-moved");
      await fsp.symlink(L.root + "-moved", L.root);
      try {
        for (const options of [{ followFinalSymlink: false }, {}]) {
          const walked = await ws.resolve("file.txt", options);
          assert.deepEqual(walked, { path: path.join(L.workdir, "file.txt"), area: "workdir", exists: true });
          assert.throws(() => openReadConfined(walked.path), (error) => (error as ToolError).code === "path_changed");
        }
        // Three names down, realpath(3) resolves it, and sees where it really is now.
        await rejectsWith(ws.resolve("sub/deep/b.txt"), "outside_workspace");
      } finally {
        await fsp.rm(L.root);
        await fsp.rename(L.root + "-moved", L.root);
      }
    },
  );

  test("racing: a session temp dir deleted and made again at once is never taken for the session's", {
    timeout: 60_000,
  }, async () => {
    // Linux gives the new folder the freed inode number at once, and Deno's birth times are whole milliseconds:
    // without the folder held open, most rounds took the new folder for the old one.
    for (let round = 0; round < 100; round++) {
      const inner = new Workspace(L.workdir, { tempParent: L.tempParent });
      const temp = await inner.tempDir();
      fs.rmdirSync(temp);
      fs.mkdirSync(temp);
      await rejectsWith(inner.resolve(path.join(temp, "x.txt")), "workspace_missing");
      await inner.dispose();
    }
  });

  test("a session temp dir deleted while in use is workspace_missing too", { timeout: 60_000 }, async () => {
    const temp = await ws.tempDir();
    await fsp.rm(temp, { recursive: true });
    await rejectsWith(ws.resolve(path.join(temp, "x.txt")), "workspace_missing");
    await fsp.mkdir(temp);
    await rejectsWith(ws.resolve(path.join(temp, "x.txt")), "workspace_missing");
  });

  test(
    "a workdir deleted or replaced by another folder is workspace_missing, never re-created",
    { timeout: 60_000 },
    async () => {
      await fsp.rename(L.workdir, L.workdir + "-moved");
      await rejectsWith(ws.resolve("new/file.txt"), "workspace_missing");
      await fsp.mkdir(L.workdir);
      await rejectsWith(ws.resolve("new/file.txt"), "workspace_missing");
      await fsp.rmdir(L.workdir);
      await fsp.rename(L.workdir + "-moved", L.workdir);
      assert.equal((await ws.resolve("new/file.txt")).exists, false);
    },
  );
});

describe("Workspace lifecycle", () => {
  test("the workdir must exist and be a folder", { timeout: 60_000 }, () => {
    assert.throws(() => new Workspace(path.join(L.root, "missing")), UsageError);
    assert.throws(() => new Workspace(path.join(L.workdir, "file.txt")), UsageError);
    assert.throws(() => new Workspace(""), UsageError);
  });

  test(
    "concurrent tempDir calls share one folder; dispose removes it and it leaves the workspace",
    { timeout: 60_000 },
    async () => {
      const [a, b] = await Promise.all([ws.tempDir(), ws.tempDir()]);
      assert.equal(a, b);
      assert.deepEqual(await fsp.readdir(L.tempParent), [path.basename(a)]);
      await fsp.writeFile(path.join(a, "x"), "x");
      await ws.dispose();
      assert.equal(ws.tempDirCreated, false);
      assert.equal(await exists(a), false);
      await rejectsWith(ws.resolve(path.join(a, "x")), "outside_workspace");
    },
  );

  test("a failed temp dir creation can be retried", { timeout: 60_000 }, async () => {
    const broken = new Workspace(L.workdir, { tempParent: path.join(L.root, "no-such-parent") });
    await assert.rejects(broken.tempDir(), { code: "ENOENT" });
    await fsp.mkdir(path.join(L.root, "no-such-parent"));
    assert.ok((await broken.tempDir()).startsWith(path.join(L.root, "no-such-parent")));
    await broken.dispose();
  });

  test("relative() shows workdir paths relative and others absolute", { timeout: 60_000 }, () => {
    assert.equal(ws.relative(path.join(L.workdir, "sub", "a.txt")), "sub/a.txt");
    assert.equal(ws.relative(L.workdir), ".");
    assert.equal(ws.relative(path.join(L.secrets, "x")), path.join(L.secrets, "x"));
  });
});

describe("Workspace.dispose against a racer", () => {
  test("a folder of the temp dir swapped for a link while it goes never takes a file outside with it", {
    timeout: 120_000,
  }, async () => {
    // Commands write in the temp dir, and one the session's close did not end could swap a folder there for a
    // link while the dir is removed; a removal that lists and unlinks by path follows it.
    const outside = path.join(L.root, "outside-of-temp");
    await fsp.mkdir(outside);
    const names = Array.from({ length: 200 }, (_, i) => `keep-${i}.txt`);
    for (const name of names) await fsp.writeFile(path.join(outside, name), "keep\n");
    for (let round = 0; round < 12; round++) {
      const inner = new Workspace(L.workdir, { tempParent: L.tempParent });
      const temp = await inner.tempDir();
      const sub = path.join(temp, "sub");
      await fsp.mkdir(sub);
      for (const name of names) await fsp.writeFile(path.join(sub, name), "temp\n");
      await whileSwappedForLink(temp, "sub", outside, () => inner.dispose().catch(() => {}));
      await fsp.rm(temp, { recursive: true, force: true });
      assert.deepEqual((await fsp.readdir(outside)).sort(), [...names].sort(), `round ${round}`);
    }
  });
});

// A server's other tenants' folders are closed to a tenant's paths. Walked as the kernel walks it, a path through
// another tenant's folder that comes back (`/srv/tenants/bob/x/../../alice/f`) answered by what bob's `x` was: a link
// there led elsewhere before the `..`, a folder or a file did not.
describe("Workspace.resolve with closed folders", () => {
  test("a path into a closed folder is outside at that step, whatever lies there", { timeout: 60_000 }, async () => {
    const bob = L.outside;
    await fsp.mkdir(path.join(bob, "dir"));
    await fsp.writeFile(path.join(bob, "file"), "bob's\n");
    await fsp.symlink("/", path.join(bob, "link"));
    await fsp.symlink("loop", path.join(bob, "loop"));
    await fsp.symlink(path.join(L.workdir, "sub"), path.join(bob, "back"));
    const open = ws;
    const closed = new Workspace(L.workdir, { tempParent: L.tempParent, closedFolders: [L.root] });
    const answers = async (workspace: Workspace, input: string) =>
      await workspace.resolve(input).then((r) => r.path, (error: ToolError) => error.code);
    // Joined by hand: path.join would take the `..` away before the walk sees them.
    const probes = ["dir", "file", "link", "loop", "back", "missing"].map((name) => `${bob}/${name}/../../W/file.txt`);
    // Without the closed folder the answers tell bob's entries apart (the oracle this closes).
    const told = new Set(await Promise.all(probes.map((probe) => answers(open, probe))));
    assert.ok(told.size > 1, [...told].join(", "));
    for (const probe of probes) assert.equal(await answers(closed, probe), "outside_workspace", probe);
    // A link of the workspace into the closed folder and back in is refused too; the workspace's own paths resolve.
    await fsp.symlink(path.join(bob, "back"), path.join(L.workdir, "away"));
    assert.equal(await answers(closed, "away/a.txt"), "outside_workspace");
    assert.equal(await answers(closed, "sub/a.txt"), path.join(L.workdir, "sub", "a.txt"));
    assert.equal(await answers(closed, path.join(L.workdir, "file.txt")), path.join(L.workdir, "file.txt"));
    assert.equal(
      await answers(closed, path.join(L.root, "W", "sub", "..", "file.txt")),
      path.join(L.workdir, "file.txt"),
    );
    const temp = await closed.tempDir();
    await fsp.writeFile(path.join(temp, "t.txt"), "t\n");
    assert.equal(await answers(closed, path.join(temp, "t.txt")), path.join(temp, "t.txt"));
  });
});
