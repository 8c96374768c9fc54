// Deny rules of a policy file through the library (a Session and the built-in
// tools) and through the MCP server: commands behind every wrapper the
// analysis sees, paths behind symlinks, globs and listings, and the sandbox.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import fc from "fast-check";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolBox } from "../../../toolbox.ts";
import { Session } from "../../../policy/session.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { decideCommand } from "../../../policy/shell/authorize_command.ts";
import { denyAllHost } from "../../../policy/hosts.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { createMcpServer } from "../../../adapters/mcp/mod.ts";

const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const SECRET = "sk-live-0123456789abcdef-SECRET";

let dir: string;
let rules: PolicyRules;

before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-")));
  await mkdir(join(dir, "secrets"), { recursive: true });
  await mkdir(join(dir, "app"), { recursive: true });
  await mkdir(join(dir, "vendor"), { recursive: true });
  await writeFile(join(dir, "secrets", "key.txt"), SECRET);
  await writeFile(join(dir, "app", ".env"), `TOKEN=${SECRET}\n`);
  await writeFile(join(dir, "app", "main.ts"), "console.log('hi');\n");
  await writeFile(join(dir, "vendor", "lib.js"), "export {};\n");
  await symlink(join(dir, "app", ".env"), join(dir, "innocent.txt"));
  await symlink(join(dir, "secrets"), join(dir, "door"));
  const text = `{
    // the project's rules
    "commands": { "deny": ["git push*", "curl"], "ask": ["git commit"] },
    "paths": { "deny": ["**/.env", "secrets/**"], "readOnly": ["vendor/**"] },
  }`;
  await writeFile(join(dir, "toolfence.json"), text);
  rules = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function session(options: { autoConfirm?: boolean } = {}) {
  return new Session({ workspace: dir, rules, autoConfirm: options.autoConfirm ?? true });
}

const box = new ToolBox().withDefaults("fs", "search", "cmd");

