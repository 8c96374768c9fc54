// `main.ts flags` prints exactly what the served tools need: each built-in
// group (and all of them at once) is served by a real `deno run` under exactly
// the printed flags, a real MCP client (the official SDK over stdio) lists the
// tools, and every tool of the group is called. Every tool must be listed,
// and every call must end in time and never with `fence_denied`.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { printedFlags, runNarrow } from "./policy/_narrow_run.ts";
import { denoFlagsForNeeds } from "../policy/fence.ts";
import fc from "fast-check";
import { toolGroup } from "../core/groups.ts";
import { BUILTIN_GROUPS } from "../tools/mod.ts";
import { DENO, DENO_PROCESS_ONLY } from "./_runtime.ts";

const toolGroupNames = (): string[] => Object.keys(BUILTIN_GROUPS);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = join(ROOT, "main.ts");
// No single call may take longer (check_types starts deno check; bash_wait waits for a job).
const CALL_TIMEOUT_MS = 90_000;

interface ResultMeta {
  status: string;
  errorCode?: string;
  errorKind?: string;
}

interface Call {
  name: string;
  args: Record<string, unknown> | ((previous: Map<string, string>) => Record<string, unknown>);
  /** Error codes that are the right answer here (anything else must succeed). */
  accept?: (previous: Map<string, string>) => string[];
}

/** Every built-in tool, called once (in this order: later calls use what earlier ones made). */
const CALLS: Call[] = [
  { name: "temp_dir", args: {} },
  { name: "list_dir", args: { path: "." } },
  { name: "file_info", args: { path: "a.txt" } },
  { name: "read_file", args: { path: "a.txt" } },
  { name: "request_image", args: { src: "dot.png" } },
  { name: "write_file", args: { path: "new.txt", content: "new\n" } },
  { name: "copy", args: { src: "a.txt", dst: "copy.txt" } },
  { name: "move", args: { src: "new.txt", dst: "moved.txt" } },
  { name: "mkdir", args: { path: "made/deeper" } },
  { name: "delete", args: { path: "b-copy.txt" } },
  { name: "glob", args: { pattern: "**/*.txt" } },
  { name: "grep", args: { pattern: "hello" } },
  { name: "edit_file", args: { path: "a.txt", old_text: "world", new_text: "earth" } },
  { name: "apply_patch", args: { patch: "*** Begin Patch\n*** Add File: patched.txt\n+patched\n*** End Patch\n" } },
  { name: "bash", args: { command: "echo hi && cat a.txt", timeout_s: 60 } },
  // More than it may show: the whole output becomes an artifact for read_artifact.
  { name: "bash", args: { command: "cat long.txt", max_output_chars: 500 } },
  { name: "bash_background", args: { command: "echo background" } },
  { name: "bash_wait", args: (p) => ({ id: p.get("job")!, timeout_s: 30 }) },
  { name: "bash_read", args: (p) => ({ id: p.get("job")! }) },
  { name: "bash_list", args: {} },
  { name: "bash_stop", args: (p) => ({ id: p.get("job")! }) },
  { name: "system_info", args: {} },
  { name: "datetime", args: {} },
  { name: "sleep", args: { seconds: 0.05 } },
  { name: "ask_preference", args: { question: "Which one?", choices: ["left", "right"] } },
  // Served alone, the framework group has nothing that makes an artifact, so the id is unknown.
  {
    name: "read_artifact",
    args: (p) => ({ id: p.get("artifact") ?? `sha256:${"0".repeat(64)}` }),
    accept: (p) => p.has("artifact") ? [] : ["unknown_artifact"],
  },
  { name: "check_syntax", args: { path: "src/x.ts" } },
  { name: "diff_files", args: { a: "a.txt", b: "b.txt" } },
  { name: "check_types", args: { path: "src/x.ts", timeout_s: 80 } },
];

// A 1x1 PNG, for request_image.
const ONE_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

