// Every entry point of every built package can be require()d by a CommonJS program (a LangChain or Jest setup that
// compiles to CommonJS): Node 22.12+ and 24 load an ES module graph through require() only when no module of it awaits
// at its top level (else ERR_REQUIRE_ASYNC_MODULE). A real `node` process runs a .cjs program that requires each entry
// the built package.json files export and makes one call through it; an entry point added without a call here fails.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { packageRoot, skipUnlessBuilt } from "./_built_package.ts";

const MEMBERS = ["core", "internal", "policy", "tools", "adapters"];

// The CommonJS consumer: argv[2] is the package root (its node_modules has the members and the peers), argv[3] a
// scratch folder. One JSON line per entry point: what the call gave, or the error.
const PROGRAM = String.raw`"use strict";
const { createRequire } = require("node:module");
const path = require("node:path");
const [root, scratch] = process.argv.slice(2);
const load = createRequire(path.join(root, "package.json"));
const v = load("valibot");
const core = () => load("@toolfence/core");
function echoBox(m) {
  return new m.ToolBox().register(m.tool({
    name: "echo",
    description: "Echo a text in upper case.",
    input: v.object({ text: v.string() }),
    run: ({ text }) => text.toUpperCase(),
  }));
}
async function withSession(body) {
  const session = new (core().SessionBase)();
  try {
    return await body(echoBox(core()), session);
  } finally {
    await session.close();
  }
}
async function overMcp(server, name, args) {
  const { Client } = load("@modelcontextprotocol/sdk/client/index.js");
  const { InMemoryTransport } = load("@modelcontextprotocol/sdk/inMemory.js");
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "cjs", version: "1.0.0" });
  await client.connect(clientSide);
  try {
    return JSON.stringify((await client.callTool({ name, arguments: args })).content);
  } finally {
    await client.close();
  }
}
const CALLS = {
  "toolfence": async (m) => {
    const session = new m.Session({ workspace: new m.Workspace(scratch) });
    try {
      return (await echoBox(m).call(session, "echo", { text: "umbrella" })).output;
    } finally {
      await session.close();
    }
  },
  "toolfence/mcp": (m) => withSession((box) => overMcp(m.createMcpServer(box, { name: "cjs", workspace: scratch }).server, "echo", { text: "mcp" })),
  "@toolfence/core": (m) => withSession(async (box, session) => (await box.call(session, "echo", { text: "core" })).output),
  "@toolfence/internal": (m) => String(m.isWithin("/w/internal", "/w")),
  "@toolfence/policy": async (m) => JSON.stringify(await m.checkCommand("ls -la")),
  "@toolfence/tools": async (m) => {
    const policy = load("@toolfence/policy");
    await require("node:fs/promises").writeFile(path.join(scratch, "tools.txt"), "tools read\n");
    const box = new (core().ToolBox)().register(...m.fsTools());
    const session = new policy.Session({ workspace: new policy.Workspace(scratch) });
    try {
      return JSON.stringify((await box.call(session, "read_file", { path: "tools.txt" })).output);
    } finally {
      await session.close();
    }
  },
  "@toolfence/adapters": (m) =>
    withSession(async (box, session) =>
      JSON.stringify(
        await m.runOpenAIChatToolCalls(box, session, {
          role: "assistant",
          tool_calls: [
            { id: "o1", type: "function", function: { name: "echo", arguments: JSON.stringify({ text: "adapters" }) } },
          ],
        }),
      )
    ),
  "@toolfence/adapters/ai-sdk": (m) =>
    withSession(async (box, session) =>
      JSON.stringify(await m.aiSdkTools(box, session).echo.execute({ text: "ai-sdk" }, { toolCallId: "a1", messages: [] }))
    ),
  "@toolfence/adapters/openai-agents": (m) =>
    withSession(async (box, session) => {
      const { RunContext } = load("@openai/agents");
      return JSON.stringify(
        await m.openAIAgentsTools(box, session)[0].invoke(new RunContext(), JSON.stringify({ text: "openai-agents" })),
      );
    }),
  "@toolfence/adapters/langchain": (m) =>
    withSession(async (box, session) =>
      JSON.stringify(
        (await m.langChainTools(box, session)[0].invoke({ type: "tool_call", id: "l1", name: "echo", args: { text: "langchain" } }))
          .content,
      )
    ),
  "@toolfence/adapters/langgraph": (m) =>
    withSession(async (box, session) =>
      JSON.stringify(
        (await m.langGraphTools(box, session)[0].invoke({ type: "tool_call", id: "g1", name: "echo", args: { text: "langgraph" } }))
          .content,
      )
    ),
  "@toolfence/adapters/mastra": (m) =>
    withSession(async (box, session) => JSON.stringify(await m.mastraTools(box, session).echo.execute({ text: "mastra" }, {}))),
  "@toolfence/adapters/google-adk": (m) =>
    withSession(async (box, session) => {
      const [adkTool] = m.googleAdkTools(box, session);
      const toolContext = { functionCallId: "g1", actions: { stateDelta: {} } };
      return JSON.stringify(await adkTool.runAsync({ args: { text: "google-adk" }, toolContext }));
    }),
  "@toolfence/adapters/claude-agent": (m) =>
    withSession((box, session) =>
      overMcp(m.claudeAgentOptions(box, session).mcpServers.toolfence.instance, "echo", { text: "claude-agent" })
    ),
  "@toolfence/adapters/mcp": (m) => withSession((box) => overMcp(m.createMcpServer(box, { name: "cjs", workspace: scratch }).server, "echo", { text: "adapters-mcp" })),
  "@toolfence/adapters/console": async (m) => {
    const queue = new m.MemoryQuestionQueue();
    const options = [{ value: "yes", label: "Yes" }, { value: "no", label: "No" }];
    const init = { tenant: "t", title: "Go on?", message: "Go on?", options, defaultChoice: "no" };
    const asked = queue.ask(init, new AbortController().signal);
    queue.answer("t", queue.pending("t")[0].id, "yes");
    return await asked;
  },
};
(async () => {
  for (const spec of process.argv.slice(4)) {
    try {
      const call = CALLS[spec];
      if (!call) throw new Error("no call for " + spec + " in the CommonJS consumer");
      console.log(JSON.stringify({ spec, value: String(await call(load(spec))) }));
    } catch (error) {
      console.log(JSON.stringify({ spec, error: String(error && error.code) + ": " + String(error && error.message) }));
    }
  }
})();
`;

