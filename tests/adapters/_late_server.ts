// A stdio MCP server (run as its own process by the tests) whose `slow_write`
// tool ignores its signal: timed out after 100 ms, it writes its file and
// settles at 400 ms, a late result. Arguments: the workspace.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import * as v from "valibot";
import { tool } from "../../core/tool.ts";
import { ToolBox } from "../../toolbox.ts";
import { serveStdio } from "../../adapters/mcp/stdio.ts";

/** The toolbox of the late-result tests: `slow_write` (see above) and `echo`. */
export function lateToolBox(workspace: string): ToolBox {
  return new ToolBox({ graceMs: 20 }).register(
    tool({
      name: "slow_write",
      description: "Writes late.txt after 400 ms, whatever its signal says.",
      input: v.object({}),
      effects: ["writes_files"],
      timeoutMs: 100,
      run: async () => {
        await new Promise((done) => setTimeout(done, 400));
        await writeFile(join(workspace, "late.txt"), "written late\n");
        return { wrote: "late.txt" };
      },
    }),
    tool({
      name: "echo",
      description: "Echoes its text after `ms` milliseconds.",
      input: v.object({ text: v.string(), ms: v.optional(v.number(), 0) }),
      readOnly: true,
      run: async ({ text, ms }) => {
        await new Promise((done) => setTimeout(done, ms));
        return text;
      },
    }),
  );
}

if (import.meta.main) {
  const workspace = process.argv[2] ?? (globalThis as { Deno?: { args: string[] } }).Deno?.args[0];
  const running = await serveStdio(lateToolBox(workspace!), { workspace: workspace!, sandbox: "off" });
  await running.closed;
}