async function makeWorkspace(top: string): Promise<string> {
  const workspace = join(top, "W");
  await mkdir(join(workspace, "src"), { recursive: true });
  await writeFile(join(workspace, "a.txt"), "hello\nworld\n");
  await writeFile(join(workspace, "dot.png"), Buffer.from(ONE_PIXEL_PNG, "base64"));
  await writeFile(join(workspace, "b.txt"), "hello\nthere\n");
  await writeFile(join(workspace, "b-copy.txt"), "to delete\n");
  await writeFile(join(workspace, "src", "x.ts"), "export const x: number = 1;\n");
  await writeFile(join(workspace, "s.sh"), "echo hi\n");
  await writeFile(join(workspace, "long.txt"), "0123456789\n".repeat(300));
  return workspace;
}

async function flagsFor(workspace: string, tempDir: string, groups: string): Promise<string[]> {
  const flags = await printedFlags(workspace, tempDir, groups.split(","));
  assert.ok(!flags.includes("-A") && !flags.includes("--allow-all"), "never -A");
  assert.ok(flags.includes("--no-prompt"), "a flag the fence did not foresee must fail, not wait for a terminal");
  return flags;
}

// The person behind the client says yes to everything, with the suggested answer.
function answer(request: { params: Record<string, unknown> }): ElicitResult {
  const schema = request.params.requestedSchema as { properties: { answer: Record<string, unknown> } };
  const field = schema.properties.answer;
  if (field.type === "boolean") return { action: "accept", content: { answer: true } };
  const first = (field.oneOf as { const: string }[] | undefined)?.[0]?.const;
  return { action: "accept", content: { answer: (field.default as string | undefined) ?? first ?? "yes" } };
}

function metaOf(result: CallToolResult): ResultMeta {
  return (result._meta as Record<string, ResultMeta>)["toolfence/result"];
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** What a test gets while `main.ts serve` runs under chosen flags in a fresh workspace. */
interface Served {
  client: Client;
  flags: string[];
  stderr: string[];
}

/**
 * Serves `groups` on a fresh workspace under the printed flags changed by
 * `adjust`, connects a real MCP client, runs `use`, and checks that the
 * session left nothing in its temp folder.
 */
async function served(
  groups: string,
  adjust: (flags: string[]) => string[],
  use: (served: Served) => Promise<void>,
): Promise<void> {
  const top = await realpath(await mkdtemp(join(tmpdir(), "toolfence-flags-")));
  try {
    const workspace = await makeWorkspace(top);
    const tempDir = join(top, "tmp");
    await mkdir(tempDir);
    const flags = adjust(await flagsFor(workspace, tempDir, groups));
    const transport = new StdioClientTransport({
      command: DENO,
      args: ["run", ...flags, MAIN, "serve", "--workspace", workspace, "--groups", groups, "--temp-dir", tempDir],
      cwd: ROOT,
      stderr: "pipe",
    });
    const stderr: string[] = [];
    transport.stderr?.on("data", (chunk) => stderr.push(String(chunk)));
    const client = new Client({ name: "toolfence-flags-test", version: "1.0.0" }, {
      capabilities: { elicitation: {} },
    });
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request));
    await client.connect(transport);
    try {
      await use({ client, flags, stderr });
    } finally {
      await client.close();
    }
    assert.deepEqual(await readdir(tempDir), [], "the session left its temp dir behind, or a refused call made one");
  } finally {
    await rm(top, { recursive: true, force: true });
  }
}

