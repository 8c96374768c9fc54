// What the change report of a command may cost the server, whose looks at the workspace run on its one thread: a
// workspace of many small files, which a command may make within its limits (the disk watch leaves it half of the
// free inodes), must not hold the server's event loop at every later command. Before: 200,000 empty files a command
// made were hashed one by one at the next command's start (the loop held 20 s), and a workspace past
// MAX_SCAN_ENTRIES was walked whole (200,000 lstats) at every later command's start and end, 3 to 12 s each, while
// another session's `echo hi` waited. A whole look (the session's first, or the one after the watch's events were
// lost), the look at the names the watch reported (with the walk of each folder it names) and the change report let
// the event loop run every few milliseconds: before, after an inotify queue overflow at 190,000 files they held it 6 to
// 11 s, and another session's `echo hi` took 6 s; `chmod` on two folders of 50,000 files held it 1.8 s.

import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { Session } from "../../../policy/session.ts";
import { autoHost } from "../../../policy/hosts.ts";
import {
  AFTER_HASH_BUDGET,
  AFTER_HASH_FILE_BYTES,
  BEFORE_HASH_FILES,
  MAX_SCAN_ENTRIES,
  scanWorkspace,
} from "../../../internal/workspace_changes.ts";
import { fileEntryConfined } from "../../../internal/file_state.ts";
import { cmdBox, okOutput } from "./_helpers.ts";

const box = cmdBox();

// Empty files node_modules/d<k>/<i>, for i from `from` to `to` - 1, 50,000 a folder, made by one perl process. In
// node_modules, as a package manager makes them: the sandbox's search for protected paths skips it, so a line that
// writes still runs (past 200,000 entries elsewhere it is refused, see sandbox_walls_test.ts).
function makeFiles(dir: string, from: number, to: number): void {
  const script = "my ($from, $to) = @ARGV; mkdir 'node_modules'; for my $i ($from .. $to - 1) { " +
    "my $d = 'node_modules/d' . int($i / 50000); mkdir $d if $i % 50000 == 0; open(my $f, '>', \"$d/$i\") or die $! }";
  execFileSync("perl", ["-e", script, String(from), String(to)], { cwd: dir });
}

// The longest the event loop went without running a 20 ms timer while `work` ran, in milliseconds.
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 20);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 60));
  } finally {
    clearInterval(timer);
  }
  return longest;
}

