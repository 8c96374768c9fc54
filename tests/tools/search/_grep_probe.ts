/**
 * Run by fence_test.ts under `deno run` with narrow flags: lists the tools the
 * real fence leaves visible and runs one grep call, printing both as JSON, so
 * the test can see which engine the fence allowed.
 *
 * @module
 */
import process from "node:process";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { searchTools } from "../../../tools/search/mod.ts";

const { workdir, args } = JSON.parse(process.argv.at(-1)!) as { workdir: string; args: Record<string, unknown> };
const session = new Session({ workspace: workdir });
const box = new ToolBox().register(...searchTools());
const listed = box.list().map((t) => t.name);
const result = await box.call(session, "grep", args);
await session.close();
console.log(JSON.stringify({ listed, result }));
