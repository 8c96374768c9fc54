// Applying a scratch copy's changes to the host workspace: every change or
// none. Each file is replaced in one rename (a reader, or a kill, sees it old
// or new, never torn), creations never overwrite (link(2) and symlink(2) fail
// on an existing name), deletions rename the entry to a backup name in its own
// folder, and every step done is undone, in reverse, when a later one fails.

import fs from "node:fs";
import path from "node:path";
import { type FileChange, type FileState, ToolError } from "@toolfence/core";
import {
  chmodConfined,
  createConfined,
  inFolder,
  mkdirConfined,
  readdirConfined,
  readlinkConfined,
  removeTreeConfinedSync,
  rmdirConfined,
  syncFd,
  tempName,
  unlinkConfined,
  writeAll,
} from "@toolfence/internal";
import { lstatConfined, PastLimit, readRegular, sha256Text, stateAt } from "./_tree.ts";

/** One path whose host copy is not what the scratch was made from. */
export interface HostConflict {
  /** The path, relative to the workspace. */
  path: string;
  /** Its state when the scratch was made (null: absent). */
  expected: FileState | null;
  /** Its state now (null: absent; `special` for a FIFO, socket or device). */
  found: FileState | "special" | null;
}

interface Step {
  what: string;
  undo: () => void | Promise<void>;
  /** Runs once every step succeeded (removing backups). */
  done?: () => void;
}

function same(a: FileState | null, b: FileState | "special" | null): boolean {
  if (a === null || b === null) return a === b;
  if (b === "special") return false;
  return a.type === b.type && a.mode === b.mode && a.sha256 === b.sha256;
}

function shown(state: FileState | "special" | null): string {
  if (state === null) return "absent";
  if (state === "special") return "a special file";
  return state.sha256 === null ? `a ${state.type} (mode ${state.mode.toString(8)})` : `${state.type} ${state.sha256}`;
}

/** The `host_changed` error naming each changed path and its hashes. */
export function hostChanged(conflicts: readonly HostConflict[]): ToolError {
  const listed = conflicts.slice(0, 20).map((c) => `${c.path} (was ${shown(c.expected)}, now ${shown(c.found)})`);
  const more = conflicts.length > 20 ? ` and ${conflicts.length - 20} more` : "";
  return new ToolError(
    `Nothing was published: the workspace changed since the scratch copy was made: ${listed.join("; ")}${more}`,
    {
      code: "host_changed",
      recoveryHint:
        "Someone changed these files in the workspace meanwhile; ask the user how to reconcile them (nothing of theirs was overwritten).",
      details: {
        changed: conflicts.map((c) => ({
          path: c.path,
          expectedSha256: c.expected?.sha256 ?? null,
          foundSha256: c.found === "special" ? "special" : c.found?.sha256 ?? null,
          expected: c.expected,
          found: c.found,
        })),
      },
    },
  );
}

function linkIn(dir: string, from: string, to: string): void {
  inFolder(dir, (at) => fs.linkSync(at(from), at(to)));
}

function renameIn(dir: string, from: string, to: string): void {
  inFolder(dir, (at) => fs.renameSync(at(from), at(to)));
}

/** What {@linkcode applyChanges} works on. */
export interface ApplyContext {
  /** The host workspace's real root. */
  hostRoot: string;
  /** The scratch copy's real root. */
  scratchRoot: string;
  /** Each host path's state when the scratch was made (null: absent). */
  before: (relative: string) => FileState | null;
  /** Stops between steps (a step once begun is finished or undone). */
  signal?: AbortSignal;
  /** Called after each step, for tests of interruption and for progress. */
  onStep?: (what: string) => void;
}

/** The host paths a change touches: its path, and for a move where it came from. */
export function touchedPaths(change: FileChange): string[] {
  return change.change === "moved" && change.from !== undefined ? [change.from, change.path] : [change.path];
}

/** The paths among `changes` whose host state is not what the scratch was made from. */
export async function findConflicts(
  context: Pick<ApplyContext, "hostRoot" | "before">,
  changes: readonly FileChange[],
): Promise<HostConflict[]> {
  const conflicts: HostConflict[] = [];
  const seen = new Set<string>();
  for (const change of changes) {
    for (const relative of touchedPaths(change)) {
      if (seen.has(relative)) continue;
      seen.add(relative);
      const expected = context.before(relative);
      const found = await hostState(context, relative);
      if (!same(expected, found)) conflicts.push({ path: relative, expected, found });
    }
  }
  return conflicts;
}