describe("command deny rules", () => {
  const wrapped = [
    "git push",
    "git push origin main",
    "env git push",
    "env -i GIT_DIR=.git git push",
    "sudo -u root git push",
    "timeout 5 git push",
    "nice -n 5 git push",
    "nohup git push",
    "command git push",
    "exec git push",
    "xargs git push < /dev/null",
    "xargs -n1 -I{} git push {}",
    "bash -c 'git push'",
    'sh -c "ls; git push --force"',
    "bash -lc 'env git push'",
    "eval 'git push'",
    "find . -maxdepth 0 -exec git push \\;",
    "git -C . push",
    "git -c core.pager=cat --no-pager push",
    "/usr/bin/git push",
    "g\\it push",
    "'git' \"push\"",
    "ls && git push",
    "ls | git push",
    "(git push)",
    "echo $(git push)",
    "cat <(git push)",
    "true || git push &",
    "time git push",
    "stdbuf -o0 git push",
    "curl http://x",
    "timeout 1 bash -c 'sudo env curl x'",
    "git -c alias.p=push p",
    "git -calias.p=push p origin",
    "git -c alias.p='!git push' p",
    "git -c 'alias.x=!sh -c \"git push\"' x",
    // env's split string glued to its option (with the automatic answer, `env -S"git push origin HEAD:main"` pushed).
    'env -S"git push"',
    "env -iS'git push origin'",
    "env --split-string='git push'",
    "env --sp='git push'",
    // Package managers' subcommands that run the command after them.
    "npm exec -- git push",
    "npm x git push origin",
    "npm -s exec --package=x -- git push",
    "npm exec -c 'git push'",
    "pnpm -C . exec git push",
    "pnpm dlx git push",
    "yarn exec git push",
    "uv run git push",
    "uv tool run curl x",
    "bun exec 'curl x'",
    "poetry run env git push",
    // Programs that run the command they are given (with the automatic answer, `setarch x86_64 git push origin
    // HEAD:main` pushed).
    "setarch x86_64 git push",
    "linux64 git push",
    "setpriv --reuid=1000 git push",
    "ssh-agent git push",
    "choom -n 1 -- git push",
    "systemd-inhibit git push",
    "start-stop-daemon -S -x /usr/bin/git -- push",
    "capsh -- -c 'git push'",
    // Profilers, harnesses, supervisors and caches (with the automatic answer, `perf stat touch x` ran touch under a
    // deny rule for it: runner_commands_test).
    "perf stat git push",
    "perf record -o /dev/null -- git push",
    "perf trace git push",
    "hyperfine 'git push'",
    "faketime 2020-01-01 git push",
    "eatmydata git push",
    "numactl -C 0 git push",
    "rlwrap git push",
    "torsocks git push",
    "tini -- git push",
    "ccache git push",
    "chronic git push",
    "pee 'git push'",
    "runcon -t x git push",
    // git's programs for its subcommands (with the automatic answer, `/usr/lib/git-core/git-push origin HEAD:main`
    // pushed).
    "/usr/lib/git-core/git-push origin",
    "git-push",
    "env git-push origin",
    // git's own subcommands that run a command.
    "git bisect run git push",
    "git -C . bisect run env git push origin",
    "git submodule --quiet foreach git push",
  ];
  for (const command of wrapped) {
    test(`denied: ${command}`, { timeout: 60_000 }, async () => {
      const decided = await decideCommand(command, { rules, workspaceRoot: dir });
      assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
    });
  }

  const allowed = ["git status", "echo git push", "grep -r 'git push' .", "ls curl-docs"];
  for (const command of allowed) {
    test(`not denied: ${command}`, { timeout: 60_000 }, async () => {
      const decided = await decideCommand(command, { rules, workspaceRoot: dir });
      assert.notEqual(decided.decision, "deny", `${command}: ${decided.reason}`);
    });
  }

  test(
    "a command name known only at run time that could be a denied one asks a person",
    { timeout: 60_000 },
    async () => {
      for (
        const command of [
          "$x push",
          '"$(printf git)" push',
          "env $cmd",
          'bash -c "$line"',
          "git pu",
          "git p origin",
          // Words or commands from a stream: with the automatic answer, `echo 'push origin HEAD:main' | xargs git`
          // and `bash <<< 'git push origin HEAD:main'` pushed.
          "echo push | xargs git",
          "xargs -a list git",
          "echo push | parallel git",
          "echo git push | xargs -n2",
          "echo 'git push' | bash",
          "bash <<< 'git push'",
          "echo 'git push' | sh -s",
          "echo x | bash -o pipefail",
          ". /dev/stdin <<< 'git push'",
        ]
      ) {
        const decided = await decideCommand(command, { rules, workspaceRoot: dir });
        assert.equal(decided.decision, "ask", command);
        assert.equal(decided.prompt?.requirePerson, true, command);
      }
    },
  );

  test("generated wrapper chains around git push are always denied", { timeout: 60_000 }, async () => {
    const wrapper = fc.constantFrom(
      "env",
      "env A=1",
      "sudo",
      "sudo -u x",
      "timeout 3",
      "nice -n 2",
      "nohup",
      "command",
      "time",
      "xargs",
      "stdbuf -o0",
      "setsid",
      "ionice -c3",
    );
    const quote = fc.constantFrom(
      (w: string) => w,
      (w: string) => `'${w}'`,
      (w: string) => `"${w}"`,
      (w: string) => w.length > 1 ? `${w[0]}\\${w.slice(1)}` : w,
    );
    const shell = fc.constantFrom((c: string) => c, (c: string) => `bash -c '${c}'`, (c: string) => `sh -c "${c}"`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(wrapper, { maxLength: 4 }),
        quote,
        quote,
        shell,
        fc.boolean(),
        async (ws, q1, q2, sh, globals) => {
          const inner = [...ws, q1("git"), ...(globals ? ["-C", "."] : []), q2("push"), "origin"].join(" ");
          const command = sh(inner);
          const decided = await decideCommand(command, { rules, workspaceRoot: dir });
          assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
        },
      ),
      { numRuns: 150, seed: 16 },
    );
  });

  test(
    "global options before a subcommand, and npm's abbreviations and aliases, do not hide it from a deny rule",
    { timeout: 60_000 },
    async () => {
      // Under a broader allow rule, `npm --loglevel notice publish` and `npm publ` ran npm publish without asking:
      // only git's global options were taken off before the rules were matched.
      const text = JSON.stringify({
        commands: {
          allow: ["npm *", "cargo *", "docker *", "pnpm *", "kubectl *", "deno *"],
          deny: ["npm publish", "npm install", "cargo publish", "docker rm", "pnpm publish", "kubectl delete"],
        },
      });
      const broad = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
      const denied = [
        "npm -s publish",
        "npm --silent publish",
        "npm --loglevel notice publish --dry-run",
        "npm -w pkg publish",
        "npm --prefix=. publish",
        "npm -- publish",
        "npm publ",
        "npm pu --dry-run",
        "npm i left-pad",
        "npm isntall left-pad",
        "npm -s add left-pad",
        "sudo npm -s publish",
        "cargo +nightly publish",
        "cargo -q --locked publish",
        "docker -H unix:///x rm c",
        "docker --context=x rm c",
        "pnpm -C . publish",
        "kubectl -n x delete pod y",
      ];
      for (const command of denied) {
        const decided = await decideCommand(command, { rules: broad, workspaceRoot: dir, sandbox: "required" });
        assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
      }
      // Over-reading never allows more, and what the allow rules are for still runs.
      for (const command of ["npm -s run build", "npm run publish", "docker ps", "cargo -q build", "npm --version"]) {
        const decided = await decideCommand(command, { rules: broad, workspaceRoot: dir, sandbox: "required" });
        assert.equal(decided.decision, "allow", `${command}: ${decided.reason}`);
      }
      // Generated: any run of global options, each perhaps with a value, before the denied subcommand.
      const option = fc.constantFrom("-s", "-q", "--silent", "--loglevel=warn", "+nightly", "--");
      const valued = fc.tuple(fc.constantFrom("-w", "-C", "--prefix", "-H", "--context"), fc.constantFrom(".", "x"));
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(["npm", "publish"], ["cargo", "publish"], ["docker", "rm"], ["pnpm", "publish"]),
          fc.array(fc.oneof(option.map((o) => [o]), valued), { minLength: 1, maxLength: 4 }),
          async ([program, sub], options) => {
            const command = [program, ...options.flat(), sub, "x"].join(" ");
            const decided = await decideCommand(command, { rules: broad, workspaceRoot: dir, sandbox: "required" });
            assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
          },
        ),
        { numRuns: 100, seed: 23 },
      );
      // Through the bash tool, with nobody to ask: refused with the rule, npm never started.
      const s = new Session({ workspace: dir, rules: broad, autoConfirm: true });
      try {
        for (const command of ["npm --loglevel notice publish --dry-run", "npm publ --dry-run"]) {
          const result = await box.call(s, "bash", { command });
          assert.equal(result.status, "skipped", command);
          assert.equal(result.errorCode, "permission_denied", command);
          assert.match(result.error ?? "", /denied by the rule "npm publish"/);
        }
      } finally {
        await s.close();
      }
    },
  );

  test("a subcommand a program's configuration may define (cargo's [alias], gh alias) needs a person", {
    timeout: 60_000,
  }, async () => {
    // Under allow ["cargo *"], `cargo nn` with `[alias] nn = "publish"` in the project's .cargo/config.toml ran as
    // allowed: only git's subcommands were known, so only git's aliases were suspected.
    const text = JSON.stringify({
      commands: { allow: ["cargo *", "gh *"], deny: ["cargo publish", "gh pr merge"] },
    });
    const broad = PolicyRules.fromLayers([parsePolicyFile(join(dir, "toolfence.json"), text, "project")], dir);
    for (const command of ["cargo nn", "cargo -q nn x", "cargo +nightly nn", "gh xx 12", "gh -R o/r xx"]) {
      const decided = await decideCommand(command, { rules: broad, workspaceRoot: dir, sandbox: "required" });
      assert.equal(decided.decision, "ask", `${command}: ${decided.reason}`);
      assert.match(decided.reason ?? "", /may be an alias/);
    }
    for (
      const command of ["cargo build", "cargo +nightly test", "cargo --color always build", "gh co 12", "gh pr list"]
    ) {
      const decided = await decideCommand(command, { rules: broad, workspaceRoot: dir, sandbox: "required" });
      assert.equal(decided.decision, "allow", `${command}: ${decided.reason}`);
    }
    // Without a rule for the program, its unknown subcommands are nobody's concern.
    const gitOnly = PolicyRules.fromLayers(
      [parsePolicyFile(join(dir, "toolfence.json"), JSON.stringify({ commands: { allow: ["cargo *"] } }), "project")],
      dir,
    );
    const plugin = await decideCommand("cargo nextest run", {
      rules: gitOnly,
      workspaceRoot: dir,
      sandbox: "required",
    });
    assert.equal(plugin.decision, "allow", plugin.reason);
  });

  test(
    "a package manager's subcommand that runs a command does not hide a denied one, under an allow rule of it",
    { timeout: 60_000 },
    async () => {
      // With allow ["npm *"] and deny ["git push*"], `npm exec -- git push origin HEAD:main` pushed (in the sandbox,
      // nobody asked): `npm exec` was matched by the allow rule and what it runs by no rule.
      const { execFileSync } = await import("node:child_process");
      const work = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-exec-")));
      const text = JSON.stringify({ commands: { allow: ["npm *", "uv *", "pnpm *", "git *"], deny: ["git push*"] } });
      const broad = PolicyRules.fromLayers([parsePolicyFile(join(work, "toolfence.json"), text, "project")], work);
      const s = new Session({ workspace: work, rules: broad, host: denyAllHost() });
      try {
        for (
          const command of [
            "npm exec -- git push",
            "uv run git push origin",
            "pnpm exec git push",
            "git bisect run git push origin HEAD:main",
            "git submodule foreach --recursive git push",
          ]
        ) {
          const decided = await decideCommand(command, { rules: broad, workspaceRoot: work, sandbox: "required" });
          assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
        }
        for (const command of ["npm exec -- eslint .", "uv run pytest", "git bisect run make test"]) {
          const decided = await decideCommand(command, { rules: broad, workspaceRoot: work, sandbox: "required" });
          assert.notEqual(decided.decision, "deny", `${command}: ${decided.reason}`);
        }
        const git = (...args: string[]) => execFileSync("git", args, { cwd: work, stdio: "ignore" });
        await writeFile(join(work, "package.json"), '{"name":"p","version":"1.0.0"}');
        git("init", "-q");
        git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x");
        git("init", "-q", "--bare", "remote.git");
        git("remote", "add", "origin", join(work, "remote.git"));
        const result = await box.call(s, "bash", { command: "npm exec -- git push origin HEAD:main" });
        assert.equal(result.status, "skipped");
        assert.equal(result.errorCode, "permission_denied");
        assert.match(result.error ?? "", /denied by the rule "git push\*"/);
        const refs = execFileSync("git", ["for-each-ref"], { cwd: join(work, "remote.git"), encoding: "utf8" });
        assert.equal(refs, "", "the denied push reached the remote");
      } finally {
        await s.close();
        await rm(work, { recursive: true, force: true });
      }
    },
  );

  test("a command line a program's option runs does not hide a denied one", { timeout: 60_000 }, async () => {
    // With deny ["git push*"] and the sandbox, these asked the risk assessor only (an automatic answer ran them), and
    // each runs `git push`: git's own options and configuration values, tar's, rsync's, sort's and ripgrep's, sed's
    // and awk's commands.
    const { execFileSync } = await import("node:child_process");
    const work = await realpath(await mkdtemp(join(tmpdir(), "toolfence-deny-option-")));
    const text = JSON.stringify({ commands: { deny: ["git push*"] } });
    const denying = PolicyRules.fromLayers([parsePolicyFile(join(work, "toolfence.json"), text, "project")], work);
    try {
      for (
        const command of [
          "git rebase -x 'git push origin HEAD:refs/heads/main' --root",
          "git rebase --exec='git push' HEAD~1",
          "git rebase --exe 'git push' HEAD~1",
          "git difftool -x 'git push'",
          "git difftool --extcmd='git push'",
          "git -c core.sshCommand='git push' fetch",
          "git -c core.pager='git push' log",
          "git -c credential.helper='!git push' fetch",
          "git filter-branch --tree-filter 'git push' HEAD",
          "git fetch --upload-pack='git push' origin",
          "tar cf x.tar --checkpoint=1 --checkpoint-action=exec='git push' a",
          "tar -I 'git push' -cf x.tar a",
          "rsync -e 'git push' a h:b",
          "sort --compress-program='git push' a",
          "rg --pre 'git push' x",
        ]
      ) {
        const decided = await decideCommand(command, { rules: denying, workspaceRoot: work, sandbox: "required" });
        assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
      }
      for (const command of ["git rebase -x 'make test' HEAD~1", "git -c user.name='git push' log", "sort a"]) {
        const decided = await decideCommand(command, { rules: denying, workspaceRoot: work, sandbox: "required" });
        assert.notEqual(decided.decision, "deny", `${command}: ${decided.reason}`);
      }
      // sed's `e COMMAND` is matched as written; what `s///e`, awk's `system` and pipes and a script or program read
      // from a file run only the run knows: a person decides.
      for (const command of ["sed 'e git push' a", "sed -n '1e git push' a", "sed -ne 'e git push' a"]) {
        const decided = await decideCommand(command, { rules: denying, workspaceRoot: work, sandbox: "required" });
        assert.equal(decided.decision, "deny", `${command}: ${decided.reason}`);
      }
      for (
        const command of [
          "sed 's/.*/git push/e' a",
          "sed -f s.sed a",
          `awk 'BEGIN{system("git push")}'`,
          `awk -F: 'BEGIN{print | "git push"}'`,
          `gawk --source='BEGIN{"git push" | getline}'`,
          "awk -f p.awk a",
          // A pager's or editor's own commands run shell commands.
          "vim -c '!git push'",
          "less +'!git push' a",
        ]
      ) {
        const decided = await decideCommand(command, { rules: denying, workspaceRoot: work, sandbox: "required" });
        assert.equal(decided.decision, "ask", `${command}: ${decided.reason}`);
        assert.equal(decided.prompt?.requirePerson, true, `${command}: ${decided.reason}`);
      }
      for (const command of ["awk -F'|' '{print $1}' a", "sed -n 's/a/b/p' a"]) {
        const decided = await decideCommand(command, { rules: denying, workspaceRoot: work, sandbox: "required" });
        assert.equal(decided.decision, "allow", `${command}: ${decided.reason}`);
      }
      // What the first line does: it pushes (its rebase of an empty history ends there).
      const git = (...args: string[]) => execFileSync("git", args, { cwd: work, stdio: "ignore" });
      git("init", "-q", "-b", "main");
      git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x");
      git("init", "-q", "--bare", "remote.git");
      git("remote", "add", "origin", join(work, "remote.git"));
      execFileSync("bash", ["-c", "git rebase -x 'git push -q origin HEAD:refs/heads/main' --root"], {
        cwd: work,
        stdio: "ignore",
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "a",
          GIT_AUTHOR_EMAIL: "a@b",
          GIT_COMMITTER_NAME: "a",
          GIT_COMMITTER_EMAIL: "a@b",
        },
      });
      const refs = execFileSync("git", ["for-each-ref"], { cwd: join(work, "remote.git"), encoding: "utf8" });
      assert.match(refs, /refs\/heads\/main/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  test("through the library the bash tool refuses it with the rule, and never asks", { timeout: 60_000 }, async () => {
    const s = session();
    try {
      for (const command of ["git push", "env git push", "bash -c 'git push'"]) {
        const result = await box.call(s, "bash", { command });
        assert.equal(result.status, "skipped", command);
        assert.equal(result.errorCode, "permission_denied");
        assert.match(result.error ?? "", /denied by the rule "git push\*"/);
      }
    } finally {
      await s.close();
    }
  });

  test("an ask rule needs a person: the automatic answer does not run it", { timeout: 60_000 }, async () => {
    const s = session({ autoConfirm: true });
    try {
      const result = await box.call(s, "bash", { command: "git commit -m x" });
      assert.equal(result.status, "skipped");
      assert.match(result.error ?? "", /only a person may confirm it|was declined|no person can be asked/);
    } finally {
      await s.close();
    }
  });
});

describe("hidden files in git's history", () => {
  test("while the policy hides paths, a git command needs a person: the objects keep what a hidden file held", {
    timeout: 60_000,
  }, async () => {
    // A revision's path that names the hidden file is denied outright.
    assert.equal((await decideCommand("git show HEAD:app/.env", { rules, workspaceRoot: dir })).decision, "deny");
    for (const command of ["git log -p", "git show HEAD", "git grep TOKEN HEAD", "git diff --cached", "git status"]) {
      const decided = await decideCommand(command, { rules, workspaceRoot: dir });
      assert.equal(decided.decision, "ask", `${command}: ${decided.reason}`);
      assert.equal(decided.prompt?.requirePerson, true, command);
      assert.match(decided.reason, /git prints what the repository keeps/, command);
    }
    const s = session({ autoConfirm: true });
    try {
      const result = await box.call(s, "bash", { command: "git log -p" });
      assert.equal(result.status, "skipped");
      assert.ok(!JSON.stringify(result).includes(SECRET));
    } finally {
      await s.close();
    }
  });
});

describe("what a repository keeps of hidden files", () => {
  test("is denied as they are while a rule hides paths of the workspace, in every spelling and letter case", {
    timeout: 60_000,
  }, () => {
    const root = "/w";
    const hiding = PolicyRules.fromLayers([{ name: "project", config: { paths: { deny: ["**/.env"] } } }], root);
    const outsideOnly = PolicyRules.fromLayers([{ name: "user", config: { paths: { deny: ["/srv/token"] } } }], root);
    const stores = [".git/objects", ".git/modules", ".git/rr-cache", ".git/rebase-apply", ".git/rebase-merge"];
    fc.assert(
      fc.property(
        fc.constantFrom(...stores, ".git/lost-found", ".git/lfs", ".git/COMMIT_EDITMSG"),
        fc.constantFrom("", "sub/", "a/b/"),
        fc.array(fc.stringMatching(/^[0-9a-zA-Z_.-]{1,8}$/).filter((part) => part !== "." && part !== ".."), {
          maxLength: 3,
        }),
        fc.boolean(),
        (store, nest, rest, upper) => {
          const named = [nest + store, ...rest].join("/");
          const spelled = upper ? named.toUpperCase() : named;
          const decided = hiding.decidePath(`${root}/${spelled}`);
          assert.equal(decided.decision, "deny", spelled);
          assert.match(decided.rule?.reason ?? "", /\*\*\/\.env/);
          // A policy that hides nothing of the workspace leaves the repository alone.
          assert.equal(outsideOnly.decidePath(`${root}/${spelled}`).decision, "allow", spelled);
        },
      ),
    );
    for (const kept of [".git/HEAD", ".git/config", ".git/refs/heads/main", "objects/x", "src/.git-objects"]) {
      assert.equal(hiding.decidePath(`${root}/${kept}`).decision, "allow", kept);
    }
    assert.deepEqual(hiding.hiddenGlobs(), ["**/.env"], "the sandbox of a line a person allowed shows them");
  });
});

describe("path deny rules through the tools", () => {
  test("reading a denied file, through a symlink, a symlinked folder or an absolute path, is refused", {
    timeout: 60_000,
  }, async () => {
    const s = session();
    try {
      for (
        const path of [
          "app/.env",
          "innocent.txt",
          "door/key.txt",
          "secrets/key.txt",
          join(dir, "app/.env"),
          "app/../app/.env",
          "APP/.ENV",
        ]
      ) {
        const result = await box.call(s, "read_file", { path });
        assert.notEqual(result.status, "success", path);
        assert.ok(!JSON.stringify(result).includes(SECRET), path);
      }
      const ok = await box.call(s, "read_file", { path: "app/main.ts" });
      assert.equal(ok.status, "success");
    } finally {
      await s.close();
    }
  });

  test("generated spellings and symlink chains into a denied path never read it", { timeout: 180_000 }, async () => {
    const s = session();
    let links = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("app/.env", "secrets/key.txt", "innocent.txt", "door/key.txt"),
          fc.array(fc.constantFrom("./", "x/../", "app/../", "/"), { maxLength: 3 }),
          fc.boolean(),
          fc.nat({ max: 2 }),
          fc.boolean(),
          async (target, noise, upper, chain, absolute) => {
            // A chain of links, each to the next, the last to the target (or to its folder).
            let name: string = target;
            for (let i = 0; i < chain; i++) {
              const link = `chain${links++}`;
              await symlink(join(dir, name), join(dir, link));
              name = link;
            }
            let spelled = noise.join("").replaceAll("//", "/") + name;
            if (upper) spelled = spelled.toUpperCase();
            if (absolute) spelled = join(dir, spelled);
            const result = await box.call(s, "read_file", { path: spelled });
            assert.ok(!JSON.stringify(result).includes(SECRET), `${spelled}: ${result.status}`);
            const listed = await box.call(s, "grep", { pattern: "SECRET", path: "." });
            assert.ok(!JSON.stringify(listed).includes(SECRET), "grep");
          },
        ),
        { numRuns: 60, seed: 1616 },
      );
    } finally {
      await s.close();
      for (let i = 0; i < links; i++) await rm(join(dir, `chain${i}`), { force: true });
    }
  });

  test("listings and searches leave denied paths out", { timeout: 60_000 }, async () => {
    const s = session();
    try {
      const listed = await box.call(s, "list_dir", { path: "app" });
      assert.equal(listed.status, "success");
      assert.deepEqual((listed.output as { files: string[] }).files, ["main.ts"]);
      const root = await box.call(s, "list_dir", { path: "." });
      assert.ok(!(root.output as { directories: string[] }).directories.includes("secrets"));
      const globbed = await box.call(s, "glob", { pattern: "**/*" });
      assert.equal(globbed.status, "success");
      const text = JSON.stringify(globbed.output);
      assert.ok(!text.includes(".env") && !text.includes("key.txt") && !text.includes("innocent"), text);
      for (const engine of [undefined]) {
        const grepped = await box.call(s, "grep", { pattern: "SECRET", ...(engine ? { engine } : {}) });
        assert.ok(!JSON.stringify(grepped).includes(SECRET), JSON.stringify(grepped));
      }
      const denied = await box.call(s, "list_dir", { path: "secrets" });
      assert.notEqual(denied.status, "success");
    } finally {
      await s.close();
    }
  });

  test("writes to denied and read-only paths are refused; the file is unchanged", { timeout: 60_000 }, async () => {
    const s = session();
    try {
      for (
        const [path, content] of [["app/.env", "x"], ["vendor/lib.js", "y"], ["secrets/new.txt", "z"], [
          "door/new.txt",
          "w",
        ]]
      ) {
        const result = await box.call(s, "write_file", { path, content });
        assert.equal(result.status, "skipped", `${path}: ${result.error}`);
        assert.equal(result.errorCode, "permission_denied");
      }
      assert.equal(await readFile(join(dir, "vendor", "lib.js"), "utf8"), "export {};\n");
      const read = await box.call(s, "read_file", { path: "vendor/lib.js" });
      assert.equal(read.status, "success", "read-only is still readable");
    } finally {
      await s.close();
    }
  });

  test("moving, copying or deleting a folder that holds a hidden path is refused", { timeout: 60_000 }, async () => {
    const s = session();
    try {
      for (
        const [tool, args] of [
          ["move", { src: "app", dst: "public" }],
          ["copy", { src: "app", dst: "public" }],
          ["delete", { path: "app", recursive: true }],
        ] as const
      ) {
        const result = await box.call(s, tool, args);
        assert.equal(result.status, "skipped", `${tool}: ${result.error}`);
        assert.match(result.error ?? "", /a path the policy hides/);
      }
      assert.equal(await readFile(join(dir, "app", ".env"), "utf8"), `TOKEN=${SECRET}\n`);
    } finally {
      await s.close();
    }
  });

  test("a command that names a denied path is refused", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "cat app/.env",
        "cat ./secrets/key.txt",
        "grep -r x --file=app/.env",
        "cp secrets/key.txt /tmp/x",
      ]
    ) {
      const decided = await decideCommand(command, { rules, workspaceRoot: dir });
      assert.equal(decided.decision, "deny", command);
    }
  });

  test(
    "inside the sandbox denied paths are hidden, by glob and through symlinks",
    { timeout: 60_000, skip: !hasBwrap },
    async () => {
      const s = session();
      try {
        for (
          const command of [
            "cat app/.e*",
            "cat innocent.txt",
            "cat door/*",
            "cat $(echo app/.env)",
            "ls secrets | wc -l",
          ]
        ) {
          const result = await box.call(s, "bash", { command });
          assert.ok(!JSON.stringify(result).includes(SECRET), `${command}: ${JSON.stringify(result.output)}`);
        }
        // A reader's line, which sees the workspace read-only: what it reaches by recursion stays hidden.
        const reader = await box.call(s, "bash", {
          command: "test -w . || echo read-only; grep -rhs . app vendor || true",
        });
        assert.equal(reader.status, "success", JSON.stringify(reader.output));
        assert.equal((reader.output as { stdout: string }).stdout, "read-only\nconsole.log('hi');\nexport {};\n");
      } finally {
        await s.close();
      }
    },
  );
});

