// `toolfence serve` from the built package: the package.json bin started with
// Node (what `npx toolfence serve` runs), driven by the MCP SDK's client over
// stdio. Once plainly, once under Node's permission model, where the fence
// must keep the shell tools out of tools/list and writes outside W out.
import { afterEach, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { builtPackage, nodePermissionFlag, packageRoot, skipUnlessBuilt } from "./_built_package.ts";

let top: string;
let workspace: string;
let tempParent: string;

beforeEach(async () => {
  top = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-npm-serve-")));
  workspace = path.join(top, "W");
  tempParent = path.join(top, "tmp");
  await fsp.mkdir(workspace);
  await fsp.mkdir(tempParent);
  await fsp.writeFile(path.join(workspace, "hello.txt"), "hello from the workspace\n");
});

afterEach(async () => {
  await fsp.rm(top, { recursive: true, force: true });
});

function binPath(): string {
  const bin = builtPackage?.manifest.bin?.toolfence;
  assert.ok(bin, "the built package.json has no toolfence bin");
  return path.join(packageRoot(), bin);
}

async function connect(nodeFlags: string[], serveArgs: string[]): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeFlags, binPath(), "serve", "--workspace", workspace, "--temp-dir", tempParent, ...serveArgs],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => stderr += String(chunk));
  const client = new Client({ name: "toolfence-npm-serve-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`the server did not start: ${(error as Error).message}\n${stderr}`);
  }
  return { client, stderr: () => stderr };
}

function text(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

describe("toolfence serve from the npm build, over stdio", { skip: skipUnlessBuilt }, () => {
  test("lists the tools and calls them", { timeout: 60_000 }, async () => {
    const { client, stderr } = await connect([], ["--groups", "fs"]);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("read_file") && names.includes("write_file"), names.join(", "));
      const read = await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
      assert.notEqual(read.isError, true, text(read));
      assert.match(text(read), /hello from the workspace/);
      const wrote = await client.callTool({
        name: "write_file",
        arguments: { path: "new.txt", content: "over MCP\n" },
      });
      assert.notEqual(wrote.isError, true, text(wrote));
      assert.equal(await fsp.readFile(path.join(workspace, "new.txt"), "utf8"), "over MCP\n");
    } catch (error) {
      throw new Error(`${(error as Error).message}\nserver stderr:\n${stderr()}`);
    } finally {
      await client.close();
    }
  });

  // A tool the fence leaves out of tools/list is, to the client, a name it was never given: -32602 as for an
  // unknown one, with no hint that it exists (the flag is for the operator: `toolfence flags` prints them).
  test(
    "under --allow-fs-read=W --allow-fs-write=W the shell and temp tools are not listed, and a call is an unknown tool",
    {
      timeout: 60_000,
    },
    async () => {
      const flags = [
        nodePermissionFlag(),
        `--allow-fs-read=${packageRoot()}`,
        `--allow-fs-read=${workspace}`,
        // The server will not start when it may not look at the managed policy file.
        "--allow-fs-read=/etc/toolfence/config.json",
        `--allow-fs-write=${workspace}`,
      ];
      const { client, stderr } = await connect(flags, []);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(names.includes("read_file"), names.join(", "));
        assert.ok(!names.includes("bash"), `bash is listed without --allow-child-process: ${names.join(", ")}`);
        assert.ok(!names.includes("temp_dir"), `temp_dir is listed without --allow-fs-write=${tempParent}`);
        for (const name of ["temp_dir", "bash", "no_such_tool"]) {
          await assert.rejects(
            client.callTool({ name, arguments: {} }),
            (error: { code?: number; message?: string }) => {
              assert.equal(error.code, -32602, `${name}: ${error.message}`);
              assert.equal(error.message, `MCP error -32602: Unknown tool: ${name}`);
              return true;
            },
          );
        }
      } catch (error) {
        throw new Error(`${(error as Error).message}\nserver stderr:\n${stderr()}`);
      } finally {
        await client.close();
      }
    },
  );
});
