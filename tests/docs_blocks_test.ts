// Every code block of README.md and docs/*.md is run, not only type-checked,
// in a fresh copy of the checkout (its tracked and new files, node_modules
// linked), as a reader would run it there:
//
// - ```ts: the first line says how it is run (`// deno run FLAGS NAME.ts`);
//   the block is written to NAME.ts and that line runs; it must exit 0.
// - ```sh: the block runs with bash -e; it must exit 0.
// - ```sh mcp-stdio (or ```ts mcp-stdio, run by its first line): the block
//   starts an MCP server on stdio; a real MCP client starts it, lists the
//   tools and calls `bash`, which must answer.
// - ```sh mcp-http: the block starts an MCP server over HTTP and writes the
//   client's token to token.txt; a real MCP client connects with it and calls
//   `bash`. The port is the one thing the test changes (a free one instead of
//   the block's), so that runs side by side do not collide.
// - ```json / ```jsonc: parsed (the policy file's example is also loaded by
//   tests/readme_policy_test.ts).
// - anything else must say `illustrative` in its info string (a command of
//   the suite itself, a registry not reachable here, a provider's API key);
//   those are counted and pinned below, so none escapes silently.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parse as parseJsonc } from "jsonc-parser";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { IS_DENO } from "./_runtime.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = promisify(execFile);
const BLOCK_TIMEOUT_MS = 150_000;

/**
 * The blocks marked illustrative, by file: `deno task test` (the suite that
 * runs this file), registries and provider APIs these machines cannot reach,
 * framework runs that need a model's API key, snippets of other programs'
 * configuration. A new one must be added here on purpose.
 */
const ILLUSTRATIVE: Record<string, number> = {
  "README.md": 3,
  "docs/adapters.md": 13,
  "docs/console.md": 1,
  "docs/fleet.md": 1,
  "docs/http.md": 1,
  "docs/install.md": 3,
  "docs/policy.md": 1,
  "docs/sandbox.md": 2,
  "docs/test_suites.md": 2,
  "docs/testing.md": 1,
};

interface Block {
  file: string;
  line: number;
  info: string[];
  text: string;
}

async function docFiles(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, "docs"))).filter((name) => name.endsWith(".md")).sort();
  return ["README.md", ...docs.map((name) => `docs/${name}`)];
}

function blocksOf(file: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j].startsWith(indent + fence); j++) body.push(lines[j].slice(indent.length));
    blocks.push({ file, line: i + 1, info: info.trim().split(/\s+/).filter(Boolean), text: body.join("\n") + "\n" });
    i = j;
  }
  return blocks;
}

/** A copy of the checkout: what git tracks plus new files not ignored, node_modules linked. */
async function checkoutCopy(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-docs-")));
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  for (const file of stdout.split("\0").filter(Boolean)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(dir, file)).catch((error) => {
      // A file deleted in the work tree but still in the index.
      if (error.code !== "ENOENT") throw error;
    });
  }
  await symlink(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

function where(block: Block): string {
  return `${block.file}:${block.line}`;
}

async function bash(script: string, cwd: string): Promise<{ stdout: string; stderr: string }> {
  return await run("bash", ["-e", "-c", script], { cwd, timeout: BLOCK_TIMEOUT_MS, maxBuffer: 64 << 20 });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => part.type === "text" ? part.text : "").join("");
}

async function callBashOver(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === "bash"), `bash is listed: ${tools.map((t) => t.name).join(", ")}`);
  const result = await client.callTool(
    { name: "bash", arguments: { command: "echo hello from the docs" } },
    undefined,
    {
      timeout: 90_000,
    },
  ) as CallToolResult;
  assert.ok(!result.isError, textOf(result));
  assert.match(textOf(result), /hello from the docs/);
}

async function runStdio(block: Block, cwd: string, script = block.text): Promise<void> {
  const client = new Client({ name: "docs-test", version: "1.0.0" });
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: "bash",
    args: ["-e", "-c", script],
    cwd,
    stderr: "pipe",
    env: process.env as Record<string, string>,
  });
  transport.stderr?.on("data", (chunk) => stderr.push(String(chunk)));
  try {
    await client.connect(transport, { timeout: 90_000 });
    await callBashOver(client);
  } catch (error) {
    throw new Error(`${where(block)}: ${(error as Error).message}\nserver stderr:\n${stderr.join("")}`);
  } finally {
    await client.close();
  }
}

async function runHttp(block: Block, cwd: string): Promise<void> {
  const port = await freePort();
  const server = spawn("bash", ["-e", "-c", `exec 2>&1\n${block.text.replaceAll("8765", String(port))}`], {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "serving MCP on" line in 90 s:\n${output}`)), 90_000);
      server.stdout!.on("data", (chunk) => {
        output += String(chunk);
        const found = /serving MCP on (http:\/\/\S+)/.exec(output);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
      server.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited (${code}):\n${output}`));
      });
    });
    const token = (await readFile(join(cwd, "token.txt"), "utf8")).trim();
    const client = new Client({ name: "docs-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
      { timeout: 60_000 },
    );
    try {
      await callBashOver(client);
    } finally {
      await client.close();
    }
  } catch (error) {
    throw new Error(`${where(block)}: ${(error as Error).message}\nserver output:\n${output}`);
  } finally {
    if (server.exitCode === null && server.signalCode === null) process.kill(-server.pid!, "SIGTERM");
    await exited;
  }
}