describe("through the MCP server", () => {
  async function connect() {
    const served = createMcpServer(box, { workspace: dir, rules, autoConfirm: true });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" }, { capabilities: {} });
    await served.server.connect(serverSide);
    await client.connect(clientSide);
    return {
      call: (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
      async close() {
        await client.close();
        await served.close();
      },
    };
  }

  test("denied commands and paths stay denied for a client", { timeout: 60_000 }, async () => {
    const { call, close } = await connect();
    try {
      for (const command of ["git push", "sudo env git -C . push", "sh -c 'curl x'"]) {
        const result = await call("bash", { command });
        assert.equal(result.isError, true, command);
        assert.match(JSON.stringify(result.content), /denied by the rule/);
      }
      for (const path of ["app/.env", "innocent.txt", "door/key.txt"]) {
        const result = await call("read_file", { path });
        assert.equal(result.isError, true, path);
        assert.ok(!JSON.stringify(result).includes(SECRET));
      }
      const listed = await call("glob", { pattern: "**" });
      assert.ok(!JSON.stringify(listed).includes("key.txt"));
    } finally {
      await close();
    }
  });
});

describe("through the MCP server over HTTP, per tenant", () => {
  test("each tenant's workspace gets the rules, relative to its own root", { timeout: 60_000 }, async () => {
    const { startServer, connect: connectHttp, textOf } = await import("../../adapters/_http_harness.ts");
    const TOKEN = "tenant-token-0123456789abcdef";
    const h = await startServer([{ token: TOKEN, tenant: "t1" }], { rules, sandbox: "off" });
    const client = await connectHttp(h.server.url, TOKEN);
    try {
      const wrote = await client.callTool({ name: "write_file", arguments: { path: "app/.env", content: "x\n" } });
      assert.equal(wrote.isError, true, textOf(wrote));
      assert.match(textOf(wrote), /denied by the policy/);
      const pushed = await client.callTool({ name: "bash", arguments: { command: "nohup git push" } });
      assert.equal(pushed.isError, true);
      assert.match(textOf(pushed), /denied by the rule "git push\*"/);
      // Without a sandbox the hidden paths cannot be kept from a command: a person decides, and nobody can here.
      const listed = await client.callTool({ name: "bash", arguments: { command: "ls" } });
      assert.equal(listed.isError, true);
      assert.match(textOf(listed), /OS sandbox that hides them/);
    } finally {
      await client.close();
      await h.close();
    }
  });
});
