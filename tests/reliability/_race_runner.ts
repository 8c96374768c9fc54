// Child process for the confinement race test: runs one operation of
// _race_operations.ts `tries` times in a session on `workdir`, under whatever
// runtime flags it was started with, and prints the outcome counts and the
// confinement mode as JSON.
import process from "node:process";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { confinementMode } from "../../internal/confined_fs.ts";
import { fsTools } from "../../tools/fs/fs_tools.ts";
import { patchTools } from "../../tools/patch/patch_tools.ts";
import { OPERATIONS } from "./_race_operations.ts";

const [workdir, index, tries] = process.argv.slice(-3);
const operation = OPERATIONS[Number(index)];
const session = new Session({ workspace: workdir, autoConfirm: true });
const box = new ToolBox().register(...fsTools(), ...patchTools());
const call = (tool: string, args: Record<string, unknown>) => box.call(session, tool, args);
const outcomes: Record<string, number> = {};
for (let i = 0; i < Number(tries); i++) {
  const result = await operation.run(call, workdir, i).then(
    (r) => r as { status?: string; errorCode?: string } | undefined,
    (error) => ({ status: "error", errorCode: (error as { code?: string }).code ?? String(error) }),
  );
  const outcome = result === undefined || result.status === "success" ? "ok" : result.errorCode ?? "error";
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
}
await session.close();
process.stdout.write(JSON.stringify({ mode: confinementMode(), outcomes }) + "\n");
