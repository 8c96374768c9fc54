// Fault injection: SIGKILL a process while it publishes a scratch copy (12
// files rewritten, one deleted, one created, one moved). Whenever it dies, each file must
// hold its old content or its new one, byte for byte, never a mix; a deleted
// file is there whole or gone, a created one gone or whole, and a moved one
// is never in neither place. The temp files and
// backups it leaves are swept by the next start (a workspace opened on the folder).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { scriptArgv } from "./_runtime.ts";
import { Workspace } from "../../policy/workspace.ts";

const COUNT = 12;
const SIZE = 2 * 1024 * 1024;
const OLD_SIZE = 64 * 1024;
const ROUNDS_BY_STEP = 6;
const ROUNDS_TIMED = 6;

let dir: string;
before(async () => {
  dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-publish-kill-")));
});
after(() => fsp.rm(dir, { recursive: true, force: true }));

async function fill(workdir: string): Promise<void> {
  await fsp.rm(workdir, { recursive: true, force: true });
  await fsp.mkdir(workdir, { recursive: true });
  for (let i = 0; i < COUNT; i++) await fsp.writeFile(path.join(workdir, `f${i}.bin`), Buffer.alloc(OLD_SIZE, 0x4f));
  await fsp.writeFile(path.join(workdir, "doomed.txt"), "doomed\n");
  await fsp.writeFile(path.join(workdir, "mover.txt"), "moving\n");
}

async function judge(file: string, old: Buffer | null, now: Buffer | null): Promise<string> {
  const bytes = await fsp.readFile(file).catch(() => null);
  if (bytes === null) return old === null ? "old" : now === null ? "new" : "missing";
  if (old !== null && bytes.equals(old)) return "old";
  if (now !== null && bytes.equals(now)) return "new";
  return `mixed: ${bytes.length} bytes`;
}

describe("publication killed mid-way", () => {
  test("SIGKILL at any moment leaves each file old or new, never torn", { timeout: 300_000 }, async () => {
    const workdir = path.join(dir, "W");
    const temp = path.join(dir, "T");
    await fsp.mkdir(temp);
    const outcomes: Record<string, number> = {};
    let killedMidway = 0;
    for (let round = 0; round < ROUNDS_BY_STEP + ROUNDS_TIMED; round++) {
      await fill(workdir);
      const [command, ...args] = scriptArgv("_publisher", [workdir, temp, String(COUNT), String(SIZE)]);
      const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
      const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
      let output = "";
      const killAfterSteps = round < ROUNDS_BY_STEP ? 1 + ((round * 5) % (COUNT + 2)) : Infinity;
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (chunk) => {
          output += chunk;
          if (output.split("step").length - 1 >= killAfterSteps) resolve();
          if (round >= ROUNDS_BY_STEP && output.includes("ready")) {
            setTimeout(resolve, (round - ROUNDS_BY_STEP) * 12);
          }
        });
        exited.then(() => (output.includes("done") ? resolve() : reject(new Error(`publisher ended: ${output}`))));
      });
      child.kill("SIGKILL");
      await exited;
      if (!output.includes("done")) killedMidway++;
      const oldBytes = Buffer.alloc(OLD_SIZE, 0x4f);
      const newBytes = Buffer.alloc(SIZE, 0x4e);
      const seen: string[] = [];
      for (let i = 0; i < COUNT; i++) seen.push(await judge(path.join(workdir, `f${i}.bin`), oldBytes, newBytes));
      seen.push(await judge(path.join(workdir, "doomed.txt"), Buffer.from("doomed\n"), null));
      seen.push(await judge(path.join(workdir, "born.bin"), null, newBytes));
      // A moved file is never lost: it is at its old place, its new one, or (for a moment) both.
      const mover = await fsp.readFile(path.join(workdir, "mover.txt"), "utf8").catch(() => null);
      const moved = await fsp.readFile(path.join(workdir, "moved.txt"), "utf8").catch(() => null);
      assert.ok(mover === "moving\n" || moved === "moving\n", `round ${round}: the moved file is gone`);
      assert.ok(mover === null || mover === "moving\n");
      assert.ok(moved === null || moved === "moving\n");
      for (const s of seen) outcomes[s] = (outcomes[s] ?? 0) + 1;
      assert.ok(seen.every((s) => s === "old" || s === "new"), `round ${round}: ${seen.join(", ")}`);
      // The next start sweeps the temp files and backups the killed process left.
      const next = new Workspace(workdir);
      await next.dispose();
      const left = (await fsp.readdir(workdir)).filter((name) => name.startsWith(".toolfence-"));
      assert.deepEqual(left, [], `round ${round}: debris survived the next start`);
    }
    console.log(
      `publication kill: ${ROUNDS_BY_STEP + ROUNDS_TIMED} SIGKILLs (${killedMidway} mid-publication), ` +
        `file outcomes ${JSON.stringify(outcomes)}, none torn`,
    );
    assert.ok(killedMidway >= ROUNDS_BY_STEP, "the kills by step must land mid-publication");
    assert.ok((outcomes.old ?? 0) > 0 && (outcomes.new ?? 0) > 0, "kills must land between files");
  });
});
