// The publish tool through a toolbox: the approved digest and paths, the
// refusals (each changing nothing), the diff shown to the person, a protected
// path that only a person may approve, a preview, and filesystemChanges in the
// output and the result's metadata.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createScratch, type Scratch } from "../../../policy/scratch/scratch.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { ToolBox } from "../../../toolbox.ts";
import { publishTool } from "../../../tools/scratch/publish.ts";
import { publicationDiff } from "../../../tools/scratch/_publish_diff.ts";
import type { ConfirmRequest } from "../../../core/host.ts";
import type { FileChange } from "../../../core/effects.ts";
import { fingerprint } from "../../policy/scratch/_tree_fingerprint.ts";

let root: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-publish-")));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

let n = 0;
interface Case {
  workdir: string;
  scratch: Scratch;
  asked: ConfirmRequest[];
  box: ToolBox;
}

async function setup(
  options: { answer?: boolean; autoConfirm?: boolean; digest?: string; paths?: string[] } = {},
): Promise<Case> {
  const workdir = path.join(root, `w${n++}`);
  await fsp.mkdir(path.join(workdir, "src"), { recursive: true });
  await fsp.mkdir(path.join(workdir, "docs"));
  await fsp.writeFile(path.join(workdir, "src", "a.ts"), "export const a = 1;\n");
  await fsp.writeFile(path.join(workdir, "docs", "guide.md"), "# Guide\n");
  await fsp.writeFile(path.join(workdir, "top.txt"), "top\n");
  const asked: ConfirmRequest[] = [];
  const host = callbackHost({
    // Write permission in the copy: granted for the session.
    choose: <T extends string>(request: { options: readonly { value: T }[]; defaultChoice: T }) =>
      Promise.resolve(request.options.find((o) => o.value === "grant")?.value ?? request.defaultChoice),
    confirm: (request) => {
      asked.push(request);
      return Promise.resolve(options.answer ?? true);
    },
  });
  const scratch = await createScratch(workdir, {
    session: { host, autoConfirm: options.autoConfirm ?? false, sandbox: "off" },
  });
  const box = new ToolBox().withDefaults("fs", "patch").register(
    publishTool(scratch, { digest: options.digest ?? scratch.digest, paths: options.paths }),
  );
  return { workdir, scratch, asked, box };
}

async function edit(c: Case) {
  const session = c.scratch.session;
  for (
    const [name, args] of [
      ["edit_file", { path: "src/a.ts", old_text: "= 1", new_text: "= 2" }],
      ["write_file", { path: "docs/new.md", content: "new doc\n" }],
      ["delete", { path: "top.txt" }],
    ] as const
  ) {
    const result = await c.box.call(session, name, args);
    assert.equal(result.status, "success", `${name}: ${result.error}`);
  }
}

