// The session's watch of a workspace's folders (a Perl program of the server's, one inotify watch per folder) holds at
// most its share of the user's watches, which the kernel counts across the machine: past it, or once a watch cannot be
// added, it ends at once and gives every watch back, and the next sync says why (the caller then scans). Before, it
// held one watch for each folder a command made until the next sync (a job that made folders and slept: as long as it
// ran), and past fs.inotify.max_user_watches every other program of the user failed inotify_add_watch with ENOSPC.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { FolderEvents } from "../../internal/_folder_events.ts";
import { eventually, installed, pidsWithArgs } from "../tools/cmd/_helpers.ts";

const skip = os.platform() !== "linux" || !["x64", "arm64"].includes(os.arch()) || !installed("perl")
  ? "the watch runs on Linux (x86-64, arm64) with perl"
  : false;

describe("the watch of a workspace's folders", { skip, timeout: 60_000 }, () => {
  test("past its most folders it ends at once, giving its watches back, and the sync says why", {
    timeout: 30_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "toolfence-folder-events-")));
    const events = await FolderEvents.start([dir], 50);
    try {
      assert.ok(events, "the watch did not start");
      for (let i = 0; i < 100; i++) mkdirSync(path.join(dir, `d${i}`));
      // Its exit, not the next sync, gives the watches back.
      assert.ok(await eventually(async () => (await pidsWithArgs(dir)).length === 0, 60_000), "the watch still runs");
      const synced = await events.sync();
      assert.equal(synced.kind, "broken", JSON.stringify(synced));
      assert.match((synced as { reason: string }).reason, /more than 50 folders to watch/);
    } finally {
      events?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the watches of the process hold at most a quarter of the user's together, and one past it scans", {
    timeout: 30_000,
  }, async () => {
    // Before: each watch had a quarter of the user's watches of its own, and four sessions with ~48,000 folders each
    // held every watch of root (192,543 here): every other program of the user failed inotify_add_watch with ENOSPC.
    const quarter = Math.floor(Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8")) / 4);
    const dirs = await Promise.all(
      Array.from({ length: 8 }, async () => await realpath(await mkdtemp(path.join(os.tmpdir(), "toolfence-fe-")))),
    );
    const started: (FolderEvents | undefined)[] = [];
    try {
      // Started at once: each counts what is free before the others have taken their parts.
      started.push(...await Promise.all(dirs.map((dir) => FolderEvents.start([dir]))));
      const running = started.filter((events) => events !== undefined);
      assert.ok(running.length >= 1 && running.length < dirs.length, `${running.length} watches started`);
      const total = running.reduce((sum, events) => sum + events.most, 0);
      assert.ok(total <= quarter, `the watches may hold ${running.map((e) => e.most).join(" + ")} of ${quarter}`);
      assert.ok(running.every((events) => events.most >= 1));
      // One that ends gives its part back: the next watch starts.
      running[0].close();
      const again = await FolderEvents.start([dirs[0]]);
      started.push(again);
      assert.ok(again && again.most >= 1, "no watch started after one ended");
    } finally {
      started.forEach((events) => events?.close());
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  test("under its default most (its part of a quarter of the user's watches) it reports the names made", {
    timeout: 30_000,
  }, async () => {
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), "toolfence-folder-events-")));
    const events = await FolderEvents.start([dir]);
    try {
      assert.ok(events, "the watch did not start");
      for (let i = 0; i < 20; i++) mkdirSync(path.join(dir, `d${i}`));
      const synced = await events.sync();
      assert.equal(synced.kind, "names", JSON.stringify(synced));
      assert.equal((synced as { names: string[][] }).names[0].length, 20);
    } finally {
      events?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
