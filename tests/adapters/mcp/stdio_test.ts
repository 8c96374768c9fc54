// The MCP server as clients use it: the official SDK `Client` over
// `StdioClientTransport` starts `deno run` on main.ts serve with the narrow
// flags `main.ts flags` prints (never -A), in a real temporary workspace.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { narrowFlags } from "../_raw_server.ts";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { DENO, DENO_PROCESS_ONLY } from "../../_runtime.ts";
import { PassThrough } from "node:stream";
import { ToolBox } from "../../../toolbox.ts";
import "../../../tools/mod.ts";
import { serveStdio } from "../../../adapters/mcp/stdio.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const MAIN = join(ROOT, "main.ts");
// deno itself, also when the npm build runs this file under Node (process.execPath is node there).
const GROUPS = "fs,search,patch,cmd,system";

interface Started {
  client: Client;
  logs: unknown[];
  stderr: string[];
  close(): Promise<void>;
}

async function start(
  workspace: string,
  options: { serverArgs?: string[]; elicit?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult> } = {},
): Promise<Started> {
  const flags = await narrowFlags(workspace, GROUPS);
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", ...flags, MAIN, "serve", "--workspace", workspace, "--groups", GROUPS, ...(options.serverArgs ?? [])],
    cwd: ROOT,
    stderr: "pipe",
  });
  const stderr: string[] = [];
  transport.stderr?.on("data", (chunk) => stderr.push(String(chunk)));
  const client = new Client(
    { name: "toolfence-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: {} } : {} },
  );
  if (options.elicit) client.setRequestHandler(ElicitRequestSchema, (request) => options.elicit!(request));
  const logs: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
  await client.connect(transport);
  return { client, logs, stderr, close: () => client.close() };
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
}

