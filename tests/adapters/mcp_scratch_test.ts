// `toolfence serve --scratch` as a client uses it: the official SDK `Client`
// over stdio starts main.ts with the narrow flags `main.ts flags` prints, in a
// real temporary workspace. Edits, patches, deletions, moves and commands
// leave the workspace byte for byte unchanged until a publication; the right
// digest applies exactly the approved paths; a wrong digest, a path outside
// the set, or a workspace file changed meanwhile refuses and changes nothing.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { narrowFlags } from "./_raw_server.ts";
import { fingerprint } from "../policy/scratch/_tree_fingerprint.ts";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type CallToolResult, type ElicitRequest, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { DENO, DENO_PROCESS_ONLY } from "../_runtime.ts";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = path.join(ROOT, "main.ts");
const GROUPS = "fs,search,patch,cmd,system";

interface Started {
  client: Client;
  digest: string;
  asked: ElicitRequest["params"][];
  close(): Promise<void>;
}

async function start(workspace: string, serverArgs: string[] = []): Promise<Started> {
  const flags = await narrowFlags(workspace, GROUPS);
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", ...flags, MAIN, "serve", "--workspace", workspace, "--groups", GROUPS, "--scratch", ...serverArgs],
    cwd: ROOT,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => void (stderr += String(chunk)));
  const client = new Client({ name: "toolfence-scratch-test", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  const asked: ElicitRequest["params"][] = [];
  // The person: allows writes in the copy once, runs commands, and approves the publication.
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    const params = request.params;
    if (!("requestedSchema" in params)) throw new Error("a form was expected");
    const field = params.requestedSchema.properties.answer as { type: string };
    return field.type === "string"
      ? { action: "accept", content: { answer: "once" } }
      : { action: "accept", content: { answer: true } };
  });
  await client.connect(transport);
  const deadline = Date.now() + 20_000;
  while (!/input digest [0-9a-f]{64}/.test(stderr) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const digest = /input digest ([0-9a-f]{64})/.exec(stderr)?.[1];
  assert.ok(digest, `no digest logged: ${stderr}`);
  return { client, digest, asked, close: () => client.close() };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }) as CallToolResult;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
}

function code(result: CallToolResult): unknown {
  return (result._meta as Record<string, Record<string, unknown>>)["toolfence/result"].errorCode;
}

