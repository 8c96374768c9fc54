// Copy-on-write for the scratch copy: regular files are cloned by
// `cp --reflink` (FICLONE) in batches, from descriptors the parent opened
// without following links in their pinned folder and hands to the child: cp
// reads `/dev/fd/N`, which the kernel resolves to that very open file, so a
// link swapped in meanwhile cannot redirect the read. The child writes into a
// fresh staging folder of the copy, and only after checking that its working
// folder is exactly that folder (`pwd -P`, the kernel's own path); each clone
// is then moved to its name in a pinned step and given its mode exactly.
// Anything that does not go as planned falls back to the streaming copy.

import fs from "node:fs";
import { spawnSync } from "node:child_process";
import {
  chmodConfined,
  lstatConfined,
  mkdirConfined,
  moveConfined,
  openReadConfined,
  removeTreeConfinedSync,
  tempName,
} from "@toolfence/internal";
import { queryRuntimePermission } from "@toolfence/internal";

/** How regular files are copied: `auto` clones where the file system can, `cp` always goes through `cp --reflink=auto`. */
export type CopyMethod = "auto" | "cp" | "stream";

/** The state of cloning during one copy. */
export interface CloneState {
  method: CopyMethod;
  /** Whether cloning still may be tried (false after a failure in `auto`). */
  usable: boolean;
  /** Files cloned (or copied by cp) so far. */
  cloned: number;
  /** The copy's root, for confined moves. */
  root: string;
}

/** Files per `cp` run (and descriptors open at once). */
export const CLONE_BATCH = 200;
const SCRIPT = '[ "$(pwd -P)" = "$1" ] || exit 97; shift; mode="$1"; shift; exec cp "--reflink=$mode" -L -t . -- "$@"';

/** A clone state for a copy into `root`, or undefined when cloning cannot be used here. */
export function cloneState(method: CopyMethod, root: string): CloneState | undefined {
  if (method === "stream") return undefined;
  if (!queryRuntimePermission("run", "sh").allowed) return undefined;
  // Deno's node:child_process reads the whole environment for every spawn (and Deno.Command cannot hand descriptors on).
  if (typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" && !queryRuntimePermission("env").allowed) {
    return undefined;
  }
  return { method, usable: true, cloned: 0, root };
}

/** One file to clone: its source, the descriptor opened on it, and where it goes. */
export interface CloneJob {
  fd: number;
  stat: fs.Stats;
  to: string;
}

/**
 * Clones `jobs` (all into the folder `dir`, which is the copy's and exists);
 * returns the jobs that were not cloned, for the streaming copy. The
 * descriptors stay open (the caller closes them).
 */
export function cloneInto(dir: string, jobs: readonly CloneJob[], state: CloneState): CloneJob[] {
  if (!state.usable || jobs.length === 0) return [...jobs];
  const left: CloneJob[] = [];
  for (let start = 0; start < jobs.length; start += CLONE_BATCH) {
    const batch = jobs.slice(start, start + CLONE_BATCH);
    if (!state.usable) {
      left.push(...batch);
      continue;
    }
    left.push(...cloneBatch(dir, batch, state));
  }
  return left;
}

function cloneBatch(dir: string, batch: readonly CloneJob[], state: CloneState): CloneJob[] {
  const stage = dir + "/" + tempName();
  mkdirConfined(stage, 0o700);
  try {
    const mode = state.method === "cp" ? "auto" : "always";
    const fdArgs = batch.map((_, i) => `/dev/fd/${i + 3}`);
    let ok: boolean;
    try {
      const run = spawnSync("sh", ["-c", SCRIPT, "sh", stage, mode, ...fdArgs], {
        cwd: stage,
        env: { PATH: "/usr/bin:/bin:/usr/local/bin", LC_ALL: "C" },
        stdio: ["ignore", "ignore", "pipe", ...batch.map((job) => job.fd)],
        timeout: 120_000,
      });
      ok = run.error === undefined && run.status === 0;
    } catch {
      // The runtime refused the spawn: no cloning in this process.
      state.usable = false;
      return [...batch];
    }
    if (!ok) {
      // No clones on this file system (or no cp): stream from now on.
      if (state.method === "auto") state.usable = false;
      return [...batch];
    }
    const left: CloneJob[] = [];
    for (const [i, job] of batch.entries()) {
      const made = stage + "/" + String(i + 3);
      const stat = lstatConfined(made);
      if (!stat?.isFile() || stat.size !== job.stat.size) {
        left.push(job);
        continue;
      }
      moveConfined(made, job.to, [state.root]);
      chmodConfined(job.to, job.stat.mode & 0o7777);
      state.cloned++;
    }
    return left;
  } finally {
    removeTreeConfinedSync(stage);
  }
}

/** Opens `real` for a clone: without following a link, and only if it is still the file `stat` described. */
export function openForClone(real: string, stat: fs.Stats): number | undefined {
  let fd: number;
  try {
    fd = openReadConfined(real);
  } catch {
    return undefined;
  }
  const opened = fs.fstatSync(fd);
  if (!opened.isFile() || opened.ino !== stat.ino || opened.dev !== stat.dev) {
    fs.closeSync(fd);
    return undefined;
  }
  return fd;
}
