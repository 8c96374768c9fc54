// Run by narrow_flags_test.ts under `deno run` with only the flags the bash
// tool documents: calls it once on the workspace given and prints the result.
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { cmdTools } from "../../../tools/cmd/mod.ts";

const session = new Session({ workspace: Deno.args[0] });
const box = new ToolBox().register(...cmdTools());
const result = await box.call(session, "bash", { command: Deno.args[1] });
await session.close();
console.log(JSON.stringify({ listed: box.list().map((t) => t.name), result }));
