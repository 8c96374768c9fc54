// createScratch and Scratch: a faithful, confined copy (links never followed
// out, special files left out), an input digest that depends on content only,
// a session that works in the copy, the changes found, and publication: all
// or none, refused over a workspace file changed meanwhile, undone on failure.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createScratch } from "../../../policy/scratch/scratch.ts";
import { inputDigest } from "../../../policy/scratch/digest.ts";
import { inputDigest as exported } from "../../../policy/mod.ts";
import { createHash } from "node:crypto";
import { Session } from "../../../policy/session.ts";
import { Workspace } from "../../../policy/workspace.ts";
import { ToolBox } from "../../../toolbox.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { ToolError } from "../../../core/errors.ts";
import { fingerprint } from "./_tree_fingerprint.ts";
import { exited } from "../../_exited.ts";

const noBwrap = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;

let root: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-scratch-")));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

let counter = 0;
/** A workspace with files, a folder, modes, an inside link, an outside link and a FIFO; and an outside secret. */
async function layout() {
  const base = path.join(root, `case-${counter++}`);
  const workdir = path.join(base, "W");
  const outside = path.join(base, "outside");
  await fsp.mkdir(path.join(workdir, "src", "deep"), { recursive: true });
  await fsp.mkdir(outside);
  await fsp.writeFile(path.join(outside, "secret.txt"), "outside secret\n");
  await fsp.writeFile(path.join(workdir, "a.txt"), "alpha\n");
  await fsp.writeFile(path.join(workdir, "run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  await fsp.chmod(path.join(workdir, "run.sh"), 0o755);
  await fsp.writeFile(path.join(workdir, "src", "main.ts"), "export const x = 1;\n");
  await fsp.writeFile(path.join(workdir, "src", "deep", "b.bin"), new Uint8Array([0, 1, 2, 255]));
  await fsp.chmod(path.join(workdir, "src", "deep"), 0o750);
  await fsp.symlink("a.txt", path.join(workdir, "link-in"));
  await fsp.symlink(path.join(outside, "secret.txt"), path.join(workdir, "link-out"));
  await fsp.symlink("../outside", path.join(workdir, "dir-out"));
  execFileSync("mkfifo", [path.join(workdir, "pipe")]);
  return { base, workdir, outside };
}

describe("createScratch: the copy", () => {
  test("copies files, modes, folders and links as they are, never following a link out, and leaves out a FIFO", {
    timeout: 60_000,
  }, async () => {
    const { workdir } = await layout();
    const scratch = await createScratch(workdir);
    try {
      const copy = scratch.root;
      assert.ok(copy !== workdir && !copy.startsWith(workdir + "/"));
      assert.equal(await fsp.readFile(path.join(copy, "a.txt"), "utf8"), "alpha\n");
      assert.equal((await fsp.stat(path.join(copy, "run.sh"))).mode & 0o777, 0o755);
      assert.equal((await fsp.stat(path.join(copy, "src", "deep"))).mode & 0o777, 0o750);
      assert.deepEqual(await fsp.readFile(path.join(copy, "src", "deep", "b.bin")), Buffer.from([0, 1, 2, 255]));
      assert.equal(await fsp.readlink(path.join(copy, "link-in")), "a.txt");
      // The outside link is a link with the same text; the secret's content is nowhere in the copy.
      assert.ok((await fsp.lstat(path.join(copy, "link-out"))).isSymbolicLink());
      assert.ok((await fsp.lstat(path.join(copy, "dir-out"))).isSymbolicLink());
      const copied = await fingerprint(copy);
      const secretHash = createHash("sha256").update("outside secret\n").digest("hex");
      assert.ok(!Object.values(copied).some((v) => v.includes(secretHash)), "the outside secret was copied");
      assert.equal(copied["link-out"].split(" ")[0], "link");
    } finally {
      await fsp.access(path.join(scratch.root, "pipe")).then(
        () => assert.fail("the FIFO was copied"),
        () => {},
      );
      assert.deepEqual(scratch.skipped, ["pipe"]);
      await scratch.dispose();
    }
  });

  test("the scratch session's workspace is the copy: an outward link there is refused, the host is not reachable", {
    timeout: 60_000,
  }, async () => {
    const { workdir } = await layout();
    const scratch = await createScratch(workdir);
    try {
      assert.equal(scratch.session.workspace.workdir, scratch.root);
      await assert.rejects(scratch.session.workspace.resolve("link-out"), { code: "outside_workspace" });
      await assert.rejects(scratch.session.workspace.resolve("dir-out/secret.txt"), { code: "outside_workspace" });
      await assert.rejects(scratch.session.workspace.resolve(path.join(workdir, "a.txt")), {
        code: "outside_workspace",
      });
      assert.equal((await scratch.session.workspace.resolve("link-in")).path, path.join(scratch.root, "a.txt"));
    } finally {
      await scratch.dispose();
    }
  });

  test("the input digest depends only on paths, types, modes and content: not on location or times", {
    timeout: 60_000,
  }, async () => {
    const one = await layout();
    const two = await layout();
    // Different times, same content.
    await fsp.utimes(path.join(two.workdir, "a.txt"), new Date(2001, 1, 1), new Date(2001, 1, 1));
    // The outside links have different text in the two layouts: make them the same.
    for (const w of [one.workdir, two.workdir]) {
      await fsp.unlink(path.join(w, "link-out"));
      await fsp.symlink("/etc/hostname", path.join(w, "link-out"));
    }
    const [a, b] = [await createScratch(one.workdir), await createScratch(two.workdir)];
    try {
      assert.match(a.digest, /^[0-9a-f]{64}$/);
      assert.equal(a.digest, b.digest);
    } finally {
      await a.dispose();
      await b.dispose();
    }
    const variants: ((w: string) => Promise<void>)[] = [
      (w) => fsp.writeFile(path.join(w, "a.txt"), "alphA\n"),
      (w) => fsp.chmod(path.join(w, "a.txt"), 0o600),
      (w) => fsp.rename(path.join(w, "a.txt"), path.join(w, "A.txt")),
      (w) => fsp.mkdir(path.join(w, "empty")),
      async (w) => {
        await fsp.unlink(path.join(w, "link-in"));
        await fsp.symlink("run.sh", path.join(w, "link-in"));
      },
      async (w) => {
        // Same content, a link instead of a file.
        await fsp.unlink(path.join(w, "a.txt"));
        await fsp.symlink("alpha\n", path.join(w, "a.txt"));
      },
    ];
    for (const change of variants) {
      const fresh = await layout();
      await fsp.unlink(path.join(fresh.workdir, "link-out"));
      await fsp.symlink("/etc/hostname", path.join(fresh.workdir, "link-out"));
      await change(fresh.workdir);
      const s = await createScratch(fresh.workdir);
      try {
        assert.notEqual(s.digest, a.digest, `unchanged digest after ${change}`);
      } finally {
        await s.dispose();
      }
    }
  });

  test(
    "every copy method gives the same copy and digest; cp and auto clone where they can",
    { timeout: 60_000 },
    async () => {
      const { workdir } = await layout();
      const made = [];
      for (const copy of ["stream", "cp", "auto"] as const) made.push(await createScratch(workdir, { copy }));
      try {
        const [stream, cp, auto] = made;
        assert.equal(stream.cloned, 0);
        assert.equal(cp.cloned, 4, "cp copies every regular file");
        assert.ok(auto.cloned === 0 || auto.cloned === 4);
        for (const other of [cp, auto]) {
          assert.equal(other.digest, stream.digest);
          assert.deepEqual(await fingerprint(other.root), await fingerprint(stream.root));
        }
        // No staging folders are left in the copies.
        for (const s of made) assert.ok(!Object.keys(await fingerprint(s.root)).some((k) => k.includes(".toolfence-")));
      } finally {
        for (const s of made) await s.dispose();
      }
    },
  );

  test("a folder of more files than one clone batch is copied whole by cp, never holding them all open", {
    timeout: 60_000,
  }, async () => {
    const workdir = path.join(root, `many-${counter++}`);
    await fsp.mkdir(workdir, { recursive: true });
    for (let i = 0; i < 450; i++) await fsp.writeFile(path.join(workdir, `f${i}.txt`), `${i}\n`);
    const [cp, stream] = [
      await createScratch(workdir, { copy: "cp" }),
      await createScratch(workdir, { copy: "stream" }),
    ];
    try {
      assert.equal(cp.cloned, 450);
      assert.equal(cp.digest, stream.digest);
    } finally {
      await cp.dispose();
      await stream.dispose();
    }
  });

  test("inputDigest is exported and independent of insertion order", { timeout: 60_000 }, () => {
    assert.equal(exported, inputDigest);
    const s = (sha: string) => ({ type: "file" as const, size: 1, mode: 0o644, sha256: sha.repeat(64) });
    const x = new Map([["b", s("1")], ["a", s("2")]]);
    const y = new Map([["a", s("2")], ["b", s("1")]]);
    assert.equal(inputDigest(x), inputDigest(y));
    // A path with a newline cannot pose as two entries.
    const tricky = new Map([[`a","file",420,"${"2".repeat(64)}"]\n["b`, s("1")]]);
    assert.notEqual(inputDigest(tricky), inputDigest(y));
  });

  test(
    "named paths: only those are copied and covered; a path outside the workspace is refused",
    { timeout: 60_000 },
    async () => {
      const { workdir } = await layout();
      const scratch = await createScratch(workdir, {
        paths: ["src/deep", "./a.txt", "src/deep/b.bin", "new/file.txt"],
      });
      try {
        assert.deepEqual([...scratch.paths], ["a.txt", "new/file.txt", "src/deep"]);
        assert.ok(scratch.covers("src/deep/b.bin") && scratch.covers("new/file.txt") && !scratch.covers("src/main.ts"));
        await fsp.access(path.join(scratch.root, "src", "deep", "b.bin"));
        await assert.rejects(fsp.access(path.join(scratch.root, "src", "main.ts")));
        await assert.rejects(fsp.access(path.join(scratch.root, "run.sh")));
      } finally {
        await scratch.dispose();
      }
      for (const bad of ["../outside", "/etc", "dir-out/secret.txt"]) {
        await assert.rejects(createScratch(workdir, { paths: [bad] }), { code: "outside_workspace" }, bad);
      }
    },
  );

  test("made from a session: in its temp dir, with its host and settings; the copy is never copied into itself", {
    timeout: 60_000,
  }, async () => {
    const { workdir } = await layout();
    // The session temp dir inside the workdir: the walk must skip it.
    const session = new Session({
      workspace: new Workspace(workdir, { tempParent: workdir }),
      autoConfirm: true,
      sandbox: "off",
    });
    try {
      await session.workspace.tempDir();
      const scratch = await createScratch(session);
      try {
        assert.ok(scratch.root.startsWith((await session.workspace.tempDir()) + "/"));
        assert.equal(scratch.session.autoConfirm, true);
        assert.equal(scratch.session.policy.sandbox, "off");
        const names = await fsp.readdir(scratch.root);
        assert.ok(!names.some((n) => n.startsWith("toolfence-")), names.join(","));
      } finally {
        await scratch.dispose();
      }
    } finally {
      await session.close();
      await session.workspace.dispose();
    }
  });
});

describe("Scratch: work in the copy, then publish", () => {
  test(
    "every built-in file tool works in the copy and leaves the workspace byte for byte unchanged; dispose never publishes",
    { timeout: 60_000 },
    async () => {
      const { workdir } = await layout();
      const before = await fingerprint(workdir);
      const scratch = await createScratch(workdir, { session: { autoConfirm: true, sandbox: "off" } });
      const box = new ToolBox().withDefaults("fs", "patch", "cmd", "search");
      const ok = async (name: string, args: Record<string, unknown>) => {
        const result = await box.call(scratch.session, name, args);
        assert.equal(result.status, "success", `${name}: ${result.error}`);
        return result;
      };
      try {
        await ok("write_file", { path: "new.txt", content: "new\n" });
        await ok("edit_file", { path: "a.txt", old_text: "alpha", new_text: "ALPHA" });
        await ok("apply_patch", {
          patch:
            "*** Begin Patch\n*** Update File: src/main.ts\n@@\n-export const x = 1;\n+export const x = 2;\n*** End Patch\n",
        });
        await ok("move", { src: "run.sh", dst: "bin/run.sh" });
        await ok("delete", { path: "src/deep", recursive: true });
        const grep = await ok("grep", { pattern: "ALPHA" });
        assert.match(JSON.stringify(grep.output), /a\.txt/);
        const glob = await ok("glob", { pattern: "**/*.ts" });
        assert.match(JSON.stringify(glob.output), /src\/main\.ts/);
        const read = await ok("read_file", { path: "link-in" });
        assert.match(JSON.stringify(read.output), /ALPHA/);
        const bash = await ok("bash", { command: "pwd && echo made > by-bash.txt" });
        assert.ok(JSON.stringify(bash.output).includes(scratch.root), JSON.stringify(bash.output));
        assert.equal(await fsp.readFile(path.join(scratch.root, "by-bash.txt"), "utf8"), "made\n");
        const { changes } = await scratch.changes();
        const summary = changes.map((c) => `${c.change} ${c.path}${c.from ? ` <- ${c.from}` : ""}`);
        assert.deepEqual(summary, [
          "modified a.txt",
          "created bin",
          "moved bin/run.sh <- run.sh",
          "created by-bash.txt",
          "created new.txt",
          "deleted src/deep",
          "deleted src/deep/b.bin",
          "modified src/main.ts",
        ]);
        assert.deepEqual(await fingerprint(workdir), before);
      } finally {
        await scratch.dispose();
      }
      assert.deepEqual(await fingerprint(workdir), before, "dispose published something");
      await assert.rejects(fsp.access(scratch.root));
    },
  );

  test(
    "bash in the sandbox works in the copy and cannot write to the workspace",
    { timeout: 60_000, skip: noBwrap },
    async () => {
      const { workdir } = await layout();
      const before = await fingerprint(workdir);
      // A person who says yes to every command: only the sandbox stands between them and the workspace.
      const host = callbackHost({
        choose: <T extends string>(request: { defaultChoice: T }) => Promise.resolve(request.defaultChoice),
        confirm: () => Promise.resolve(true),
      });
      const scratch = await createScratch(workdir, { session: { host, sandbox: "required" } });
      try {
        const box = new ToolBox().withDefaults("cmd");
        const result = await box.call(scratch.session, "bash", {
          command: `pwd; echo copy > in-copy.txt; echo host > '${workdir}/pwned.txt'; rm -f '${workdir}/a.txt'; true`,
        });
        // The output (the command's stderr: bubblewrap's own error, when it is the one that failed) in the message.
        assert.equal(result.status, "success", `${result.error}\n${JSON.stringify(result.output)}`);
        assert.ok(JSON.stringify(result.output).includes(scratch.root));
        assert.equal(await fsp.readFile(path.join(scratch.root, "in-copy.txt"), "utf8"), "copy\n");
        assert.deepEqual(await fingerprint(workdir), before);
      } finally {
        await scratch.dispose();
      }
    },
  );

  test("publish applies exactly the given changes, with modes, moves and deletions, and they become the baseline", {
    timeout: 60_000,
  }, async () => {
    const { workdir } = await layout();
    const scratch = await createScratch(workdir);
    try {
      const copy = scratch.root;
      await fsp.writeFile(path.join(copy, "a.txt"), "changed\n");
      await fsp.chmod(path.join(copy, "a.txt"), 0o600);
      await fsp.mkdir(path.join(copy, "bin"));
      await fsp.rename(path.join(copy, "run.sh"), path.join(copy, "bin", "run.sh"));
      await fsp.rm(path.join(copy, "src", "deep"), { recursive: true });
      await fsp.unlink(path.join(copy, "link-in"));
      await fsp.symlink("src/main.ts", path.join(copy, "link-in"));
      await fsp.writeFile(path.join(copy, "left.txt"), "not published\n");
      const { changes } = await scratch.changes();
      const chosen = changes.filter((c) => c.path !== "left.txt");
      const applied = await scratch.publish(chosen);
      assert.deepEqual(applied, chosen);
      assert.equal(await fsp.readFile(path.join(workdir, "a.txt"), "utf8"), "changed\n");
      assert.equal((await fsp.stat(path.join(workdir, "a.txt"))).mode & 0o777, 0o600);
      assert.equal((await fsp.stat(path.join(workdir, "bin", "run.sh"))).mode & 0o777, 0o755);
      await assert.rejects(fsp.lstat(path.join(workdir, "run.sh")));
      await assert.rejects(fsp.lstat(path.join(workdir, "src", "deep")));
      assert.equal(await fsp.readlink(path.join(workdir, "link-in")), "src/main.ts");
      await assert.rejects(fsp.access(path.join(workdir, "left.txt")));
      // No temp files or backups are left in the workspace.
      const leftovers = execFileSync("find", [workdir, "-name", ".toolfence-*"], { encoding: "utf8" }).trim();
      assert.equal(leftovers, "");
      assert.deepEqual((await scratch.changes()).changes.map((c) => c.path), ["left.txt"]);
    } finally {
      await scratch.dispose();
    }
  });

  test(
    "a file replaced by a FIFO in the copy is listed as unpublishable and left alone",
    { timeout: 60_000 },
    async () => {
      const { workdir } = await layout();
      const scratch = await createScratch(workdir);
      try {
        await fsp.unlink(path.join(scratch.root, "a.txt"));
        execFileSync("mkfifo", [path.join(scratch.root, "a.txt")]);
        execFileSync("mkfifo", [path.join(scratch.root, "new-pipe")]);
        const { changes, unpublishable } = await scratch.changes();
        assert.deepEqual(changes, []);
        assert.deepEqual(unpublishable, ["a.txt", "new-pipe"]);
      } finally {
        await scratch.dispose();
      }
    },
  );

  test("a workspace file changed meanwhile refuses, naming each file and its hashes, and changes nothing", {
    timeout: 60_000,
  }, async () => {
    const { workdir } = await layout();
    const scratch = await createScratch(workdir);
    try {
      await fsp.writeFile(path.join(scratch.root, "a.txt"), "scratch\n");
      await fsp.writeFile(path.join(scratch.root, "src", "main.ts"), "scratch\n");
      await fsp.writeFile(path.join(scratch.root, "fresh.txt"), "scratch\n");
      // Meanwhile a person edits a.txt and creates fresh.txt in the workspace.
      await fsp.writeFile(path.join(workdir, "a.txt"), "person\n");
      await fsp.writeFile(path.join(workdir, "fresh.txt"), "person\n");
      const before = await fingerprint(workdir);
      const { changes } = await scratch.changes();
      const error = await scratch.publish(changes).then(() => undefined, (e) => e);
      assert.ok(error instanceof ToolError, String(error));
      assert.equal(error.code, "host_changed");
      assert.match(error.message, /a\.txt/);
      assert.match(error.message, /fresh\.txt/);
      assert.doesNotMatch(error.message, /main\.ts/);
      const changed = (error.details as { changed: { path: string; expectedSha256: string; foundSha256: string }[] })
        .changed;
      assert.deepEqual(changed.map((c) => c.path), ["a.txt", "fresh.txt"]);
      assert.equal(changed[0].expectedSha256, scratch.baseline("a.txt")!.sha256);
      assert.match(changed[0].foundSha256, /^[0-9a-f]{64}$/);
      assert.equal(changed[1].expectedSha256, null);
      assert.deepEqual(await fingerprint(workdir), before);
    } finally {
      await scratch.dispose();
    }
  });

  test(
    "a workspace folder replaced by a link out meanwhile refuses, and nothing lands outside",
    { timeout: 60_000 },
    async () => {
      const { workdir, outside } = await layout();
      const scratch = await createScratch(workdir);
      try {
        await fsp.writeFile(path.join(scratch.root, "src", "deep", "new.txt"), "new\n");
        await fsp.writeFile(path.join(scratch.root, "src", "main.ts"), "changed\n");
        await fsp.rename(path.join(workdir, "src", "deep"), path.join(workdir, "deep-moved"));
        await fsp.symlink(outside, path.join(workdir, "src", "deep"));
        const outsideBefore = await fingerprint(outside);
        const before = await fingerprint(workdir);
        const { changes } = await scratch.changes();
        const error = await scratch.publish(changes).then(() => undefined, (e) => e);
        assert.equal(error?.code, "host_changed", String(error));
        assert.match(error.message, /src\/deep/);
        assert.deepEqual(await fingerprint(outside), outsideBefore);
        assert.deepEqual(await fingerprint(workdir), before);
      } finally {
        await scratch.dispose();
      }
    },
  );

  test(
    "a failure part-way undoes every change already made (publish_failed), leaving no debris",
    { timeout: 60_000 },
    async () => {
      const { workdir } = await layout();
      const scratch = await createScratch(workdir);
      try {
        await fsp.writeFile(path.join(scratch.root, "a.txt"), "one\n");
        await fsp.unlink(path.join(scratch.root, "run.sh"));
        await fsp.rm(path.join(scratch.root, "src", "deep"), { recursive: true });
        await fsp.mkdir(path.join(scratch.root, "made"));
        await fsp.writeFile(path.join(scratch.root, "made", "new.txt"), "two\n");
        await fsp.writeFile(path.join(scratch.root, "src", "main.ts"), "three\n");
        const before = await fingerprint(workdir);
        const { changes } = await scratch.changes();
        const steps: string[] = [];
        // Something writes to the copy while it is published: the last file is no longer what was shown.
        const error = await scratch.publish(changes, {
          onStep: (s) => {
            steps.push(s);
            if (steps.length === 4) void fsp.writeFile(path.join(scratch.root, "src", "main.ts"), "sneaked in\n");
          },
        }).then(() => undefined, (e) => e);
        assert.equal(error?.code, "publish_failed", String(error));
        assert.match(error.message, /src\/main\.ts/);
        assert.ok(steps.length >= 4, steps.join(", "));
        assert.deepEqual(await fingerprint(workdir), before);
        const leftovers = execFileSync("find", [workdir, "-name", ".toolfence-*"], { encoding: "utf8" }).trim();
        assert.equal(leftovers, "");
      } finally {
        await scratch.dispose();
      }
    },
  );

  test("a cancel between steps undoes what was done", { timeout: 60_000 }, async () => {
    const { workdir } = await layout();
    const scratch = await createScratch(workdir);
    try {
      for (let i = 0; i < 5; i++) await fsp.writeFile(path.join(scratch.root, `f${i}.txt`), `${i}\n`);
      await fsp.writeFile(path.join(scratch.root, "a.txt"), "changed\n");
      const before = await fingerprint(workdir);
      const controller = new AbortController();
      const { changes } = await scratch.changes();
      let n = 0;
      const error = await scratch.publish(changes, {
        signal: controller.signal,
        onStep: () => (++n === 3 ? controller.abort(new Error("stop")) : undefined),
      }).then(() => undefined, (e) => e);
      assert.equal(error?.code, "publish_failed");
      assert.deepEqual(await fingerprint(workdir), before);
    } finally {
      await scratch.dispose();
    }
  });
});

describe("createScratch: the host's temp dir", () => {
  test("the copy's own temp dir is made in its folder as it was, never through a link a host command put there", {
    timeout: 60_000,
  }, async () => {
    const base = path.join(root, `case-${counter++}`);
    const workdir = path.join(base, "W");
    const outside = path.join(base, "outside");
    await fsp.mkdir(workdir, { recursive: true });
    await fsp.mkdir(outside);
    await fsp.mkdir(path.join(base, "T"));
    await fsp.writeFile(path.join(workdir, "a.txt"), "a\n");
    const host = new Workspace(workdir, { tempParent: path.join(base, "T") });
    const scratch = await createScratch(host);
    try {
      // A command of the host session makes the scratch folder (in the host's temp dir) a link out.
      const folder = path.dirname(scratch.root);
      await fsp.rename(folder, folder + ".away");
      await fsp.symlink(outside, folder);
      await assert.rejects(scratch.session.workspace.tempDir());
      assert.deepEqual(await fsp.readdir(outside), []);
      await fsp.rm(folder);
      await fsp.rename(folder + ".away", folder);
    } finally {
      await scratch.dispose();
      await host.dispose();
    }
  });

  test(
    "makes the copy's folders without following a link a command put in place of one",
    { timeout: 60_000 },
    async () => {
      const base = path.join(root, `case-${counter++}`);
      const workdir = path.join(base, "W");
      const outside = path.join(base, "outside");
      await fsp.mkdir(path.join(workdir, "a", "b"), { recursive: true });
      await fsp.mkdir(outside);
      await fsp.mkdir(path.join(base, "T"));
      await fsp.writeFile(path.join(workdir, "a", "b", "c.txt"), "c\n");
      const host = new Workspace(workdir, { tempParent: path.join(base, "T") });
      const temp = await host.tempDir();
      // A command of the host session: each scratch copy's workspace folder becomes a link out as soon as it appears.
      const racer = spawn("perl", [
        "-e",
        `my ($temp, $out) = @ARGV;
       while (1) { for my $w (glob("$temp/scratch-*/workspace")) { next if -l $w; rename($w, "$w.real") && symlink($out, $w); } }`,
        temp,
        outside,
      ], { stdio: "ignore" });
      const racerExit = exited(racer);
      try {
        for (let i = 0; i < 20; i++) {
          const scratch = await createScratch(host, { paths: ["a/b/c.txt"] }).catch(() => undefined);
          // Its removal may meet the racer's link too (and refuse to follow it): only what lies outside counts here.
          await scratch?.dispose().catch(() => {});
          assert.deepEqual(await fsp.readdir(outside), [], `run ${i} made folders outside`);
        }
      } finally {
        racer.kill("SIGKILL");
        await racerExit;
        await host.dispose();
      }
    },
  );
});