function meta(result: CallToolResult): Record<string, unknown> {
  return (result._meta as Record<string, Record<string, unknown>>)["toolfence/result"];
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

let workspace: string;

describe("main.ts serve over stdio", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    workspace = await mkdtemp(join(tmpdir(), "toolfence-mcp-"));
  });

  after(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  async function freshFiles(): Promise<void> {
    await writeFile(join(workspace, "notes.md"), "alpha\nbeta fence\ngamma\n");
    await writeFile(join(workspace, "victim.txt"), "keep me\n");
  }

  describe("MCP over stdio, a client without elicitation", () => {
    let server: Started;
    before(async () => {
      await freshFiles();
      server = await start(workspace);
    });
    after(async () => await server.close());

    test("lists the tools with annotations", { timeout: 60_000 }, async () => {
      const { tools } = await server.client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const name of ["read_file", "edit_file", "grep", "bash", "sleep"]) assert.ok(byName.has(name), name);
      assert.deepEqual(byName.get("read_file")!.annotations, {
        title: "Read file",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
      assert.equal(byName.get("bash")!.annotations!.readOnlyHint, false);
      assert.equal(byName.get("read_file")!.inputSchema.type, "object");
    });

    test("reads and greps", { timeout: 60_000 }, async () => {
      const read = await call(server.client, "read_file", { path: "notes.md", offset: 1, limit: 1 });
      assert.equal(read.isError, undefined, text(read));
      assert.match(text(read), /beta fence/);
      assert.doesNotMatch(text(read), /alpha/);
      const grep = await call(server.client, "grep", { pattern: "fence" });
      assert.equal(grep.isError, undefined, text(grep));
      assert.match(text(grep), /notes\.md/);
    });

    test("a path outside the workspace is a tool error, not a protocol error", { timeout: 60_000 }, async () => {
      const result = await call(server.client, "read_file", { path: "/etc/passwd" });
      assert.equal(result.isError, true);
      assert.equal(meta(result).errorCode, "outside_workspace");
      assert.match(text(result), /not within the agent's workspace/);
    });

    test("invalid arguments are a tool error the model can act on; an unknown tool is a protocol error", {
      timeout: 60_000,
    }, async () => {
      const result = await call(server.client, "read_file", { path: 3 });
      assert.equal(result.isError, true);
      assert.match(text(result), /Invalid arguments for read_file: path: expected string/);
      await assert.rejects(call(server.client, "no_such_tool", {}), /Unknown tool: no_such_tool/);
    });

    test("with nobody to ask, an overwrite and a command that needs confirmation are refused and do nothing", {
      timeout: 60_000,
    }, async () => {
      const edit = await call(server.client, "edit_file", { path: "notes.md", old_text: "beta", new_text: "BETA" });
      assert.equal(edit.isError, true, text(edit));
      assert.equal(meta(edit).errorCode, "permission_denied");
      assert.equal(await readFile(join(workspace, "notes.md"), "utf8"), "alpha\nbeta fence\ngamma\n");

      const rmCall = await call(server.client, "bash", { command: "rm victim.txt" });
      assert.equal(rmCall.isError, true, text(rmCall));
      assert.equal(meta(rmCall).errorCode, "permission_denied");
      assert.match(text(rmCall), /The command was not run/);
      assert.equal(await readFile(join(workspace, "victim.txt"), "utf8"), "keep me\n");

      const allowed = await call(server.client, "bash", { command: "ls | sort" });
      assert.equal(allowed.isError, undefined, text(allowed));
      assert.match(text(allowed), /victim\.txt/);
    });

    test("cancelling a long sleep reaches the tool's signal", { timeout: 60_000 }, async () => {
      const controller = new AbortController();
      const started = performance.now();
      const pending = server.client.callTool({ name: "sleep", arguments: { seconds: 60 } }, undefined, {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort("the user stopped it"), 300);
      await assert.rejects(pending);
      for (let i = 0; i < 100 && !server.logs.some((l) => (l as { tool?: string }).tool === "sleep"); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const log = server.logs.find((l) => (l as { tool?: string }).tool === "sleep") as Record<string, unknown>;
      assert.ok(log, `a cancellation notice; stderr: ${server.stderr.join("")}`);
      assert.equal(log.status, "cancelled");
      assert.ok((log.latencyMs as number) < 5_000, `ended early (${log.latencyMs} ms)`);
      assert.ok(performance.now() - started < 10_000);
      const list = await server.client.listTools();
      assert.ok(list.tools.length > 0, "the server still answers");
    });
  });

  describe("MCP over stdio, --auto-confirm", () => {
    test(
      "an overwrite takes the default answer; a dangerous command is declined by its default",
      { timeout: 60_000 },
      async () => {
        await freshFiles();
        const server = await start(workspace, { serverArgs: ["--auto-confirm"] });
        try {
          const edit = await call(server.client, "edit_file", { path: "notes.md", old_text: "beta", new_text: "BETA" });
          assert.equal(edit.isError, undefined, text(edit));
          assert.equal(await readFile(join(workspace, "notes.md"), "utf8"), "alpha\nBETA fence\ngamma\n");
          const wipe = await call(server.client, "bash", { command: "rm -rf victim.txt" });
          assert.equal(wipe.isError, true, text(wipe));
          assert.equal(await readFile(join(workspace, "victim.txt"), "utf8"), "keep me\n");
        } finally {
          await server.close();
        }
      },
    );
  });

  describe("MCP over stdio, a client with elicitation", () => {
    test("permission prompts reach the client's user and their answers are followed", { timeout: 60_000 }, async () => {
      await freshFiles();
      const asked: ElicitRequest["params"][] = [];
      const server = await start(workspace, {
        elicit: (request) => {
          asked.push(request.params);
          const params = request.params;
          if (!("requestedSchema" in params)) throw new Error("a form was expected");
          // A write permission is a choice: allow this time only. A command is yes/no: decline.
          return params.requestedSchema.properties.answer.type === "string"
            ? { action: "accept", content: { answer: "once" } }
            : { action: "decline" };
        },
      });
      try {
        const edit = await call(server.client, "edit_file", { path: "notes.md", old_text: "beta", new_text: "BETA" });
        assert.equal(edit.isError, undefined, text(edit));
        assert.equal(await readFile(join(workspace, "notes.md"), "utf8"), "alpha\nBETA fence\ngamma\n");
        assert.equal(asked.length, 1);
        assert.match(asked[0].message, /^Write permission: .*notes\.md/);
        const answer =
          (asked[0] as unknown as { requestedSchema: { properties: { answer: { oneOf: { const: string }[] } } } })
            .requestedSchema.properties.answer;
        assert.deepEqual(answer.oneOf.map((o) => o.const), ["grant", "once", "deny"]);

        const rmCall = await call(server.client, "bash", { command: "rm victim.txt" });
        assert.equal(rmCall.isError, true, text(rmCall));
        // An elicitation answer is the client's, not proof that a person saw the question.
        assert.match(text(rmCall), /the client declined it/);
        assert.equal(asked.length, 2);
        assert.match(asked[1].message, /rm victim\.txt/);
        assert.equal(await readFile(join(workspace, "victim.txt"), "utf8"), "keep me\n");
      } finally {
        await server.close();
      }
    });
  });
});

test("stdin ending right after a request (no newline after it) still answers it before closing", {
  timeout: 60_000,
}, async () => {
  const workspace = await mkdtemp(join(tmpdir(), "toolfence-stdio-eof-"));
  const input = new PassThrough();
  const output = new PassThrough();
  let written = "";
  output.on("data", (chunk) => (written += chunk));
  try {
    const running = await serveStdio(new ToolBox().withDefaults("system"), {
      workspace,
      sandbox: "off",
      input,
      output,
    });
    const message = (body: unknown) => JSON.stringify({ jsonrpc: "2.0", ...body as object });
    // `printf` without a final newline, then end of input: the last request is as whole as any other.
    input.end([
      message({
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "eof", version: "1" } },
      }),
      message({ method: "notifications/initialized" }),
      message({ id: 2, method: "tools/call", params: { name: "datetime", arguments: {} } }),
    ].join("\n"));
    await running.closed;
    const replies = written.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    const answer = replies.find((reply) => reply.id === 2);
    assert.ok(answer, `the call was answered: ${written.slice(0, 300)}`);
    assert.equal(answer.result.isError, undefined);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
});

test("serveStdio on the process's own stdin (a pipe): after shutdown() the process ends though stdin stays open", {
  timeout: 60_000,
  skip: DENO_PROCESS_ONLY,
}, async () => {
  const workspace = await realpath(await mkdtemp(join(tmpdir(), "toolfence-stdio-own-")));
  const script = join(workspace, "serve.ts");
  await writeFile(
    script,
    [
      `import { serveStdio } from ${JSON.stringify(join(ROOT, "adapters/mcp/stdio.ts"))};`,
      `import { ToolBox } from ${JSON.stringify(join(ROOT, "toolbox.ts"))};`,
      `const running = await serveStdio(new ToolBox().withDefaults("system"), { workspace: ${
        JSON.stringify(workspace)
      }, sandbox: "off" });`,
      `setTimeout(() => void running.shutdown("done"), 300);`,
      `await running.closed;`,
      `console.error("closed");`,
    ].join("\n"),
  );
  const child = spawn(DENO, ["run", "-A", "--config", join(ROOT, "deno.json"), script], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.stdout.resume();
  try {
    // stdin is never ended: the served session is over, and nothing else holds the process.
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`still running after 30 s: ${stderr}`)), 30_000);
      child.on("exit", (exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
    assert.equal(code, 0, stderr);
    assert.match(stderr, /closed/);
  } finally {
    child.kill("SIGKILL");
    child.stdin.destroy();
    await rm(workspace, { recursive: true, force: true });
  }
});