/**
 * The state of `relative` in the workspace now. Its folders are looked at from
 * the top: below an entry that is not a folder (a link, a file) nothing can
 * exist, so the path is absent, and the entry above is judged on its own
 * path; a parent that cannot be looked at counts as changed (`special`).
 */
export async function hostState(
  context: Pick<ApplyContext, "hostRoot" | "before">,
  relative: string,
): Promise<FileState | "special" | null> {
  const parts = relative.split("/");
  for (let i = 1; i < parts.length; i++) {
    const ancestor = parts.slice(0, i).join("/");
    let stat;
    try {
      stat = lstatConfined(context.hostRoot + "/" + ancestor);
    } catch {
      return "special";
    }
    if (stat === undefined || !stat.isDirectory()) {
      // A folder of the copy's baseline that is no folder now: the path changed with it.
      return context.before(ancestor)?.type === "directory" ? "special" : null;
    }
  }
  try {
    return (await stateAt(context.hostRoot + "/" + relative)) ?? null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A folder swapped for a link meanwhile is a change too.
    if (code !== "ENOTDIR" && code !== "ELOOP" && !(error instanceof ToolError && error.code === "path_changed")) {
      throw error;
    }
    return "special";
  }
}

function depth(relative: string): number {
  return relative.split("/").length;
}

/**
 * Applies `changes` (from the scratch's own diff) to the host, all or none;
 * throws `host_changed` when a host path is no longer what the scratch was
 * made from (checked again right before each path is touched), and
 * `publish_failed` for any other failure, after undoing what was done.
 */
