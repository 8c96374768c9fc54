/**
 * The consumer projects the npm build type-checks and runs: what a user
 * writes after `npm install toolfence` (or `npm install @toolfence/core`),
 * compiled by `tsc` under `nodenext` and `strict` with the packages'
 * declarations checked too (no `skipLibCheck`).
 *
 * @module
 */

/**
 * A consumer's package.json: the workspace's packages from their `npm pack`
 * tarballs (`local`: name -> `file:` spec), and the other packages the
 * consumer imports (`dependencies`, from deno.json's versions).
 */
export function consumerManifest(
  local: Record<string, string>,
  dependencies: Record<string, string>,
  devDependencies: Record<string, string>,
): Record<string, unknown> {
  return {
    name: "toolfence-consumer-check",
    private: true,
    type: "module",
    dependencies: { ...dependencies, ...local },
    devDependencies,
  };
}

/** The consumer's tsconfig.json: what `tsc --init` users on Node get, strict. */
export const consumerTsconfig: Record<string, unknown> = {
  compilerOptions: {
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    strict: true,
    // The package's own declarations are what is being checked, so they are not skipped.
    skipLibCheck: false,
    types: ["node"],
    outDir: "dist",
  },
  files: ["main.ts"],
};

/**
 * The umbrella consumer's program. It defines a tool with valibot, calls it through a
 * session, checks a validation failure is a result (not an exception), uses
 * `ToolError`, serves the toolbox with `toolfence/mcp`
 * to an MCP SDK client in memory (list, call), and starts the installed bin
 * with `npx toolfence serve` for an MCP client over stdio. It exits non-zero
 * with a message on any mismatch.
 */
export const consumerSource: string = `import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as v from "valibot";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Session, tool, ToolBox, ToolError, type ToolResult } from "toolfence";
import { createMcpServer, type McpToolServer } from "toolfence/mcp";

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    console.error("consumer check failed: " + message);
    process.exit(1);
  }
}

const add = tool({
  name: "add",
  description: "Add two numbers.",
  input: v.object({ a: v.number(), b: v.number() }),
  run: ({ a, b }) => a + b,
});
const refuse = tool({
  name: "refuse",
  description: "Always refuses.",
  input: v.object({}),
  run: (): never => {
    throw new ToolError("Refused on purpose", { code: "consumer_refusal", kind: "semantic" });
  },
});

const workspace = await mkdtemp(path.join(os.tmpdir(), "toolfence-consumer-"));
const box = new ToolBox().register(add).register(refuse);
const session = new Session({ workspace });
let served: McpToolServer | undefined;
try {
  const sum: ToolResult = await box.call(session, "add", { a: 1, b: 2 });
  check(sum.status === "success" && sum.output === 3, "add gave " + JSON.stringify(sum));
  const invalid = await box.call(session, "add", { a: "one", b: 2 });
  check(invalid.status === "error", "a string for a number was accepted: " + JSON.stringify(invalid));
  const refused = await box.call(session, "refuse", {});
  check(refused.errorCode === "consumer_refusal", "ToolError code lost: " + JSON.stringify(refused));

  served = createMcpServer(box, { workspace });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await served.server.connect(serverSide);
  const client = new Client({ name: "consumer", version: "1.0.0" });
  await client.connect(clientSide);
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(["add", "refuse"]), "MCP tools/list gave " + names.join(", "));
  const called = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
  check(JSON.stringify(called.content).includes("5"), "MCP tools/call gave " + JSON.stringify(called));
  await client.close();

  // The installed bin, the way an MCP client configuration starts it.
  await writeFile(path.join(workspace, "note.txt"), "read through npx\\n");
  const npx = new StdioClientTransport({
    command: "npx",
    args: ["--no-install", "toolfence", "serve", "--workspace", workspace, "--groups", "fs"],
  });
  const viaNpx = new Client({ name: "consumer-npx", version: "1.0.0" });
  await viaNpx.connect(npx);
  const fsNames = (await viaNpx.listTools()).tools.map((t) => t.name);
  check(fsNames.includes("read_file"), "npx toolfence serve lists " + fsNames.join(", "));
  const note = await viaNpx.callTool({ name: "read_file", arguments: { path: "note.txt" } });
  check(JSON.stringify(note.content).includes("read through npx"), "npx toolfence serve read " + JSON.stringify(note));
  await viaNpx.close();
  console.log(
    "consumer ok: add(1, 2) = " + String(sum.output) + "; over MCP: " + names.join(", ") + ", add(2, 3) = 5" +
      "; npx toolfence serve: " + fsNames.length + " fs tools, read_file works",
  );
} finally {
  await served?.close();
  await session.close();
  await rm(workspace, { recursive: true, force: true });
}
`;

