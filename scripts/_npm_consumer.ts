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
}

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
    title: "the lowest supported ai and zod",
    packages: UMBRELLA_PACKAGES,
    source: lowestPeersSource,
    // ai 7.0.0's declarations import json-schema's types without depending on them (fixed later in 7.x).
    lowest: { ...LOWEST_PEERS, "@types/json-schema": "7.0.15" },
  },
  { title: "@toolfence/core alone", packages: ["@toolfence/core"], source: coreConsumerSource },
];