export async function applyChanges(context: ApplyContext, changes: readonly FileChange[]): Promise<void> {
  const removals: { relative: string; state: FileState }[] = [];
  const puts: { relative: string; state: FileState; replaces: FileState | null }[] = [];
  const chmods: { relative: string; from: FileState; to: FileState }[] = [];
  for (const change of changes) {
    if (change.change === "moved") {
      removals.push({ relative: change.from!, state: change.before! });
      puts.push({ relative: change.path, state: change.after!, replaces: null });
    } else if (change.change === "deleted") {
      removals.push({ relative: change.path, state: change.before! });
    } else if (change.change === "created") {
      puts.push({ relative: change.path, state: change.after!, replaces: null });
    } else if (change.before!.type === "directory" && change.after!.type === "directory") {
      chmods.push({ relative: change.path, from: change.before!, to: change.after! });
    } else {
      puts.push({ relative: change.path, state: change.after!, replaces: change.before });
    }
  }
  // The source of a move goes after its new place is made, so that a publication killed in between leaves the file
  // in both places rather than in neither; unless a folder that goes holds it, or something comes at its path.
  const under = (p: string, folder: string) => p === folder || p.startsWith(folder + "/");
  const goneFolders = removals.filter((r) => r.state.type === "directory").map((r) => r.relative);
  const late = new Set(
    changes.filter((c) => c.change === "moved" && c.from !== undefined).map((c) => c.from!).filter((from) =>
      !goneFolders.some((folder) => under(from, folder)) && !puts.some((put) => under(put.relative, from))
    ),
  );
  const steps: Step[] = [];
  const host = (relative: string) => context.hostRoot + "/" + relative;
  const record = (step: Step) => {
    steps.push(step);
    context.onStep?.(step.what);
  };
  // Right before a path is touched: it must still be what the scratch was made from.
  const expectNow = async (relative: string, expected: FileState | null) => {
    let found: FileState | "special" | null;
    try {
      found = await hostState(context, relative);
    } catch {
      found = "special";
    }
    if (!same(expected, found)) throw hostChanged([{ path: relative, expected, found }]);
  };
  try {
    // 1. Files and links that go (deletions, sources of moves), then folders that go, deepest first. Each is
    // renamed to a backup name in its own folder; a folder that goes holds only such backups by then, and goes
    // whole, under a backup name in its parent.
    const backups = new Map<string, Set<string>>();
    const keep = (dir: string, name: string) => {
      const set = backups.get(dir) ?? new Set<string>();
      set.add(name);
      backups.set(dir, set);
    };
    const removeEntry = async (relative: string, state: FileState) => {
      context.signal?.throwIfAborted();
      await expectNow(relative, state);
      const dir = path.posix.dirname(host(relative));
      const name = path.posix.basename(relative);
      const backup = tempName();
      renameIn(dir, name, backup);
      keep(dir, backup);
      record({
        what: `removed ${relative}`,
        undo: () => {
          linkIn(dir, backup, name);
          unlinkConfined(dir + "/" + backup);
        },
        done: () => unlinkConfined(dir + "/" + backup),
      });
    };
    for (const { relative, state } of removals.filter((r) => r.state.type !== "directory" && !late.has(r.relative))) {
      await removeEntry(relative, state);
    }
    const folders = removals.filter((r) => r.state.type === "directory").sort((a, b) =>
      depth(b.relative) - depth(a.relative)
    );
    for (const { relative, state } of folders) {
      context.signal?.throwIfAborted();
      await expectNow(relative, state);
      const real = host(relative);
      const ours = backups.get(real) ?? new Set<string>();
      const strangers = readdirConfined(real).map((e) => e.name).filter((n) => !ours.has(n));
      if (strangers.length > 0) {
        throw new ToolError(
          `Nothing was published: the folder ${relative} holds entries in the workspace that the scratch copy does not know (${
            strangers.slice(0, 5).join(", ")
          })`,
          {
            code: "host_changed",
            recoveryHint: "Someone added files there meanwhile; ask the user how to reconcile them.",
            details: {
              changed: [{ path: relative, expected: state, found: "a folder with other entries", strangers }],
            },
          },
        );
      }
      const dir = path.posix.dirname(real);
      const name = path.posix.basename(real);
      const backup = tempName();
      renameIn(dir, name, backup);
      keep(dir, backup);
      record({
        what: `removed folder ${relative}`,
        undo: () => renameNoReplace(dir, backup, name),
        done: () => removeTreeConfinedSync(dir + "/" + backup),
      });
    }
    // 2. Folders that come, shallowest first.
    const newFolders = puts.filter((p) => p.state.type === "directory").sort((a, b) =>
      depth(a.relative) - depth(b.relative)
    );
    for (const { relative, state } of newFolders) {
      context.signal?.throwIfAborted();
      await expectNow(relative, null);
      mkdirWithMode(host(relative), state.mode);
      record({ what: `made folder ${relative}`, undo: () => rmdirConfined(host(relative)) });
    }
    // 3. Files and links that come or change, each in one step.
    for (const put of puts.filter((p) => p.state.type !== "directory")) {
      context.signal?.throwIfAborted();
      await putEntry(context, put, expectNow, record);
    }
    // 4. The sources of moves, now that their new places exist.
    for (const { relative, state } of removals.filter((r) => late.has(r.relative))) await removeEntry(relative, state);
    // 5. Folders whose mode changed.
    for (const { relative, from, to } of chmods) {
      context.signal?.throwIfAborted();
      await expectNow(relative, from);
      chmodConfined(host(relative), to.mode);
      record({ what: `changed mode of ${relative}`, undo: () => chmodConfined(host(relative), from.mode) });
    }
  } catch (error) {
    const failures = await undo(steps);
    if (error instanceof ToolError && error.code === "host_changed" && failures.length === 0) throw error;
    const cause = error instanceof Error ? error.message : String(error);
    throw new ToolError(
      failures.length === 0
        ? `Nothing was published: ${cause}; every change already made was undone`
        : `Publication failed (${cause}) and ${failures.length} change(s) could not be undone: ${
          failures.slice(0, 5).join("; ")
        }`,
      {
        code: "publish_failed",
        recoverable: failures.length === 0,
        recoveryHint: failures.length === 0
          ? "Check the scratch copy and the workspace, then publish again."
          : "Ask the user to check the files named: the workspace may hold part of the publication.",
        details: { cause, undone: steps.length - failures.length, notUndone: failures },
        cause: error,
      },
    );
  }
  for (const step of steps) {
    try {
      step.done?.();
    } catch {
      // A backup left behind is debris (.toolfence-<pid>-*.tmp), swept when the workspace is next opened.
    }
  }
}

