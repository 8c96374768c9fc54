/**
 * Checkpoints and undo in the real workspace: a journal of every file change
 * a session's calls report (`ctx.recordFileChange`), with the before-image of
 * each file they changed kept as a content-addressed artifact, from which a
 * checkpoint can be restored or the changes of given calls undone.
 *
 * An undo (or a restore) first checks every file it would touch: it must be
 * exactly (type, size, sha256, mode) what the journal says the last change
 * left there, and no later change of another call may have touched it;
 * otherwise it refuses, naming the file, and changes nothing. It then
 * restores the exact bytes and modes, newest change first.
 *
 * @module
 */

import fs from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import {
  type ArtifactStore,
  FileArtifactStore,
  type FileChange,
  type FileChangeEvent,
  type FileState,
  type MemoryArtifactPool,
  MemoryArtifactStore,
  sha256Hex,
  ToolError,
} from "@toolfence/core";
import { atomicWrite } from "@toolfence/internal";
import {
  chmodConfined,
  lstatConfined,
  mkdirConfined,
  mkdirsConfined,
  moveConfined,
  readdirConfined,
  rmdirConfined,
  symlinkConfined,
  unlinkConfined,
} from "@toolfence/internal";
import { fileStateConfined } from "@toolfence/internal";
import { sameFileState } from "@toolfence/core";
import { withPathLocks } from "@toolfence/internal";
import { isWithin } from "@toolfence/internal";

/** One change in the journal. */
export interface JournalEntry {
  /** Position in the journal, from 1. */
  seq: number;
  /** The tool that made the change. */
  toolName: string;
  /** The call that made it, when the caller gave a call id. */
  callId?: string;
  /** The change, as the call's result reported it. */
  change: FileChange;
  /** The artifact holding the exact content before the change, when it was kept. */
  beforeImage?: string;
  /** Whether an undo or a restore has already reverted it. */
  undone: boolean;
}

/** A point in the journal to come back to. */
export interface Checkpoint {
  /** Its id, e.g. `cp-1f0c...`. */
  id: string;
  /** Changes from this position on are reverted by a restore. */
  seq: number;
  /** When it was taken (ISO 8601). */
  createdAt: string;
  /** What the caller called it. */
  label?: string;
}

/** What an undo or a restore did. */
export interface UndoReport {
  /** The journal entries reverted, newest first. */
  reverted: FileChange[];
  /** The paths restored, in the order they were restored. */
  paths: string[];
}

/** Options of a {@linkcode FileHistory}. */
export interface FileHistoryOptions {
  /**
   * A folder to keep the journal and the before-images in, so that a
   * checkpoint outlives the process (`toolfence call --history DIR`). It must
   * lie outside the workspace and the session temp dir, where the agent could
   * forge it. Default: in memory, for the session's life.
   */
  dir?: string;
  /** Before-images kept in all, in bytes; past it, later changes cannot be undone. Default 256 MiB. */
  maxImageBytes?: number;
  /**
   * Without `dir`, the memory the before-images share with the process's other artifacts (default
   * `SERVER_ARTIFACT_POOL`) and whose they count as there (a tenant's name; see `MemoryArtifactStoreOptions.owner`).
   */
  images?: { pool?: MemoryArtifactPool; owner?: string };
}

/** The default of {@linkcode FileHistoryOptions.maxImageBytes}. */
export const DEFAULT_MAX_IMAGE_BYTES = 256 << 20;

type Line =
  | { entry: Omit<JournalEntry, "undone"> }
  | { checkpoint: Checkpoint }
  | { undone: number[] };

// Where `dir` will be once made: the real path of its deepest existing folder and the names still missing under it;
// `missing` lists the folders mkdir will make, deepest first.
function plannedFolder(dir: string): { real: string; missing: string[] } {
  const missing: string[] = [];
  let existing = path.resolve(dir);
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) {
    missing.push(existing);
    existing = path.dirname(existing);
  }
  return { real: path.join(fs.realpathSync(existing), path.relative(existing, path.resolve(dir))), missing };
}

