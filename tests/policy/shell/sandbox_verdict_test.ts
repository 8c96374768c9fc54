import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { checkCommand } from "../../../policy/shell/check_command.ts";
import {
  DEFAULT_COMMAND_ALLOWLIST,
  parseAllowlistEntry,
  PROJECT_CODE_COMMANDS,
  runsProjectCode,
} from "../../../policy/shell/allowlist.ts";
import { authorizeCommand } from "../../../policy/shell/authorize_command.ts";
import { commandSandbox } from "../../../policy/shell/check_command.ts";
import { rulesRiskAssessor } from "../../../policy/shell/risk.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { autoHost, callbackHost } from "../../../policy/hosts.ts";
import { PolicyState } from "../../../policy/state.ts";
import { ToolError } from "../../../core/errors.ts";
import type { ConfirmRequest } from "../../../core/host.ts";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { withSession } from "../../core/_helpers.ts";

const NO_SANDBOX = { available: false, reason: "bwrap: setting up uid map: Permission denied" };
const SANDBOX = { available: true };

/** A host where a person answers every confirmation with `answer`, recording the questions. */
function personAnswering(answer: boolean): { person: ReturnType<typeof callbackHost>; asked: ConfirmRequest[] } {
  const asked: ConfirmRequest[] = [];
  const person = callbackHost({
    choose: () => {
      throw new Error("commands only confirm");
    },
    confirm: (request) => {
      asked.push(request);
      return answer;
    },
  });
  return { person, asked };
}

const PROJECT_CODE_LINES = [
  "deno test -A",
  "npm test",
  "npm run test -- --watch=false",
  "pytest -q",
  "python -m pytest",
  "python3 -m pytest -x",
  "cargo test",
  "go test ./...",
  "git status",
  "git diff --cached",
  "git --no-pager log -5",
  "git show HEAD",
  "git blame f",
  "git ls-files",
  "git rev-parse HEAD",
  "git stash list",
];

