// Calls tools in a process where bubblewrap cannot run (started with
// --deny-run=bwrap) and prints each result as one JSON line.

import process from "node:process";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { autoHost } from "../../../policy/hosts.ts";
import { sandboxState } from "../../../policy/sandbox.ts";
import "../../../tools/mod.ts";

const request = JSON.parse(process.argv.at(-1)!) as {
  workdir: string;
  sandbox: "auto" | "required";
  calls: { name: string; args: Record<string, unknown> }[];
  /** Whether the automatic answer is on (default true); off, what needs confirming is refused. */
  autoConfirm?: boolean;
  /** More tool groups than cmd and diagnostic. */
  groups?: string[];
};
const box = new ToolBox().withDefaults("cmd", "diagnostic", ...(request.groups ?? []));
const session = new Session({
  workspace: request.workdir,
  sandbox: request.sandbox,
  autoConfirm: request.autoConfirm ?? true,
  // Without the automatic answer, no host: nobody can be asked, and what needs confirming is refused.
  ...(request.autoConfirm === false ? {} : { host: autoHost() }),
});
const state = await sandboxState(request.sandbox);
const results = [];
for (const call of request.calls) {
  const result = await box.call(session, call.name, call.args);
  results.push({ status: result.status, errorCode: result.errorCode, error: result.error, output: result.output });
}
await session.close();
console.log(JSON.stringify({ state, results }));