/**
 * The core-only consumer: `npm install @toolfence/core valibot` and nothing
 * else. It defines a tool, calls it through `new SessionBase()` (the core
 * alone: every file, process and question refused), and checks the results
 * and that neither the policy, the tools nor any adapter was installed.
 */
export const coreConsumerSource: string = `import { existsSync } from "node:fs";
import * as v from "valibot";
import { SessionBase, tool, ToolBox, type ToolResult } from "@toolfence/core";

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    console.error("core consumer check failed: " + message);
    process.exit(1);
  }
}

// The README's core-alone example: no workspace, no policy, no host; a tool that touches nothing runs.
const session = new SessionBase();
const box = new ToolBox().register(tool({
  name: "shout",
  description: "Upper-case a text.",
  input: v.object({ text: v.string() }),
  run: ({ text }) => text.toUpperCase(),
}));
const loud: ToolResult = await box.call(session, "shout", { text: "core only" });
check(loud.status === "success" && loud.output === "CORE ONLY", "shout gave " + JSON.stringify(loud));
const bad = await box.call(session, "shout", { text: 1 });
check(bad.status === "error" && bad.errorCode === "invalid_arguments", "a number was accepted: " + JSON.stringify(bad));
const reads = await new ToolBox().register(tool({
  name: "peek",
  description: "Read a file.",
  input: v.object({ path: v.string() }),
  run: ({ path }, ctx) => ctx.policy.resolveForRead(path),
})).call(session, "peek", { path: "package.json" });
check(reads.errorCode === "permission_denied", "the core alone resolved a path: " + JSON.stringify(reads));
for (const other of ["@toolfence/internal", "@toolfence/policy", "@toolfence/tools", "@toolfence/adapters", "toolfence", "typescript", "ai"]) {
  check(!existsSync("node_modules/" + other), other + " was installed with the core alone");
}
await session.close();
console.log("core consumer ok: shout = " + String(loud.output) + "; nothing but the core and its dependencies installed");
`;

/** One consumer check: what it installs from the tarballs and its program. */
export interface ConsumerCheck {
  /** Shown in the build's output. */
  title: string;
  /** The workspace packages it installs, by npm name. */
  packages: readonly string[];
  /** Its main.ts. */
  source: string;
  /** Packages it needs though main.ts does not import them (optional peers the code loads), at deno.json's versions. */
  alsoInstall?: readonly string[];
  /** Packages installed at these exact versions instead of deno.json's: the lowest of the peer ranges. */
  lowest?: Readonly<Record<string, string>>;
  /** Other dependencies, name -> spec as package.json writes it (an `npm:` alias). */
  dependencies?: Readonly<Record<string, string>>;
  /** Whether the program also runs under Deno, from the consumer's node_modules. */
  alsoDeno?: boolean;
  /**
   * Packages installed at the lowest or the newest version of the range the
   * workspace's deno.json files import them at (`npm:name@^1.4.0`: `1.4.0`, or
   * `^1.4.0`, which npm resolves to the newest).
   */
  peerVersions?: { readonly names: readonly string[]; readonly at: "lowest" | "newest" };
  /**
   * Skip checking the declarations under node_modules: the frameworks' own
   * (ours are checked by the other consumers).
   */
  skipLibCheck?: boolean;
  /**
   * The TypeScript that checks it: `native` (the default), TypeScript 7 at
   * {@link NATIVE_TYPESCRIPT}, the compiler `npm install typescript` gives
   * now; `project`, the workspace's own TypeScript 6 (deno.json's, which the
   * build compiles with), the major before it. Both check the declarations
   * of every package (the consumers that do not skip them).
   */
  typescript?: "native" | "project";
}

/**
 * The TypeScript 7 the consumers are checked with (see
 * {@link ConsumerCheck.typescript}): installed once per build beside them, not
 * into them, since `@toolfence/tools` declares TypeScript 6's compiler API
 * (`typescript@^6`) as its optional peer. Its compiler costs about a quarter
 * of TypeScript 6's CPU on these checks.
 */
