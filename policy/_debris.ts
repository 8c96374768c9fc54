// Debris of interrupted writes: temp files and folders named by tempName()
// (`.toolfence-<pid>-<random>.tmp`) that a process killed mid-write left
// beside their targets, and session temp dirs (`toolfence-<pid>-XXXXXX`) of
// processes that died without removing them. A workspace sweeps them away
// when it is opened (and when it makes its temp dir), if the process that
// made them is gone.

import fs from "node:fs";
import process from "node:process";
import { discardConfinedSync, readdirConfined, tempNameOwner } from "@toolfence/internal";

/** Bounds of a sweep, so that opening a huge workspace stays quick. */
export interface SweepLimits {
  /** Folder entries looked at, at most. */
  entries: number;
  /** Milliseconds spent, at most. */
  millis: number;
}

/** What a sweep did. */
export interface SweepReport {
  /** Real paths of the debris removed. */
  removed: string[];
  /** Whether the whole tree was looked at (false when a limit stopped it). */
  complete: boolean;
}

// Whether process `pid` is gone; undefined when that cannot be told (Deno
// without --allow-run, for one). A pid that was reused since counts as alive.
function isGone(pid: number): boolean | undefined {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return true;
    if (code === "EPERM") return false;
  }
  try {
    fs.statSync(`/proc/${pid}`);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? true : undefined;
  }
}

/**
 * Removes the debris of dead processes under `root` (a real path), walking
 * folders confined and never following a link, within `limits`. Errors
 * (a folder it may not read, debris it may not remove) are skipped.
 */
export function sweepDebris(root: string, limits: SweepLimits = { entries: 50_000, millis: 500 }): SweepReport {
  const removed: string[] = [];
  const deadline = Date.now() + limits.millis;
  let seen = 0;
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = readdirConfined(dir);
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > limits.entries || Date.now() > deadline) return { removed, complete: false };
      const owner = tempNameOwner(entry.name);
      const full = `${dir}/${entry.name}`;
      if (owner !== undefined && isGone(owner) === true) {
        if (discardConfinedSync(full)) removed.push(full);
      } else if (entry.isDirectory()) pending.push(full);
    }
  }
  return { removed, complete: true };
}

const SESSION_TEMP_DIR = /^toolfence-(\d+)-[A-Za-z0-9]{6}$/;

/**
 * Removes the session temp dirs of dead processes in `tempParent` (the
 * folder they are made in); bounded like {@linkcode sweepDebris}, errors
 * skipped.
 */
export function sweepSessionTempDirs(
  tempParent: string,
  limits: SweepLimits = { entries: 10_000, millis: 200 },
): string[] {
  const removed: string[] = [];
  const deadline = Date.now() + limits.millis;
  let entries: fs.Dirent[];
  try {
    entries = readdirConfined(tempParent);
  } catch {
    return removed;
  }
  for (const [index, entry] of entries.entries()) {
    if (index >= limits.entries || Date.now() > deadline) break;
    const match = SESSION_TEMP_DIR.exec(entry.name);
    if (match === null || !entry.isDirectory() || isGone(Number(match[1])) !== true) continue;
    const full = `${tempParent}/${entry.name}`;
    if (discardConfinedSync(full)) removed.push(full);
  }
  return removed;
}