async function serveAndCallAll(groups: string, adjust: (flags: string[]) => string[] = (f) => f): Promise<void> {
  await served(groups, adjust, async ({ client, flags, stderr }) => {
    // A served session has the vision capability by default (serve --capabilities), so the image tools are listed.
    const names = groups.split(",").flatMap((g) =>
      toolGroup(BUILTIN_GROUPS, g).filter((t) => (t.requires ?? []).every((c) => c === "vision"))
    ).map((t) => t.name);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    assert.deepEqual(listed.toSorted(), names.toSorted(), `served under ${flags.join(" ")}: ${stderr.join("")}`);
    const previous = new Map<string, string>();
    for (const call of CALLS.filter((c) => names.includes(c.name))) {
      const args = typeof call.args === "function" ? call.args(previous) : call.args;
      const started = performance.now();
      const result = await client.callTool({ name: call.name, arguments: args }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      }) as CallToolResult;
      const meta = metaOf(result);
      const text = textOf(result);
      const context = `${call.name} ${JSON.stringify(args)} under ${flags.join(" ")}: ${text}\n${stderr.join("")}`;
      assert.notEqual(meta.errorCode, "fence_denied", context);
      if (meta.status !== "success") {
        assert.ok(call.accept?.(previous).includes(meta.errorCode ?? "") ?? false, context);
      }
      assert.ok(performance.now() - started < CALL_TIMEOUT_MS, context);
      if (call.name === "bash_background") previous.set("job", /"id":\s*"([^"]+)"/.exec(text)?.[1] ?? "");
      const artifact = /sha256:[0-9a-f]{64}/.exec(text)?.[0];
      if (artifact) previous.set("artifact", artifact);
    }
    if (names.includes("bash")) assert.ok(previous.has("artifact"), "the long bash output became an artifact");
  });
}

describe("each group served under exactly the flags `main.ts flags` prints", {
  timeout: 600_000,
  skip: DENO_PROCESS_ONLY,
}, () => {
  const known = toolGroupNames();

  test("every built-in tool has a call here", { timeout: 600_000 }, () => {
    const called = new Set(CALLS.map((c) => c.name));
    // The browser group is served under its printed flags in tests/tools/browser/browser_stdio_test.ts.
    for (const group of known.filter((g) => g !== "browser")) {
      for (const t of toolGroup(BUILTIN_GROUPS, group)) {
        assert.ok(called.has(t.name), `no call for ${t.name}`);
      }
    }
  });

  for (const group of ["fs", "search", "patch", "cmd", "system", "framework", "diagnostic"]) {
    test(`${group}: listed and callable`, { timeout: 600_000 }, async () => {
      await serveAndCallAll(group);
    });
  }

  test("all groups at once", { timeout: 600_000 }, async () => {
    await serveAndCallAll(toolGroupNames().join(","));
  });

  // With reads of every path, node:fs's access(X_OK) under Deno asks for the uid and, without
  // --allow-sys=uid, fails outside its promise: a call that used it would never settle.
  test(
    "all groups with a broad --allow-read and no --allow-sys=uid: every call settles",
    { timeout: 600_000 },
    async () => {
      await serveAndCallAll(
        toolGroupNames().join(","),
        (flags) => ["--allow-read", ...flags.filter((f) => !f.startsWith("--allow-read="))],
      );
    },
  );
});

// The npm build has no deno.json and no tasks.
const noTasks = existsSync(join(ROOT, "deno.json")) ? false : "the npm build has no deno.json tasks";

describe("the printed flags are exactly enough", { skip: DENO_PROCESS_ONLY }, () => {
  // Random sets of groups: under the printed flags every tool is listed; without any one flag
  // that some tool cannot run without, some tool is hidden; a flag only for what tools use when
  // granted (bubblewrap, system facts, inherited variables) hides nothing.
  const combos = [
    toolGroupNames(),
    ...fc.sample(fc.subarray(toolGroupNames(), { minLength: 1 }), { numRuns: 4, seed: 13 }),
  ];
  for (const groups of combos) {
    // One server start per flag, each about half a second of CPU: a loaded 2-core machine took 60 s for all groups.
    test(`groups ${groups.join(",")}`, { timeout: 180_000 }, async () => {
      const top = await realpath(await mkdtemp(join(tmpdir(), "toolfence-exact-")));
      try {
        const workdir = await makeWorkspace(top);
        const tempParent = join(top, "tmp");
        await mkdir(tempParent);
        const tools = groups.flatMap((g) => toolGroup(BUILTIN_GROUPS, g)).filter((t) => !t.requires?.length);
        const all = tools.map((t) => t.name);
        const flags = await flagsFor(workdir, tempParent, groups.join(","));
        const probe = (f: string[]) => runNarrow(f, { workdir, tempParent, groups, calls: [] });
        assert.deepEqual((await probe(flags)).listed, all, flags.join(" "));
        const required = new Set(
          denoFlagsForNeeds(tools.map((t) => t.needs ?? {}), { workspace: workdir, tempParent })
            .map((f) => f.split("=")[0]),
        );
        // Without reads of the workspace no session starts at all.
        for (const flag of flags.filter((f) => f !== "--no-prompt" && !f.startsWith("--allow-read="))) {
          const name = flag.split("=")[0];
          const { listed } = await probe(flags.filter((f) => f !== flag));
          if (required.has(name)) {
            assert.ok(listed.length < all.length, `without ${flag} everything is still listed`);
          } else {
            assert.deepEqual(listed, all, `${flag} serves only optional needs, yet without it some tool is hidden`);
          }
        }
      } finally {
        await rm(top, { recursive: true, force: true });
      }
    });
  }
});