function refuseInside(dir: string, roots: readonly string[]): void {
  for (const root of roots) {
    if (isWithin(dir, root)) {
      throw new ToolError(`The history folder ${dir} lies inside ${root}, where the agent could change it`, {
        code: "invalid_path",
        kind: "semantic",
        recoveryHint: "Keep the history outside the workspace and the session temp dir.",
        details: { dir, root },
      });
    }
  }
}

/**
 * The file history of a workspace: what the calls of a session (and its
 * sub-agents) changed, with before-images, checkpoints, restore and undo.
 * `Session` keeps one as `session.history`.
 *
 * Requires `--allow-read` and `--allow-write` for the workspace (and for
 * `dir`, when given).
 *
 * @example
 * ```ts
 * import { Session } from "@toolfence/policy";
 * const session = new Session({ workspace: await Deno.makeTempDir() });
 * const checkpoint = await session.createCheckpoint();
 * // ... calls that change files ...
 * await session.restoreCheckpoint(checkpoint.id);
 * await session.close();
 * ```
 */
export class FileHistory {
  /** The real path of the workspace's working folder. */
  readonly workdir: string;
  readonly #roots: () => readonly string[];
  readonly #images: ArtifactStore;
  readonly #dir: string | undefined;
  readonly #journal: string | undefined;
  readonly #maxImageBytes: number;
  #imageBytes = 0;
  #entries: JournalEntry[] = [];
  #checkpoints = new Map<string, Checkpoint>();
  #pending = new Set<Promise<unknown>>();
  #imageIds = new Set<string>();

  /**
   * Creates the history of the workspace whose working folder is `workdir`
   * (a real path); `roots` gives the real paths changes may lie in (the
   * workdir and the session temp dir). With `dir`, loads what is there.
   */
  constructor(workdir: string, roots: () => readonly string[], options: FileHistoryOptions = {}) {
    this.workdir = workdir;
    this.#roots = roots;
    this.#maxImageBytes = options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES;
    if (options.dir === undefined) {
      // Bounded by the history's own image budget (maxImageBytes), never by dropping an image a restore needs.
      this.#images = new MemoryArtifactStore({ maxBytes: Infinity, ...options.images });
      return;
    }
    // Judged before anything is made, so that a refused folder leaves nothing behind; and again once made (a
    // folder on the way may have been swapped for a link meanwhile), taking back the folders made here.
    const { real, missing } = plannedFolder(options.dir);
    refuseInside(real, [workdir, ...roots()]);
    fs.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const dir = fs.realpathSync(options.dir);
    try {
      refuseInside(dir, [workdir, ...roots()]);
    } catch (error) {
      for (const made of missing) {
        try {
          fs.rmdirSync(made);
        } catch {
          // not empty, or not ours: left as it is
        }
      }
      throw error;
    }
    this.#dir = dir;
    this.#journal = path.join(dir, "journal.jsonl");
    this.#images = new FileArtifactStore(path.join(dir, "images"), (real, bytes) => atomicWrite(real, bytes));
    this.#load();
  }