/** Writes a ts block to the file its first line names, and gives that line. */
async function writeTs(block: Block, cwd: string): Promise<{ command: string; file: string }> {
  const first = /^\/\/ (deno run (?:.* )?(\w+\.ts))$/.exec(block.text.split("\n")[0]);
  assert.ok(first, `${where(block)}: a ts block starts with "// deno run FLAGS NAME.ts"`);
  await writeFile(join(cwd, first[2]), block.text);
  return { command: first[1], file: join(cwd, first[2]) };
}

async function runTs(block: Block, cwd: string, mode: string | undefined): Promise<void> {
  const { command, file } = await writeTs(block, cwd);
  try {
    if (mode === "mcp-stdio") return await runStdio(block, cwd, command);
    await bash(command, cwd);
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${where(block)}: ${command} failed\n${e.stdout ?? ""}\n${e.stderr ?? e.message}`);
  } finally {
    await rm(file, { force: true });
  }
}

/**
 * What README.md's `deno task demo` must print (tests/main_flags_test.ts ran the demo a second time for these, until
 * they moved here): it runs to the end, no call meets the fence, and each question sits between its call's line and
 * that call's result, never among another call's output.
 */
function assertDemo(block: Block, stdout: string): void {
  assert.match(stdout, /bash: success/, where(block));
  assert.doesNotMatch(stdout, /fence_denied/, where(block));
  const lines = stdout.split("\n");
  const questions = lines.flatMap((line, i) => line.startsWith("  ? ") ? [i] : []);
  assert.ok(questions.length >= 3, `the demo asks questions:\n${stdout}`);
  for (const at of questions) {
    const call = lines.slice(0, at).findLast((line) => /^(▶|◀) /.test(line));
    const id = call?.match(/^▶ (call_\d+) /)?.[1];
    assert.ok(id, `question at line ${at} follows no call's line but ${JSON.stringify(call)}`);
    const next = lines.slice(at).find((line) => /^(▶|◀) /.test(line));
    assert.ok(next?.startsWith(`◀ ${id} `), `question of ${id} is followed by ${JSON.stringify(next)}`);
  }
}

/** Whether a block runs the demo (README.md's first block). */
const runsDemo = (block: Block) => /^deno task demo\b/.test(block.text);

async function runSh(block: Block, cwd: string): Promise<void> {
  let stdout: string;
  try {
    ({ stdout } = await bash(block.text, cwd));
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${where(block)} failed\n${e.stdout ?? ""}\n${e.stderr ?? e.message}`);
  }
  if (runsDemo(block)) assertDemo(block, stdout);
}

describe("the blocks of README.md and docs/*.md", { skip: !IS_DENO && "the docs are run from the checkout" }, () => {
  test("each block is run, parsed or marked illustrative, and the illustrative ones are the pinned count", {
    timeout: 60_000,
  }, async () => {
    const counts: Record<string, number> = {};
    for (const file of await docFiles()) {
      for (const block of blocksOf(file, await readFile(join(ROOT, file), "utf8"))) {
        const [language = "", mode] = block.info;
        if (block.info.includes("illustrative")) {
          counts[file] = (counts[file] ?? 0) + 1;
          continue;
        }
        assert.ok(
          ["ts", "sh", "json", "jsonc"].includes(language) &&
            (mode === undefined || (language === "sh" && mode === "mcp-http") || mode === "mcp-stdio"),
          `${where(block)}: \`\`\`${
            block.info.join(" ")
          } is neither run nor parsed: mark it illustrative, or make it run`,
        );
        if (language === "json") JSON.parse(block.text);
        if (language === "jsonc") assert.notEqual(parseJsonc(block.text), undefined, where(block));
      }
    }
    assert.deepEqual(counts, ILLUSTRATIVE);
  });

  test("every ts and sh block runs as written in a copy of the checkout", { timeout: 1_500_000 }, async () => {
    const copy = await checkoutCopy();
    let ran = 0;
    let demos = 0;
    const failures: string[] = [];
    try {
      for (const file of await docFiles()) {
        for (const block of blocksOf(file, await readFile(join(copy, file), "utf8"))) {
          const [language, mode] = block.info;
          if (block.info.includes("illustrative") || !["ts", "sh"].includes(language)) continue;
          ran++;
          if (runsDemo(block)) demos++;
          try {
            if (language === "ts") await runTs(block, copy, mode);
            else if (mode === "mcp-stdio") await runStdio(block, copy);
            else if (mode === "mcp-http") await runHttp(block, copy);
            else await runSh(block, copy);
          } catch (error) {
            failures.push((error as Error).message);
          }
        }
      }
      assert.deepEqual(failures, []);
      assert.ok(ran >= 12, `ran ${ran} blocks`);
      assert.ok(demos === 1, `README.md runs the demo in one block, not ${demos}: its output is asserted there`);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});