describe("a client calling what the flags do not cover", { skip: DENO_PROCESS_ONLY }, () => {
  test(
    // A tool left out of tools/list is, to the client, a name it was never given: the specification's answer for an
    // unknown tool (-32602), the same as for a name never registered, with no hint that it exists (the flag it lacks
    // is for the operator: `toolfence flags` prints them).
    "served without --allow-run: the command and diagnostic tools that need it are not listed, and a call of one anyway is refused at once as an unknown tool",
    { timeout: 60_000 },
    async () => {
      const withoutRun = (flags: string[]) => flags.filter((f) => f !== "--allow-run");
      await served("fs,cmd,diagnostic", withoutRun, async ({ client, stderr }) => {
        const listed = (await client.listTools()).tools.map((t) => t.name);
        for (const hidden of ["bash", "bash_background", "bash_read", "bash_wait", "bash_list", "bash_stop"]) {
          assert.ok(!listed.includes(hidden), `${hidden} is listed: ${listed.join(", ")}`);
        }
        assert.ok(!listed.includes("check_types"));
        assert.ok(listed.includes("read_file") && listed.includes("check_syntax"), listed.join(", "));
        for (
          const [name, args] of [
            ["bash", { command: "echo never" }],
            ["bash_list", {}],
            ["check_types", { path: "src/x.ts" }],
            ["no_such_tool", {}],
          ] as const
        ) {
          await assert.rejects(
            client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }),
            (error: { code?: number; message?: string }) => {
              assert.equal(error.code, -32602, `${name}: ${error.message}\n${stderr.join("")}`);
              assert.equal(error.message, `MCP error -32602: Unknown tool: ${name}`);
              return true;
            },
          );
        }
      });
    },
  );
});

describe("the deno.json tasks", { skip: noTasks }, () => {
  // The quick-start task grants no network: it serves every group but the browser, which is listed only under the
  // flags `flags --groups browser` prints.
  test("`deno task serve` starts the server under exactly the flags `flags` prints for all groups but the browser", {
    timeout: 60_000,
  }, async () => {
    type Tasks = Record<string, { command: string }>;
    const serve = (JSON.parse(await readFile(join(ROOT, "deno.json"), "utf8")).tasks as Tasks).serve.command;
    const top = await realpath(await mkdtemp(join(tmpdir(), "toolfence-task-")));
    try {
      const line = serve.replaceAll("$INIT_CWD", top).replaceAll("$HOME", process.env.HOME ?? "").split(/\s+/);
      assert.deepEqual(line.slice(0, 2), ["deno", "run"]);
      const flags = line.slice(2, line.indexOf("main.ts"));
      assert.deepEqual(line.slice(line.indexOf("main.ts")), [
        "main.ts",
        "serve",
        "--workspace",
        top,
        "--temp-dir",
        "/tmp",
      ]);
      assert.deepEqual(flags, await flagsFor(top, "/tmp", toolGroupNames().filter((g) => g !== "browser").join(",")));
    } finally {
      await rm(top, { recursive: true, force: true });
    }
  });

  // `deno task demo` runs in tests/docs_blocks_test.ts, as README.md's first block, which also asserts that it runs to
  // the end, that no call meets the fence and where its questions sit: one run of the demo instead of two.
});
