// Flux's Tool protocol registers as it is (name, description, parameters,
// execute(ctx, args)); its { output, success } results end the call as such;
// Flux's shell, file_read and file_write answer as aliases of ours, through
// the same policy.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ToolBox } from "../../toolbox.ts";
import "../../tools/mod.ts";
import { FLUX_ALIASES, fromFluxTool, isFluxTool } from "../../core/mod.ts";
import type { ToolContext } from "../../core/context.ts";
import { withSession } from "./_helpers.ts";

class DatabaseQueryTool {
  calls = 0;
  get name() {
    return "db_query";
  }
  get description() {
    return "Execute a read-only SQL query against the database.";
  }
  get parameters() {
    return {
      type: "object",
      properties: { query: { type: "string", description: "SQL SELECT query to execute" } },
      required: ["query"],
    };
  }
  execute(ctx: ToolContext, args: Record<string, unknown>) {
    this.calls++;
    const query = String(args.query);
    if (!query.trim().toUpperCase().startsWith("SELECT")) {
      return { output: "Error: Only SELECT queries are allowed", success: false };
    }
    return { output: JSON.stringify([{ one: 1 }]), success: true, metadata: { sawSession: ctx.session !== undefined } };
  }
}

describe("Flux tools", { timeout: 30_000 }, () => {
  test(
    "a Flux class registers as it is: context first, its schema checked, its results read",
    { timeout: 30_000 },
    async () => {
      await withSession(async (session) => {
        const flux = new DatabaseQueryTool();
        assert.equal(isFluxTool(flux), true);
        const box = new ToolBox().register(flux as never);
        assert.deepEqual(box.get("db_query")!.inputSchema.required, ["query"]);
        const ok = await box.call(session, "db_query", { query: "SELECT 1" });
        assert.deepEqual([ok.status, ok.success, ok.output, ok.metadata.sawSession], [
          "success",
          true,
          '[{"one":1}]',
          true,
        ]);
        const refused = await box.call(session, "db_query", { query: "DROP TABLE t" });
        assert.deepEqual([refused.status, refused.success, refused.error], [
          "error",
          false,
          "Error: Only SELECT queries are allowed",
        ]);
        const invalid = await box.call(session, "db_query", { query: 1 });
        assert.equal(invalid.errorCode, "invalid_arguments");
        assert.equal(flux.calls, 2, "one state: execute runs on the instance; invalid arguments never reach it");
        // parametersSchema (Flux's parameters_schema) is read too.
        const other = fromFluxTool({
          name: "echo",
          description: "d",
          parametersSchema: { type: "object", properties: { text: { type: "string" } } },
          execute: (_ctx, args) => ({ output: String(args.text), success: true }),
        });
        assert.equal((await new ToolBox().register(other).call(session, "echo", { text: "hi" })).output, "hi");
      });
    },
  );

  test(
    "shell, file_read and file_write answer as aliases of bash, read_file and write_file",
    { timeout: 30_000 },
    async () => {
      await withSession(async (session, dir) => {
        const box = new ToolBox().withDefaults("fs", "cmd");
        assert.deepEqual(box.aliases(), FLUX_ALIASES);
        assert.ok(!box.list().some((t) => t.name in FLUX_ALIASES), "never listed");
        await writeFile(join(dir, "a.txt"), "alpha\n");
        const read = await box.call(session, "file_read", { path: "a.txt" });
        assert.equal(read.toolName, "read_file");
        assert.match(JSON.stringify(read.output), /alpha/);
        const wrote = await box.call(session, "file_write", { path: "b.txt", content: "beta\n" });
        assert.equal(wrote.status, "success", wrote.error);
        assert.equal(await readFile(join(dir, "b.txt"), "utf8"), "beta\n");
        const ran = await box.call(session, "shell", { command: "echo from-shell" });
        assert.equal(ran.toolName, "bash");
        assert.match(JSON.stringify(ran.output), /from-shell/, ran.error);
        // The same policy: outside the workspace stays refused by its alias too.
        const outside = await box.call(session, "file_read", { path: "/etc/passwd" });
        assert.deepEqual([outside.status, outside.errorCode], ["error", "outside_workspace"]);
        // A name already taken is not aliased.
        const own = new ToolBox().register(
          fromFluxTool({ name: "shell", description: "mine", parameters: { type: "object" }, execute: () => "mine" }),
        ).withDefaults("cmd");
        assert.equal(own.aliases().shell, undefined);
        assert.equal(own.get("shell")!.description, "mine");
      }, { sandbox: "off", autoConfirm: true });
    },
  );
});