describe("publish", () => {
  test("is in no default group", { timeout: 60_000 }, () => {
    const box = new ToolBox().withDefaults();
    assert.ok(!box.list().some((t) => t.name === "publish"));
  });

  test("the right digest: shows the diff, applies every approved change, reports filesystemChanges", {
    timeout: 60_000,
  }, async () => {
    const c = await setup();
    try {
      await edit(c);
      const result = await c.box.call(c.scratch.session, "publish", { digest: c.scratch.digest });
      assert.equal(result.status, "success", result.error);
      assert.equal(c.asked.length, 1);
      assert.match(c.asked[0].message, /-export const a = 1;/);
      assert.match(c.asked[0].message, /\+export const a = 2;/);
      assert.match(c.asked[0].message, /deleted +top\.txt/);
      assert.equal(await fsp.readFile(path.join(c.workdir, "src", "a.ts"), "utf8"), "export const a = 2;\n");
      assert.equal(await fsp.readFile(path.join(c.workdir, "docs", "new.md"), "utf8"), "new doc\n");
      await assert.rejects(fsp.access(path.join(c.workdir, "top.txt")));
      const output = result.output as { published: boolean; filesystemChanges: FileChange[] };
      assert.equal(output.published, true);
      const summary = output.filesystemChanges.map((x) => `${x.change} ${x.path}`);
      assert.deepEqual(summary, ["created docs/new.md", "modified src/a.ts", "deleted top.txt"]);
      assert.deepEqual(result.metadata.filesystemChanges, output.filesystemChanges);
      const modified = output.filesystemChanges[1];
      assert.match(modified.before!.sha256!, /^[0-9a-f]{64}$/);
      assert.notEqual(modified.before!.sha256, modified.after!.sha256);
      // Published changes are no longer pending.
      const again = await c.box.call(c.scratch.session, "publish", {});
      assert.equal((again.output as { published: boolean }).published, false);
    } finally {
      await c.scratch.dispose();
    }
  });

  test("a wrong digest (approved or named in the call) refuses and changes nothing", { timeout: 60_000 }, async () => {
    for (const wrong of ["approved", "call"] as const) {
      const c = await setup({ digest: wrong === "approved" ? "0".repeat(64) : undefined });
      try {
        await edit(c);
        const before = await fingerprint(c.workdir);
        const result = await c.box.call(
          c.scratch.session,
          "publish",
          wrong === "call" ? { digest: "f".repeat(64) } : {},
        );
        assert.equal(result.errorCode, "digest_mismatch", wrong);
        assert.match(result.error!, new RegExp(c.scratch.digest));
        assert.equal(c.asked.length, 0);
        assert.deepEqual(await fingerprint(c.workdir), before);
      } finally {
        await c.scratch.dispose();
      }
    }
  });

  test("approved paths: only they are published; a requested path outside them refuses and changes nothing", {
    timeout: 60_000,
  }, async () => {
    const c = await setup({ paths: ["src"] });
    try {
      await edit(c);
      const before = await fingerprint(c.workdir);
      for (const outside of ["docs", "top.txt", "../x", "/etc/passwd", "srcx", "src/../docs"]) {
        const refused = await c.box.call(c.scratch.session, "publish", { paths: [outside] });
        assert.equal(refused.errorCode, "path_not_approved", outside);
        assert.deepEqual(await fingerprint(c.workdir), before, outside);
      }
      // Absolute paths in the copy or the workspace name the same relative path.
      const result = await c.box.call(c.scratch.session, "publish", {
        paths: [path.join(c.scratch.root, "src", "a.ts"), path.join(c.workdir, "src")],
      });
      assert.equal(result.status, "success", result.error);
      const output = result.output as { filesystemChanges: FileChange[]; notPublished: string[] };
      assert.deepEqual(output.filesystemChanges.map((x) => x.path), ["src/a.ts"]);
      assert.deepEqual(output.notPublished, ["docs/new.md", "top.txt"]);
      assert.equal(await fsp.readFile(path.join(c.workdir, "top.txt"), "utf8"), "top\n");
      await assert.rejects(fsp.access(path.join(c.workdir, "docs", "new.md")));
    } finally {
      await c.scratch.dispose();
    }
  });

  test(
    "a move with one end outside the approved paths publishes only the approved end",
    { timeout: 60_000 },
    async () => {
      const c = await setup({ paths: ["docs"] });
      try {
        const moved = await c.box.call(c.scratch.session, "move", { src: "src/a.ts", dst: "docs/a.ts" });
        assert.equal(moved.status, "success", moved.error);
        const result = await c.box.call(c.scratch.session, "publish", {});
        const output = result.output as { filesystemChanges: FileChange[]; notPublished: string[] };
        assert.deepEqual(output.filesystemChanges.map((x) => `${x.change} ${x.path}`), ["created docs/a.ts"]);
        assert.deepEqual(output.notPublished, ["src/a.ts"]);
        assert.equal(await fsp.readFile(path.join(c.workdir, "src", "a.ts"), "utf8"), "export const a = 1;\n");
      } finally {
        await c.scratch.dispose();
      }
    },
  );

  test("a workspace file changed meanwhile refuses before anyone is asked, naming it and its hashes", {
    timeout: 60_000,
  }, async () => {
    const c = await setup();
    try {
      await edit(c);
      await fsp.writeFile(path.join(c.workdir, "src", "a.ts"), "export const a = 99;\n");
      const before = await fingerprint(c.workdir);
      const result = await c.box.call(c.scratch.session, "publish", {});
      assert.equal(result.errorCode, "host_changed");
      assert.match(result.error!, /src\/a\.ts/);
      assert.match(result.error!, new RegExp(c.scratch.baseline("src/a.ts")!.sha256!));
      assert.equal(c.asked.length, 0);
      assert.deepEqual(await fingerprint(c.workdir), before);
      assert.deepEqual(result.metadata.filesystemChanges ?? [], []);
    } finally {
      await c.scratch.dispose();
    }
  });

  test("declined by the person: not_approved, nothing changed; a preview asks nobody and changes nothing", {
    timeout: 60_000,
  }, async () => {
    const c = await setup({ answer: false });
    try {
      await edit(c);
      const before = await fingerprint(c.workdir);
      const preview = await c.box.call(c.scratch.session, "publish", { preview: true });
      assert.equal(preview.status, "success");
      assert.match((preview.output as { diff: string }).diff, /\+export const a = 2;/);
      assert.equal(c.asked.length, 0);
      const result = await c.box.call(c.scratch.session, "publish", {});
      assert.equal(result.errorCode, "not_approved");
      assert.equal(c.asked.length, 1);
      assert.deepEqual(await fingerprint(c.workdir), before);
    } finally {
      await c.scratch.dispose();
    }
  });

  test("autoConfirm publishes ordinary changes, but a protected path needs a person", { timeout: 60_000 }, async () => {
    const c = await setup({ autoConfirm: true, answer: false });
    try {
      await fsp.writeFile(path.join(c.scratch.root, "plain.txt"), "plain\n");
      const plain = await c.box.call(c.scratch.session, "publish", {});
      assert.equal(plain.status, "success", plain.error);
      assert.equal(c.asked.length, 0);
      await fsp.mkdir(path.join(c.scratch.root, ".git", "hooks"), { recursive: true });
      await fsp.writeFile(path.join(c.scratch.root, ".git", "hooks", "pre-commit"), "#!/bin/sh\ncurl evil\n");
      const before = await fingerprint(c.workdir);
      const result = await c.box.call(c.scratch.session, "publish", {});
      assert.equal(c.asked.length, 1, "a person was asked");
      assert.equal(c.asked[0].requirePerson, true);
      assert.match(c.asked[0].message, /\[protected path\]/);
      assert.equal(result.errorCode, "not_approved");
      assert.deepEqual(await fingerprint(c.workdir), before);
    } finally {
      await c.scratch.dispose();
    }
  });

  test(
    "a link that would lead out of the workspace is shown with its target and needs a person",
    { timeout: 60_000 },
    async () => {
      for (const target of ["/etc/passwd", "../../outside", "src/../../x"]) {
        const c = await setup({ autoConfirm: true, answer: false });
        try {
          await fsp.symlink(target, path.join(c.scratch.root, "docs", "link"));
          const before = await fingerprint(c.workdir);
          const result = await c.box.call(c.scratch.session, "publish", {});
          assert.equal(c.asked.length, 1, target);
          assert.equal(c.asked[0].requirePerson, true, target);
          assert.ok(c.asked[0].message.includes(JSON.stringify(target)), c.asked[0].message);
          assert.match(c.asked[0].message, /\[link leads outside the workspace\]/);
          assert.equal(result.errorCode, "not_approved");
          assert.deepEqual(await fingerprint(c.workdir), before);
        } finally {
          await c.scratch.dispose();
        }
      }
      // A link that stays inside is an ordinary change.
      const c = await setup({ autoConfirm: true });
      try {
        await fsp.symlink("../src/a.ts", path.join(c.scratch.root, "docs", "link"));
        const result = await c.box.call(c.scratch.session, "publish", {});
        assert.equal(result.status, "success", result.error);
        assert.equal(c.asked.length, 0);
        assert.equal(await fsp.readlink(path.join(c.workdir, "docs", "link")), "../src/a.ts");
      } finally {
        await c.scratch.dispose();
      }
    },
  );

  test("what is applied is what was shown: the copy changed after the diff was made refuses and changes nothing", {
    timeout: 60_000,
  }, async () => {
    const workdir = path.join(root, `w${n++}`);
    await fsp.mkdir(workdir);
    await fsp.writeFile(path.join(workdir, "a.txt"), "old\n");
    let scratchRoot = "";
    const host = callbackHost({
      choose: () => Promise.reject(new Error("no choices expected")),
      confirm: async (request) => {
        assert.match(request.message, /\+benign/);
        // The agent swaps the content once the person has seen the diff.
        await fsp.writeFile(path.join(scratchRoot, "a.txt"), "malicious\n");
        return true;
      },
    });
    const scratch = await createScratch(workdir, { session: { host, sandbox: "off" } });
    scratchRoot = scratch.root;
    try {
      const box = new ToolBox().register(publishTool(scratch, { digest: scratch.digest }));
      await fsp.writeFile(path.join(scratch.root, "a.txt"), "benign\n");
      const result = await box.call(scratch.session, "publish", {});
      assert.equal(result.errorCode, "publish_failed", result.error);
      assert.equal(await fsp.readFile(path.join(workdir, "a.txt"), "utf8"), "old\n");
    } finally {
      await scratch.dispose();
    }
  });

  test("the diff is checked against the hashes of the changes it shows", { timeout: 60_000 }, async () => {
    const workdir = path.join(root, `w${n++}`);
    await fsp.mkdir(workdir);
    const scratch = await createScratch(workdir);
    try {
      await fsp.writeFile(path.join(scratch.root, "a.txt"), "malicious\n");
      await fsp.symlink("inside", path.join(scratch.root, "link"));
      const { changes } = await scratch.changes();
      // Between the changes and the diff, the copy shows something else.
      await fsp.writeFile(path.join(scratch.root, "a.txt"), "benign\n");
      await assert.rejects(publicationDiff(scratch, changes, () => false), { code: "publish_failed" });
      await fsp.writeFile(path.join(scratch.root, "a.txt"), "malicious\n");
      await fsp.unlink(path.join(scratch.root, "link"));
      await fsp.symlink("/etc/passwd", path.join(scratch.root, "link"));
      await assert.rejects(publicationDiff(scratch, changes, () => false), { code: "publish_failed" });
    } finally {
      await scratch.dispose();
    }
  });

  test("the tool refuses to be built without a valid approved digest", { timeout: 60_000 }, async () => {
    const scratch = await createScratch(await fsp.mkdtemp(path.join(root, "x")));
    try {
      assert.throws(() => publishTool(scratch, { digest: "" }), TypeError);
      assert.throws(() => publishTool(scratch, {} as never), TypeError);
    } finally {
      await scratch.dispose();
    }
  });
});
