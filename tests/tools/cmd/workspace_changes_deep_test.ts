// A change report that cannot see everything says so. A command can make folders deeper than the system's limit on a
// path (PATH_MAX, 4,096 bytes), one chdir at a time; no call can list them by name. Before, the scans skipped them in
// silence: a file written below them was in no report, and the call's `filesystemChanges` read as whole.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { Session } from "../../../policy/session.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { type ChangeReportIncomplete, PATH_MAX_BYTES } from "../../../internal/workspace_changes.ts";
import { cmdBox, okOutput } from "./_helpers.ts";

const box = cmdBox();
// A person who lets every command run (perl with the sandbox off asks).
const yes = () => callbackHost({ confirm: () => true, choose: (request) => request.options[0].value as never });
// Names of 200 bytes (NAME_MAX is 255), so that few levels pass PATH_MAX: a tree of 2,100 one-letter folders made
// each scan walk 2,100 levels by absolute paths, and under a load of 12 one command took minutes.
const NAME = "d".repeat(200);
const LEVELS = 24;

// Folders NAME/NAME/.../NAME, LEVELS deep, with a file at the bottom: made by one perl process, a chdir at a time.
const DEEP_TREE = `chdir "${NAME}" or (mkdir "${NAME}" and chdir "${NAME}") or die $! for 1 .. ${LEVELS}; ` +
  `open(my $f, ">", "bottom.txt") or die $!; print $f "$ARGV[0]\\n"`;

// The shallowest folder of the tree whose real path is past the limit, relative to the workspace.
function firstUnlisted(workspace: string): string {
  let rel = NAME;
  while (new TextEncoder().encode(`${workspace}/${rel}`).length <= PATH_MAX_BYTES) rel += `/${NAME}`;
  return rel;
}

const modes = [["off", true], ["auto", (await bubblewrapStatus()).path !== undefined]] as const;

describe("a change report below folders past PATH_MAX", { timeout: 120_000 }, () => {
  for (const [sandbox, available] of modes) {
    test(`says it is incomplete, and still reports what it saw (sandbox ${sandbox})`, {
      timeout: 60_000,
      skip: available ? false : "bubblewrap is unavailable here",
    }, async () => {
      const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "toolfence-deep-")));
      const session = new Session({ workspace: dir, host: yes(), sandbox });
      try {
        // Nothing deep yet: a whole report, no note.
        const plain = await box.call(session, "bash", { command: "echo one > top.txt" });
        okOutput(plain);
        assert.deepEqual(plain.filesystemChanges.map((c) => [c.path, c.change]), [["top.txt", "created"]]);
        assert.equal(plain.metadata.filesystemChangesIncomplete, undefined);

        execFileSync("perl", ["-e", DEEP_TREE, "first"], { cwd: dir });
        const expected: ChangeReportIncomplete = { reason: "path_too_long", folders: [firstUnlisted(dir)] };
        // The command writes at the top and at the bottom: the top is reported, and the report says what it could
        // not see.
        const both = await box.call(session, "bash", {
          command: `echo two > top.txt && perl -e '${DEEP_TREE}' second`,
        });
        okOutput(both);
        assert.ok(
          both.filesystemChanges.some((c) => c.path === "top.txt" && c.change === "modified"),
          JSON.stringify(both.filesystemChanges.map((c) => [c.path, c.change])),
        );
        assert.ok(both.filesystemChanges.every((c) => c.path.length < PATH_MAX_BYTES));
        assert.deepEqual(both.metadata.filesystemChangesIncomplete, expected, "the deep write is said to be unseen");

        // Every later command that may write says it too, while the folders are there.
        const later = await box.call(session, "bash", { command: "touch stamp" });
        okOutput(later);
        assert.ok(later.filesystemChanges.some((c) => c.path === "stamp" && c.change === "created"));
        assert.deepEqual(later.metadata.filesystemChangesIncomplete, expected);
      } finally {
        await session.close();
        // rm -r descends relative to each folder it opens; node's rm goes by path and stops at the limit.
        execFileSync("rm", ["-rf", dir]);
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
