// What a file tool changed, exactly: a snapshot of the paths it may touch
// (every entry under a folder, links not followed) taken before it acts and
// again after, compared entry by entry. Content is hashed in both snapshots,
// and the before snapshot keeps the bytes (within a budget) as the
// before-images a session's checkpoint journal needs to undo the change.
// Reads go through the confined operations, so a folder swapped for a link
// meanwhile cannot make a snapshot read (and later restore) a file from outside.

import type fs from "node:fs";
import path from "node:path";
import type { FileChange, FileSnapshot, ToolContext } from "@toolfence/core";
import { comparePaths, sameFileState } from "@toolfence/core";

/** Before-images one snapshot keeps, in bytes all together. */
export const IMAGE_TOTAL_LIMIT = 128 << 20;

/** One entry of a snapshot. */
export type SnapshotEntry = FileSnapshot;

/** Entries by real path. */
export type Snapshot = Map<string, SnapshotEntry>;

/**
 * Snapshots `paths` (real paths the policy resolved): each path, and
 * everything under it when it is a folder. With `images`, the content of
 * files and links is kept within {@linkcode IMAGE_TOTAL_LIMIT}.
 */
export function snapshot(ctx: ToolContext, paths: readonly string[], images: boolean): Snapshot {
  const taken: Snapshot = new Map();
  let room = images ? IMAGE_TOTAL_LIMIT : 0;
  const visit = (real: string) => {
    if (taken.has(real)) return;
    let entry: SnapshotEntry | undefined;
    try {
      entry = ctx.policy.files.snapshot(real, room);
    } catch {
      // Unreadable (or gone meanwhile): not part of what the snapshot can speak for.
      return;
    }
    if (entry === undefined) return;
    if (!images) delete entry.image;
    room -= entry.image?.byteLength ?? 0;
    taken.set(real, entry);
    if (entry.state.type !== "directory") return;
    let names: fs.Dirent[];
    try {
      names = ctx.policy.files.entries(real);
    } catch {
      return;
    }
    for (const dirent of names) visit(path.join(real, dirent.name));
  };
  for (const real of paths) visit(real);
  return taken;
}

/** A path as a {@linkcode FileChange} names it: relative to the workdir with `/`, else absolute. */
export function changePath(ctx: ToolContext, real: string): string {
  const workdir = ctx.workspace.workdir;
  if (real === workdir) return ".";
  const relative = path.relative(workdir, real);
  if (relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)) {
    return relative.split(path.sep).join("/");
  }
  return real;
}

/** A move a tool made: what was at `from` (and under it) is now at `to`. */
export interface MoveMapping {
  /** Real path of the source. */
  from: string;
  /** Real path of the destination. */
  to: string;
  /** The entry may have changed on the way (apply_patch's move with edits); else it must arrive as it left. */
  edited?: boolean;
}

/**
 * Compares two snapshots of the same paths and reports every difference to
 * `ctx.recordFileChange`, with the before-images: created, modified and
 * moved entries parents first, then deleted entries children first (so that
 * undoing them in reverse order works folder by folder). With `move`, an
 * entry that left `from` and is found at the same place under `to` in the
 * same state is reported as moved (what it replaced there as deleted first).
 */
export function reportChanges(
  ctx: ToolContext,
  before: Snapshot,
  after: Snapshot,
  moves: readonly MoveMapping[] = [],
): FileChange[] {
  const changes: { change: FileChange; image?: Uint8Array }[] = [];
  const deleted: { change: FileChange; image?: Uint8Array }[] = [];
  const movedTo = new Set<string>();
  for (const move of moves) {
    for (const [real, entry] of before) {
      if (real !== move.from && !real.startsWith(move.from + path.sep)) continue;
      if (after.has(real)) continue;
      const destination = move.to + real.slice(move.from.length);
      const now = after.get(destination);
      if (now === undefined || movedTo.has(destination)) continue;
      if (!(move.edited && real === move.from) && !sameFileState(entry.state, now.state)) continue;
      movedTo.add(destination);
      const replaced = before.get(destination);
      if (replaced !== undefined) {
        deleted.push({
          change: { path: changePath(ctx, destination), change: "deleted", before: replaced.state, after: null },
          image: replaced.image,
        });
      }
      changes.push({
        change: {
          path: changePath(ctx, destination),
          change: "moved",
          from: changePath(ctx, real),
          before: entry.state,
          after: now.state,
        },
        image: entry.image,
      });
    }
  }
  const movedFrom = new Set(changes.map((c) => c.change.from));
  for (const [real, now] of after) {
    if (movedTo.has(real)) continue;
    const was = before.get(real);
    if (was === undefined) {
      changes.push({ change: { path: changePath(ctx, real), change: "created", before: null, after: now.state } });
    } else if (!sameFileState(was.state, now.state)) {
      changes.push({
        change: { path: changePath(ctx, real), change: "modified", before: was.state, after: now.state },
        image: was.image,
      });
    }
  }
  for (const [real, was] of before) {
    if (after.has(real) || movedFrom.has(changePath(ctx, real))) continue;
    deleted.push({
      change: { path: changePath(ctx, real), change: "deleted", before: was.state, after: null },
      image: was.image,
    });
  }
  // Replaced destinations go first of all, so that undoing the move (last) frees their place before they return.
  const replacedFirst = deleted.filter((d) => movedTo.has(pathBack(ctx, d.change.path)));
  const otherDeleted = deleted.filter((d) => !movedTo.has(pathBack(ctx, d.change.path)));
  changes.sort((a, b) => comparePaths(a.change.path, b.change.path));
  otherDeleted.sort((a, b) => comparePaths(b.change.path, a.change.path));
  const ordered = [...replacedFirst, ...changes, ...otherDeleted];
  for (const { change, image } of ordered) ctx.recordFileChange(change, image);
  return ordered.map((o) => o.change);
}

function pathBack(ctx: ToolContext, shown: string): string {
  return path.isAbsolute(shown) ? shown : path.join(ctx.workspace.workdir, shown);
}

/**
 * Runs `act` between two snapshots of `paths` and reports what changed, also
 * when `act` throws (whatever happened is reported). `after` lists more paths
 * for the second snapshot (e.g. a move's destination, when known only later).
 */
export async function withChangeReport<T>(
  ctx: ToolContext,
  paths: readonly string[],
  act: () => Promise<T> | T,
  options: { moves?: readonly MoveMapping[]; after?: () => readonly string[] } = {},
): Promise<T> {
  const before = snapshot(ctx, paths, true);
  try {
    return await act();
  } finally {
    const after = snapshot(ctx, [...paths, ...(options.after?.() ?? [])], false);
    reportChanges(ctx, before, after, options.moves);
  }
}

/**
 * `real` when something is there, else its topmost missing ancestor (the
 * first folder a write there would create), so that a snapshot of it sees
 * the folders the write makes as well.
 */
export function affectedPath(ctx: ToolContext, real: string): string {
  let current = real;
  for (;;) {
    const parent = path.dirname(current);
    if (parent === current) return current;
    let exists: boolean;
    try {
      exists = ctx.policy.files.lstat(parent) !== undefined;
    } catch {
      return current;
    }
    if (exists) return current;
    current = parent;
  }
}
