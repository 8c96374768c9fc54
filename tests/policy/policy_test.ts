import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import path from "node:path";
import type { ChoiceOutcome, ChoiceRequest } from "../../core/host.ts";
import { openFence } from "../../policy/fence.ts";
import type { Fence } from "../../core/fence.ts";
import { autoHost, callbackHost, denyAllHost, withAutoConfirm } from "../../policy/hosts.ts";
import { Policy, type PolicyAsker, type WriteChoice } from "../../policy/policy.ts";
import { PolicyState } from "../../policy/state.ts";
import { Workspace } from "../../policy/workspace.ts";
import { exists, type Layout, makeLayout, rejectsWith } from "./_fixtures.ts";

let L: Layout;
let ws: Workspace;
let asked: ChoiceRequest<string>[];
let answers: ChoiceOutcome<WriteChoice>[];

// A person at a UI: answers from a script and records every question.
function recordingHost(): PolicyAsker {
  return callbackHost({
    choose: <T extends string>(request: ChoiceRequest<T>) => {
      asked.push(request);
      const next = answers.shift();
      assert.ok(next, `unexpected question: ${request.message}`);
      return next as unknown as ChoiceOutcome<T>;
    },
  });
}

function policyWith(asker: PolicyAsker = recordingHost(), fence: Fence = openFence()): Policy {
  return new Policy({ workspace: ws, state: new PolicyState({ commandAllowlist: [] }), asker, fence });
}

const user = (choice: WriteChoice): ChoiceOutcome<WriteChoice> => ({ choice, source: "user" });
const auto = (choice: WriteChoice): ChoiceOutcome<WriteChoice> => ({ choice, source: "auto" });

beforeEach(async () => {
  L = await makeLayout();
  ws = new Workspace(L.workdir, { tempParent: L.tempParent });
  asked = [];
  answers = [];
});
afterEach(async () => {
  await ws.dispose();
  await L.cleanup();
});

