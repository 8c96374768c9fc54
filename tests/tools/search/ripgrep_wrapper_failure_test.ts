// What runs ripgrep can fail before ripgrep does: bubblewrap exits 1 when it cannot set the sandbox up (a namespace
// the kernel refuses on a loaded machine), which is also ripgrep's own status for "no match". A CI run saw grep's
// ripgrep engine answer "No matches." where the built-in engine found `def needle():`. A status 1 with words that are
// no path's error is now no answer, and the built-in engine searches instead.
//
// The failure is played by a stand-in that answers ripgrep's version question and fails every search the way
// bubblewrap does.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
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

describe("a ripgrep run whose wrapper fails", { skip }, () => {
  test("is no answer: the built-in engine finds the match, never 'No matches'", { timeout: 60_000 }, async () => {
    const root = await tempFolder();
    const workdir = path.join(root, "W");
    let session: Session | undefined;
    try {
      await fsp.mkdir(path.join(workdir, "bin"), { recursive: true });
      await fsp.mkdir(path.join(workdir, "src"));
      await fsp.writeFile(path.join(workdir, "src", "file.py"), "def needle():\n    pass\n");
      // In the workspace, so that the sandbox's read view has it, beside a copy of ripgrep for the version question.
      await fsp.copyFile(rg!, path.join(workdir, "bin", "rg-real"));
      await fsp.chmod(path.join(workdir, "bin", "rg-real"), 0o755);
      const standIn = path.join(workdir, "bin", "rg");
      await fsp.writeFile(
        standIn,
        '#!/bin/sh\nif [ "$1" = --version ]; then exec "${0%/*}/rg-real" --version; fi\n' +
          "echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2\nexit 1\n",
        { mode: 0o755 },
      );
      session = new Session({ workspace: workdir, fence: openFence() });
      const box = new ToolBox().register(grepTool({ engine: "ripgrep", ripgrepPath: standIn }));
      const result = await box.call(session, "grep", { pattern: "needle", path: "src" });
      assert.equal(result.status, "success", `${result.errorCode}: ${result.error}`);
      const output = result.output as { engine: string; matches: { path: string; content: string }[] };
      assert.deepEqual(output.matches.map((m) => [m.path, m.content]), [["file.py", "def needle():"]]);
      assert.equal(output.engine, "builtin");
    } finally {
      await session?.close();
      await fsp.rm(root, { recursive: true, force: true });
    }
  });
});