/** Every entry point the built packages export (`toolfence`, `toolfence/mcp`, `@toolfence/adapters/ai-sdk`, ...). */
async function entryPoints(root: string): Promise<string[]> {
  const entries: string[] = [];
  for (const dir of [root, ...MEMBERS.map((m) => path.join(root, m))]) {
    const manifest = JSON.parse(await fsp.readFile(path.join(dir, "package.json"), "utf8")) as {
      name: string;
      exports: Record<string, unknown>;
    };
    for (const subpath of Object.keys(manifest.exports)) {
      if (subpath === "./package.json") continue;
      entries.push(manifest.name + subpath.slice(1));
    }
  }
  return entries;
}

// What each entry's call must give: the upper-cased text of the echo tool, or the entry's own answer.
const EXPECTED: Record<string, string> = {
  "@toolfence/internal": "true",
  "@toolfence/policy": '"verdict":"allow"',
  "@toolfence/tools": "tools read",
  "@toolfence/adapters/console": "yes",
};

describe("a CommonJS program require()s every entry point of the build", { skip: skipUnlessBuilt }, () => {
  test("each entry point loads through require() and answers one call", { timeout: 120_000 }, async () => {
    const major = Number(process.versions.node.split(".")[0]);
    const root = packageRoot();
    const entries = await entryPoints(root);
    assert.ok(entries.includes("@toolfence/adapters/langchain") && entries.includes("toolfence/mcp"), entries.join());
    const top = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-require-")));
    try {
      const program = path.join(top, "consumer.cjs");
      await fsp.writeFile(program, PROGRAM);
      const scratch = path.join(top, "W");
      await fsp.mkdir(scratch);
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          [program, root, scratch, ...entries],
          { timeout: 100_000, maxBuffer: 16 * 1024 * 1024 },
          (error, out, err) => error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
        );
      });
      const lines = stdout.trim().split("\n").map((line) =>
        JSON.parse(line) as { spec: string; value?: string; error?: string }
      );
      assert.deepEqual(lines.map((line) => line.spec), entries);
      if (!(process.features as { require_module?: boolean }).require_module) {
        // Node 20 and 22 before 22.12 cannot require() ES modules at all: what they say is the missing feature.
        assert.ok(major < 23, `Node ${process.versions.node} without require(esm)`);
        return;
      }
      for (const line of lines) {
        assert.equal(line.error, undefined, `require("${line.spec}") or its call failed: ${line.error}`);
        const expected = EXPECTED[line.spec] ?? line.spec.split("/").at(-1)!.replace(/^@?toolfence$/, "umbrella")
          .toUpperCase();
        assert.ok(line.value?.includes(expected), `${line.spec} gave ${line.value}, not ${expected}`);
      }
    } finally {
      await fsp.rm(top, { recursive: true, force: true });
    }
  });
});