export const NATIVE_TYPESCRIPT = "7.0.2";

/**
 * The lowest version of each peer range the npm build writes that a consumer
 * check installs and runs: `ai` (the range `@toolfence/adapters` gives is
 * `^7.0.0`) and `zod` (`^4.2.0`, the first zod 4 with Standard JSON Schema).
 */
export const LOWEST_PEERS: Readonly<Record<string, string>> = { ai: "7.0.0", zod: "4.2.0" };

/**
 * The lowest-peers consumer: with `ai` and `zod` at the lowest versions the
 * peer ranges admit, it defines a zod tool (typed from the schema), calls it
 * (strictness: an unknown key refused, an array sent as a string parsed), and
 * runs it through the AI SDK's `generateText` with `ai/test`'s mock model,
 * including the AI SDK's approval request for a tool that needs approval.
 */
export const lowestPeersSource: string = `import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { generateText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Session, tool, ToolBox } from "toolfence";
import { aiSdkTools } from "@toolfence/adapters/ai-sdk";

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    console.error("lowest-peers consumer check failed: " + message);
    process.exit(1);
  }
}

const ran: string[] = [];
const tag = tool({
  name: "tag",
  description: "Tag a file.",
  input: z.object({ path: z.string(), tags: z.array(z.string()) }),
  run: ({ path, tags }) => {
    const joined: string = tags.join("+");
    ran.push(path + ":" + joined);
    return joined;
  },
});
const deploy = tool({
  name: "deploy",
  description: "Deploy.",
  input: z.object({ service: z.string() }),
  needsApproval: true,
  run: ({ service }) => "deployed " + service,
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const workspace = await mkdtemp(path.join(os.tmpdir(), "toolfence-lowest-"));
const session = new Session({ workspace });
try {
  const box = new ToolBox().register(tag, deploy);
  const ok = await box.call(session, "tag", { path: "a", tags: "x, y" });
  check(ok.status === "success" && ok.output === "x+y", "tag gave " + JSON.stringify(ok));
  const extra = await box.call(session, "tag", { path: "a", tags: [], more: 1 });
  check(extra.errorCode === "invalid_arguments", "an unknown key was accepted: " + JSON.stringify(extra));

  const model = new MockLanguageModelV4({
    doGenerate: {
      content: [
        { type: "tool-call", toolCallId: "t1", toolName: "tag", input: JSON.stringify({ path: "b", tags: ["z"] }) },
        { type: "tool-call", toolCallId: "d1", toolName: "deploy", input: JSON.stringify({ service: "web" }) },
      ],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: [],
    },
  });
  const result = await generateText({ model, tools: aiSdkTools(box, session), prompt: "Tag b, deploy web" });
  check(ran.includes("b:z"), "generateText did not run tag: " + JSON.stringify(ran));
  const asked = result.content.filter((part) => part.type === "tool-approval-request");
  check(asked.length === 1, "no approval request for deploy: " + JSON.stringify(result.content.map((p) => p.type)));
  console.log("lowest-peers consumer ok: zod tool called, generateText ran it, deploy awaits the AI SDK's approval");
} finally {
  await session.close();
  await rm(workspace, { recursive: true, force: true });
}
`;

/**
 * The missing-peers consumer: the umbrella with none of its optional peers.
 * Importing each entry point that needs a framework (or the MCP SDK) fails
 * with the runtime's `ERR_MODULE_NOT_FOUND` naming the package (the entry
 * points import their peers statically: no top-level await, so that
 * `require()` loads them); `npx toolfence serve` says what to install;
 * and a tracer provider registered through a copy of `@opentelemetry/api` that
 * toolfence cannot resolve (installed under another name, as in a strict
 * layout) fails the call with `peer_missing` naming the API. The same program
 * runs under Node and under Deno (the consumer's node_modules).
 */
