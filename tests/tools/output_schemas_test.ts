// Every built-in tool's declared output, held to the truth: each tool runs (in
// its variants: details or not, links, binary files, cut lines, jobs that exit,
// time out or are stopped, sub-agents that fail) through the MCP server with
// the official client, which itself validates structuredContent against the
// advertised outputSchema; ajv checks it again against the listed schema, so a
// schema that lies fails here. Then the real outputs are mutated (fast-check)
// and valibot's check and ajv on the JSON Schema must agree on every mutant.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { Ajv, type ValidateFunction } from "ajv";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, ElicitRequestSchema, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { ToolBox } from "../../toolbox.ts";
import {
  createMcpServer,
  CUT_OUTPUT_SCHEMA,
  type McpToolServer,
  mcpWrapsOutput,
  WRAPPED_OUTPUT_KEY,
} from "../../adapters/mcp/mod.ts";
import { checkOutput } from "../../core/_call_output_schema.ts";
import { outputJsonSchema } from "../../core/schema.ts";
import type { AnyTool } from "../../core/tool.ts";
import { SYNTAX_LANGUAGES } from "../../tools/diagnostic/check_syntax.ts";
import { BUILTIN_GROUPS } from "../../tools/groups.ts";
import { browserTools } from "../../tools/browser/mod.ts";
import { type FixtureServer, fixtureServer, forbiddenServer, noBrowser } from "./browser/_fixtures.ts";

const PNG = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="),
  (c) => c.charCodeAt(0),
);

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });

/** Answers every elicitation: yes to approvals, the first option to a choice. */
function answer(params: { requestedSchema?: { properties?: Record<string, Record<string, unknown>> } }) {
  const field = params.requestedSchema?.properties?.answer ?? {};
  if (field.type === "boolean") return { action: "accept" as const, content: { answer: true } };
  const options = (field.enum as string[] | undefined) ??
    (field.oneOf as { const: string }[] | undefined)?.map((o) => o.const);
  return { action: "accept" as const, content: { answer: options?.[0] ?? "my own answer" } };
}

interface Seen {
  tool: string;
  args: Record<string, unknown>;
  structured: Record<string, unknown>;
  cut: boolean;
}

