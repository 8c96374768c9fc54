// filesystemChanges of `bash` and the background jobs in the sandbox, from
// the before/after comparison of the workspace (internal/workspace_changes.ts),
// compared with the disk read independently with node:fs; the full-scan
// fallback gives the same answer; seeded random scripts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import * as v from "valibot";
import { Session } from "../../../policy/session.ts";
import { PolicyRules } from "../../../policy/mod.ts";
import { callbackHost } from "../../../policy/hosts.ts";
import { bubblewrapStatus } from "../../../policy/sandbox.ts";
import { ToolBox } from "../../../toolbox.ts";
import { tool } from "../../../core/tool.ts";
import type { ToolResult } from "../../../core/result.ts";
import { cmdTools } from "../../../tools/cmd/mod.ts";
import { fsTools } from "../../../tools/fs/mod.ts";
import { scanWorkspace, watchWorkspace } from "../../../internal/workspace_changes.ts";
import { assertChangesMatch, diskState } from "../_file_changes.ts";
import { randomScripts, type ScriptOp } from "./_helpers.ts";

const hasBwrap = (await bubblewrapStatus()).path !== undefined;
const sandbox = hasBwrap ? "required" : "off";
if (!hasBwrap) console.log("bubblewrap is unavailable: the workspace comparison is tested with the sandbox off");

// A person who allows every command and write once.
const host = callbackHost({
  choose: (request) => (request.options.find((o) => o.value === "once")?.value ?? request.defaultChoice) as never,
  confirm: () => true,
});

/** A tool that runs `script` (with plain bash, outside the sandbox) between the two snapshots of a watch. */
const between = () =>
  tool({
    name: "between",
    description: "test",
    input: v.object({ script: v.string() }),
    async run({ script }, ctx) {
      const watch = await watchWorkspace(ctx);
      execFileSync("bash", ["-c", script], { cwd: ctx.workspace.workdir });
      return (await watch.finish(ctx)).length;
    },
  });

/**
 * A tool that, with node:fs in this process (so within one tick of the file clock, mostly), runs `setUp` before the
 * watch starts and `effect` between its two snapshots, and tells whether `file` kept its stat key through both.
 */
const tight = (setUp: (dir: string) => void, effect: (dir: string) => void, file: string) =>
  tool({
    name: "tight",
    description: "test",
    input: v.object({}),
    async run(_args, ctx) {
      const dir = ctx.workspace.workdir;
      setUp(dir);
      const wasKey = scanWorkspace(dir).entries.get(file)?.key;
      const watch = await watchWorkspace(ctx);
      effect(dir);
      const changes = await watch.finish(ctx);
      return { changes, keptKey: wasKey !== undefined && scanWorkspace(dir).entries.get(file)?.key === wasKey };
    },
  });

const box = new ToolBox().register(...cmdTools(), ...fsTools(), between());
let root: string;
let workdir: string;
let session: Session;

before(async () => {
  root = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-bash-changes-")));
  workdir = path.join(root, "W");
  await fsp.mkdir(path.join(workdir, "src", "deep"), { recursive: true });
  await fsp.writeFile(path.join(workdir, "src", "a.txt"), "a\n");
  await fsp.writeFile(path.join(workdir, "src", "deep", "b.txt"), "b\n");
  await fsp.writeFile(path.join(workdir, "keep.txt"), "keep\n");
  session = new Session({ workspace: workdir, host, sandbox });
});

after(async () => {
  await session.close();
  await fsp.rm(root, { recursive: true, force: true });
});