export const missingPeersSource: string = `import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { ProxyTracerProvider, trace } from "otel-api-elsewhere";
import * as v from "valibot";
import { tool, ToolBox } from "toolfence";
import { isMissingPeer, SessionBase } from "@toolfence/core";

const runtime = typeof (globalThis as { Deno?: unknown }).Deno === "undefined" ? "node" : "deno";

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    console.error("missing-peers consumer check failed (" + runtime + "): " + message);
    process.exit(1);
  }
}

function peersOf(name: string): Record<string, string> {
  const manifest = JSON.parse(readFileSync("node_modules/" + name + "/package.json", "utf8"));
  return manifest.peerDependencies as Record<string, string>;
}

interface PeerError {
  name?: string;
  code?: string;
  message?: string;
}

// Each entry point and the packages it imports (the MCP entries import the SDK and jose: either may be named first).
const MCP_STACK = ["@modelcontextprotocol/sdk", "jose"];
const ENTRIES: [string, string[]][] = [
  ["@toolfence/adapters/ai-sdk", ["ai"]],
  ["@toolfence/adapters/openai-agents", ["@openai/agents"]],
  ["@toolfence/adapters/langchain", ["@langchain/core"]],
  ["@toolfence/adapters/langgraph", ["@langchain/core", "@langchain/langgraph"]],
  ["@toolfence/adapters/mastra", ["@mastra/core"]],
  ["@toolfence/adapters/google-adk", ["@google/adk"]],
  ["@toolfence/adapters/claude-agent", ["@anthropic-ai/claude-agent-sdk", "zod"]],
  ["@toolfence/adapters/mcp", MCP_STACK],
  ["toolfence/mcp", MCP_STACK],
];
for (const [entry, peers] of ENTRIES) {
  for (const peer of peers) check(!existsIn(peer), peer + " is installed, so its absence cannot be checked");
  // A variable specifier: tsc does not load the declarations of an entry whose peer is absent.
  const specifier: string = entry;
  const error = await import(specifier).then(() => undefined, (e: unknown) => e as PeerError);
  check(
    peers.some((peer) => isMissingPeer(error, peer)),
    "importing " + entry + " without " + peers.join(", ") + " gave " + String(error?.message ?? error),
  );
}

const serve = spawnSync("npx", ["--no-install", "toolfence", "serve", "--workspace", "."], { encoding: "utf8" });
check(
  serve.status !== 0 && serve.stderr.includes("npm install @modelcontextprotocol/sdk jose"),
  "npx toolfence serve without the MCP SDK: exit " + serve.status + ", " + serve.stderr,
);

// An application that traces: its provider registered through a copy of the API toolfence cannot resolve.
const box = new ToolBox().register(tool({
  name: "echo",
  description: "Echo a text.",
  input: v.object({ text: v.string() }),
  run: ({ text }) => text,
}));
const session = new SessionBase();
const untraced = await box.call(session, "echo", { text: "no provider" });
check(untraced.output === "no provider", "a call without a tracer provider gave " + JSON.stringify(untraced));
trace.setGlobalTracerProvider(new ProxyTracerProvider());
const traced = await box.call(session, "echo", { text: "traced" }).then(() => undefined, (e: unknown) => e as PeerError);
const otel = "npm install @opentelemetry/api@" + peersOf("@toolfence/core")["@opentelemetry/api"];
check(
  traced?.code === "peer_missing" && traced.message?.includes(otel) === true,
  "a traced call without @opentelemetry/api gave " + String(traced?.message ?? traced),
);
trace.disable();
await session.close();
console.log("missing-peers consumer ok (" + runtime + "): " + ENTRIES.length + " entry points and serve name their peer; " +
  "tracing names @opentelemetry/api");

function existsIn(name: string): boolean {
  try {
    readFileSync("node_modules/" + name + "/package.json");
    return true;
  } catch {
    return false;
  }
}
`;

/**
 * The agent frameworks a consumer runs at the lowest and the newest version of
 * the peer range `@toolfence/adapters` declares for each (with the peers their
 * programs also need: zod for the Claude adapter's schemas, `ai` for Mastra's
 * scripted model, the MCP SDK's client for the Claude adapter's server).
 */
export const FRAMEWORK_PEERS: readonly string[] = [
  "@openai/agents",
  "@langchain/core",
  "@langchain/langgraph",
  "@mastra/core",
  "@google/adk",
  "@anthropic-ai/claude-agent-sdk",
  "zod",
  "ai",
  "@modelcontextprotocol/sdk",
];

/**
 * The frameworks consumer: one tool defined with valibot, handed to each
 * framework through its adapter entry point, and a call run through the
 * framework as a user's program runs it: the OpenAI Agents SDK's `run` and
 * Google ADK's `InMemoryRunner` with a scripted model, Mastra's
 * `Agent.generate` with `ai/test`'s mock model, LangChain's `tool.invoke`
 * with a tool call, LangGraph's `ToolNode`, and the Claude Agent SDK's
 * in-process MCP server called by an MCP client.
 */
