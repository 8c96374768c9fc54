// Who may answer: an MCP elicitation answer is the client's (it may allow
// once, never grant, never answer what only a person may) unless the policy
// says `grant`; `refuse` takes none. And the read-only tier, disabled tools
// and tools that need approval, as the command line applies them.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { toolGroup } from "../../../core/groups.ts";
import { BUILTIN_GROUPS } from "../../../tools/groups.ts";
import { ToolBox } from "../../../toolbox.ts";
import { createMcpServer } from "../../../adapters/mcp/mod.ts";
import { applyToolSettings, canWriteOrRun, groupTools } from "../../../cli/session_policy.ts";
import { parsePolicyFile } from "../../../policy/config/load.ts";
import { PolicyRules } from "../../../policy/config/rules.ts";
import { policySettings } from "../../../policy/config/settings.ts";

let dir: string;
before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "toolfence-answers-")));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const box = new ToolBox().withDefaults("fs");

async function connect(answers: "refuse" | "once" | "grant" | undefined, answer: string) {
  const asked: string[] = [];
  const served = createMcpServer(box, { workspace: dir, ...(answers ? { elicitationAnswers: answers } : {}) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "t", version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    const schema = (request.params as unknown as { requestedSchema: { properties: { answer: { type: string } } } })
      .requestedSchema;
    return schema.properties.answer.type === "string"
      ? { action: "accept", content: { answer } }
      : { action: "accept", content: { answer: true } };
  });
  await served.server.connect(serverSide);
  await client.connect(clientSide);
  return {
    asked,
    call: (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
    grants: () => served.session.state.writeGrants(),
    async close() {
      await client.close();
      await served.close();
    },
  };
}

describe("elicitation answers", () => {
  test("by default a client's 'grant' allows once and grants nothing", { timeout: 60_000 }, async () => {
    await writeFile(join(dir, "a.txt"), "one\n");
    const server = await connect(undefined, "grant");
    try {
      const first = await server.call("write_file", { path: "a.txt", content: "two\n" });
      assert.equal(first.isError, undefined, JSON.stringify(first.content));
      assert.deepEqual(server.grants(), []);
      await server.call("write_file", { path: "a.txt", content: "three\n" });
      assert.equal(server.asked.length, 2, "asked again: nothing was granted");
      assert.equal(await readFile(join(dir, "a.txt"), "utf8"), "three\n");
    } finally {
      await server.close();
    }
  });

  test("a client's yes does not open a protected path", { timeout: 60_000 }, async () => {
    const server = await connect(undefined, "once");
    try {
      const result = await server.call("write_file", { path: ".npmrc", content: "registry=http://evil\n" });
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /only a person may allow it/);
    } finally {
      await server.close();
    }
  });

  test("answers: grant counts the client's answers as a person's", { timeout: 60_000 }, async () => {
    await writeFile(join(dir, "b.txt"), "one\n");
    const server = await connect("grant", "grant");
    try {
      await server.call("write_file", { path: "b.txt", content: "two\n" });
      assert.deepEqual(server.grants(), [join(dir, "b.txt")]);
    } finally {
      await server.close();
    }
  });

  test("answers: refuse asks nothing and refuses", { timeout: 60_000 }, async () => {
    await writeFile(join(dir, "c.txt"), "one\n");
    const server = await connect("refuse", "grant");
    try {
      const result = await server.call("write_file", { path: "c.txt", content: "two\n" });
      assert.equal(result.isError, true);
      assert.equal(server.asked.length, 0);
      assert.equal(await readFile(join(dir, "c.txt"), "utf8"), "one\n");
    } finally {
      await server.close();
    }
  });
});

