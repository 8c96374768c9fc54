// The protected paths' mounts open each path confined, so that a folder of its path swapped for a link since the
// walk or the session's listing saw it is never followed. Before, the mount opened the absolute path (no link
// followed at its last name only): with `sub` swapped for a link to the home folder after the listing named
// `sub/.npmrc`, the mount held the home folder's `.npmrc`, which bubblewrap then bound read-only where the link leads
// inside the sandbox (the private home), for the command to read.
//
// The moment the race aims at is held still: the listing is the session's view from just before a command of the
// session swapped the folder (what `watchWorkspace`'s window gives the plan), the disk is already swapped.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { closeMounts, type EntryKind, protectedMounts, type WorkspaceListing } from "../../internal/sandbox_mounts.ts";
import { DEFAULT_PROTECTED_PATHS } from "../../policy/protected_paths.ts";
import { bubblewrapStatus, sandboxArgv } from "../../policy/sandbox.ts";
import { runSandboxed } from "../policy/_sandbox_run.ts";

const skip = (await bubblewrapStatus()).path === undefined ? "bubblewrap is unavailable here" : false;
const SECRET = "//registry.npmjs.org/:_authToken=npm_OUTSIDE_SECRET";

// The session's view of the workspace before the swap: `entries` by relative path.
function listingOf(entries: Record<string, EntryKind>): WorkspaceListing {
  const all = new Map(Object.entries(entries));
  return {
    matching: (matches) => Promise.resolve(new Map([...all].filter(([rel]) => matches(rel)))),
    kindOf: (rel) => all.get(rel),
    created: () => Promise.resolve([]),
    movedAway: () => Promise.resolve(),
    ignore: () => {},
  };
}

// What the listing holds of `sub` in every case: a checkout with an .npmrc.
const SUB_ENTRIES: Record<string, EntryKind> = {
  "sub": "dir",
  "sub/.npmrc": "file",
  "sub/.git": "dir",
  "sub/.git/config": "file",
  "sub/.git/hooks": "dir",
};

describe("protected mounts of paths whose folder was swapped for a link", () => {
  let base: string;
  let ws: string;
  let outside: string;
  before(async () => {
    base = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "toolfence-protected-swap-")));
    ws = path.join(base, "ws");
    outside = path.join(base, "home");
    await fsp.mkdir(path.join(outside, ".git/hooks"), { recursive: true });
    await fsp.writeFile(path.join(outside, ".npmrc"), SECRET);
    await fsp.writeFile(path.join(outside, ".git/config"), SECRET);
    await fsp.mkdir(ws);
    await fsp.symlink(outside, path.join(ws, "sub"));
  });
  after(() => fsp.rm(base, { recursive: true, force: true }));

  test("no mount holds what the link leads to", { timeout: 30_000 }, async () => {
    const listing = listingOf(SUB_ENTRIES);
    const plan = await protectedMounts(ws, DEFAULT_PROTECTED_PATHS, { placeholders: true, listing });
    try {
      const outsideInodes = new Set(
        [".npmrc", ".git", ".git/config", ".git/hooks"].map((rel) => fs.statSync(path.join(outside, rel)).ino),
      );
      const held = plan.mounts.filter((mount) =>
        mount.fd !== undefined && outsideInodes.has(fs.fstatSync(mount.fd).ino)
      );
      assert.deepEqual(held.map((mount) => mount.path), []);
      // Nothing was made through the link either (a placeholder would land outside).
      assert.deepEqual(fs.readdirSync(outside).sort(), [".git", ".npmrc"]);
      assert.deepEqual(fs.readdirSync(path.join(outside, ".git")).sort(), ["config", "hooks"]);
    } finally {
      await closeMounts(plan.mounts);
    }
  });

  // End to end: the link leads to the home folder, which the sandbox shows as an empty private folder, where
  // bubblewrap can make the mount point. Before, `cat sub/.npmrc` printed the home folder's token.
  test("a command in the sandbox made from that listing reads none of it", { timeout: 60_000, skip }, async () => {
    await fsp.mkdir("/var/tmp", { recursive: true });
    const home = await fsp.realpath(await fsp.mkdtemp("/var/tmp/toolfence-protected-home-"));
    const saved = process.env.HOME;
    try {
      await fsp.writeFile(path.join(home, ".npmrc"), SECRET);
      const held = path.join(base, "held");
      await fsp.mkdir(held);
      // Relative, climbing to / from the host's side and to the sandbox's root from bubblewrap's (which makes its
      // mount points under the new root), so that both lead to the home folder.
      await fsp.symlink("../".repeat(held.split("/").length - 1) + home.slice(1), path.join(held, "sub"));
      process.env.HOME = home;
      const wrapped = await sandboxArgv(["sh", "-c", "cat sub/.npmrc 2>&1; true"], {
        workdir: held,
        writable: [held],
        workspace: held,
        mode: "required",
        listing: listingOf({ "sub": "dir", "sub/.npmrc": "file" }),
      });
      try {
        const ran = await runSandboxed(wrapped);
        assert.doesNotMatch(ran.stdout + ran.stderr, /OUTSIDE_SECRET/, ran.stdout + ran.stderr);
        assert.equal(ran.code, 0, ran.stderr);
      } finally {
        await wrapped.release();
      }
    } finally {
      if (saved === undefined) delete process.env.HOME;
      else process.env.HOME = saved;
      await fsp.rm(home, { recursive: true, force: true });
    }
  });

  test("the same paths in a real folder are mounted", { timeout: 30_000 }, async () => {
    const real = path.join(base, "real");
    await fsp.mkdir(path.join(real, "sub/.git/hooks"), { recursive: true });
    await fsp.writeFile(path.join(real, "sub/.npmrc"), "mine");
    await fsp.writeFile(path.join(real, "sub/.git/config"), "[core]\n");
    const listing = listingOf(SUB_ENTRIES);
    const plan = await protectedMounts(real, DEFAULT_PROTECTED_PATHS, { placeholders: false, listing });
    try {
      const opened = plan.mounts.filter((mount) => mount.fd !== undefined).map((mount) =>
        path.relative(real, mount.path)
      );
      assert.deepEqual(opened.sort(), ["sub/.git", "sub/.git/config", "sub/.git/hooks", "sub/.npmrc"]);
    } finally {
      await closeMounts(plan.mounts);
    }
  });
});
