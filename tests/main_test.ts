// The command line as a person runs it: real `deno run` processes, real
// temporary workspaces, stdin for the terminal host.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { userPolicyFile } from "../policy/config/load.ts";
import { DENO, DENO_PROCESS_ONLY } from "./_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(ROOT, "main.ts");
// deno itself, also when the npm build runs this file under Node (process.execPath is node there).

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: { flags?: string[]; stdin?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(DENO, ["run", ...(options.flags ?? ["-A"]), MAIN, ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}

let workspace: string;
describe("the command line (deno run main.ts)", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-cli-")));
  });
  after(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  describe("--help everywhere", () => {
    for (
      const args of [
        ["--help"],
        ["help"],
        [],
        ...["serve", "call", "tools", "policy", "flags"].map((c) => [c, "--help"]),
      ]
    ) {
      test(args.join(" ") || "(no arguments)", { timeout: 60_000 }, async () => {
        const ran = await cli(args);
        assert.equal(ran.code, 0, ran.stderr);
        assert.match(ran.stdout, /^(toolfence: |Usage: toolfence)/);
      });
    }
  });

  describe("bad usage exits 2 with the reason", () => {
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /Unknown command "frobnicate"/],
      [["tools", "--dialect", "klingon"], /Unknown dialect "klingon"; known: json-schema, openai-chat/],
      [["tools", "--nope"], /Unknown option '--nope'/],
      [["tools", "--groups", "cmd,warp"], /Unknown tool group warp; known groups: /],
      [["call"], /call needs the name of a tool/],
      [["call", "sleep", "{}", "extra"], /Unexpected argument "extra"/],
      [["serve", "--sandbox", "maybe"], /--sandbox must be one of auto, required, off/],
      [["policy"], /policy needs a subcommand/],
      [["policy", "check"], /policy check needs the command line/],
      [["flags", "--workspace", "/no/such/folder"], /The workspace \/no\/such\/folder cannot be used/],
    ];
    for (const [args, message] of cases) {
      test(args.join(" "), { timeout: 60_000 }, async () => {
        const ran = await cli(args);
        assert.equal(ran.code, 2, ran.stdout + ran.stderr);
        assert.match(ran.stderr, message);
        assert.match(ran.stderr, /Run 'toolfence .*--help' for usage\./);
      });
    }
  });

  test("tools --dialect prints the provider's wire format", { timeout: 60_000 }, async () => {
    const ran = await cli(["tools", "--dialect", "anthropic", "--groups", "system"]);
    assert.equal(ran.code, 0, ran.stderr);
    const tools = JSON.parse(ran.stdout) as { name: string; input_schema: { type: string } }[];
    assert.deepEqual(tools.map((t) => t.name), ["system_info", "datetime", "sleep"]);
    assert.ok(tools.every((t) => t.input_schema.type === "object"));
  });

  describe("policy check", () => {
    test("an allowlisted pipeline runs without asking (exit 0)", { timeout: 60_000 }, async () => {
      const ran = await cli(["policy", "check", "git status && ls | wc -l"]);
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.stdout, /^verdict: allow/);
      assert.match(ran.stdout, /ok +git status +\(matches the allowlist entry `git status`\)/);
    });

    test(
      "a destructive command asks, with the reasons and what a person would be asked (exit 1)",
      { timeout: 60_000 },
      async () => {
        const ran = await cli(["policy", "check", "ls && rm -rf build"]);
        assert.equal(ran.code, 1, ran.stderr);
        assert.match(ran.stdout, /^verdict: ask/);
        assert.match(ran.stdout, /reason: `rm -rf build`: `rm` is not on the allowlist/);
        assert.match(ran.stdout, /risk: reject \(destroy_data\)/);
        assert.match(ran.stdout, /"Dangerous Command Confirmation", default no/);
      },
    );

    test("--allow adds entries; --json prints the whole check", { timeout: 60_000 }, async () => {
      const ran = await cli(["policy", "check", "npm test", "--allow", "npm test", "--json"]);
      assert.equal(ran.code, 0, ran.stderr);
      const check = JSON.parse(ran.stdout);
      assert.equal(check.verdict, "allow");
      assert.equal(check.commands[0].allowedBy, "npm test");
    });
  });

  test("flags prints narrow deno flags for the workspace and groups, never -A", { timeout: 60_000 }, async () => {
    const ran = await cli(["flags", "--workspace", workspace, "--groups", "cmd,system", "--temp-dir", "/tmp"]);
    assert.equal(ran.code, 0, ran.stderr);
    const flags = ran.stdout.trim().split(" ");
    // The user policy file is read too (with the variables that find it), as it is without narrow flags.
    const user = userPolicyFile(process.env);
    const policyFiles = ["/etc/toolfence/config.json", ...(user ? [user] : [])].join(",");
    assert.ok(flags.includes(`--allow-read=${workspace},/tmp,${policyFiles}`), ran.stdout);
    assert.ok(flags.includes(`--allow-write=${workspace},/tmp`), ran.stdout);
    // bash stops its process group at a timeout: Deno allows signals only with --allow-run for every program.
    assert.ok(flags.includes("--allow-run"), ran.stdout);
    // system_info reads the release and CPUs; bash and bash_background the free space of the disks they write and the
    // network interfaces (the egress judge's view of this machine's addresses and networks).
    const sys = flags.find((flag) => flag.startsWith("--allow-sys="))?.slice("--allow-sys=".length).split(",");
    assert.deepEqual(sys?.sort(), ["cpus", "networkInterfaces", "osRelease", "statfs"], ran.stdout);
    assert.ok(!flags.includes("-A") && !flags.includes("--allow-all"));
    const readOnly = await cli(["flags", "--workspace", workspace, "--groups", "framework"]);
    assert.equal(
      readOnly.stdout.trim(),
      `--no-prompt --allow-read=${workspace},${policyFiles}` + (user ? " --allow-env=XDG_CONFIG_HOME,HOME" : ""),
    );
  });

  describe("call", () => {
    test("prints the ToolResult as JSON and exits 0 on success", { timeout: 60_000 }, async () => {
      const ran = await cli(["call", "sleep", '{"seconds":0}', "--groups", "system", "--workspace", workspace], {
        flags: [`--allow-read=${workspace},/etc/toolfence/config.json`],
      });
      assert.equal(ran.code, 0, ran.stderr);
      const result = JSON.parse(ran.stdout);
      assert.equal(result.status, "success");
      assert.equal(result.toolName, "sleep");
    });

    test(
      "flags that keep it from reading the managed policy file stop it, naming the flag",
      { timeout: 60_000 },
      async () => {
        const ran = await cli(["call", "sleep", '{"seconds":0}', "--groups", "system", "--workspace", workspace], {
          flags: [`--allow-read=${workspace}`],
        });
        assert.notEqual(ran.code, 0);
        assert.equal(ran.stdout, "");
        assert.match(ran.stderr, /\/etc\/toolfence\/config\.json.*--allow-read=\/etc\/toolfence\/config\.json/s);
      },
    );

    test("a failed call prints its result, the model's text on stderr, and exits 1", { timeout: 60_000 }, async () => {
      const ran = await cli(["call", "sleep", '{"seconds":"soon"}', "--groups", "system"]);
      assert.equal(ran.code, 1);
      assert.equal(JSON.parse(ran.stdout).errorCode, "invalid_arguments");
      assert.match(ran.stderr, /Invalid arguments for sleep: seconds: expected number/);
    });

    test("the terminal host asks on stdin: 'n' keeps the command from running", { timeout: 60_000 }, async () => {
      await writeFile(join(workspace, "victim.txt"), "keep\n");
      const flags = (await cli(["flags", "--workspace", workspace, "--groups", "cmd"])).stdout.trim().split(" ");
      const ran = await cli(
        ["call", "bash", '{"command":"rm victim.txt"}', "--workspace", workspace, "--groups", "cmd"],
        {
          flags,
          stdin: "n\n",
        },
      );
      assert.equal(ran.code, 1, ran.stderr);
      assert.match(ran.stderr, /rm victim\.txt/, "the question names the command");
      assert.match(ran.stderr, /\[y\/N\]|\[Y\/n\]/);
      assert.equal(JSON.parse(ran.stdout).errorCode, "permission_denied");
      assert.equal(await readFile(join(workspace, "victim.txt"), "utf8"), "keep\n");
    });

    test("... and 'y' lets it run", { timeout: 60_000 }, async () => {
      await writeFile(join(workspace, "gone.txt"), "bye\n");
      const flags = (await cli(["flags", "--workspace", workspace, "--groups", "cmd"])).stdout.trim().split(" ");
      const ran = await cli(
        ["call", "bash", '{"command":"rm gone.txt"}', "--workspace", workspace, "--groups", "cmd"],
        {
          flags,
          stdin: "y\n",
        },
      );
      assert.equal(ran.code, 0, ran.stdout + ran.stderr);
      await assert.rejects(readFile(join(workspace, "gone.txt")));
    });
  });
});
