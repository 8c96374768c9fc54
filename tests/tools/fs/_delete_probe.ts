/**
 * Run by delete_test.ts under `deno run` with only --allow-read and
 * --allow-write for the workspace (no --allow-sys): deletes a path through the
 * `delete` tool and prints the result as JSON, so the test can see that the
 * process lives to print it.
 *
 * @module
 */
import process from "node:process";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { deleteTool } from "../../../tools/fs/delete.ts";

const { workdir, args } = JSON.parse(process.argv.at(-1)!) as { workdir: string; args: Record<string, unknown> };
const session = new Session({ workspace: workdir, autoConfirm: true });
const result = await new ToolBox().register(deleteTool).call(session, "delete", args);
await session.close();
console.log(JSON.stringify(result));