async function undo(steps: Step[]): Promise<string[]> {
  const failures: string[] = [];
  for (const step of steps.reverse()) {
    try {
      await step.undo();
    } catch (error) {
      failures.push(`${step.what}: ${(error as Error).message}`);
    }
  }
  return failures;
}

function mkdirWithMode(real: string, mode: number): void {
  // Made with the mode (less the umask), then given it exactly.
  mkdirConfined(real, mode & 0o777);
  chmodConfined(real, mode);
}

async function putEntry(
  context: ApplyContext,
  put: { relative: string; state: FileState; replaces: FileState | null },
  expectNow: (relative: string, expected: FileState | null) => Promise<void>,
  record: (step: Step) => void,
): Promise<void> {
  const { relative, state, replaces } = put;
  const target = context.hostRoot + "/" + relative;
  const source = context.scratchRoot + "/" + relative;
  const dir = path.posix.dirname(target);
  const name = path.posix.basename(target);
  const temp = tempName();
  // The new content, staged next to its target from the scratch copy, and checked to be what was shown.
  if (state.type === "symlink") {
    const linkTarget = readlinkConfined(source);
    if (sha256Text(linkTarget) !== state.sha256) throw scratchChanged(relative);
    if (replaces === null) {
      // symlink(2) never replaces: a new link is made at its name in one step.
      await expectNow(relative, null);
      try {
        inFolder(dir, (at) => fs.symlinkSync(linkTarget, at(name)));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        throw hostChanged([{ path: relative, expected: null, found: (await stateAt(target)) ?? null }]);
      }
      record({ what: `created ${relative}`, undo: () => unlinkConfined(target) });
      return;
    }
    inFolder(dir, (at) => fs.symlinkSync(linkTarget, at(temp)));
  } else {
    const stat = lstatConfined(source);
    // Not a byte more than was approved is written: a file swapped after the person's answer for one of another
    // size (a sparse 4 GiB one costs nothing to make) was written whole into the workspace before its hash was
    // found to differ.
    if (!stat?.isFile() || stat.size !== state.size) throw scratchChanged(relative);
    const { fd } = createConfined(dir + "/" + temp, state.mode, true);
    try {
      const { sha256 } = await readRegular(source, stat, (chunk) => writeAll(fd, chunk), state.size);
      await syncFd(fd);
      if (sha256 !== state.sha256) throw scratchChanged(relative);
    } catch (error) {
      fs.closeSync(fd);
      unlinkConfined(dir + "/" + temp);
      throw error instanceof PastLimit ? scratchChanged(relative) : error;
    }
    fs.closeSync(fd);
  }
  try {
    await expectNow(relative, replaces);
    if (replaces === null) {
      // link(2) never replaces: something made at the target meanwhile fails here.
      linkIn(dir, temp, name);
      unlinkConfined(dir + "/" + temp);
      record({ what: `created ${relative}`, undo: () => unlinkConfined(target) });
      return;
    }
    const backup = tempName();
    linkIn(dir, name, backup);
    renameIn(dir, temp, name);
    record({
      what: `replaced ${relative}`,
      undo: () => renameIn(dir, backup, name),
      done: () => unlinkConfined(dir + "/" + backup),
    });
  } catch (error) {
    try {
      unlinkConfined(dir + "/" + temp);
    } catch {
      // already moved into place or gone
    }
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw hostChanged([{ path: relative, expected: null, found: (await stateAt(target)) ?? null }]);
    }
    throw error;
  }
}

// A folder put back by an undo: moved in with a check that nothing took its name meanwhile, in one pinned block.
function renameNoReplace(dir: string, from: string, to: string): void {
  inFolder(dir, (at) => {
    try {
      fs.lstatSync(at(to));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      fs.renameSync(at(from), at(to));
      return;
    }
    throw Object.assign(new Error(`EEXIST: ${to}`), { code: "EEXIST" });
  });
}

function scratchChanged(relative: string): ToolError {
  return new ToolError(`${relative} changed in the scratch copy while it was being published`, {
    code: "publish_failed",
    recoveryHint: "Wait until nothing writes to the scratch copy, review the changes again, then publish.",
    details: { path: relative },
  });
}