describe("the sandbox in the verdict", () => {
  test("allowlisted commands that run project code ask without a sandbox, naming it and the probe's error", {
    timeout: 60_000,
  }, async () => {
    for (const command of PROJECT_CODE_LINES) {
      const allowed = await checkCommand(command, { sandbox: SANDBOX });
      assert.equal(allowed.verdict, "allow", `${command}: ${allowed.reasons.join(" | ")}`);
      assert.equal(allowed.sandbox.needed, true, command);
      const asked = await checkCommand(command, { sandbox: NO_SANDBOX });
      assert.equal(asked.verdict, "ask", command);
      assert.ok(
        asked.reasons.some((reason) =>
          reason.includes("runs code the project controls, and the OS sandbox is unavailable") &&
          reason.includes(NO_SANDBOX.reason)
        ),
        `${command}: ${asked.reasons.join(" | ")}`,
      );
    }
  });

  test("in a longer line, the project-code part is found wherever it sits", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "ls && deno test -A",
        "echo $(git status)",
        "cat <(npm test)",
        "(cd src && go test ./...)",
        "ls | grep x; pytest",
        "true || cargo test",
      ]
    ) {
      assert.equal((await checkCommand(command, { sandbox: SANDBOX })).verdict, "allow", command);
      const asked = await checkCommand(command, { sandbox: NO_SANDBOX });
      assert.equal(asked.verdict, "ask", command);
      assert.ok(asked.reasons.some((reason) => reason.includes("sandbox is unavailable")), command);
    }
  });

  test("commands that run no project code are allowed without a sandbox", { timeout: 60_000 }, async () => {
    for (
      const command of [
        "ls -la",
        "cat f | grep x",
        "git --version",
        "node --version",
        "python3 --version",
        "sed -n 1,5p f",
        "cd src && ls",
      ]
    ) {
      const result = await checkCommand(command, { sandbox: NO_SANDBOX });
      assert.equal(result.verdict, "allow", `${command}: ${result.reasons.join(" | ")}`);
      assert.equal(result.sandbox.needed, false, command);
    }
  });

  test("every default entry either runs project code by the list or is one of the known read-only ones", {
    timeout: 60_000,
  }, () => {
    const projectCode = DEFAULT_COMMAND_ALLOWLIST.filter((entry) => {
      const { words, exact } = parseAllowlistEntry(entry);
      return !exact && runsProjectCode(words);
    });
    for (const runner of ["deno test", "npm test", "npm run test", "pytest", "python -m pytest", "cargo test"]) {
      assert.ok(projectCode.includes(runner), runner);
    }
    assert.ok(projectCode.includes("go test"));
    assert.ok(projectCode.includes("git status"));
    // The listings too: git branch and git tag read objects, which a partial clone fetches through the transport its
    // configuration names; git config and git remote read ~/.gitconfig and a repository above the workspace.
    for (const listing of ["git branch", "git tag", "git remote", "git config"]) {
      assert.ok(projectCode.includes(listing), listing);
    }
    assert.ok(!projectCode.includes("ls"));
  });

  test(
    "a user entry marked `sandbox:` needs the sandbox; the mark does not change what matches",
    { timeout: 60_000 },
    async () => {
      const allowlist = ["sandbox: make test", "ls"];
      assert.equal((await checkCommand("make test", { allowlist, sandbox: SANDBOX })).verdict, "allow");
      const asked = await checkCommand("make test", { allowlist, sandbox: NO_SANDBOX });
      assert.equal(asked.verdict, "ask");
      assert.equal(asked.commands[0].allowedBy, "sandbox: make test");
      assert.equal((await checkCommand("make install", { allowlist, sandbox: SANDBOX })).verdict, "ask");
      // Commands on the list need the sandbox even when the user's entry carries no mark.
      const unmarked = await checkCommand("make test", { allowlist: ["make test"], sandbox: NO_SANDBOX });
      assert.equal(unmarked.verdict, "ask");
      // A caller's own list replaces the default one.
      const own = await checkCommand("make test", { allowlist: ["make test"], sandbox: NO_SANDBOX, projectCode: [] });
      assert.equal(own.verdict, "allow");
      assert.ok(PROJECT_CODE_COMMANDS.includes("make"));
    },
  );

  test(
    "tools whose configuration or plugins are the project's code need the sandbox when a policy file allows them",
    { timeout: 120_000 },
    async () => {
      // `terraform validate` starts the providers a folder holds: a binary under terraform.d/plugins ran.
      if (spawnSync("sh", ["-c", "command -v terraform"]).status === 0) {
        const dir = await mkdtemp(join(tmpdir(), "toolfence-tf-"));
        try {
          const plugin = join(dir, "terraform.d/plugins/example.com/x/evil/1.0.0/linux_amd64");
          await mkdir(plugin, { recursive: true });
          const marker = join(dir, "provider-ran");
          await writeFile(join(plugin, "terraform-provider-evil_v1.0.0"), `#!/bin/sh\ntouch ${marker}\nexit 1\n`, {
            mode: 0o755,
          });
          await writeFile(
            join(dir, "main.tf"),
            'terraform {\n  required_providers {\n    evil = { source = "example.com/x/evil", version = "1.0.0" }\n' +
              '  }\n}\nprovider "evil" {}\n',
          );
          const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, CHECKPOINT_DISABLE: "1" };
          spawnSync("terraform", ["init", "-input=false", "-no-color"], { cwd: dir, env, timeout: 60_000 });
          spawnSync("terraform", ["validate", "-no-color"], { cwd: dir, env, timeout: 30_000 });
          assert.ok(existsSync(marker), "terraform validate did not start the provider");
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
      for (
        const command of [
          "terraform validate",
          "tofu plan",
          "ansible-playbook site.yml",
          "docker compose up",
          "eslint .",
          "prettier --check .",
          "vite build",
          "mypy src",
          "pylint src",
          "sphinx-build docs out",
          "rubocop",
          "just build",
          "pre-commit run --all-files",
        ]
      ) {
        const program = command.split(" ")[0];
        const allowlist = [...DEFAULT_COMMAND_ALLOWLIST, program === "docker" ? "docker compose" : program];
        const check = await checkCommand(command, { allowlist, sandbox: NO_SANDBOX });
        assert.equal(check.verdict, "ask", command);
        assert.equal(check.sandbox.needed, true, command);
        assert.equal((await checkCommand(command, { allowlist, sandbox: SANDBOX })).verdict, "allow", command);
      }
      assert.equal(runsProjectCode(["docker", "ps"]), false);
    },
  );

  test("without a sandbox option, the machine's real state decides", { timeout: 60_000 }, async () => {
    const status = await bubblewrapStatus();
    const result = await checkCommand("deno test -A");
    assert.equal(result.sandbox.needed, true);
    assert.equal(result.sandbox.available, status.path !== undefined);
    assert.equal(result.verdict, status.path !== undefined ? "allow" : "ask");
    if (status.path === undefined) assert.ok(result.reasons.some((reason) => reason.includes(status.reason!)));
  });

  test(
    "commands off the allowlist that run project code carry the sandbox reason too",
    { timeout: 60_000 },
    async () => {
      for (const command of ["./build.sh", "bash scripts/x.sh", "node index.js", "make", "npx tsc", "src/tool --x"]) {
        const check = await checkCommand(command, { sandbox: NO_SANDBOX });
        assert.equal(check.verdict, "ask", command);
        assert.equal(check.sandbox.needed, true, command);
        assert.equal((await rulesRiskAssessor.assess(command, check)).kind, "project_code_unsandboxed", command);
      }
      const plain = await checkCommand("rm x", { sandbox: NO_SANDBOX });
      assert.equal(plain.sandbox.needed, false);
    },
  );

  test("the risk assessor makes it a question only a person may answer", { timeout: 60_000 }, async () => {
    const check = await checkCommand("npm test", { sandbox: NO_SANDBOX });
    const assessment = await rulesRiskAssessor.assess("npm test", check);
    assert.equal(assessment.kind, "project_code_unsandboxed");
    assert.match(assessment.reason, /npm/);
    assert.match(assessment.reason, /Permission denied/);
    // Also when the line asks for other reasons, which would otherwise default to yes.
    const mixed = await checkCommand("npm test && make", { sandbox: NO_SANDBOX });
    assert.equal((await rulesRiskAssessor.assess("npm test && make", mixed)).kind, "project_code_unsandboxed");
    // A dangerous line keeps its warning and its default of no.
    const dangerous = await checkCommand("npm test && rm -rf src", { sandbox: NO_SANDBOX });
    assert.equal((await rulesRiskAssessor.assess("npm test && rm -rf src", dangerous)).decision, "reject");
  });

  test("authorizeCommand asks a person for a dangerous unsandboxed line, under the dangerous title", {
    timeout: 60_000,
  }, async () => {
    const { person, asked } = personAnswering(false);
    await assert.rejects(
      authorizeCommand({ state: new PolicyState(), asker: person, sandbox: "off" }, "npm test && rm -rf src"),
    );
    assert.equal(asked[0].title, "Dangerous Command Confirmation");
    assert.equal(asked[0].defaultChoice, false);
    assert.equal(asked[0].requirePerson, true);
  });
});