describe("tool settings", () => {
  const all = Object.keys(BUILTIN_GROUPS).flatMap((group) => toolGroup(BUILTIN_GROUPS, group));
  const empty = policySettings(PolicyRules.empty("/w"));

  test("--read-only registers no tool that can write or run", { timeout: 60_000 }, () => {
    const kept = applyToolSettings(all, empty, true);
    const names = kept.list({ capabilities: ["vision"] }).map((t) => t.name);
    for (const name of ["write_file", "edit_file", "apply_patch", "delete", "move", "copy", "mkdir", "bash"]) {
      assert.ok(!names.includes(name), name);
      assert.equal(kept.get(name), undefined, `${name} is not registered at all`);
    }
    for (const name of ["read_file", "list_dir", "glob", "grep"]) assert.ok(names.includes(name), name);
    for (const tool of all) {
      if (kept.get(tool.name)) assert.equal(canWriteOrRun(tool), false, tool.name);
    }
  });

  test("network.allow becomes the browser group's allowlist", { timeout: 60_000 }, () => {
    const withHosts = (allow: string[]) =>
      policySettings(
        PolicyRules.fromLayers([parsePolicyFile("p", JSON.stringify({ network: { allow } }), "project")], "/w"),
      );
    const names = groupTools(["browser"], withHosts(["docs.deno.com", "*.example.com"])).map((t) => t.name);
    assert.ok(names.includes("browser_navigate"));
    // A malformed destination is refused when the file loads.
    assert.throws(() => withHosts(["not a host/"]), /network\.allow\[0\]: a destination is a host/);
  });

  test("a file's readOnly, disabled tools and tools that need approval", { timeout: 60_000 }, () => {
    const settings = policySettings(PolicyRules.fromLayers([
      parsePolicyFile("m", '{ "tools": { "disable": ["browser_*", "bash"] } }', "managed"),
      parsePolicyFile("p", '{ "tools": { "enable": ["bash"], "approve": ["read_*"] }, "readOnly": false }', "project"),
    ], "/w"));
    const kept = applyToolSettings(all, settings);
    assert.equal(kept.get("bash"), undefined, "the project cannot enable what the managed file disabled");
    assert.ok(kept.get("write_file"));
    assert.equal(kept.get("read_file")?.needsApproval, true);
    assert.notEqual(toolGroup(BUILTIN_GROUPS, "fs").find((t) => t.name === "read_file")?.needsApproval, true);
    const limits = policySettings(PolicyRules.fromLayers([
      parsePolicyFile("p", '{ "sandbox": { "timeoutSeconds": 2, "maxOutputChars": 500 } }', "project"),
    ], "/w"));
    const limited = applyToolSettings(all, limits);
    assert.equal(limited.get("bash")?.timeoutMs, 2_000);
    assert.equal(
      limited.get("read_file")?.timeoutMs,
      toolGroup(BUILTIN_GROUPS, "fs").find((t) => t.name === "read_file")?.timeoutMs,
    );
    const tier = policySettings(PolicyRules.fromLayers([parsePolicyFile("u", '{ "readOnly": true }', "user")], "/w"));
    assert.equal(applyToolSettings(all, tier).get("write_file"), undefined);
  });
});

describe("saving a person's allow", () => {
  test("a person's 'allow from now on' adds an allow rule to the file, keeping its comments, and applies at once", {
    timeout: 60_000,
  }, async () => {
    const { callbackHost } = await import("../../../policy/hosts.ts");
    const { Session } = await import("../../../policy/session.ts");
    const { addRuleToFile } = await import("../../../policy/config/edit.ts");
    const file = join(dir, "toolfence.json");
    await writeFile(file, '{\n  // ours\n  "commands": { "allow": [] }\n}\n');
    const asked: string[][] = [];
    let answer: "save" | "once" = "save";
    const session = new Session({
      workspace: dir,
      host: callbackHost({
        choose: <T extends string>(request: { options: readonly { value: T }[] }) => {
          asked.push(request.options.map((o) => o.value));
          return answer as unknown as T;
        },
        confirm: () => true,
      }),
      saveRule: {
        where: file,
        save: async (p) => void await addRuleToFile(file, { section: "commands", list: "allow" }, p),
      },
    });
    const cmd = new ToolBox().withDefaults("cmd");
    try {
      const first = await cmd.call(session, "bash", { command: "touch made-by-rule" });
      assert.equal(first.status, "success", first.error);
      assert.deepEqual(asked, [["save", "once", "deny"]]);
      const text = await readFile(file, "utf8");
      assert.match(text, /\/\/ ours/);
      assert.match(text, /"touch made-by-rule"/);
      const again = await cmd.call(session, "bash", { command: "touch made-by-rule" });
      assert.equal(again.status, "success");
      assert.equal(asked.length, 1, "the saved rule applies at once");
      answer = "once";
      await cmd.call(session, "bash", { command: "touch other" });
      assert.doesNotMatch(await readFile(file, "utf8"), /"touch other"/, "once saves nothing");
    } finally {
      await session.close();
    }
  });

  test("a save that fails refuses the command with its reason, and grants nothing", { timeout: 60_000 }, async () => {
    const { callbackHost } = await import("../../../policy/hosts.ts");
    const { Session } = await import("../../../policy/session.ts");
    let asked = 0;
    const session = new Session({
      workspace: dir,
      host: callbackHost({
        choose: <T extends string>() => {
          asked++;
          return "save" as T;
        },
        confirm: () => true,
      }),
      saveRule: {
        where: "a file that cannot be written",
        save: () => {
          throw new Error("the disk is full");
        },
      },
    });
    const cmd = new ToolBox().withDefaults("cmd");
    try {
      const refused = await cmd.call(session, "bash", { command: "touch unsaved-rule" });
      assert.equal(refused.status, "skipped", refused.error);
      assert.equal(refused.errorCode, "permission_denied");
      assert.match(refused.error ?? "", /not run: "touch unsaved-rule" was not saved from now on: the disk is full/);
      assert.ok(!existsSync(join(dir, "unsaved-rule")));
      await cmd.call(session, "bash", { command: "touch unsaved-rule" });
      assert.equal(asked, 2, "nothing was granted: the command asks again");
    } finally {
      await session.close();
    }
  });
});
