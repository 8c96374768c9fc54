// A scratch copy keeps the workspace's path rules, and a publication passes
// the workspace's own file door: what the rules deny, hide or keep read-only
// (in any letter case), what leads out, and a protected path no person
// approved refuse the whole publication, and the workspace stays as it was.
// (A link that leads out is the publish tool's to show a person; the file
// door refuses to follow it afterwards.)
// The copy's changes are made behind the tools' back (as a process outside
// the policy would), so only the publication's own check stands in the way.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createScratch, type Scratch } from "../../../policy/scratch/scratch.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { ToolBox } from "../../../toolbox.ts";
import { publishTool } from "../../../tools/scratch/publish.ts";
import { ToolError } from "../../../core/errors.ts";
import { fingerprint } from "./_tree_fingerprint.ts";

const POLICY = { paths: { deny: ["**/.env", "secrets/**"], readOnly: ["vendor/**"] } };

let root: string;
before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-scratch-rules-")));
});
after(() => fsp.rm(root, { recursive: true, force: true }));

let counter = 0;
async function workspace(): Promise<{ workdir: string; session: Session }> {
  const workdir = path.join(root, `case-${counter++}`, "W");
  await fsp.mkdir(path.join(workdir, "app"), { recursive: true });
  await fsp.mkdir(path.join(workdir, "secrets"));
  await fsp.mkdir(path.join(workdir, "vendor"));
  await fsp.writeFile(path.join(workdir, "app", ".env"), "TOKEN=host-secret\n");
  await fsp.writeFile(path.join(workdir, "secrets", "key.txt"), "host key\n");
  await fsp.writeFile(path.join(workdir, "vendor", "lib.js"), "vendored\n");
  await fsp.writeFile(path.join(workdir, "ok.txt"), "ok\n");
  const rules = PolicyRules.fromLayers([parsePolicyFile("policy.json", JSON.stringify(POLICY), "project")], workdir);
  const session = new Session({ workspace: workdir, rules, autoConfirm: true, sandbox: "off" });
  return { workdir, session };
}

// A change in the copy made behind the tools' back, next to an ordinary one.
type Tamper = (scratchRoot: string) => Promise<void>;

const TAMPERS: Record<string, Tamper> = {
  "a denied file rewritten": (r) => fsp.writeFile(path.join(r, "app", ".env"), "TOKEN=planted\n"),
  "a denied file in another letter case": (r) => fsp.writeFile(path.join(r, "app", ".ENV"), "TOKEN=planted\n"),
  // The copy holds no denied file or folder (see below): each is made there anew.
  "a new file in a denied folder": async (r) => {
    await fsp.mkdir(path.join(r, "secrets"), { recursive: true });
    await fsp.writeFile(path.join(r, "secrets", "new.txt"), "planted\n");
  },
  "a denied folder in another letter case": async (r) => {
    await fsp.mkdir(path.join(r, "Secrets"));
    await fsp.writeFile(path.join(r, "Secrets", "key.txt"), "planted\n");
  },
  "a file moved into a denied folder": async (r) => {
    await fsp.writeFile(path.join(r, "moved.txt"), "moved\n");
    await fsp.mkdir(path.join(r, "secrets"), { recursive: true });
    await fsp.rename(path.join(r, "moved.txt"), path.join(r, "secrets", "moved.txt"));
  },
  "a read-only file rewritten": (r) => fsp.writeFile(path.join(r, "vendor", "lib.js"), "planted\n"),
  "a read-only file in another letter case": async (r) => {
    await fsp.mkdir(path.join(r, "VENDOR"));
    await fsp.writeFile(path.join(r, "VENDOR", "lib.js"), "planted\n");
  },
  "a protected file created": (r) => fsp.writeFile(path.join(r, ".npmrc"), "registry=http://evil\n"),
  "a protected file in another letter case": (r) => fsp.writeFile(path.join(r, ".NPMRC"), "registry=http://evil\n"),
  "a link at a denied path": (r) => fsp.symlink("../ok.txt", path.join(r, "app", ".env")),
};

async function tampered(name: string): Promise<{ scratch: Scratch; workdir: string; session: Session }> {
  const { workdir, session } = await workspace();
  const scratch = await createScratch(session);
  await fsp.writeFile(path.join(scratch.root, "ok.txt"), "changed\n");
  await TAMPERS[name](scratch.root);
  return { scratch, workdir, session };
}

