// `toolfence policy ...` and `toolfence --version` as a person runs them:
// real processes, real files in a temporary workspace.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { VERSION } from "../../cli/version.ts";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = join(ROOT, "main.ts");

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let ws: string;

function cli(args: string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, ["run", "-A", MAIN, ...args], {
      cwd: ws,
      env: { ...process.env, XDG_CONFIG_HOME: join(dir, "xdg"), HOME: join(dir, "home") },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end("");
  });
}

const managed = () => ["--managed", join(dir, "managed.json")];

describe("main.ts policy and --version", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-cli-policy-")));
    ws = join(dir, "ws");
    await mkdir(ws);
    await mkdir(join(dir, "xdg"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("--version prints the package version, which is deno.json's", { timeout: 60_000 }, async () => {
    // deno.json here; the package.json made from it in the npm build.
    const manifest = await readFile(join(ROOT, "deno.json"), "utf8").catch(() =>
      readFile(join(ROOT, "package.json"), "utf8")
    );
    const config = JSON.parse(manifest);
    assert.equal(VERSION, config.version);
    const ran = await cli(["--version"]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, `toolfence ${VERSION}\n`);
  });

  describe("policy subcommands", () => {
    test("init writes a commented starter file, and refuses to overwrite it", { timeout: 60_000 }, async () => {
      const ran = await cli(["policy", "init", ...managed()]);
      assert.equal(ran.code, 0, ran.stderr);
      const text = await readFile(join(ws, "toolfence.json"), "utf8");
      assert.match(text, /\/\/ The toolfence policy of this project/);
      const again = await cli(["policy", "init"]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /exists already; use --force/);
    });

    test("test runs the examples of every layer", { timeout: 60_000 }, async () => {
      const ran = await cli(["policy", "test", ...managed()]);
      assert.equal(ran.code, 0, ran.stdout + ran.stderr);
      assert.match(ran.stdout, /ok {4}git push origin main \(deny\)/);
      assert.match(ran.stdout, /4 passed, 0 failed/);
    });

    test("check gives allow, ask or deny with the rule and its layer", { timeout: 60_000 }, async () => {
      const deny = await cli(["policy", "check", "sudo env git push origin", ...managed()]);
      assert.equal(deny.code, 1);
      assert.match(deny.stdout, /^verdict: deny \(never runs\)/);
      assert.match(
        deny.stdout,
        /denied by the rule "git push\*" \(deny\) in the project file .*toolfence\.json:\d+:\d+/,
      );
      const allow = await cli(["policy", "check", "ls -la", ...managed()]);
      assert.equal(allow.code, 0, allow.stdout);
      assert.match(allow.stdout, /^verdict: allow/);
      const ask = await cli(["policy", "check", "rm -r build", ...managed()]);
      assert.equal(ask.code, 1);
      assert.match(ask.stdout, /^verdict: ask/);
      const json = await cli(["policy", "check", "git push", "--json", ...managed()]);
      const parsed = JSON.parse(json.stdout);
      assert.equal(parsed.decision, "deny");
      assert.equal(parsed.rules.rule.pattern, "git push*");
    });

    test("explain names the rule and layer for a path and for a command", { timeout: 60_000 }, async () => {
      const path = await cli(["policy", "explain", "app/.env", ...managed()]);
      assert.equal(path.code, 0, path.stderr);
      assert.match(path.stdout, /decision: deny \(hidden from every tool and the sandbox\)/);
      assert.match(path.stdout, /because: rule "\*\*\/\.env" \(deny\) in the project file/);
      const command = await cli(["policy", "explain", "timeout 5 git push", ...managed()]);
      assert.match(
        command.stdout,
        /matching rules:\n {2}rule "git push\*" \(deny\) in the project file .* matches "git push"/,
      );
    });

    test("the managed layer wins over the project's override", { timeout: 60_000 }, async () => {
      await writeFile(join(dir, "managed.json"), '{ "commands": { "deny": ["npm publish"] } }');
      await writeFile(join(dir, "cli.json"), '{ "override": true, "commands": { "allow": ["npm publish"] } }');
      const ran = await cli(["policy", "check", "npm publish", "--config", join(dir, "cli.json"), ...managed()]);
      assert.match(ran.stdout, /^verdict: deny/);
      assert.match(ran.stdout, /in the managed file .*managed\.json:1:/);
      await rm(join(dir, "managed.json"));
    });

    test(
      "add and remove edit the project file keeping its comments; --user edits the user file",
      { timeout: 60_000 },
      async () => {
        const add = await cli(["policy", "add", "deny", "curl *", ...managed()]);
        assert.equal(add.code, 0, add.stderr);
        const addPath = await cli(["policy", "add", "--path", "deny", "*.pem", ...managed()]);
        assert.equal(addPath.code, 0, addPath.stderr);
        const text = await readFile(join(ws, "toolfence.json"), "utf8");
        assert.match(text, /"curl \*"/);
        assert.match(text, /"\*\.pem"/);
        assert.match(text, /\/\/ Never run, whatever wraps them/);
        const check = await cli(["policy", "check", "curl https://example.com", ...managed()]);
        assert.match(check.stdout, /^verdict: deny/);
        const remove = await cli(["policy", "remove", "deny", "curl *", ...managed()]);
        assert.equal(remove.code, 0, remove.stderr);
        assert.doesNotMatch(await readFile(join(ws, "toolfence.json"), "utf8"), /"curl \*"/);
        const user = await cli(["policy", "add", "--user", "ask", "docker", ...managed()]);
        assert.equal(user.code, 0, user.stderr);
        assert.match(await readFile(join(dir, "xdg", "toolfence", "config.json"), "utf8"), /"docker"/);
        const list = await cli(["policy", "list", ...managed()]);
        assert.match(list.stdout, /user: .*xdg\/toolfence\/config\.json\n/);
        assert.match(list.stdout, /ask {3}docker {2}\[user\]/);
        const bad = await cli(["policy", "add", "maybe", "x"]);
        assert.equal(bad.code, 2);
        assert.match(bad.stderr, /policy add needs allow, ask or deny, not "maybe"/);
      },
    );

    test("a broken file is an error with its position, for policy and for serve", { timeout: 60_000 }, async () => {
      await writeFile(join(dir, "broken.json"), '{\n  "paths": { "deny": "secrets" }\n}');
      const ran = await cli(["policy", "check", "ls", "--config", join(dir, "broken.json"), ...managed()]);
      assert.equal(ran.code, 1);
      assert.match(ran.stderr, /broken\.json:2:22: paths\.deny: expected Array, received "secrets"/);
      const serve = await cli(["serve", "--workspace", ws, "--config", join(dir, "broken.json")]);
      assert.equal(serve.code, 1);
      assert.match(serve.stderr, /the policy cannot be used:\n.*broken\.json:2:22: paths\.deny: expected Array/);
    });

    test("a failing example fails policy test and names it", { timeout: 60_000 }, async () => {
      await writeFile(
        join(dir, "examples.json"),
        '{ "examples": [{ "name": "ls is denied", "command": "ls", "expect": "deny" }] }',
      );
      const ran = await cli(["policy", "test", "--config", join(dir, "examples.json"), ...managed()]);
      assert.equal(ran.code, 1);
      assert.match(ran.stdout, /FAIL {2}.*examples\.json:1:16: example "ls is denied": expected deny, got allow/);
    });
  });
});
