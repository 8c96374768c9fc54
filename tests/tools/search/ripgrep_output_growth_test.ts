// ripgrep's output files lie in the session temp dir, where a sandboxed command of the session (a background job)
// can write. grep reads back only what the door's capture wrote there: a file grown behind it is neither read whole
// into the server nor believed. Before, a job that truncated each file to 1 GiB while ripgrep ran (sparse, instant)
// had the server read it all and split it at every NUL: 2.2 GiB of memory and its event loop stalled 75 s a call.
//
// The command is played by the test (the same writes, from outside), in the time a ripgrep wrapper waits before it
// runs the real ripgrep; nothing depends on a race.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { Session } from "../../../policy/session.ts";
import { ToolBox } from "../../../toolbox.ts";
import { openFence } from "../../../policy/fence.ts";
import { grepTool } from "../../../tools/search/grep.ts";
import { findRipgrep } from "../../../tools/search/_ripgrep.ts";
import { tempFolder } from "../fs/_helpers.ts";

const rg = await findRipgrep();
const skip = rg === undefined ? "no ripgrep binary found" : false;
const MiB = 1024 * 1024;

describe("ripgrep's output files grown behind the capture", { skip }, () => {
  test("only the bytes the capture wrote are read: no invented skip, no 64 MiB of NULs split", {
    timeout: 120_000,
  }, async () => {
    const root = await tempFolder();
    const workdir = path.join(root, "W");
    const bin = path.join(workdir, "bin");
    let session: Session | undefined;
    let stop = false;
    let watcher: Promise<void> | undefined;
    try {
      await fsp.mkdir(workdir);
      // In the workspace, so that the sandbox's read view has it.
      await fsp.mkdir(bin);
      await fsp.mkdir(path.join(workdir, "src"));
      await fsp.writeFile(path.join(workdir, "src", "a.txt"), "one needle here\n");
      await fsp.writeFile(path.join(workdir, "src", "b.txt"), "nothing\n");
      // The wrapper gives the writer its time: its output files exist while it sleeps. Beside it a copy of ripgrep,
      // which the sandbox's view has wherever the one found lies (node_modules).
      await fsp.copyFile(rg!, path.join(bin, "rg-real"));
      await fsp.chmod(path.join(bin, "rg-real"), 0o755);
      const wrapper = path.join(bin, "rg");
      await fsp.writeFile(wrapper, `#!/bin/sh\nsleep 0.4\nexec "\${0%/*}/rg-real" "$@"\n`, { mode: 0o755 });
      session = new Session({ workspace: workdir, fence: openFence() });
      const box = new ToolBox().register(grepTool({ engine: "ripgrep", ripgrepPath: wrapper }));
      const search = path.join(await session.workspace.tempDir(), "output", "search");
      const grown = new Set<string>();
      // What a command of the session can do to the files: write past what the capture wrote, and grow them.
      watcher = (async () => {
        while (!stop) {
          for (const name of fs.existsSync(search) ? fs.readdirSync(search) : []) {
            const file = path.join(search, name);
            if (grown.has(file)) continue;
            try {
              if (name.endsWith(".stderr")) {
                fs.appendFileSync(file, "rg: ./ghost.txt: Permission denied (os error 13)\n");
              } else fs.truncateSync(file, 64 * MiB);
              grown.add(file);
            } catch {
              // gone already
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const result = await box.call(session, "grep", { pattern: "needle", path: "src" });
      assert.equal(result.status, "success", `${result.errorCode}: ${result.error}`);
      assert.ok(grown.size >= 2, `the writer reached the output files (${[...grown].join(", ")})`);
      const output = result.output as {
        engine: string;
        matches: { path: string }[];
        skipped?: { path: string; reason: string }[];
      };
      assert.equal(output.engine, "ripgrep");
      assert.deepEqual(output.matches.map((m) => m.path), ["a.txt"]);
      assert.deepEqual(output.skipped ?? [], [], "a skip ripgrep never reported");
    } finally {
      stop = true;
      await watcher;
      await session?.close();
      await fsp.rm(root, { recursive: true, force: true });
    }
  });
});