describe("a publication passes the workspace's file door", () => {
  for (const name of Object.keys(TAMPERS)) {
    test(`${name}: Scratch.publish refuses everything, the workspace unchanged`, { timeout: 30_000 }, async () => {
      const { scratch, workdir, session } = await tampered(name);
      try {
        const before = await fingerprint(workdir);
        const { changes } = await scratch.changes();
        assert.ok(changes.length >= 2, JSON.stringify(changes));
        await assert.rejects(
          scratch.publish(changes),
          (error: unknown) =>
            error instanceof ToolError && ["permission_denied", "outside_workspace"].includes(error.code),
        );
        assert.deepEqual(await fingerprint(workdir), before);
      } finally {
        await scratch.dispose();
        await session.close();
      }
    });
  }

  test("the publish tool refuses a denied change even when everything is answered yes", {
    timeout: 30_000,
  }, async () => {
    const { scratch, workdir, session } = await tampered("a denied file in another letter case");
    try {
      const before = await fingerprint(workdir);
      const box = new ToolBox().register(publishTool(scratch, { digest: scratch.digest }));
      const result = await box.call(scratch.session, "publish", {});
      assert.equal(result.errorCode, "permission_denied", JSON.stringify(result));
      assert.ok(!JSON.stringify(result).includes("host-secret"));
      assert.deepEqual(await fingerprint(workdir), before);
    } finally {
      await scratch.dispose();
      await session.close();
    }
  });

  test("a protected path is published once a person approved it; ordinary changes need no approval", {
    timeout: 30_000,
  }, async () => {
    const { scratch, workdir, session } = await tampered("a protected file created");
    try {
      const { changes } = await scratch.changes();
      const ordinary = changes.filter((c) => c.path === "ok.txt");
      await scratch.publish(ordinary);
      assert.equal(await fsp.readFile(path.join(workdir, "ok.txt"), "utf8"), "changed\n");
      const rest = (await scratch.changes()).changes;
      await assert.rejects(scratch.publish(rest), (error: unknown) => error instanceof ToolError);
      await scratch.publish(rest, { personApproved: true });
      assert.equal(await fsp.readFile(path.join(workdir, ".npmrc"), "utf8"), "registry=http://evil\n");
    } finally {
      await scratch.dispose();
      await session.close();
    }
  });
});

