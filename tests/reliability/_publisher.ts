// Child of publish_kill_test.ts: makes a scratch copy of the workspace given,
// rewrites every file in it (and deletes one, creates one), says "ready", then
// publishes, saying "step" after each step and "done" at the end; the parent
// kills it somewhere on the way.
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { createScratch } from "../../policy/scratch/scratch.ts";
import { Workspace } from "../../policy/workspace.ts";

const [workdir, tempParent, countText, sizeText] = process.argv.slice(2);
const count = Number(countText);
const size = Number(sizeText);
const scratch = await createScratch(new Workspace(workdir, { tempParent }), { session: { sandbox: "off" } });
for (let i = 0; i < count; i++) {
  await fsp.writeFile(path.join(scratch.root, `f${i}.bin`), Buffer.alloc(size, 0x4e));
}
await fsp.unlink(path.join(scratch.root, "doomed.txt"));
await fsp.rename(path.join(scratch.root, "mover.txt"), path.join(scratch.root, "moved.txt"));
await fsp.writeFile(path.join(scratch.root, "born.bin"), Buffer.alloc(size, 0x4e));
const { changes } = await scratch.changes();
process.stdout.write("ready\n");
await scratch.publish(changes, { onStep: () => void process.stdout.write("step\n") });
process.stdout.write("done\n");
await scratch.dispose();