let root: string;
describe("main.ts serve --scratch", { skip: DENO_PROCESS_ONLY }, () => {
  before(async () => {
    root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-mcp-scratch-")));
  });
  after(() => fsp.rm(root, { recursive: true, force: true }));

  let n = 0;
  async function workspace(): Promise<string> {
    const w = path.join(root, `w${n++}`);
    await fsp.mkdir(path.join(w, "src"), { recursive: true });
    await fsp.mkdir(path.join(w, "docs"));
    await fsp.writeFile(path.join(w, "src", "a.ts"), "export const a = 1;\n");
    await fsp.writeFile(path.join(w, "src", "b.ts"), "export const b = 1;\n");
    await fsp.writeFile(path.join(w, "src", "gone.ts"), "// to delete\n");
    await fsp.writeFile(path.join(w, "docs", "guide.md"), "# Guide\n");
    await fsp.writeFile(path.join(w, "notes.txt"), "notes\n");
    return w;
  }

  async function work(client: Client): Promise<void> {
    const steps: [string, Record<string, unknown>][] = [
      ["edit_file", { path: "src/a.ts", old_text: "= 1", new_text: "= 2" }],
      ["apply_patch", {
        patch:
          "*** Begin Patch\n*** Update File: src/b.ts\n@@\n-export const b = 1;\n+export const b = 2;\n*** End Patch\n",
      }],
      ["write_file", { path: "src/new.ts", content: "export const n = 1;\n" }],
      ["delete", { path: "src/gone.ts" }],
      ["write_file", { path: "docs/guide.md", content: "# Guide, rewritten\n" }],
      ["move", { src: "notes.txt", dst: "docs/notes.txt" }],
      ["bash", { command: "echo from-bash > src/cmd.txt && rm -f docs/guide.md.bak && ls" }],
    ];
    for (const [name, args] of steps) {
      const result = await call(client, name, args);
      assert.ok(!result.isError, `${name}: ${text(result)}`);
    }
  }

  describe("toolfence serve --scratch", () => {
    test(
      "every change stays in the copy; refusals change nothing; the right digest applies exactly the approved paths",
      {
        timeout: 60_000,
      },
      async () => {
        const w = await workspace();
        const original = await fingerprint(w);
        const server = await start(w, ["--publish-paths", "src"]);
        try {
          const listed = await server.client.listTools();
          assert.ok(listed.tools.some((t) => t.name === "publish"));
          await work(server.client);
          // The real workspace by its absolute path: refused for the file tools, out of reach (or not there) for commands.
          const direct = await call(server.client, "write_file", {
            path: path.join(w, "src", "a.ts"),
            content: "pwned\n",
          });
          assert.equal(code(direct), "outside_workspace", text(direct));
          await call(server.client, "bash", { command: `echo pwned > '${w}/src/pwned.txt' || true` });
          assert.deepEqual(await fingerprint(w), original, "the workspace changed before publication");

          const wrong = await call(server.client, "publish", { digest: "0".repeat(64) });
          assert.ok(wrong.isError);
          assert.equal(code(wrong), "digest_mismatch");
          assert.deepEqual(await fingerprint(w), original);

          for (const outside of ["docs", "notes.txt", "../", "/etc"]) {
            const refused = await call(server.client, "publish", { digest: server.digest, paths: [outside] });
            assert.equal(code(refused), "path_not_approved", `${outside}: ${text(refused)}`);
            assert.deepEqual(await fingerprint(w), original, outside);
          }

          // A person edits a file meanwhile: refused, naming it, and nothing of theirs is overwritten.
          await fsp.writeFile(path.join(w, "src", "a.ts"), "export const a = 42;\n");
          const edited = await fingerprint(w);
          const changed = await call(server.client, "publish", { digest: server.digest });
          assert.equal(code(changed), "host_changed", text(changed));
          assert.match(text(changed), /src\/a\.ts/);
          assert.deepEqual(await fingerprint(w), edited);
          await fsp.writeFile(path.join(w, "src", "a.ts"), "export const a = 1;\n");

          const asked = server.asked.length;
          const published = await call(server.client, "publish", { digest: server.digest });
          assert.ok(!published.isError, text(published));
          assert.equal(server.asked.length, asked + 1, "the person was shown the publication");
          const shown = server.asked.at(-1)!.message;
          assert.match(shown, /\+export const a = 2;/);
          assert.match(shown, /deleted +src\/gone\.ts/);
          const after = await fingerprint(w);
          // Exactly the approved paths changed, each as in the copy.
          for (const [rel, what] of Object.entries(after)) {
            if (!rel.startsWith("src/")) assert.equal(what, original[rel], rel);
          }
          for (const rel of Object.keys(original)) if (!rel.startsWith("src/")) assert.ok(rel in after, rel);
          assert.equal(await fsp.readFile(path.join(w, "src", "a.ts"), "utf8"), "export const a = 2;\n");
          assert.equal(await fsp.readFile(path.join(w, "src", "b.ts"), "utf8"), "export const b = 2;\n");
          assert.equal(await fsp.readFile(path.join(w, "src", "new.ts"), "utf8"), "export const n = 1;\n");
          assert.equal(await fsp.readFile(path.join(w, "src", "cmd.txt"), "utf8"), "from-bash\n");
          await assert.rejects(fsp.access(path.join(w, "src", "gone.ts")));
          assert.deepEqual(
            Object.keys(after).filter((k) => k.startsWith("src/")).sort(),
            ["src/a.ts", "src/b.ts", "src/cmd.txt", "src/new.ts"],
          );
          assert.equal(await fsp.readFile(path.join(w, "docs", "guide.md"), "utf8"), "# Guide\n");
          assert.equal(await fsp.readFile(path.join(w, "notes.txt"), "utf8"), "notes\n");
          const meta = (published._meta as Record<string, Record<string, unknown>>)["toolfence/result"];
          assert.equal(meta.status, "success");
          assert.match(text(published), /filesystemChanges/);
        } finally {
          await server.close();
        }
        // Stopping the server disposes of the copy and publishes nothing more.
        assert.equal(await fsp.readFile(path.join(w, "docs", "guide.md"), "utf8"), "# Guide\n");
      },
    );

    test("bad usage: --expect-digest that is no digest, or --publish-paths without --scratch, exits 2", {
      timeout: 60_000,
    }, async () => {
      const { spawnSync } = await import("node:child_process");
      const w = await workspace();
      for (
        const args of [
          ["--scratch", "--expect-digest", "not-a-digest"],
          ["--publish-paths", "src"],
          ["--expect-digest", "ab".repeat(32)],
        ]
      ) {
        const run = spawnSync(DENO, ["run", "-A", MAIN, "serve", "--workspace", w, ...args], {
          cwd: ROOT,
          input: "",
          encoding: "utf8",
        });
        assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
      }
    });

    test(
      "an approved digest that is not the copy's (--expect-digest) refuses every publication",
      { timeout: 60_000 },
      async () => {
        const w = await workspace();
        const original = await fingerprint(w);
        const server = await start(w, ["--expect-digest", "ab".repeat(32)]);
        try {
          await work(server.client);
          const result = await call(server.client, "publish", { digest: server.digest });
          assert.equal(code(result), "digest_mismatch", text(result));
          assert.deepEqual(await fingerprint(w), original);
        } finally {
          await server.close();
        }
      },
    );

    test(
      "the policy files' rules hold in the copy and at publication: absolute globs, hard links, read-only paths",
      { timeout: 60_000 },
      async () => {
        const w = await workspace();
        await fsp.mkdir(path.join(w, "secrets"));
        await fsp.mkdir(path.join(w, "vendor"));
        await fsp.writeFile(path.join(w, ".env"), "SCRATCH-SECRET-1\n");
        await fsp.writeFile(path.join(w, "secrets", "key.txt"), "SCRATCH-SECRET-2\n");
        // Another name of the hidden .env, under a name no rule matches.
        await fsp.link(path.join(w, ".env"), path.join(w, "env-copy.txt"));
        await fsp.writeFile(path.join(w, "vendor", "lib.js"), "vendored\n");
        // Absolute globs naming places in the workspace, as a managed or command-line file would.
        const policy = { paths: { deny: ["**/.env", `${w}/secrets/**`], readOnly: [`${w}/vendor/**`] } };
        await fsp.writeFile(path.join(w, "toolfence.json"), JSON.stringify(policy));
        const original = await fingerprint(w);
        const server = await start(w);
        try {
          for (const p of ["env-copy.txt", "secrets/key.txt", ".env"]) {
            const read = await call(server.client, "read_file", { path: p });
            assert.ok(read.isError, `${p}: ${text(read)}`);
          }
          const grep = await call(server.client, "grep", { pattern: "SCRATCH-SECRET" });
          assert.ok(!text(grep).includes("SCRATCH-SECRET-"), text(grep));
          const shell = await call(server.client, "bash", { command: "cat env-copy.txt secrets/key.txt; true" });
          assert.ok(!text(shell).includes("SCRATCH-SECRET-"), text(shell));
          for (const p of ["vendor/lib.js", "secrets/new.txt"]) {
            const write = await call(server.client, "write_file", { path: p, content: "pwned\n" });
            assert.equal(code(write), "permission_denied", `${p}: ${text(write)}`);
          }
          // A command that names no path writes the read-only file in the copy; the publication refuses it.
          const written = await call(server.client, "bash", {
            command: 'd="$(printf vend%s or)"; echo pwned > "$d/lib.js"',
          });
          if (!written.isError && (written.structuredContent as { sandboxed?: boolean })?.sandboxed) {
            const published = await call(server.client, "publish", { digest: server.digest });
            assert.equal(code(published), "permission_denied", text(published));
          }
          assert.deepEqual(await fingerprint(w), original);
        } finally {
          await server.close();
        }
      },
    );
  });
});