describe("Policy: when writing asks", () => {
  test("creating a new file inside the workspace does not ask", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    assert.equal(await policy.resolveForWrite("sub/new.txt", "create"), path.join(L.workdir, "sub", "new.txt"));
    assert.equal(
      await policy.resolveForWrite("new-folder/deeper", "mkdir"),
      path.join(L.workdir, "new-folder", "deeper"),
    );
    assert.equal(await policy.resolveForWrite("copy-target.txt", "copy"), path.join(L.workdir, "copy-target.txt"));
    assert.equal(asked.length, 0);
  });

  test("overwriting asks with three options, grant being the default", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    answers.push(user("once"));
    await policy.resolveForWrite("file.txt", "overwrite");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].title, "Write permission");
    assert.match(asked[0].message, /file\.txt/);
    assert.deepEqual(asked[0].options.map((o) => o.value), ["grant", "once", "deny"]);
    assert.equal(asked[0].defaultChoice, "grant");
  });

  test(
    "create, copy and move onto something existing ask; so do moving away and deleting",
    { timeout: 60_000 },
    async () => {
      const policy = policyWith();
      for (const action of ["create", "copy", "move", "delete"] as const) {
        answers.push(user("once"));
        await policy.resolveForWrite("file.txt", action);
      }
      assert.equal(asked.length, 4);
    },
  );

  test("mkdir never asks, even where something exists", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    await policy.resolveForWrite("sub", "mkdir");
    assert.equal(asked.length, 0);
  });

  test("writes inside the temp dir never ask", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    const temp = await ws.tempDir();
    await fsp.writeFile(path.join(temp, "scratch.txt"), "x");
    for (const action of ["overwrite", "copy", "move", "delete", "create"] as const) {
      await policy.resolveForWrite(path.join(temp, "scratch.txt"), action);
    }
    assert.equal(asked.length, 0);
  });

  test("a person's grant is remembered: the same file is not asked about again", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    answers.push(user("grant"));
    await policy.resolveForWrite("file.txt", "overwrite");
    assert.deepEqual(policy.state.writeGrants(), [path.join(L.workdir, "file.txt")]);
    await policy.resolveForWrite("file.txt", "overwrite");
    await policy.resolveForWrite("./sub/../file.txt", "delete");
    assert.equal(asked.length, 1);
    // A different file is still asked about.
    answers.push(user("once"));
    await policy.resolveForWrite("sub/a.txt", "overwrite");
    assert.equal(asked.length, 2);
  });

  test("an automatic grant allows this once and never grants", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    answers.push(auto("grant"), auto("grant"));
    await policy.resolveForWrite("file.txt", "overwrite");
    await policy.resolveForWrite("file.txt", "overwrite");
    assert.equal(asked.length, 2);
    assert.deepEqual(policy.state.writeGrants(), []);
  });

  test("autoHost and withAutoConfirm allow by default and grant nothing", { timeout: 60_000 }, async () => {
    for (const asker of [autoHost(), withAutoConfirm(denyAllHost())]) {
      const policy = policyWith(asker);
      await policy.resolveForWrite("file.txt", "overwrite");
      assert.deepEqual(policy.state.writeGrants(), []);
    }
  });

  test("once allows without granting", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    answers.push(user("once"), user("once"));
    await policy.resolveForWrite("file.txt", "overwrite");
    await policy.resolveForWrite("file.txt", "overwrite");
    assert.equal(asked.length, 2);
    assert.deepEqual(policy.state.writeGrants(), []);
  });

  test("deny refuses with permission_denied, skipped, and the file is untouched", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    answers.push(user("deny"));
    const error = await rejectsWith(policy.resolveForWrite("file.txt", "overwrite"), "permission_denied", "policy");
    assert.equal(error.status, "skipped");
    assert.match(error.message, /file\.txt/);
    assert.equal(await fsp.readFile(path.join(L.workdir, "file.txt"), "utf8"), "inside\n");
  });

  test(
    "the deny-all host refuses anything that would ask, and nothing that would not",
    { timeout: 60_000 },
    async () => {
      const policy = policyWith(denyAllHost());
      const error = await rejectsWith(policy.resolveForWrite("file.txt", "overwrite"), "permission_denied", "policy");
      assert.equal(error.status, "skipped");
      assert.match(error.message, /no person can be asked/);
      await policy.resolveForWrite("brand-new.txt", "create");
    },
  );

  test(
    "deleting a folder with a person's grant grants the folder and everything under it",
    { timeout: 60_000 },
    async () => {
      const policy = policyWith();
      await fsp.mkdir(path.join(L.workdir, "sub-other"));
      await fsp.writeFile(path.join(L.workdir, "sub-other", "a.txt"), "x");
      answers.push(user("grant"));
      await policy.resolveForWrite("sub", "delete");
      assert.deepEqual(policy.state.writeGrants(), [path.join(L.workdir, "sub")]);
      await policy.resolveForWrite("sub/a.txt", "overwrite");
      assert.equal(asked.length, 1);
      // By path components: sub does not cover sub-other.
      answers.push(user("once"));
      await policy.resolveForWrite("sub-other/a.txt", "overwrite");
      assert.equal(asked.length, 2);
    },
  );

  test("an aborted signal ends the question with the abort reason", { timeout: 60_000 }, async () => {
    const policy = policyWith(callbackHost({
      choose: (_request, signal) =>
        new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason))),
    }));
    const controller = new AbortController();
    const pending = policy.resolveForWrite("file.txt", "overwrite", controller.signal);
    setTimeout(() => controller.abort(new Error("cancelled by test")), 10);
    await assert.rejects(pending, /cancelled by test/);
  });

  test("authorizeWrite is the ask flow alone, for paths resolved already", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    answers.push(user("deny"));
    await rejectsWith(policy.authorizeWrite(path.join(L.workdir, "file.txt"), "overwrite"), "permission_denied");
    await policy.authorizeWrite(path.join(L.workdir, "not-there.txt"), "overwrite");
    assert.equal(asked.length, 1);
    // It still refuses paths outside the workspace, whoever resolved them.
    await rejectsWith(policy.authorizeWrite(path.join(L.outside, "secret.txt"), "overwrite"), "outside_workspace");
    await rejectsWith(policy.authorizeWrite("file.txt", "overwrite"), "outside_workspace");
    assert.equal(asked.length, 1);
  });
});