  #load(): void {
    let text: string;
    try {
      text = fs.readFileSync(this.#journal!, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    for (const raw of text.split("\n")) {
      if (raw.trim() === "") continue;
      let line: Line;
      try {
        line = JSON.parse(raw);
      } catch {
        continue; // a line cut by a crash
      }
      if ("entry" in line) {
        this.#entries.push({ ...line.entry, undone: false });
        if (line.entry.beforeImage) this.#imageIds.add(line.entry.beforeImage);
      } else if ("checkpoint" in line) this.#checkpoints.set(line.checkpoint.id, line.checkpoint);
      else if ("undone" in line) {
        const undone = new Set(line.undone);
        for (const entry of this.#entries) if (undone.has(entry.seq)) entry.undone = true;
      }
    }
  }

  #append(line: Line): void {
    if (this.#journal !== undefined) fs.appendFileSync(this.#journal, JSON.stringify(line) + "\n", { mode: 0o600 });
  }

  /** Resolves once every before-image recorded so far is stored. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Every change recorded, oldest first. */
  entries(): readonly JournalEntry[] {
    return this.#entries.map((entry) => ({ ...entry }));
  }

  /** Every checkpoint taken, oldest first. */
  checkpoints(): Checkpoint[] {
    return [...this.#checkpoints.values()];
  }

  /** Records one reported change (a session's `onFileChange` listener). */
  record(event: FileChangeEvent): void {
    const seq = (this.#entries.at(-1)?.seq ?? 0) + 1;
    const entry: JournalEntry = {
      seq,
      toolName: event.toolName,
      ...(event.callId !== undefined ? { callId: event.callId } : {}),
      change: structuredClone(event.change),
      undone: false,
    };
    const before = event.change.before;
    const image = event.beforeImage;
    if (
      before !== null && before.type !== "directory" && image !== undefined &&
      image.byteLength === before.size && sha256Hex(image) === before.sha256
    ) {
      const id = `sha256:${before.sha256}`;
      if (this.#imageIds.has(id) || this.#imageBytes + image.byteLength <= this.#maxImageBytes) {
        entry.beforeImage = id;
        if (!this.#imageIds.has(id)) {
          this.#imageIds.add(id);
          this.#imageBytes += image.byteLength;
          const put = this.#images.put(image.slice(), { mediaType: "application/octet-stream" });
          this.#pending.add(put);
          put.catch(() => this.#imageIds.delete(id)).finally(() => this.#pending.delete(put));
        }
      }
    }
    this.#entries.push(entry);
    const { undone: _, ...line } = entry;
    this.#append({ entry: line });
  }

  /** Takes a checkpoint: a later {@linkcode FileHistory.restore} reverts every change recorded after it. */
  checkpoint(label?: string): Checkpoint {
    const checkpoint: Checkpoint = {
      id: `cp-${randomUUID()}`,
      seq: (this.#entries.at(-1)?.seq ?? 0) + 1,
      createdAt: new Date().toISOString(),
      ...(label !== undefined ? { label } : {}),
    };
    this.#checkpoints.set(checkpoint.id, checkpoint);
    this.#append({ checkpoint });
    return checkpoint;
  }

  /**
   * Restores the workspace to `checkpointId`: reverts every change recorded
   * since, newest first. Refuses (`undo_conflict`, naming the file) when a
   * file was changed since by anything that did not report it, and
   * (`undo_unavailable`) when a change has no before-image; then nothing is
   * changed.
   */
  async restore(checkpointId: string): Promise<UndoReport> {
    const checkpoint = this.#checkpoints.get(checkpointId);
    if (checkpoint === undefined) {
      throw new ToolError(`No checkpoint ${checkpointId} in this history`, {
        code: "unknown_checkpoint",
        details: { checkpointId, known: [...this.#checkpoints.keys()] },
      });
    }
    return await this.#revert(this.#entries.filter((e) => !e.undone && e.seq >= checkpoint.seq));
  }

  /**
   * Undoes the file changes of the calls `callIds`, newest first. Refuses
   * (`undo_conflict`, naming the file) when a later call, or anything else,
   * changed one of their files since; (`undo_unavailable`) when a call id is
   * unknown or a change has no before-image; then nothing is changed.
   */
  async undo(callIds: readonly string[]): Promise<UndoReport> {
    const wanted = new Set(callIds);
    const known = new Set(this.#entries.map((e) => e.callId));
    const unknown = callIds.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw new ToolError(`No file changes of call ${unknown.join(", ")} in this history`, {
        code: "undo_unavailable",
        details: { unknown },
      });
    }
    const chosen = this.#entries.filter((e) => !e.undone && e.callId !== undefined && wanted.has(e.callId));
    const first = chosen[0]?.seq ?? Infinity;
    const later = this.#entries.filter((e) => !e.undone && e.seq > first && !chosen.includes(e));
    for (const entry of chosen) {
      const other = later.find((e) => e.seq > entry.seq && touches(e).some((p) => touches(entry).includes(p)));
      if (other !== undefined) {
        const shared = touches(entry).find((p) => touches(other).includes(p))!;
        throw new ToolError(
          `Cannot undo: ${shared} was changed again since, by ${other.toolName}${
            other.callId ? ` (call ${other.callId})` : ""
          }; nothing was changed`,
          {
            code: "undo_conflict",
            recoveryHint: "Undo the later call too, or restore the file by hand.",
            details: { path: shared, laterCall: other.callId, laterTool: other.toolName },
          },
        );
      }
    }
    return await this.#revert(chosen);
  }

  #real(shown: string): string {
    const real = path.isAbsolute(shown) ? shown : path.join(this.workdir, shown);
    if (!this.#roots().some((root) => isWithin(real, root) && real !== root)) {
      throw new ToolError(`The journal names ${shown}, which is not within the workspace`, {
        code: "outside_workspace",
        kind: "policy",
        details: { path: real },
      });
    }
    return real;
  }

  async #revert(entries: JournalEntry[]): Promise<UndoReport> {
    await this.flush();
    const reals = [...new Set(entries.flatMap((e) => touches(e).map((p) => this.#real(p))))];
    return await withPathLocks(reals, async () => {
      // 1. Every file must be what the last change left there; every image must be at hand.
      const expected = new Map<string, FileState | null>();
      for (const entry of entries) {
        const { change } = entry;
        if (change.from !== undefined) expected.set(change.from, null);
        expected.set(change.path, change.after);
      }
      for (const [shown, state] of expected) {
        const now = fileStateConfined(this.#real(shown));
        if (!sameFileState(now, state)) {
          throw new ToolError(
            `Cannot undo: ${shown} was changed since by something else (it is ${describe(now)}, the journal says ${
              describe(state)
            }); nothing was changed`,
            {
              code: "undo_conflict",
              recoveryHint: "Look at the file; restore it by hand, or leave it.",
              details: { path: shown, expected: state, actual: now },
            },
          );
        }
      }
      // A folder the changes created must hold nothing else by now, or removing it would fail halfway.
      const leaving = new Set(entries.flatMap(touches));
      for (const entry of entries) {
        if (entry.change.change !== "created" || expected.get(entry.change.path)?.type !== "directory") continue;
        const real = this.#real(entry.change.path);
        for (const { name } of readdirConfined(real)) {
          const inside = path.isAbsolute(entry.change.path)
            ? path.join(real, name)
            : entry.change.path === "."
            ? name
            : `${entry.change.path}/${name}`;
          if (!leaving.has(inside)) {
            throw new ToolError(
              `Cannot undo: ${inside} was created since by something else in the folder ${entry.change.path}; nothing was changed`,
              {
                code: "undo_conflict",
                recoveryHint: "Move or delete that entry first, or restore by hand.",
                details: { path: inside, folder: entry.change.path },
              },
            );
          }
        }
      }
      const images = new Map<number, Uint8Array>();
      for (const entry of entries) {
        const before = entry.change.before;
        if (before === null || before.type === "directory") continue;
        // A move brings its entry back by renaming it, unless it changed on the way (apply_patch's move with edits).
        if (entry.change.change === "moved" && sameFileState(before, entry.change.after)) continue;
        const bytes = entry.beforeImage ? await this.#image(entry.beforeImage) : undefined;
        if (bytes === undefined || sha256Hex(bytes) !== before.sha256) {
          throw new ToolError(
            `Cannot undo the change of ${entry.change.path} by ${entry.toolName}: its content before was not kept; nothing was changed`,
            {
              code: "undo_unavailable",
              recoveryHint: "Restore the file by hand (e.g. from version control).",
              details: { path: entry.change.path, seq: entry.seq, reason: entry.beforeImage ? "missing" : "not kept" },
            },
          );
        }
        images.set(entry.seq, bytes);
      }
      // 2. Newest first, each change reverted exactly.
      const report: UndoReport = { reverted: [], paths: [] };
      const done: number[] = [];
      try {
        for (const entry of [...entries].reverse()) {
          await this.#revertOne(entry, images.get(entry.seq));
          done.push(entry.seq);
          report.reverted.push(entry.change);
          report.paths.push(entry.change.from ?? entry.change.path);
        }
      } catch (error) {
        throw new ToolError(
          `Undo stopped at ${entries[entries.length - 1 - done.length].change.path}: ${
            (error as Error).message
          }; ${done.length} of ${entries.length} changes were reverted`,
          { code: "undo_conflict", details: { reverted: done.length, total: entries.length }, cause: error },
        );
      } finally {
        for (const seq of done) this.#entries.find((e) => e.seq === seq)!.undone = true;
        if (done.length > 0) this.#append({ undone: done });
      }
      return report;
    });
  }

  async #image(id: string): Promise<Uint8Array | undefined> {
    const held = await this.#images.get(id).catch(() => undefined);
    if (held !== undefined || this.#dir === undefined) return held;
    // Stored by an earlier process: the file store of this one does not know it; the hash is checked by the caller.
    try {
      return new Uint8Array(fs.readFileSync(path.join(this.#dir, "images", id.replace(/^sha256:/, ""))));
    } catch {
      return undefined;
    }
  }

  async #revertOne(entry: JournalEntry, image: Uint8Array | undefined): Promise<void> {
    const { change } = entry;
    const real = this.#real(change.path);
    const roots = this.#roots();
    switch (change.change) {
      case "created":
        if (change.after?.type === "directory") rmdirConfined(real);
        else unlinkConfined(real);
        return;
      case "modified":
      case "deleted":
        if (change.change === "modified" && change.before!.type !== change.after!.type) {
          if (change.after!.type === "directory") rmdirConfined(real);
          else unlinkConfined(real);
        }
        await this.#put(real, change.before!, image, roots);
        return;
      case "moved": {
        const from = this.#real(change.from!);
        mkdirsConfined(path.dirname(from), roots);
        if (change.before!.type === "directory") {
          // Its entries have gone back already (they come later in the journal); the folder follows.
          if (lstatConfined(from) === undefined) mkdirConfined(from, change.before!.mode);
          chmodConfined(from, change.before!.mode);
          rmdirConfined(real);
          return;
        }
        if (sameFileState(change.before, change.after)) moveConfined(real, from, roots);
        else {
          await this.#put(from, change.before!, image, roots);
          unlinkConfined(real);
        }
        return;
      }
    }
  }

  // Puts back what `state` describes at `real`: a folder, a link, or a file with the exact bytes and mode.
  async #put(real: string, state: FileState, image: Uint8Array | undefined, roots: readonly string[]): Promise<void> {
    mkdirsConfined(path.dirname(real), roots);
    if (state.type === "directory") {
      if (lstatConfined(real) === undefined) mkdirConfined(real, state.mode);
      chmodConfined(real, state.mode);
    } else if (state.type === "symlink") {
      if (lstatConfined(real) !== undefined) unlinkConfined(real);
      symlinkConfined(new TextDecoder().decode(image!), real);
    } else {
      await atomicWrite(real, image!, { mode: state.mode });
    }
  }
}

// The paths a change touches: where it is, and for a move where it was.
function touches(entry: JournalEntry): string[] {
  const { change } = entry;
  return change.from !== undefined ? [change.path, change.from] : [change.path];
}

function describe(state: FileState | null): string {
  if (state === null) return "absent";
  if (state.type === "directory") return `a folder with mode ${state.mode.toString(8)}`;
  return `a ${state.type} of ${state.size} bytes with sha256 ${state.sha256} and mode ${state.mode.toString(8)}`;
}