describe("authorizeCommand and the session's sandbox mode", () => {
  test("mode off: project code needs a person, even with automatic answers or an assessor that allows", {
    timeout: 60_000,
  }, async () => {
    assert.deepEqual(await commandSandbox("off"), {
      available: false,
      reason: 'the sandbox is switched off (sandbox: "off")',
    });
    const state = new PolicyState();
    await assert.rejects(
      authorizeCommand({ state, asker: autoHost(), sandbox: "off" }, "deno test -A"),
      (error) => error instanceof ToolError && error.code === "permission_denied" && /sandbox/.test(error.message),
    );
    const lenient = { assess: () => Promise.resolve({ decision: "allow" as const, reason: "fine", kind: "test" }) };
    await assert.rejects(authorizeCommand({ state, asker: autoHost(), sandbox: "off", assessor: lenient }, "npm test"));
    const { person, asked } = personAnswering(true);
    const confirmed = await authorizeCommand({ state, asker: person, sandbox: "off" }, "git status");
    assert.equal(confirmed.via, "confirmed");
    assert.equal(asked[0].requirePerson, true);
    assert.match(asked[0].message, /sandbox/);
    // What needs no sandbox still runs without asking.
    assert.equal(
      (await authorizeCommand({ state, asker: autoHost(), sandbox: "off" }, "git --version")).via,
      "allowlist",
    );
  });

  test("mode auto uses the probe", { timeout: 60_000 }, async () => {
    const status = await bubblewrapStatus();
    const state = await commandSandbox("auto");
    assert.equal(state.available, status.path !== undefined);
    if (status.path !== undefined) {
      const result = await authorizeCommand({ state: new PolicyState(), asker: autoHost() }, "deno test -A");
      assert.equal(result.via, "allowlist");
    }
  });
});

describe("a session passes its sandbox mode and workspace to the command check", () => {
  test(
    "mode off asks a person for project code and for paths outside; the workspace root lets `cd ROOT/sub` run",
    { timeout: 60_000 },
    async () => {
      await withSession(async (session, dir) => {
        const root = await realpath(dir);
        assert.equal((await session.policy.authorizeCommand(`cd ${root}/src && ls`)).via, "allowlist");
        // Outside the root it asks a person: nothing else would keep the rest of the host out of its sight.
        const outside = await session.policy.authorizeCommand("cd /etc && ls").then(
          () => undefined,
          (reason: unknown) => reason,
        );
        assert.ok(outside instanceof ToolError && outside.code === "permission_denied", String(outside));
        assert.match(outside.message, /outside the workspace/);
        const error = await session.policy.authorizeCommand("deno test -A").then(
          () => undefined,
          (reason: unknown) => reason,
        );
        assert.ok(error instanceof ToolError && error.code === "permission_denied", String(error));
        assert.match(error.message, /sandbox is switched off/);
      }, { sandbox: "off", autoConfirm: true, host: autoHost() });
    },
  );
});