describe("the scratch session keeps the path rules", () => {
  test("the copy's denied files, in any letter case, are hidden from read_file, grep and list_dir", {
    timeout: 30_000,
  }, async () => {
    const { workdir, session } = await workspace();
    await fsp.writeFile(path.join(workdir, "app", ".ENV"), "TOKEN=host-secret\n");
    const scratch = await createScratch(session);
    try {
      const box = new ToolBox().withDefaults("fs", "search");
      for (const spelled of ["app/.env", "app/.ENV", "secrets/key.txt", "SECRETS/key.txt"]) {
        const read = await box.call(scratch.session, "read_file", { path: spelled });
        assert.notEqual(read.status, "success", `${spelled}: ${JSON.stringify(read)}`);
      }
      const calls = [
        await box.call(scratch.session, "grep", { pattern: "host", path: "." }),
        await box.call(scratch.session, "list_dir", { path: "app" }),
      ];
      for (const result of calls) {
        assert.equal(result.status, "success", JSON.stringify(result));
        assert.ok(!/host-secret|host key|\.env/i.test(JSON.stringify(result.output)), JSON.stringify(result));
      }
    } finally {
      await scratch.dispose();
      await session.close();
    }
  });

  test("no denied file or folder is copied: the copy lies in the temp dir, where no rule of the workspace holds", {
    timeout: 60_000,
  }, async () => {
    // Before, the host session's own tools read the copy's app/.env by its path in the temp dir (and, in the
    // sandbox, its commands: `cat <temp dir>/scratch-*\/workspace/.env` printed the secret).
    const { workdir, session } = await workspace();
    await fsp.writeFile(path.join(workdir, "app", ".ENV"), "TOKEN=host-secret\n");
    await fsp.mkdir(path.join(workdir, "deep", "secrets"), { recursive: true });
    await fsp.writeFile(path.join(workdir, "deep", ".env"), "TOKEN=host-secret\n");
    const scratch = await createScratch(session);
    try {
      for (const gone of ["app/.env", "app/.ENV", "secrets", "deep/.env"]) {
        await assert.rejects(fsp.lstat(path.join(scratch.root, gone)), { code: "ENOENT" }, gone);
      }
      assert.equal(await fsp.readFile(path.join(scratch.root, "ok.txt"), "utf8"), "ok\n");
      assert.equal(await fsp.readFile(path.join(scratch.root, "vendor", "lib.js"), "utf8"), "vendored\n");
      // Every file of the temp dir, walked as the host's tools may: no byte of a denied file.
      const walked: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
          const at = path.join(dir, entry.name);
          if (entry.isDirectory()) await walk(at);
          else if (entry.isFile()) walked.push(await fsp.readFile(at, "utf8"));
        }
      };
      await walk(await session.workspace.tempDir());
      assert.ok(walked.length > 0);
      assert.ok(!walked.some((text) => /host-secret|host key/.test(text)));
      const read = await new ToolBox().withDefaults("fs").call(session, "read_file", {
        path: path.join(scratch.root, "app", ".env"),
      });
      assert.notEqual(read.status, "success");
      // Nothing to publish where nothing changed: the left-out files are no deletions.
      assert.deepEqual((await scratch.changes()).changes, []);
    } finally {
      await scratch.dispose();
      await session.close();
    }
  });

  test("a hard link to a denied file is not copied: its bytes are refused in the copy as in the workspace", {
    timeout: 30_000,
  }, async () => {
    // The copy of another name of a denied file was a file of its own (one name, which no rule matches): the
    // workspace refused notes.txt as a hard link to app/.env, the scratch session read it.
    for (const copy of ["auto", "stream"] as const) {
      const { workdir, session } = await workspace();
      await fsp.link(path.join(workdir, "app", ".env"), path.join(workdir, "notes.txt"));
      await fsp.link(path.join(workdir, "secrets", "key.txt"), path.join(workdir, "app", "key-copy.txt"));
      assert.equal(
        (await new ToolBox().withDefaults("fs").call(session, "read_file", { path: "notes.txt" })).errorCode,
        "permission_denied",
      );
      const scratch = await createScratch(session, { copy });
      try {
        const box = new ToolBox().withDefaults("fs", "search");
        const calls = [
          await box.call(scratch.session, "read_file", { path: "notes.txt" }),
          await box.call(scratch.session, "read_file", { path: "app/key-copy.txt" }),
          await box.call(scratch.session, "grep", { pattern: "host", path: "." }),
        ];
        for (const result of calls) {
          assert.ok(!/host-secret|host key/.test(JSON.stringify(result)), `${copy}: ${JSON.stringify(result)}`);
        }
        assert.equal(await fsp.readFile(path.join(scratch.root, "ok.txt"), "utf8"), "ok\n");
      } finally {
        await scratch.dispose();
        await session.close();
      }
    }
  });

  test("what a denied link leads to is not copied: its bytes are refused in the copy as in the workspace", {
    timeout: 30_000,
  }, async () => {
    // `serve --scratch` makes its copy from the workspace and the rules (no session): the copy left out the denied
    // links themselves but copied the file and folder they lead to, which the workspace's tools and sandbox hide,
    // and the scratch session's read_file printed conf/prod.txt and vault/k.txt.
    for (const from of ["workspace and rules", "session"] as const) {
      const { workdir, session } = await workspace();
      await fsp.mkdir(path.join(workdir, "conf"));
      await fsp.mkdir(path.join(workdir, "vault", "deep"), { recursive: true });
      await fsp.writeFile(path.join(workdir, "conf", "prod.txt"), "TOKEN=host-secret linked\n");
      await fsp.writeFile(path.join(workdir, "vault", "deep", "k.txt"), "host key linked\n");
      await fsp.writeFile(path.join(workdir, "conf", "main.ts"), "ok\n");
      await fsp.rm(path.join(workdir, "app", ".env"));
      await fsp.symlink("../conf/prod.txt", path.join(workdir, "app", ".env"));
      await fsp.rm(path.join(workdir, "secrets"), { recursive: true });
      await fsp.symlink("vault", path.join(workdir, "secrets"));
      const box = new ToolBox().withDefaults("fs", "search");
      assert.equal((await box.call(session, "read_file", { path: "conf/prod.txt" })).errorCode, "permission_denied");
      const scratch = from === "session"
        ? await createScratch(session)
        : await createScratch(session.workspace, { session: { rules: session.policy.rules, autoConfirm: true } });
      try {
        const calls = [
          await box.call(scratch.session, "read_file", { path: "conf/prod.txt" }),
          await box.call(scratch.session, "read_file", { path: "vault/deep/k.txt" }),
          await box.call(scratch.session, "grep", { pattern: "host", path: "." }),
        ];
        const listed = JSON.stringify(await box.call(scratch.session, "list_dir", { path: ".", depth: 3 }));
        assert.ok(!/prod\.txt|k\.txt/.test(listed), listed);
        for (const result of calls) {
          assert.ok(
            !/host-secret|host key/.test(JSON.stringify(result)),
            `${from}: ${JSON.stringify(result)}`,
          );
        }
        const copied = await Promise.all(
          ["conf/prod.txt", "vault"].map((p) => fsp.lstat(path.join(scratch.root, p)).then(() => p, () => undefined)),
        );
        assert.deepEqual(copied, [undefined, undefined]);
        assert.equal(await fsp.readFile(path.join(scratch.root, "conf", "main.ts"), "utf8"), "ok\n");
        assert.deepEqual((await scratch.changes()).changes, []);
      } finally {
        await scratch.dispose();
        await session.close();
      }
    }
  });

  test("a publication never removes the way of a denied link, which would show what it hides", {
    timeout: 30_000,
  }, async () => {
    // With app/.env -> ../via/prod.txt and via -> conf, the copy holds via (no denied link leads through it
    // there), and its deletion was published: the workspace's app/.env led nowhere, and read_file printed
    // conf/prod.txt.
    const { workdir, session } = await workspace();
    await fsp.mkdir(path.join(workdir, "conf"));
    await fsp.writeFile(path.join(workdir, "conf", "prod.txt"), "TOKEN=host-secret way\n");
    await fsp.rm(path.join(workdir, "app", ".env"));
    await fsp.symlink("conf", path.join(workdir, "via"));
    await fsp.symlink("../via/prod.txt", path.join(workdir, "app", ".env"));
    const scratch = await createScratch(session.workspace, {
      session: { rules: session.policy.rules, autoConfirm: true, sandbox: "off" },
    });
    try {
      const box = new ToolBox().withDefaults("fs").register(publishTool(scratch, { digest: scratch.digest }));
      await fsp.rm(path.join(scratch.root, "via"));
      await fsp.writeFile(path.join(scratch.root, "ok.txt"), "changed\n");
      const before = await fingerprint(workdir);
      const published = await box.call(scratch.session, "publish", {});
      assert.equal(published.errorCode, "permission_denied", JSON.stringify(published));
      assert.deepEqual(await fingerprint(workdir), before);
      await assert.rejects(scratch.publish((await scratch.changes()).changes), /leads through it/);
      assert.equal(await fsp.readlink(path.join(workdir, "via")), "conf");
      const read = await box.call(session, "read_file", { path: "conf/prod.txt" });
      assert.equal(read.errorCode, "permission_denied", JSON.stringify(read));
    } finally {
      await scratch.dispose();
      await session.close();
    }
  });

  test("an absolute glob naming a place in the workspace holds in the copy too", { timeout: 30_000 }, async () => {
    const workdir = path.join(root, `case-${counter++}`, "W");
    await fsp.mkdir(path.join(workdir, "keys"), { recursive: true });
    await fsp.mkdir(path.join(workdir, "docs"));
    await fsp.writeFile(path.join(workdir, "keys", "id.pem"), "host-secret pem\n");
    await fsp.writeFile(path.join(workdir, "docs", "a.md"), "docs\n");
    const policy = { paths: { deny: [`${workdir}/keys/**`], readOnly: [{ pattern: `${workdir}/docs/**` }] } };
    const rules = PolicyRules.fromLayers([parsePolicyFile("policy.json", JSON.stringify(policy), "project")], workdir);
    const session = new Session({ workspace: workdir, rules, autoConfirm: true, sandbox: "off" });
    const scratch = await createScratch(session);
    try {
      const box = new ToolBox().withDefaults("fs", "search");
      const read = await box.call(scratch.session, "read_file", { path: "keys/id.pem" });
      assert.notEqual(read.status, "success", JSON.stringify(read));
      const grep = await box.call(scratch.session, "grep", { pattern: "host-secret", path: "." });
      assert.equal(grep.status, "success", JSON.stringify(grep));
      assert.ok(!JSON.stringify(grep.output).includes("host-secret"), JSON.stringify(grep));
      const write = await box.call(scratch.session, "write_file", { path: "docs/a.md", content: "changed\n" });
      assert.notEqual(write.status, "success", JSON.stringify(write));
      assert.equal(await fsp.readFile(path.join(scratch.root, "docs", "a.md"), "utf8"), "docs\n");
    } finally {
      await scratch.dispose();
      await session.close();
    }
  });
});