async function checked(name: string, args: Record<string, unknown>, status = "success"): Promise<ToolResult> {
  const disk = diskState(workdir);
  const result = await box.call(session, name, args);
  // The output too: a command's stderr says why it failed (one such failure in CI said only "exited with code 1").
  assert.equal(
    result.status,
    status,
    `${name} ${JSON.stringify(args)}: ${result.error} ${JSON.stringify(result.output)}`,
  );
  assertChangesMatch(result.filesystemChanges, disk, diskState(workdir), { unknownBefore: true });
  return result;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function kinds(result: ToolResult): string[] {
  return result.filesystemChanges.map((c) => `${c.change} ${c.path}${c.from ? ` <- ${c.from}` : ""}`).sort();
}

// Made, appended to, removed, moved, its mode changed, a link made in its place.
const BASIC_OPS: readonly ScriptOp[] = [
  (x, _y, tag) => `mkdir -p $(dirname ${x}) && echo ${tag} > ${x}`,
  (x) => `echo more >> ${x}`,
  (x) => `rm -rf ${x}`,
  (x, y) => `mkdir -p $(dirname ${y}) && mv ${x} ${y}`,
  (x, _y, _tag, next) => `chmod ${["600", "755", "640"][next(3)]} ${x}`,
  (x, y) => `ln -sfn ${y} ${x}`,
];

describe(`bash reports what it changed (sandbox ${sandbox})`, { concurrency: false }, () => {
  test("a command that changes nothing reports nothing", { timeout: 60_000 }, async () => {
    assert.deepEqual((await checked("bash", { command: "ls -la src" })).filesystemChanges, []);
  });

  test("created, modified, deleted, moved, mode and links; before-hashes known", { timeout: 60_000 }, async () => {
    const result = await checked("bash", {
      command: "echo new > new.txt && echo more >> keep.txt && mv src/a.txt src/moved.txt && rm src/deep/b.txt && " +
        "chmod 700 new.txt && ln -s keep.txt link && mkdir -p out/x && echo o > out/x/o.txt && rmdir src/deep",
    });
    assert.deepEqual(kinds(result), [
      "created link",
      "created new.txt",
      "created out",
      "created out/x",
      "created out/x/o.txt",
      "deleted src/deep",
      "deleted src/deep/b.txt",
      "modified keep.txt",
      "moved src/moved.txt <- src/a.txt",
    ]);
    for (const change of result.filesystemChanges) {
      if (change.before?.type === "file") assert.notEqual(change.before.sha256, null, `${change.path}: before known`);
    }
  });

  test("a file deleted and another of its size made in its freed inode are not reported as a move", {
    timeout: 60_000,
  }, async () => {
    // Linux reuses a freed inode number at once, and two files made within one tick of its file clock share their
    // times: only their contents tell them apart (the case a CI run met: `rm src/deep/b.txt` then `echo o > ...`).
    for (let round = 0; round < 12; round++) {
      await fsp.writeFile(path.join(workdir, "r.txt"), "b\n");
      const result = await checked("bash", { command: "rm r.txt && echo o > s.txt && mv s.txt t.txt" });
      assert.deepEqual(kinds(result), ["created t.txt", "deleted r.txt"], `round ${round}`);
      await fsp.rm(path.join(workdir, "t.txt"));
    }
  });

  test("a file rewritten in place within one tick of its last write, its stat key kept, is reported modified", {
    timeout: 60_000,
  }, async () => {
    // Its size, inode and times (to the millisecond) can all stay: only its bytes, hashed before, tell.
    const file = path.join(workdir, "tick.txt");
    let keptKey = 0;
    // 40 rounds, and on until one kept its key (a loaded machine may let the millisecond pass between the writes).
    const deadline = Date.now() + 20_000;
    for (let round = 0; round < 40 || (keptKey === 0 && "Deno" in globalThis && Date.now() < deadline); round++) {
      const box = new ToolBox().register(tight(
        () => fs.writeFileSync(file, `a${round % 10}\n`),
        () => fs.writeFileSync(file, `b${round % 10}\n`),
        "tick.txt",
      ));
      const result = await box.call(session, "tight", {});
      const value = result.output as { keptKey: boolean };
      if (value.keptKey) keptKey++;
      assert.deepEqual(
        result.filesystemChanges.map((c) => [c.change, c.path, c.before?.sha256, c.after?.sha256]),
        [["modified", "tick.txt", sha256(`a${round % 10}\n`), sha256(`b${round % 10}\n`)]],
        `round ${round}`,
      );
    }
    await fsp.rm(file);
    // What the rounds try happened: the rewrite kept the file's stat key, where the runtime's stat gives whole
    // milliseconds (Deno; Node's nanoseconds tell the two writes apart on a kernel with fine-grained timestamps).
    if ("Deno" in globalThis) assert.ok(keptKey > 0, "no rewrite kept its stat key in 20 s of rounds");
  });

  test("a hash learnt of a file is not taken for the next file made in its freed inode within the tick", {
    timeout: 60_000,
  }, async () => {
    // Each round deletes r.txt and makes s.txt (the after snapshot hashes it), and the next makes r.txt again at
    // once, often in s.txt's inode and with its times: the before-hash of r.txt must be its own.
    const box = new ToolBox().register(tight(
      (dir) => {
        fs.rmSync(path.join(dir, "s.txt"), { force: true });
        fs.writeFileSync(path.join(dir, "r.txt"), "b\n");
      },
      (dir) => {
        fs.unlinkSync(path.join(dir, "r.txt"));
        fs.writeFileSync(path.join(dir, "s.txt"), "o\n");
      },
      "r.txt",
    ));
    for (let round = 0; round < 40; round++) {
      const result = await box.call(session, "tight", {});
      assert.deepEqual(
        result.filesystemChanges.map((c) => [c.change, c.path, c.before?.sha256 ?? null]),
        [["created", "s.txt", null], ["deleted", "r.txt", sha256("b\n")]],
        `round ${round}`,
      );
    }
    await fsp.rm(path.join(workdir, "s.txt"));
  });

  test("a file moved and then linked under a second name is one move and one new name", {
    timeout: 60_000,
  }, async () => {
    await fsp.writeFile(path.join(workdir, "h.txt"), "h\n");
    const result = await checked("bash", { command: "mv h.txt h2.txt && ln h2.txt h3.txt" });
    const moved = result.filesystemChanges.filter((c) => c.change === "moved");
    assert.equal(moved.length, 1, kinds(result).join(", "));
    assert.equal(moved[0].from, "h.txt");
    assert.equal(kinds(result).filter((k) => /^created h[23]\.txt$/.test(k)).length, 1, kinds(result).join(", "));
    await fsp.rm(path.join(workdir, "h2.txt"));
    await fsp.rm(path.join(workdir, "h3.txt"));
  });

  test("a folder made and moved within one command, with what is in it", { timeout: 60_000 }, async () => {
    const result = await checked("bash", { command: "mkdir -p t/u && echo 1 > t/u/f && mv t tt && rm -r out" });
    assert.ok(kinds(result).includes("created tt/u/f"), kinds(result).join(", "));
  });

  test("a change by another tool between two commands belongs to neither", { timeout: 60_000 }, async () => {
    await checked("write_file", { path: "keep.txt", content: "by the tool\n" });
    const result = await checked("bash", { command: "echo again >> keep.txt" });
    assert.deepEqual(kinds(result), ["modified keep.txt"]);
    assert.equal(result.filesystemChanges[0].before?.size, "by the tool\n".length);
  });

  test("a failing command and a timed-out one still report what they did", { timeout: 60_000 }, async () => {
    const failed = await box.call(session, "bash", { command: "echo x > failed.txt; exit 3" });
    assert.ok(failed.filesystemChanges.some((c) => c.path === "failed.txt" && c.change === "created"));
    const slow = await box.call(session, "bash", { command: "echo y > slow.txt; sleep 30", timeout_s: 1 });
    assert.ok(
      slow.filesystemChanges.some((c) => c.path === "slow.txt" && c.change === "created"),
      JSON.stringify(slow),
    );
  });

  test("a background job's changes come with the first report after its end", { timeout: 60_000 }, async () => {
    const started = await box.call(session, "bash_background", { command: "sleep 0.3; echo job > job.txt" });
    assert.equal(started.status, "success", started.error);
    assert.deepEqual(started.filesystemChanges, []);
    const disk = diskState(workdir);
    const waited = await box.call(session, "bash_wait", { id: (started.output as { id: string }).id });
    assert.deepEqual(kinds(waited), ["created job.txt"]);
    assertChangesMatch(waited.filesystemChanges, disk, diskState(workdir), { unknownBefore: true });
    const again = await box.call(session, "bash_read", { id: (started.output as { id: string }).id });
    assert.deepEqual(again.filesystemChanges, [], "reported once");
  });
});

describe("what the path rules hide is never named in a report", () => {
  test(
    "whoever changed it: deleted, modified, made or moved there; a visible file moved from a hidden name is created",
    {
      timeout: 60_000,
    },
    async () => {
      // Before, `.env` deleted (by a command a person let run without the sandbox, or by another process meanwhile) or
      // renamed to a visible name was reported as deleted, with its size.
      const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-hidden-changes-")));
      const rules = PolicyRules.fromLayers([{
        name: "project",
        config: { paths: { deny: ["**/.env", "secrets/**"] } },
      }], dir);
      const hiding = new Session({ workspace: dir, host, sandbox: "off", rules });
      try {
        await fsp.mkdir(path.join(dir, "sub"));
        for (
          const [name, text] of [[".env", "A=1\n"], ["sub/.env", "B=2\n"], ["c/.env", "C=3\n"], ["old.txt", "old\n"]]
        ) {
          await fsp.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
          await fsp.writeFile(path.join(dir, name), text);
        }
        const result = await box.call(hiding, "between", {
          script:
            "rm sub/.env && echo more >> c/.env && mv .env visible.txt && mkdir secrets && echo k > secrets/key && " +
            "mv old.txt secrets/old && echo n > new/.env 2>/dev/null; mkdir new && echo n > new/.env && echo s > seen.txt",
        });
        assert.equal(result.status, "success", result.error);
        assert.deepEqual(kinds(result), ["created new", "created seen.txt", "created visible.txt", "deleted old.txt"]);
      } finally {
        await hiding.close();
        await fsp.rm(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("what a watcher would miss is seen", { concurrency: false }, () => {
  const scripts = [
    // a symlink to itself renamed over a file (a folder watcher loses both events)
    'echo 1 > victim && ln -s victim loop && python3 -c \'import os; os.rename("loop", "victim")\'',
    // a folder moved, then written into under its new name
    "mkdir -p m/n && echo 2 > m/n/f && mv m mm && echo 3 > mm/n/g",
    // a write through a hard link made outside the workspace's folders (in the temp dir)
    `ln mm/n/f "$TMPDIR/hard" 2>/dev/null || ln mm/n/f "$(mktemp -u)"; echo changed > mm/n/f`,
    // a same-size write through a shared memory mapping (no write(2), no inotify event) of a file made earlier
    "printf aaaa > mapped",
    'python3 -c \'import mmap; f = open("mapped", "r+b"); m = mmap.mmap(f.fileno(), 0); m[0:4] = b"bbbb"; m.close()\'',
    "rm -rf victim mm mapped",
  ];
  for (const script of scripts) {
    test(script, { timeout: 60_000 }, async () => {
      const disk = diskState(workdir);
      const result = await box.call(session, "between", { script });
      assert.equal(result.status, "success", result.error);
      assertChangesMatch(result.filesystemChanges, disk, diskState(workdir), { unknownBefore: true });
      assert.ok(result.filesystemChanges.length > 0, script);
    });
  }
});

describe(`what a watcher would miss is seen when the command runs in the sandbox${hasBwrap ? "" : " (sandbox off)"}`, {
  concurrency: false,
}, () => {
  // Under bubblewrap the comparison looks only at the names the watch of the workspace's folders reported (and at
  // the files with more than one name): each of these is a way a change could go unreported.
  const scripts = [
    // a symlink to itself made and renamed over a file (Deno.watchFs drops both events: the path does not resolve)
    'echo 1 > victim && ln -s loop loop && python3 -c \'import os; os.rename("loop", "victim")\'',
    // a folder made, filled before its watch can be added, moved, and written into under its new name
    "mkdir -p m/n/o && echo 2 > m/n/o/f && mv m mm && echo 3 > mm/n/g && mv mm/n mm/p && echo 4 > mm/p/o/h",
    // written into, in a later command, under the moved name
    "echo 5 >> mm/p/o/f && touch -d 2001-01-01 mm/p/g",
    // a folder renamed away and back, written into under each name (a seeded run met a link made in it unreported)
    "mv mm zz && echo 8 > zz/p/y && mv zz mm && ln -s mm/p/o mm/p/o/self && echo 9 > mm/p/o/z",
    // a same-size write through a shared memory mapping, the descriptor closed before the write
    "printf aaaa > mapped",
    'python3 -c \'import mmap, os; fd = os.open("mapped", os.O_RDWR); m = mmap.mmap(fd, 0); os.close(fd); m[0:4] = b"bbbb"\'',
    // a hard link made inside the workspace, and a write through the other name
    "ln mapped twin && printf cccc > mapped.new && cat mapped.new > twin && rm mapped.new",
    // in a later command, a write through one name only: the other is stat'ed as a file with two names
    "echo 7 >> twin",
    // a folder replaced by a link to a folder outside, then by a folder again
    "rm -rf mm && ln -s /usr mm && rm mm && mkdir mm && echo 6 > mm/x",
    // truncation by path and a mode change
    "truncate -s 1 twin && chmod 600 mapped",
    "rm -rf victim mm mapped twin",
  ];
  for (const script of scripts) {
    test(script, { timeout: 60_000 }, async () => {
      const result = await checked("bash", { command: script });
      assert.ok(result.filesystemChanges.length > 0, script);
    });
  }

  test("a write through a second name made outside the sandbox, in the temp dir, after the first look", {
    timeout: 60_000,
  }, async () => {
    await fsp.writeFile(path.join(workdir, "linked.txt"), "one\n");
    await checked("bash", { command: "true > /dev/null; touch stamp" });
    const other = path.join(await session.workspace.tempDir(), `hard-${Date.now()}`);
    fs.linkSync(path.join(workdir, "linked.txt"), other);
    try {
      const result = await checked("bash", { command: `echo two >> '${other}'` });
      assert.deepEqual(kinds(result), ["modified linked.txt"]);
    } finally {
      fs.rmSync(other, { force: true });
      fs.rmSync(path.join(workdir, "linked.txt"), { force: true });
      fs.rmSync(path.join(workdir, "stamp"), { force: true });
    }
  });

  test("racing: folders swapped for links to a folder outside while they are being watched", {
    timeout: 120_000,
  }, async () => {
    // The watch opens each new folder one name at a time, never through a link, and watches the folder it opened:
    // a folder swapped for a link to /usr between its listing and its watch must not leave the workspace's folder
    // of that name unwatched (a later write in it unreported) nor bring /usr's names in.
    for (let round = 0; round < 5; round++) {
      await checked("bash", {
        command: "for i in $(seq 1 60); do mkdir -p race/a/b/c && mv race/a race/x && ln -s /usr race/a && " +
          "rm race/a && mv race/x race/a; done",
      });
      const result = await checked("bash", { command: `echo ${round} > race/a/b/c/f${round}` });
      assert.deepEqual(kinds(result), [`created race/a/b/c/f${round}`]);
    }
    await checked("bash", { command: "rm -rf race" });
  });

  test("racing: folders made and renamed at once, then written deep inside by the next command", {
    timeout: 120_000,
  }, async () => {
    // The watch adds a folder's watch when it reads the folder's event, by then perhaps already renamed: a folder
    // renamed within the workspace keeps its watches and is walked again under its new name, so the next command's
    // writes deep inside raise their events (before, 2 of 80 such rounds went unreported here).
    for (let round = 0; round < 40; round++) {
      await checked("bash", {
        command: `mkdir -p m${round}/n/o/q && echo 2 > m${round}/n/o/f && mv m${round} mm${round} && ` +
          `mv mm${round}/n mm${round}/p && mv mm${round} r${round}`,
      });
      const result = await checked("bash", { command: `echo 5 >> r${round}/p/o/f && echo 6 > r${round}/p/o/q/g` });
      assert.deepEqual(kinds(result), [`created r${round}/p/o/q/g`, `modified r${round}/p/o/f`], `round ${round}`);
    }
    await checked("bash", { command: "rm -rf r[0-9]*" });
  });

  test("a burst of events past the kernel's queue still gives the exact report", { timeout: 120_000 }, async () => {
    // 20,000 files made and 10,000 removed in one command: whether the watch kept up or its queue overflowed
    // (then the whole workspace is scanned), the report is the disk's difference.
    const result = await checked("bash", {
      command: "mkdir -p burst && cd burst && seq 1 20000 | xargs touch && seq 1 2 20000 | xargs rm",
    });
    assert.equal(result.filesystemChanges.filter((c) => c.change === "created").length, 10_001);
    await checked("bash", { command: "rm -rf burst" });
  });
});

describe(
  "generative: seeded random scripts with links, moves and mappings in the sandbox",
  { concurrency: false },
  () => {
    test("40 scripts of up to 10 random operations each; every report matches the disk", {
      timeout: 180_000,
    }, async () => {
      const ops: ScriptOp[] = [
        ...BASIC_OPS,
        (x, y) => `mv -T ${x} ${y}`,
        (x) => `mkdir -p ${x}/k && echo k > ${x}/k/l`,
        (x, y) => `ln ${x} ${y}`,
        (x) => `ln -s ${x} ${x}`,
        (x) =>
          `python3 -c 'import mmap,os; fd=os.open("${x}",os.O_RDWR); m=mmap.mmap(fd,0); os.close(fd); m[0:1]=b"Z"'`,
        (x, _y, _tag, next) => `truncate -s ${next(4)} ${x}`,
        (x, _y, _tag, next) => `touch -d @${1_000_000 + next(1000)} ${x}`,
        (x, y) => `cp -r ${x} ${y}`,
        (x) => `printf q > ${x}.tmp && mv ${x}.tmp ${x}`,
        (x) => `rmdir ${x}`,
        (x) => `(cd $(dirname ${x}) && mv $(basename ${x}) zz && echo w > zz/w && mv zz $(basename ${x}))`,
        (x, y) => `python3 -c 'import os; os.rename("${x}", "${y}")'`,
      ];
      const names = ["g/a", "g/b", "g/c/d", "g/c", "h", "g/c/e/f", "g"];
      for (const command of randomScripts(0x5eed, names, 40, (next) => 1 + next(10), ops)) {
        await checked("bash", { command });
      }
      // A folder left mode 600 by a chmod cannot be entered by rm until it is given its search bit back.
      await checked("bash", { command: "chmod -R u+rwx g h 2>/dev/null; rm -rf g h" });
    });
  },
);

describe("generative: seeded random scripts through bash", { concurrency: false }, () => {
  test("15 scripts of 6 random operations each; every report matches the disk", { timeout: 60_000 }, async () => {
    const ops = [...BASIC_OPS, (x: string) => `mkdir -p ${x}`];
    for (const command of randomScripts(0xbee5, ["r/a", "r/b", "r/c/d", "r/e", "q"], 15, () => 6, ops)) {
      await checked("bash", { command });
    }
  });
});