export const frameworksSource: string = `import * as v from "valibot";
import { tool, ToolBox } from "toolfence";
import { SessionBase } from "@toolfence/core";
import { Agent as OpenAIAgent, type Model, type ModelResponse, run, setTracingDisabled, Usage } from "@openai/agents";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Agent as MastraAgent } from "@mastra/core/agent";
import { MockLanguageModelV4 } from "ai/test";
import { BaseLlm, type BaseLlmConnection, InMemoryRunner, LlmAgent, type LlmResponse } from "@google/adk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { openAIAgentsTools } from "@toolfence/adapters/openai-agents";
import { langChainTools } from "@toolfence/adapters/langchain";
import { langGraphTools } from "@toolfence/adapters/langgraph";
import { mastraTools } from "@toolfence/adapters/mastra";
import { googleAdkTools } from "@toolfence/adapters/google-adk";
import { claudeAgentOptions } from "@toolfence/adapters/claude-agent";

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    console.error("frameworks consumer check failed: " + message);
    process.exit(1);
  }
}

const ran: string[] = [];
const box = new ToolBox().register(tool({
  name: "shout",
  description: "Upper-case a text.",
  input: v.object({ text: v.string() }),
  run: ({ text }) => {
    ran.push(text);
    return text.toUpperCase();
  },
}));
const session = new SessionBase();
const passed: string[] = [];
function ranOnce(framework: string, text: string): void {
  check(ran.filter((t) => t === text).length === 1, framework + " did not run shout(" + text + "): " + ran.join(", "));
  passed.push(framework);
}

// The OpenAI Agents SDK: run() with a model that calls shout, then answers.
setTracingDisabled(true);
let turn = 0;
const agentsModel: Model = {
  getResponse(): Promise<ModelResponse> {
    const output: ModelResponse["output"] = turn++ === 0
      ? [{ type: "function_call", callId: "c1", name: "shout", arguments: JSON.stringify({ text: "agents" }), status: "completed" }]
      : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "done" }] }];
    return Promise.resolve({ usage: new Usage(), output });
  },
  // deno-lint-ignore require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not streamed");
  },
};
const agentsRun = await run(new OpenAIAgent({ name: "a", model: agentsModel, tools: openAIAgentsTools(box, session) }), "go");
check(agentsRun.finalOutput === "done", "the OpenAI agent ended with " + String(agentsRun.finalOutput));
ranOnce("@openai/agents", "agents");

// LangChain: the tool invoked with a model's tool call gives a ToolMessage.
const [chainTool] = langChainTools(box, session);
const message = await chainTool.invoke({ type: "tool_call", id: "l1", name: "shout", args: { text: "langchain" } });
check(message instanceof ToolMessage && String(message.content).includes("LANGCHAIN"), "LangChain gave " + String(message));
ranOnce("@langchain/core", "langchain");

// LangGraph: the prebuilt ToolNode runs the calls of the last AI message.
const node = new ToolNode(langGraphTools(box, session));
const state = await node.invoke({
  messages: [new AIMessage({ content: "", tool_calls: [{ id: "g1", name: "shout", args: { text: "langgraph" } }] })],
});
check(JSON.stringify(state).includes("LANGGRAPH"), "LangGraph's ToolNode gave " + JSON.stringify(state));
ranOnce("@langchain/langgraph", "langgraph");

// Mastra: Agent.generate with a mock model that calls shout, then answers.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
let mastraTurn = 0;
const mastraModel = new MockLanguageModelV4({
  doGenerate: () =>
    Promise.resolve(mastraTurn++ === 0
      ? {
        content: [{ type: "tool-call" as const, toolCallId: "m1", toolName: "shout", input: JSON.stringify({ text: "mastra" }) }],
        finishReason: { unified: "tool-calls" as const, raw: "tool_calls" },
        usage,
        warnings: [],
      }
      : { content: [{ type: "text" as const, text: "done" }], finishReason: { unified: "stop" as const, raw: "stop" }, usage, warnings: [] }),
});
const mastra = new MastraAgent({
  id: "m",
  name: "m",
  instructions: "Use the tools.",
  model: mastraModel as never,
  tools: mastraTools(box, session),
});
const mastraOutput = await mastra.generate("go", { maxSteps: 3 });
check(mastraOutput.text === "done", "the Mastra agent ended with " + JSON.stringify(mastraOutput.text));
ranOnce("@mastra/core", "mastra");

// Google ADK: an LlmAgent in the InMemoryRunner with a model that calls shout, then answers.
class ScriptedLlm extends BaseLlm {
  #turn = 0;
  constructor() {
    super({ model: "scripted" });
  }
  async *generateContentAsync(): AsyncGenerator<LlmResponse, void> {
    yield {
      content: {
        role: "model",
        parts: this.#turn++ === 0 ? [{ functionCall: { id: "a1", name: "shout", args: { text: "adk" } } }] : [{ text: "done" }],
      },
      turnComplete: true,
    };
  }
  connect(): Promise<BaseLlmConnection> {
    return Promise.reject(new Error("no live connection"));
  }
}
const runner = new InMemoryRunner({
  agent: new LlmAgent({ name: "coder", model: new ScriptedLlm(), instruction: "Use the tools.", tools: googleAdkTools(box, session) }),
  appName: "consumer",
});
const adkSession = await runner.sessionService.createSession({ appName: "consumer", userId: "u" });
const texts: string[] = [];
for await (const event of runner.runAsync({ userId: "u", sessionId: adkSession.id, newMessage: { parts: [{ text: "go" }] } })) {
  for (const part of event.content?.parts ?? []) if (part.text) texts.push(part.text);
}
check(texts.includes("done"), "the ADK agent said " + JSON.stringify(texts));
ranOnce("@google/adk", "adk");

// The Claude Agent SDK: its in-process MCP server, as Claude Code would call it.
const claude = claudeAgentOptions(box, session);
const server = claude.mcpServers.toolfence;
check(server.type === "sdk" && "instance" in server, "claudeAgentOptions gave no in-process server");
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.instance.connect(serverSide);
const client = new Client({ name: "consumer", version: "1.0.0" });
await client.connect(clientSide);
const called = await client.callTool({ name: "shout", arguments: { text: "claude" } });
check(JSON.stringify(called.content).includes("CLAUDE"), "the Claude adapter's server gave " + JSON.stringify(called));
await client.close();
ranOnce("@anthropic-ai/claude-agent-sdk", "claude");

await session.close();
console.log("frameworks consumer ok: shout ran through " + passed.join(", "));
`;

