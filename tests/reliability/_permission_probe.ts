// Child process for the OS-permission test, run without the capabilities that
// let root ignore file modes: calls the file tools on a prepared tree and
// prints one JSON line with every result.
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { Session } from "../../policy/session.ts";
import { ToolBox } from "../../toolbox.ts";
import { deleteTool } from "../../tools/fs/delete.ts";
import { listDirTool } from "../../tools/fs/list_dir.ts";
import { mkdirTool } from "../../tools/fs/mkdir.ts";
import { readFileTool } from "../../tools/fs/read_file.ts";
import { writeFileTool } from "../../tools/fs/write_file.ts";

const workdir = process.argv[process.argv.length - 1];
const box = new ToolBox().register(readFileTool, writeFileTool, deleteTool, mkdirTool, listDirTool);
const session = new Session({ workspace: workdir, autoConfirm: true });

// Proof that the modes are enforced for this process at all.
let enforced: string;
try {
  await fsp.writeFile(path.join(workdir, "rodir", "probe"), "x");
  enforced = "no: root still writes into a 0555 folder";
} catch (error) {
  enforced = (error as NodeJS.ErrnoException).code ?? String(error);
}

const calls: [string, string, Record<string, unknown>][] = [
  ["overwrite in read-only folder", "write_file", { path: "rodir/f.txt", content: "changed\n" }],
  ["create in read-only folder", "write_file", { path: "rodir/new.txt", content: "new\n" }],
  ["create folder in read-only folder", "mkdir", { path: "rodir/sub" }],
  ["delete from read-only folder", "delete", { path: "rodir/f.txt" }],
  ["overwrite read-only file", "write_file", { path: "ro.txt", content: "changed\n" }],
  ["read unreadable file", "read_file", { path: "secret.txt" }],
  ["list unreadable folder", "list_dir", { path: "locked" }],
  ["read file in unreadable folder", "read_file", { path: "locked/inner.txt" }],
  ["write file in unreadable folder", "write_file", { path: "locked/inner.txt", content: "changed\n" }],
];
const results: Record<string, { status: string; errorCode?: string; error?: string }> = {};
for (const [name, tool, args] of calls) {
  const result = await box.call(session, tool, args);
  results[name] = { status: result.status, errorCode: result.errorCode, error: result.error };
}
await session.close();
process.stdout.write(JSON.stringify({ enforced, results }) + "\n");
