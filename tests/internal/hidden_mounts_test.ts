// The policy's denied paths in a real bubblewrap sandbox, against a command
// that tries to bring one into view: renaming the folders above it (a cover
// moves with its folder, and the next command's walk would find the file
// under a name no rule matches), linking, copying, and reading absolute
// denied paths outside the workspace (a server's token file under /etc).
// A generative case runs random moves and checks, by inode, that every
// denied file is still where a rule names it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { pathGlobMatcher } from "../../internal/path_globs.ts";
import { runSandboxed } from "../policy/_sandbox_run.ts";

const status = await bubblewrapStatus();
const skip = status.path === undefined ? `bubblewrap is unavailable here: ${status.reason}` : false;
const SECRET = "SECRET-planted-by-hidden-mounts-test";

async function sandboxed(workdir: string, hiddenPaths: string[], script: string) {
  const command = await sandboxArgv(["bash", "-c", script], {
    workdir,
    writable: [workdir],
    workspace: workdir,
    mode: "required",
    hiddenPaths,
  });
  try {
    return await runSandboxed(command, { PATH: "/usr/bin:/bin", HOME: "/root" });
  } finally {
    await command.release();
  }
}

async function workspace(files: Record<string, string>): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-hidden-")));
  for (const [name, text] of Object.entries(files)) {
    await fsp.mkdir(path.join(dir, path.dirname(name)), { recursive: true });
    await fsp.writeFile(path.join(dir, name), text);
  }
  return dir;
}

// Every file under `dir` with its inode, by path relative to `dir`.
async function inodes(dir: string): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  for (const entry of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = path.join(entry.parentPath, entry.name);
    const { ino } = await fsp.stat(abs);
    found.set(ino, [...found.get(ino) ?? [], path.relative(dir, abs)]);
  }
  return found;
}

describe("denied paths inside the sandbox", { skip }, () => {
  test("the folders above a denied file cannot be renamed, so it never leaves its rule", {
    timeout: 60_000,
  }, async () => {
    const dir = await workspace({ "config/prod.json": SECRET, "config/deep/x.key": SECRET, "config/ok.txt": "ok" });
    const deny = ["config/prod.json", "**/*.key"];
    try {
      for (
        const attack of [
          "mv conf* cfg2",
          "mv config/deep d2",
          "mv config/prod.json p.json",
          "ln config/prod.json p.json",
          "cp -a config c3",
          "mkdir n && mv config n/",
          "rm -rf config",
          "python3 -c \"import os; os.rename('config', 'c4')\"",
        ]
      ) {
        await sandboxed(dir, deny, `${attack} 2>/dev/null; true`);
        const read = await sandboxed(dir, deny, "cat $(find . -type f) 2>/dev/null; true");
        assert.doesNotMatch(read.stdout, new RegExp(SECRET), attack);
        assert.equal(await fsp.readFile(path.join(dir, "config/prod.json"), "utf8"), SECRET, attack);
        assert.equal(await fsp.readFile(path.join(dir, "config/deep/x.key"), "utf8"), SECRET, attack);
      }
      // The rest of the folder is ordinary: its other files can be written, moved and removed.
      await fsp.writeFile(path.join(dir, "config/ok.txt"), "ok");
      const ordinary = await sandboxed(
        dir,
        deny,
        "echo x > config/new.txt && mv config/new.txt config/n2.txt && rm config/n2.txt && cat config/ok.txt",
      );
      assert.equal(ordinary.stdout, "ok", ordinary.stderr);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  test("random moves and copies never put a denied file under a name no rule matches (by inode)", {
    timeout: 120_000,
  }, async () => {
    const names = ["a", "b", "c", "s"];
    const files: Record<string, string> = {};
    for (const top of names) for (const sub of names) files[`${top}/${sub}/f.txt`] = SECRET;
    const dir = await workspace(files);
    // Rules that hold by place, not by name: a file moved out of its folder would leave them.
    const deny = ["s/**", "a/b/**", "**/c/f.txt"];
    const denied = pathGlobMatcher(deny);
    let seed = 20261203;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = (list: string[]) => list[random(list.length)];
    try {
      const secrets = [...(await inodes(dir))].filter(([, paths]) => paths.some((p) => denied(p))).map(([ino]) => ino);
      for (let round = 0; round < 12; round++) {
        const ops = Array.from({ length: 6 }, () => {
          const from = `${pick(names)}${random(2) ? `/${pick(names)}` : ""}`;
          const to = `${pick(names)}${random(3)}`;
          return pick([
            `mv ${from} ${to}`,
            `mv ${from}/* ${to}/`,
            `mkdir -p ${to} && mv ${from} ${to}/`,
            `cp -r ${from} ${to}`,
            `ln ${from}/f.txt ${to}.txt`,
            `mv ${from}/f.txt ${to}.txt`,
          ]);
        });
        await sandboxed(dir, deny, ops.map((op) => `${op} 2>/dev/null`).join("; ") + "; true");
        const now = await inodes(dir);
        for (const ino of secrets) {
          const paths = now.get(ino) ?? [];
          assert.ok(paths.length > 0, `round ${round}: a denied file is gone after ${ops.join("; ")}`);
          for (const p of paths) {
            assert.ok(denied(p), `round ${round}: a denied file is at ${p} after ${ops.join("; ")}`);
          }
        }
      }
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });

  describe("absolute denied paths outside the workspace", () => {
    let etc: string | undefined;
    before(async () => {
      try {
        etc = await fsp.mkdtemp("/etc/toolfence-hidden-test-");
        // Readable by others, as /etc's folders are: mkdtemp's 0700 made it private, and the sandbox masks /etc's
        // private entries, once its look at them (cached 10 s) was made after the folder was (CI run ci6).
        await fsp.chmod(etc, 0o755);
        await fsp.writeFile(path.join(etc, "tokens.json"), SECRET);
        await fsp.mkdir(path.join(etc, "keys"));
        await fsp.writeFile(path.join(etc, "keys", "a.pem"), SECRET);
        await fsp.writeFile(path.join(etc, "public.txt"), "public");
      } catch {
        etc = undefined; // Not root: /etc cannot hold a planted file.
      }
    });
    after(async () => {
      if (etc) await fsp.rm(etc, { recursive: true, force: true });
    });

    test("a literal path, a folder's glob and a link to them from the workspace are covered in the read view", {
      timeout: 60_000,
    }, async (t) => {
      if (etc === undefined) return t.skip("/etc is not writable here");
      const dir = await workspace({ "a.txt": "a" });
      await fsp.symlink(path.join(etc, "tokens.json"), path.join(dir, "link"));
      try {
        const ran = await sandboxed(
          dir,
          [path.join(etc, "tokens.json"), `${etc}/keys/**`],
          `cat ${etc}/tokens.json ${etc}/keys/a.pem link 2>/dev/null; cat ${etc}/public.txt`,
        );
        assert.doesNotMatch(ran.stdout, new RegExp(SECRET));
        assert.equal(ran.stdout, "public");
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    });
  });
});