/** The tarballs a consumer of the umbrella installs: the umbrella and every member it depends on. */
const UMBRELLA_PACKAGES = [
  "toolfence",
  "@toolfence/core",
  "@toolfence/internal",
  "@toolfence/policy",
  "@toolfence/tools",
  "@toolfence/adapters",
];

/** The consumer checks, in the order the build runs them. */
export const CONSUMERS: readonly ConsumerCheck[] = [
  {
    title: "toolfence, the umbrella",
    packages: UMBRELLA_PACKAGES,
    source: consumerSource,
    // The MCP server stack is an optional peer: a user who serves MCP installs it (the SDK is imported above).
    alsoInstall: ["jose"],
  },
  {
    title: "the lowest supported ai and zod, under TypeScript 6",
    packages: UMBRELLA_PACKAGES,
    source: lowestPeersSource,
    // ai 7.0.0's declarations import json-schema's types without depending on them (fixed later in 7.x).
    lowest: { ...LOWEST_PEERS, "@types/json-schema": "7.0.15" },
    typescript: "project",
  },
  { title: "@toolfence/core alone", packages: ["@toolfence/core"], source: coreConsumerSource },
  {
    title: "no optional peer installed",
    packages: UMBRELLA_PACKAGES,
    source: missingPeersSource,
    // The API under another name: what the program imports, and what toolfence cannot resolve as its peer.
    dependencies: { "otel-api-elsewhere": "npm:@opentelemetry/api@^1.9.1" },
    alsoDeno: true,
  },
  ...(["lowest", "newest"] as const).map((at): ConsumerCheck => ({
    title: `the agent frameworks at the ${at} version of their ranges`,
    packages: UMBRELLA_PACKAGES,
    source: frameworksSource,
    peerVersions: { names: FRAMEWORK_PEERS, at },
    skipLibCheck: true,
  })),
];