describe("Policy: where writing goes", () => {
  test(
    "a path judged free (no question about replacing) is taken only while free: what appears there is left alone",
    { timeout: 60_000 },
    async () => {
      const policy = policyWith();
      await fsp.writeFile(path.join(L.workdir, "source.txt"), "source\n");
      const source = await policy.files.resolve("source.txt", { access: "read" });
      const at = (name: string) => path.join(L.workdir, name);
      const free = async (name: string) => {
        const target = await policy.files.resolve(name, { access: "write" });
        assert.equal(target.existed, false);
        // Something else (another call, a command, a person) puts a file there after the judgement.
        await fsp.writeFile(at(name), "appeared\n");
        return target;
      };
      await rejectsWith(policy.files.write(await free("w.txt"), "written\n"), "path_changed", "policy");
      await rejectsWith(policy.files.copy(source, await free("c.txt")), "path_changed", "policy");
      await rejectsWith(policy.files.move(source, await free("m.txt")), "path_changed", "policy");
      for (const name of ["w.txt", "c.txt", "m.txt"]) assert.equal(await fsp.readFile(at(name), "utf8"), "appeared\n");
      assert.equal(await fsp.readFile(at("source.txt"), "utf8"), "source\n");
      assert.deepEqual((await fsp.readdir(L.workdir)).filter((name) => name.startsWith(".toolfence-")), []);
      assert.equal(asked.length, 0);
      // A target judged to exist is replaced, as the question about it said it would be.
      await policy.files.write(await policy.files.resolve("w.txt", { access: "write" }), "written\n");
      assert.equal(await fsp.readFile(at("w.txt"), "utf8"), "written\n");
    },
  );

  test("writing through a symlink that leads out is refused without asking", { timeout: 60_000 }, async () => {
    await fsp.symlink(path.join(L.outside, "secret.txt"), path.join(L.workdir, "link"));
    const policy = policyWith();
    for (const action of ["overwrite", "create", "copy"] as const) {
      await rejectsWith(policy.resolveForWrite("link", action), "outside_workspace", "policy");
    }
    assert.equal(asked.length, 0);
    assert.equal(await fsp.readFile(path.join(L.outside, "secret.txt"), "utf8"), "secret outside\n");
  });

  test(
    "writing to a dangling symlink that points outside is refused and creates nothing outside",
    { timeout: 60_000 },
    async () => {
      const target = path.join(L.outside, "planted.txt");
      await fsp.symlink(target, path.join(L.workdir, "dangling"));
      await fsp.symlink(path.join(L.outside, "newdir", "x"), path.join(L.workdir, "dangling2"));
      const policy = policyWith();
      await rejectsWith(policy.resolveForWrite("dangling", "create"), "outside_workspace");
      await rejectsWith(policy.resolveForWrite("dangling2", "mkdir"), "outside_workspace");
      assert.equal(await exists(target), false);
      assert.equal(await exists(path.join(L.outside, "newdir")), false);
    },
  );

  test(
    "a dangling symlink pointing inside resolves to its target, which a write then creates",
    { timeout: 60_000 },
    async () => {
      await fsp.symlink("sub/made.txt", path.join(L.workdir, "pending"));
      const policy = policyWith();
      assert.equal(await policy.resolveForWrite("pending", "create"), path.join(L.workdir, "sub", "made.txt"));
      assert.equal(asked.length, 0);
    },
  );

  test(
    "deleting or moving a link acts on the link, so a link leading out may be removed",
    { timeout: 60_000 },
    async () => {
      await fsp.symlink(path.join(L.outside, "secret.txt"), path.join(L.workdir, "link"));
      const policy = policyWith();
      answers.push(user("once"));
      const target = await policy.resolveForWrite("link", "delete");
      assert.equal(target, path.join(L.workdir, "link"));
      await fsp.rm(target);
      assert.equal(await exists(path.join(L.workdir, "link")), false);
      assert.equal(await exists(path.join(L.outside, "secret.txt")), true);
    },
  );

  test("the workspace root and the temp dir root cannot be deleted or moved", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    await rejectsWith(policy.resolveForWrite(".", "delete"), "permission_denied");
    await rejectsWith(policy.resolveForWrite(L.workdir + "/", "move"), "permission_denied");
    await rejectsWith(policy.resolveForWrite(await ws.tempDir(), "delete"), "permission_denied");
    assert.equal(asked.length, 0);
  });

  test("outside paths are refused for reading and writing alike", { timeout: 60_000 }, async () => {
    const policy = policyWith();
    await rejectsWith(policy.resolveForRead("../outside/secret.txt"), "outside_workspace");
    await rejectsWith(policy.resolveForWrite("../outside/new.txt", "create"), "outside_workspace");
    assert.equal(await policy.resolveForRead("sub/a.txt"), path.join(L.workdir, "sub", "a.txt"));
  });

  test(
    "a closed fence refuses before anyone is asked, naming the flag, on the real path",
    { timeout: 60_000 },
    async () => {
      const queries: string[] = [];
      const readOnly: Fence = {
        query: (permission, target) => {
          queries.push(`${permission} ${target}`);
          return permission === "read"
            ? { allowed: true }
            : { allowed: false, flag: `--allow-${permission}=${target}` };
        },
        closedEntirely: () => false,
      };
      await fsp.symlink("file.txt", path.join(L.workdir, "alias"));
      const policy = policyWith(recordingHost(), readOnly);
      const error = await rejectsWith(policy.resolveForWrite("alias", "overwrite"), "fence_denied", "policy");
      const real = path.join(L.workdir, "file.txt");
      assert.match(error.message, new RegExp(`--allow-write=${real}`));
      assert.deepEqual(queries, [`write ${real}`]);
      assert.equal(asked.length, 0);
      assert.equal(await policy.resolveForRead("alias"), real);
    },
  );

  test("defaults: the runtime fence and the auto sandbox", { timeout: 60_000 }, () => {
    const policy = new Policy({ workspace: ws, state: new PolicyState(), asker: autoHost() });
    assert.equal(policy.sandbox, "auto");
    assert.equal(policy.fence.query("write", L.workdir).allowed, true);
  });
});