describe("the change report's cost in a workspace of many files", { timeout: 300_000 }, () => {
  test("a command's start hashes at most BEFORE_HASH_FILES files of those it has no hash of", {
    timeout: 120_000,
  }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-scan-bounds-"));
    const count = BEFORE_HASH_FILES + 1000;
    fs.mkdirSync(path.join(dir, "f"));
    for (let i = 0; i < count; i++) fs.writeFileSync(path.join(dir, "f", String(i)), `file ${i}\n`);
    const session = new Session({ workspace: dir, host: autoHost() });
    try {
      const result = await box.call(session, "bash", { command: "for f in f/*; do echo more >> $f; done" });
      okOutput(result);
      const modified = result.filesystemChanges.filter((change) => change.change === "modified");
      assert.equal(modified.length, count);
      // Each hash known is a file the command's start opened and read on the server's thread.
      const hashed = modified.filter((change) => change.before?.sha256 != null).length;
      assert.ok(hashed <= BEFORE_HASH_FILES, `${hashed} files hashed at the command's start`);
      assert.ok(hashed > 0, "the files within the bound are still hashed");
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a command's report reads at most AFTER_HASH_BUDGET bytes of what it made, sparse files and links alike", {
    timeout: 120_000,
  }, async () => {
    // Bytes that cost the command nothing: 32 sparse files of 64 MiB and one of 1 GiB (no disk), and 256 names of one
    // 1 MiB file. Before, all 3.3 GiB were read and hashed on the server's thread after the command (5 s here;
    // thousands of such files, hours), outside every limit of the command, the 1 GiB in one stretch of the loop.
    const dir = await mkdtemp(path.join(os.tmpdir(), "toolfence-scan-bounds-"));
    const session = new Session({ workspace: dir, host: autoHost() });
    try {
      // What the server's own read and hash of a sparse 256 MiB file takes here: the report must hold the loop far
      // less, while the command's 1 GiB file alone would hold it four times as long.
      const probe = path.join(dir, "probe");
      fs.writeFileSync(probe, "");
      fs.truncateSync(probe, 256 << 20);
      const started = performance.now();
      fileEntryConfined(fs.realpathSync(probe));
      const reference = performance.now() - started;
      fs.rmSync(probe);
      const command = `perl -e 'for (0..31) { open(my $f, ">", "s$_") or die; truncate($f, 64 << 20) or die } ` +
        `open(my $b, ">", "big") or die; truncate($b, 1 << 30) or die; ` +
        `open(my $h, ">", "h") or die; print $h "x" x (1 << 20); close $h; link("h", "h$_") or die for 0..255'`;
      let result!: Awaited<ReturnType<typeof box.call>>;
      const stall = await longestStall(async () => result = await box.call(session, "bash", { command }));
      okOutput(result);
      const created = result.filesystemChanges.filter((change) => change.change === "created");
      assert.equal(created.length, 32 + 1 + 1 + 256);
      const hashed = created.filter((c) => c.after?.sha256 != null);
      const hashedBytes = hashed.reduce((sum, c) => sum + c.after!.size, 0);
      assert.ok(hashedBytes <= AFTER_HASH_BUDGET, `${hashedBytes} bytes hashed after the command`);
      assert.ok(hashedBytes > 0, "the files within the bound are still hashed");
      assert.ok(hashed.every((c) => c.after!.size <= AFTER_HASH_FILE_BYTES), "a file past the bound was hashed");
      // The others are reported whole, but for their content.
      const size = (name: string) => name === "big" ? 1 << 30 : name.startsWith("s") ? 64 << 20 : 1 << 20;
      assert.ok(created.every((c) => c.after?.type === "file" && c.after.size === size(c.path)));
      assert.ok(
        stall < reference / 2,
        `the loop held ${Math.round(stall)} ms; 256 MiB hashed ${Math.round(reference)}`,
      );
    } finally {
      await session.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // One tree of many files for the two tests below, grown as each needs (150,000 files, then past MAX_SCAN_ENTRIES):
  // making and removing it is most of their time, and under Node as under Deno this file was the suite's longest.
  let many: { dir: string; made: number } | undefined;
  async function manyFiles(count: number): Promise<string> {
    many ??= { dir: await mkdtemp(path.join(os.tmpdir(), "toolfence-scan-bounds-")), made: 0 };
    if (many.made < count) {
      makeFiles(many.dir, many.made, count);
      many.made = count;
    }
    return many.dir;
  }
  after(async () => {
    if (many !== undefined) await rm(many.dir, { recursive: true, force: true });
  });

  test(
    "the look after a command lets the event loop run: a whole one, and one that walks the folders named, a report of every file",
    {
      timeout: 240_000,
    },
    async () => {
      const count = 150_000;
      const dir = await manyFiles(count);
      const session = new Session({ workspace: dir, host: autoHost(), autoConfirm: true });
      try {
        // The session's first look (whole), the first index of its protected paths, and the hashes of 2,048 files
        // it has none of, at the command's start.
        const first = await longestStall(async () =>
          okOutput(await box.call(session, "bash", { command: "touch first" }))
        );
        // What one synchronous walk of it costs here, on this machine's load (measured again at the end: the load of
        // a shared machine changes, and the longer is taken).
        const timeWalk = () => {
          const started = performance.now();
          assert.equal(scanWorkspace(dir).entries.size, count + 5);
          return performance.now() - started;
        };
        const walkBefore = timeWalk();
        // More than 100,000 names made and removed: the watch drops them (an overflow, as the kernel's queue's) and the
        // look after the command walks the whole workspace, 150,000 entries, to find what changed (nothing).
        const whole = await longestStall(async () => {
          const result = await box.call(session, "bash", {
            command:
              `python3 -c "import os\nfor i in range(101000):\n  open(f't{i}', 'w').close(); os.unlink(f't{i}')"`,
          });
          okOutput(result);
          assert.deepEqual(result.filesystemChanges, []);
        });
        // The modes of two folders of 50,000 files changed: the look stats the names the watch reported and walks each
        // folder it names whole. Measured once the command runs (its start hashes BEFORE_HASH_FILES files, a bounded
        // stretch of its own).
        const renaming = box.call(session, "bash", { command: "sleep 1; chmod 700 node_modules/d0 node_modules/d1" });
        await new Promise((resolve) => setTimeout(resolve, 500));
        let changes = 0;
        const named = await longestStall(async () => {
          const result = await renaming;
          okOutput(result);
          changes = result.filesystemChanges.length;
        });
        assert.equal(changes, 2);
        // Every file touched: a report of 150,000 changes, sorted and recorded (the session's file history takes each).
        const touching = box.call(session, "bash", { command: "sleep 1; find node_modules -type f -exec touch {} +" });
        await new Promise((resolve) => setTimeout(resolve, 500));
        let touched = 0;
        const reported = await longestStall(async () => {
          const result = await touching;
          okOutput(result);
          touched = result.filesystemChanges.length;
        });
        assert.ok(touched > count / 2, `${touched} changes`);
        // Before, the loop was held for the walk and for applying what it found (together longer than a walk), and for
        // sorting the report's changes by comparePaths (which splits both paths at each comparison). Then, on a loaded
        // machine, up to 0.75 walks by a few stretches left whole: the sort of 150,000 changes at once, a folder's old
        // entries dropped, a first index of the protected paths, and the start's hashes.
        const walk = Math.max(walkBefore, timeWalk());
        const stalls = [first, whole, named, reported];
        assert.ok(
          stalls.every((stall) => stall < walk * 0.75),
          `the loop held ${stalls.map(Math.round).join(", ")} ms, a walk ${Math.round(walk)} ms`,
        );
      } finally {
        await session.close();
      }
    },
  );

  test("past MAX_SCAN_ENTRIES the workspace is not walked again at every command", { timeout: 240_000 }, async () => {
    // The tree of the test before, grown past the bound.
    const dir = await manyFiles(MAX_SCAN_ENTRIES + 1000);
    // What one walk of it costs here, on this machine's load.
    const started = performance.now();
    assert.equal(scanWorkspace(dir).incomplete, true);
    const walk = performance.now() - started;
    const session = new Session({ workspace: dir, host: autoHost() });
    try {
      // The first command finds it past the bound (one walk), and its result says the report compared nothing.
      const first = await box.call(session, "bash", { command: "touch first" });
      okOutput(first);
      assert.deepEqual(first.filesystemChanges, []);
      assert.deepEqual(first.metadata.filesystemChangesIncomplete, {
        reason: "too_many_entries",
        limit: MAX_SCAN_ENTRIES,
      });
      const stalls: number[] = [];
      for (const name of ["second", "third", "fourth"]) {
        stalls.push(
          await longestStall(async () => okOutput(await box.call(session, "bash", { command: `touch ${name}` }))),
        );
      }
      // Before, each held the loop for a walk at its start and another at its end.
      for (const stall of stalls) assert.ok(stall < walk / 2, `stalls ${stalls.map(Math.round)} ms, a walk ${walk} ms`);
    } finally {
      await session.close();
    }
  });
});