describe("built-in tools' outputs through MCP", () => {
  let dir: string;
  let served: McpToolServer;
  let client: Client;
  let box: ToolBox;
  let site: FixtureServer;
  let away: FixtureServer;
  const listed = new Map<string, McpTool>();
  const validators = new Map<string, ValidateFunction>();
  const seen: Seen[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolfence-outputs-"));
    await writeFile(join(dir, "a.txt"), "alpha\nbeta\ngamma\n");
    await writeFile(join(dir, "b.txt"), "alpha\nBETA\ngamma\ndelta\n");
    await writeFile(join(dir, "crlf.txt"), "one\r\ntwo\r\n");
    await writeFile(join(dir, "long.txt"), "x".repeat(3_000) + "\nshort\n");
    await writeFile(join(dir, "bin.dat"), new Uint8Array([0, 1, 2, 3, 0, 255]));
    await writeFile(join(dir, "latin1.txt"), new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await writeFile(join(dir, "dot.png"), PNG);
    await writeFile(join(dir, "ok.json"), '{"a": 1}');
    await writeFile(join(dir, "bad.json"), '{"a": }');
    await writeFile(join(dir, "ok.ts"), "export const n: number = 1;\n");
    await writeFile(join(dir, "bad_types.ts"), 'export const n: number = "one";\n');
    await writeFile(join(dir, "bad.sh"), "if then fi\n");
    await mkdir(join(dir, "src/deep"), { recursive: true });
    for (let i = 0; i < 5; i++) {
      await writeFile(join(dir, `src/f${i}.ts`), `// file ${i}\nexport const v${i} = ${i};\n`);
    }
    await writeFile(join(dir, "src/deep/g.ts"), "export const g = 'alpha';\n");
    await symlink("a.txt", join(dir, "link_to_a"));
    await symlink("/etc", join(dir, "link_out"));
    await symlink("missing.txt", join(dir, "link_broken"));
    execFileSync("mkfifo", [join(dir, "pipe")]);

    away = await forbiddenServer();
    site = await fixtureServer(away.base);
    box = new ToolBox().withDefaults(...Object.keys(BUILTIN_GROUPS).filter((g) => g !== "browser"));
    box.register(...browserTools({ allow: [site.base] }));
    box.withSubagents(() => ({
      run: (task: string) => {
        if (task.startsWith("fail")) throw new Error("the sub-agent gave up");
        return task.startsWith("object") ? { answer: task, items: [1, 2] } : `done: ${task}`;
      },
    }));
    served = createMcpServer(box, { workspace: dir, capabilities: ["vision"] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "outputs", version: "1" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params as never));
    await served.server.connect(serverSide);
    await client.connect(clientSide);
    for (const t of (await client.listTools()).tools) {
      listed.set(t.name, t);
      if (t.outputSchema) validators.set(t.name, ajv.compile(t.outputSchema));
    }
  });

  after(async () => {
    await client?.close();
    await served?.close();
    await site?.close();
    await away?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** One call: a success whose structuredContent the advertised schema admits (the client checked it too). */
  async function run(tool: string, args: Record<string, unknown> = {}, expectCut = false) {
    const result = await client.callTool({ name: tool, arguments: args }) as CallToolResult;
    const text = (result.content[0] as { text: string }).text;
    assert.notEqual(result.isError, true, `${tool} ${JSON.stringify(args)} failed: ${text}`);
    const structured = result.structuredContent as Record<string, unknown>;
    assert.ok(structured, `${tool} answered no structuredContent`);
    const validate = validators.get(tool)!;
    assert.ok(validate(structured), `${tool}: ${JSON.stringify(validate.errors)} for ${JSON.stringify(structured)}`);
    const cut = structured.truncated === true && typeof structured.text === "string" && "artifact" in structured;
    assert.equal(cut, expectCut, `${tool}: cut ${cut}, expected ${expectCut}`);
    if (!cut) {
      // The text for older clients is the same output; one that is not an object is sent as { result }.
      const wrapped = mcpWrapsOutput(box.get(tool)!);
      const output = wrapped ? structured[WRAPPED_OUTPUT_KEY] : structured;
      if (wrapped) assert.deepEqual(Object.keys(structured), [WRAPPED_OUTPUT_KEY]);
      assert.deepEqual(typeof output === "string" ? text : JSON.parse(text), output);
      // And the tool's own schema (not only the cut envelope) admits it.
      const own = ajv.compile(outputJsonSchema(box.get(tool)!.output!));
      assert.ok(own(output), `${tool}: ${JSON.stringify(own.errors)}`);
    }
    seen.push({ tool, args, structured, cut });
    return structured;
  }

  /**
   * One call that fails but keeps its output for the model (a command that exits non-zero or times out):
   * an error with the code and the output in its text, and no structuredContent (the schema is a success's).
   */
  async function runFailing(tool: string, args: Record<string, unknown>, code: string) {
    const result = await client.callTool({ name: tool, arguments: args }) as CallToolResult;
    const text = (result.content[0] as { text: string }).text;
    assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)} did not fail: ${text}`);
    assert.match(text, new RegExp(`\\[${code}\\]`));
    assert.equal(result.structuredContent, undefined);
    const kept = /\n(?:Output|Partial output): ([\s\S]*)$/.exec(text);
    assert.ok(kept, `${tool}: no output in ${text}`);
    const output = JSON.parse(kept[1]);
    // What the model reads is still the tool's declared output shape.
    const own = ajv.compile(outputJsonSchema(box.get(tool)!.output!));
    assert.ok(own(output), `${tool}: ${JSON.stringify(own.errors)} for ${JSON.stringify(output)}`);
    return output as Record<string, unknown>;
  }

  test("every listed tool advertises an outputSchema that admits the cut envelope", { timeout: 90_000 }, () => {
    assert.ok(listed.size >= 29, `only ${listed.size} tools listed`);
    for (const [name, t] of listed) {
      assert.ok(t.outputSchema, `${name} has no outputSchema`);
      assert.equal(t.outputSchema.type, "object");
      assert.deepEqual((t.outputSchema as unknown as { anyOf: unknown[] }).anyOf[1], CUT_OUTPUT_SCHEMA);
    }
  });

  test("fs tools", { timeout: 90_000 }, async () => {
    await run("temp_dir");
    await run("mkdir", { path: "made/inner" });
    await run("mkdir", { path: "made/inner" });
    await run("write_file", { path: "w.txt", content: "one\n" });
    const read = await run("read_file", { path: "w.txt" });
    await run("write_file", { path: "w.txt", content: "two\n", expected_sha256: read.sha256 });
    await run("read_file", { path: "a.txt", offset: 1, limit: 1, line_numbers: true });
    await run("read_file", { path: "a.txt", offset: 10 });
    await run("read_file", { path: "crlf.txt" });
    const long = await run("read_file", { path: "long.txt" });
    assert.deepEqual(long.cut_lines, [1]);
    await run("list_dir", { path: "." });
    await run("list_dir", { path: ".", details: true });
    await run("list_dir", { path: "src" });
    for (const path of ["a.txt", "bin.dat", "latin1.txt", "src", "link_to_a", "link_out", "link_broken", "pipe"]) {
      await run("file_info", { path });
    }
    await run("copy", { src: "a.txt", dst: "copied.txt" });
    await run("copy", { src: "src", dst: "src_copy" });
    await run("copy", { src: "a.txt", dst: "copied.txt" });
    await run("move", { src: "copied.txt", dst: "moved.txt" });
    await run("move", { src: "src_copy", dst: "made" });
    await run("delete", { path: "moved.txt" });
    await run("delete", { path: "made", recursive: true });
    await run("request_image", { src: "dot.png" });
  });

  test("search tools", { timeout: 90_000 }, async () => {
    await run("glob", { pattern: "**/*.ts" });
    await run("glob", { pattern: "**", max_results: 2 });
    await run("glob", { pattern: "src/*", type: "directory" });
    await run("grep", { pattern: "alpha" });
    await run("grep", { pattern: "export", path: "src", context: 1 });
    await run("grep", { pattern: "nothing-matches-this" });
    await run("grep", { pattern: "v[0-9]", max_matches: 2, include_content: false });
    await run("grep", { pattern: "beta", path: "a.txt", regex: false, case_sensitive: false });
  });

  test("patch tools", { timeout: 90_000 }, async () => {
    await writeFile(join(dir, "p.txt"), "one\ntwo\nthree\n");
    await run("edit_file", { path: "p.txt", old_text: "two", new_text: "TWO" });
    await run("edit_file", { path: "p.txt", old_text: "e", new_text: "E", replace_all: true });
    await run("apply_patch", {
      patch: "--- a/p.txt\n+++ b/p.txt\n@@ -1,3 +1,3 @@\n onE\n-TWO\n+2\n thrEE\n",
    });
    await run("apply_patch", {
      patch: "*** Begin Patch\n*** Add File: added.txt\n+new\n*** Update File: p.txt\n*** Move to: p2.txt\n" +
        "@@\n onE\n-2\n+two\n*** Delete File: b.txt\n*** End Patch\n",
    });
  });

  test("command tools", { timeout: 90_000 }, async () => {
    await run("bash", { command: "echo out; echo err >&2" });
    assert.equal((await runFailing("bash", { command: "exit 3" }, "command_failed")).exit_code, 3);
    assert.equal((await runFailing("bash", { command: "sleep 5", timeout_s: 0.2 }, "timeout")).stop_reason, "timeout");
    assert.equal((await run("bash", { command: "yes x | head -c 200000", max_output_bytes: 2048 })).truncated, true);
    await run("bash", { command: "seq 1 3000", max_output_chars: 500 });
    await run("bash", { command: "seq 1 12000", max_output_chars: 100_000 }, true);
    const started = await run("bash_background", { command: "echo started; sleep 30" });
    const quick = await run("bash_background", { command: "echo quick" });
    await run("bash_wait", { id: quick.id, timeout_s: 10 });
    await run("bash_read", { id: started.id });
    await run("bash_wait", { id: started.id, timeout_s: 0 });
    await run("bash_list");
    assert.equal((await run("bash_stop", { id: started.id })).stopped, true);
    await run("bash_read", { id: started.id, max_output_chars: 500 });
  });

  test("system, framework and diagnostic tools", { timeout: 90_000 }, async () => {
    await run("sleep", { seconds: 0.01 });
    await run("datetime");
    await run("datetime", { time_zone: "Asia/Kolkata" });
    await run("system_info");
    const cut = seen.find((s) => s.cut)!;
    const id = (cut.structured.artifact as { id: string }).id;
    await run("read_artifact", { id });
    await run("read_artifact", { id, offset: 100, limit: 50 });
    await run("ask_preference", { question: "Which?", choices: ["red", "blue"] });
    await run("ask_preference", { question: "Which?", choices: ["red"], allow_extra: true });
    for (const path of ["ok.json", "bad.json", "ok.ts", "bad.sh"]) await run("check_syntax", { path });
    await run("check_syntax", { path: "ok.ts", language: "tsx" });
    await run("check_types", { path: "ok.ts" });
    await run("check_types", { path: "bad_types.ts" });
    await run("diff_files", { a: "a.txt", b: "src/f1.ts" });
    await run("diff_files", { a: "a.txt", b: "a.txt" });
  });

  test("sub-agent tools", { timeout: 90_000 }, async () => {
    await run("agent_run", { task: "count the files" });
    await run("agent_run", { task: "object please", name: "obj" });
    await run("agent_run_parallel", { tasks: ["one", "fail now", "object two"], names: ["a", "b", "c"] });
    await run("agent_run_parallel", { tasks: ["solo"] });
  });

  test("browser tools", { timeout: 90_000, skip: noBrowser }, async () => {
    await run("browser_close");
    await run("browser_console_messages");
    await run("browser_navigate", { url: `${site.base}/form` });
    const snapshot = (await run("browser_snapshot")).result as string;
    const ref = (pattern: RegExp) => snapshot.split("\n").find((l) => pattern.test(l))!.match(/\[ref=(\S+?)\]/)![1];
    await run("browser_type", { ref: ref(/textbox "Name"/), text: "Ada" });
    await run("browser_type", { ref: ref(/textbox "Name"/), text: "Ada", submit: false });
    await run("browser_select", { ref: ref(/combobox "Colour"/), values: ["Blue"] });
    await run("browser_press_key", { key: "Tab" });
    await run("browser_click", { ref: ref(/button "Send"/) });
    await run("browser_wait_for", { text: "Hello Ada, blue" });
    await run("browser_wait_for", { text_gone: "never there" });
    await run("browser_wait_for", { time: 0.05 });
    await run("browser_evaluate", { script: "({ title: document.title, n: 1 + 2 })" });
    await run("browser_evaluate", { script: "undefined" });
    await run("browser_screenshot");
    await run("browser_screenshot", { format: "jpeg", full_page: true });
    await run("browser_tabs");
    await run("browser_tabs", { action: "new", url: `${site.base}/upload` });
    const upload = (await run("browser_snapshot")).result as string;
    const input = upload.split("\n").find((l) => /button "Attachment"/.test(l))!.match(/\[ref=(\S+?)\]/)![1];
    await run("browser_file_upload", { ref: input, paths: ["a.txt"] });
    await run("browser_tabs", { action: "close", index: 1 });
    await run("browser_navigate", { url: `${site.base}/throws` });
    await run("browser_console_messages", { clear: true });
    await run("browser_close");
  });

  test(
    "every listed tool ran at least once, and the schema's own language list is the tool's",
    { timeout: 90_000 },
    () => {
      const ran = new Set(seen.map((s) => s.tool));
      const skipped = (name: string) => noBrowser !== false && name.startsWith("browser_");
      assert.deepEqual([...listed.keys()].filter((name) => !ran.has(name) && !skipped(name)), []);
      const language = box.get("check_syntax")!.output!;
      const jsonLanguages = (outputJsonSchema(language).properties!.language as { enum: string[] }).enum;
      assert.deepEqual(jsonLanguages, [...SYNTAX_LANGUAGES]);
    },
  );

  test(
    "mutants of the real outputs: the check and the advertised JSON Schema agree on each",
    { timeout: 90_000 },
    () => {
      const outputs = seen.filter((s) => !s.cut);
      assert.ok(outputs.length > 60);
      const schemas = new Map<string, { tool: AnyTool; validate: ValidateFunction }>();
      for (const { tool } of outputs) {
        const t = box.get(tool)!;
        schemas.set(tool, { tool: t, validate: ajv.compile(outputJsonSchema(t.output!)) });
      }
      const leaves = [null, true, 0, -1, 1.5, "", "x", "sha256", "0".repeat(64), [], {}, [1], { a: 1 }];
      // A mutation: where (a path chosen by index), and what (drop, replace, add a key, wrap in an array).
      const mutation = fc.record({
        at: fc.nat(),
        kind: fc.constantFrom("drop", "replace", "add", "wrap"),
        leaf: fc.constantFrom(...leaves),
        key: fc.constantFrom("extra", "path", "status", "note", "truncated"),
      });
      let rejected = 0;
      let accepted = 0;
      fc.assert(
        fc.property(fc.constantFrom(...outputs), fc.array(mutation, { minLength: 1, maxLength: 3 }), (s, changes) => {
          const own = mcpWrapsOutput(box.get(s.tool)!) ? s.structured[WRAPPED_OUTPUT_KEY] : s.structured;
          const value = structuredClone(own) as unknown;
          let mutant = value;
          for (const change of changes) mutant = mutate(mutant, change);
          const { tool, validate } = schemas.get(s.tool)!;
          const byCheck = checkOutput(tool.name, tool.output!, mutant) === undefined;
          const bySchema = validate(mutant);
          assert.equal(
            byCheck,
            bySchema,
            `${s.tool}: check ${byCheck}, JSON Schema ${bySchema}: ${JSON.stringify(mutant)}`,
          );
          if (byCheck) accepted++;
          else rejected++;
        }),
        { numRuns: 3_000 },
      );
      assert.ok(rejected > 500 && accepted > 50, `accepted ${accepted}, rejected ${rejected}`);
    },
  );
});

type Mutation = { at: number; kind: "drop" | "replace" | "add" | "wrap"; leaf: unknown; key: string };

/** Applies one mutation at the `at`-th node (pre-order) of a JSON value. */
function mutate(root: unknown, change: Mutation): unknown {
  const nodes: { parent: Record<string, unknown> | unknown[] | undefined; key: string | number }[] = [];
  const walk = (value: unknown, parent: Record<string, unknown> | unknown[] | undefined, key: string | number) => {
    nodes.push({ parent, key });
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, value, i));
    else if (typeof value === "object" && value !== null) {
      for (const [k, item] of Object.entries(value)) walk(item, value as Record<string, unknown>, k);
    }
  };
  walk(root, undefined, "");
  const { parent, key } = nodes[change.at % nodes.length];
  const current = parent === undefined ? root : (parent as Record<string | number, unknown>)[key];
  let next: unknown = current;
  switch (change.kind) {
    case "drop":
      if (parent === undefined) return change.leaf;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      return root;
    case "replace":
      next = structuredClone(change.leaf);
      break;
    case "add":
      if (typeof current === "object" && current !== null && !Array.isArray(current)) {
        (current as Record<string, unknown>)[change.key] = structuredClone(change.leaf);
        return root;
      }
      next = structuredClone(change.leaf);
      break;
    case "wrap":
      next = [current];
      break;
  }
  if (parent === undefined) return next;
  (parent as Record<string | number, unknown>)[key] = next;
  return root;
}