describe("Policy: protected paths", () => {
  const once = { choice: "once", source: "user" } as unknown as ChoiceOutcome<WriteChoice>;

  test("extra patterns from the options are protected too; the defaults stay", { timeout: 60_000 }, async () => {
    const policy = new Policy({
      workspace: ws,
      state: new PolicyState({ commandAllowlist: [] }),
      asker: autoHost(),
      fence: openFence(),
      protectedPaths: ["deploy/*.yml"],
    });
    assert.ok(policy.protectedPaths.includes("**/.npmrc"));
    await rejectsWith(policy.resolveForWrite("deploy/prod.yml", "create"), "permission_denied", "policy");
    await rejectsWith(policy.resolveForWrite("DEPLOY/Prod.YML", "create"), "permission_denied", "policy");
    await rejectsWith(policy.resolveForWrite(".npmrc", "create"), "permission_denied", "policy");
    assert.equal(await policy.resolveForWrite("deploy/notes.md", "create"), path.join(L.workdir, "deploy", "notes.md"));
  });

  test("a grant of the whole workspace does not cover a protected path; the person is asked every time", {
    timeout: 60_000,
  }, async () => {
    const policy = policyWith();
    policy.state.grantWrite(L.workdir);
    answers.push(once, once);
    await policy.resolveForWrite(".git/hooks/pre-commit", "create");
    await policy.resolveForWrite(".git/hooks/pre-commit", "create");
    assert.equal(asked.length, 2);
    assert.ok(asked.every((q) => q.requirePerson === true && q.title === "Protected path"));
    assert.equal(policy.state.isWriteGranted(path.join(L.workdir, ".git/hooks/pre-commit")), true);
  });

  test("an answer marked auto from a custom asker counts as a refusal", { timeout: 60_000 }, async () => {
    const asker: PolicyAsker = {
      choose: <T extends string>() => Promise.resolve({ choice: "once" as T, source: "auto" as const }),
      confirm: () => Promise.resolve({ choice: true, source: "auto" as const }),
    };
    await rejectsWith(policyWith(asker).resolveForWrite(".envrc", "create"), "permission_denied", "policy");
  });

  test("the temp dir is judged too, and a deny-all host refuses", { timeout: 60_000 }, async () => {
    const temp = await ws.tempDir();
    await rejectsWith(
      policyWith(withAutoConfirm(denyAllHost())).resolveForWrite(path.join(temp, ".git", "config"), "create"),
      "permission_denied",
      "policy",
    );
  });

  test("a folder is judged by what it holds when it is deleted or moved, and writeTarget says what was there", {
    timeout: 60_000,
  }, async () => {
    await fsp.mkdir(path.join(L.workdir, "pkg"));
    await fsp.writeFile(path.join(L.workdir, "pkg", ".NPMRC"), "x");
    await fsp.mkdir(path.join(L.workdir, "cfg"));
    await fsp.writeFile(path.join(L.workdir, "cfg", "config"), "x");
    const policy = policyWith(autoHost());
    await rejectsWith(policy.writeTarget("pkg", "delete"), "permission_denied", "policy");
    await rejectsWith(policy.writeTarget("pkg", "move"), "permission_denied", "policy");
    const plain = await policy.writeTarget("cfg", "delete");
    assert.equal(plain.existed, true);
    assert.ok(plain.stat?.isDirectory());
    const landing = await policy.resolveTarget(".git/worktrees/x", { access: "write" });
    assert.equal(landing.existed, false);
    await rejectsWith(
      policy.authorize(landing, "copy", undefined, { tree: path.join(L.workdir, "cfg") }),
      "permission_denied",
      "policy",
    );
  });
});
