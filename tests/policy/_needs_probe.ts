/**
 * Run by the narrow-flag tests under `deno run` with the flags a test chooses:
 * makes a session on the workspace (temp dir under the given folder), lists
 * the tools of the given groups, calls the given tools in order and prints one
 * JSON line with what was listed, each result and how long each call took.
 *
 * @module
 */
import process from "node:process";
import "../../tools/mod.ts";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { Workspace } from "../../policy/workspace.ts";

const { workdir, tempParent, groups, calls } = JSON.parse(process.argv.at(-1)!) as {
  workdir: string;
  tempParent: string;
  groups: string[];
  calls: { name: string; args: Record<string, unknown> }[];
};
const workspace = new Workspace(workdir, { tempParent });
const session = new Session({ workspace });
const box = new ToolBox().withDefaults(...groups);
const listed = box.list({ session }).map((t) => t.name);
const results = [];
for (const call of calls) {
  const started = performance.now();
  const result = await box.call(session, call.name, call.args);
  results.push({ ...result, ms: Math.round(performance.now() - started) });
}
await session.close();
await workspace.dispose();
// The running Deno, which a need of `deno` (check_types) names.
console.log(JSON.stringify({ listed, results, execPath: process.execPath }));
