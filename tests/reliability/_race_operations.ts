// The operations of the confinement race test, shared by the test (which
// runs them in its own process) and _race_runner.ts (which runs them in a
// child under narrow Deno flags). Each try `i` works on its own names under
// the swapped folder `a/`; bait of the same names lies in the outside folder.
import fsp from "node:fs/promises";
import path from "node:path";
import { atomicWrite } from "../../internal/atomic_write.ts";

export interface Operation {
  name: string;
  /** Bait to create under both `W/a` and the outside folder, before the swapper starts. */
  bait(dir: string, i: number): Promise<void>;
  /** Files needed elsewhere in the workspace. */
  setup?(workdir: string, i: number): Promise<void>;
  run(
    call: (tool: string, args: Record<string, unknown>) => Promise<unknown>,
    workdir: string,
    i: number,
  ): Promise<unknown>;
}

export const write = (p: string, content = "bait\n") =>
  fsp.mkdir(path.dirname(p), { recursive: true }).then(() => fsp.writeFile(p, content));

export const OPERATIONS: Operation[] = [
  { name: "mkdir", bait: async () => {}, run: (call, _w, i) => call("mkdir", { path: `a/m${i}/x` }) },
  {
    name: "write_file (new file)",
    bait: async () => {},
    run: (call, _w, i) => call("write_file", { path: `a/n${i}.txt`, content: "agent\n" }),
  },
  {
    name: "write_file (overwrite)",
    bait: (dir, i) => write(path.join(dir, `w${i}.txt`)),
    run: (call, _w, i) => call("write_file", { path: `a/w${i}.txt`, content: "agent\n" }),
  },
  {
    name: "edit_file",
    bait: (dir, i) => write(path.join(dir, `e${i}.txt`)),
    run: (call, _w, i) => call("edit_file", { path: `a/e${i}.txt`, old_text: "bait", new_text: "agent" }),
  },
  {
    name: "apply_patch",
    bait: (dir, i) => write(path.join(dir, `p${i}.txt`)),
    run: (call, _w, i) =>
      call("apply_patch", {
        patch: `--- a/a/p${i}.txt\n+++ b/a/p${i}.txt\n@@ -1 +1 @@\n-bait\n+agent\n` +
          `--- /dev/null\n+++ b/a/q${i}.txt\n@@ -0,0 +1 @@\n+agent\n`,
      }),
  },
  {
    name: "move (source under a)",
    bait: (dir, i) => write(path.join(dir, `s${i}.txt`)),
    run: (call, _w, i) => call("move", { src: `a/s${i}.txt`, dst: `moved/s${i}.txt` }),
  },
  {
    name: "move (destination under a)",
    bait: async () => {},
    setup: (workdir, i) => write(path.join(workdir, "from", `t${i}.txt`)),
    run: (call, _w, i) => call("move", { src: `from/t${i}.txt`, dst: `a/t${i}.txt` }),
  },
  {
    name: "move (folder, both sides)",
    bait: (dir, i) => write(path.join(dir, `mv${i}`, "f.txt")),
    run: (call, _w, i) => call("move", { src: `a/mv${i}`, dst: `a/mw${i}` }),
  },
  {
    name: "copy (destination under a)",
    bait: async () => {},
    setup: (workdir) => write(path.join(workdir, "c.txt")),
    run: (call, _w, i) => call("copy", { src: "c.txt", dst: `a/c${i}.txt` }),
  },
  {
    name: "delete (file)",
    bait: (dir, i) => write(path.join(dir, `d${i}.txt`)),
    run: (call, _w, i) => call("delete", { path: `a/d${i}.txt` }),
  },
  {
    name: "delete (folder tree)",
    bait: async (dir, i) => {
      await write(path.join(dir, `r${i}`, "x.txt"));
      await write(path.join(dir, `r${i}`, "y", "z.txt"));
    },
    run: (call, _w, i) => call("delete", { path: `a/r${i}`, recursive: true }),
  },
  {
    name: "atomicWrite (artifact file store)",
    bait: (dir, i) => write(path.join(dir, `z${i}.bin`)),
    run: (_call, workdir, i) => atomicWrite(path.join(workdir, "a", `z${i}.bin`), "agent\n"),
  },
];
