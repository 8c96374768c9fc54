/**
 * The policy's file door (`ctx.policy.files`): every file effect of a tool
 * passes here. Resolution and judgement are the {@linkcode Policy}'s own
 * (one place for every rule); the operations call the confined mechanisms of
 * `@toolfence/internal` only on targets this door resolved, after re-checking
 * that each still leads where it was judged to lead.
 *
 * @module
 */
import type fs from "node:fs";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type {
  AuthorizeOptions,
  CopiedCounts,
  FileDoor,
  FileSnapshot,
  FileTarget,
  TargetOptions,
  WriteKind,
} from "@toolfence/core";
import {
  atomicWrite,
  type CopiedLink,
  copyTreeConfined,
  discardConfined,
  fileEntryConfined,
  linksInTree,
  lstatConfined,
  mkdirsConfined,
  moveConfined,
  openReadCheckedConfined,
  openReadConfined,
  pathChangedError,
  placeInFolder,
  quickLstat,
  readdirConfined,
  removeTreeConfined,
  renameInFolder,
  tempName,
  unlinkConfined,
  withPathLocks,
} from "@toolfence/internal";
import type { Policy } from "./policy.ts";
import { diskRoom } from "./_limits.ts";

/**
 * The {@linkcode FileDoor} of a {@linkcode Policy}; made by the policy itself
 * (`policy.files`), one per session.
 *
 * Requires `--allow-read` for the workspace, and `--allow-write` for writes.
 *
 * @example
 * ```ts
 * import { autoHost, Policy, PolicyState, Workspace } from "@toolfence/policy";
 * const policy = new Policy({ workspace: new Workspace(Deno.cwd()), state: new PolicyState(), asker: autoHost() });
 * const target = await policy.files.resolve("README.md");
 * console.log(target.path, policy.files.entries(await policy.files.resolve(".")).length);
 * ```
 */
export class PolicyFileDoor implements FileDoor {
  readonly #policy: Policy;

  /** The door of `policy`. */
  constructor(policy: Policy) {
    this.#policy = policy;
  }

  /** The hidden globs, relative to the workspace root. */
  get hiddenPaths(): readonly string[] {
    return this.#policy.hiddenPaths;
  }

  /** See {@linkcode FileDoor.resolve}. */
  resolve(named: string, options?: TargetOptions): Promise<FileTarget> {
    return this.#policy.resolveTarget(named, options);
  }

  /** See {@linkcode FileDoor.child}. */
  child(parent: FileTarget, name: string, access?: "read" | "write"): Promise<FileTarget> {
    return this.#policy.childTarget(parent, name, access);
  }

  /** See {@linkcode FileDoor.authorize}. */
  authorize(
    target: FileTarget,
    action: WriteKind,
    signal?: AbortSignal,
    options?: AuthorizeOptions & { shown?: string },
  ): Promise<void> {
    return this.#policy.authorize(target, action, signal, options);
  }

  /** See {@linkcode FileDoor.isHidden}. */
  isHidden(realPath: string): boolean {
    return this.#policy.isHidden(realPath);
  }

  /** See {@linkcode FileDoor.entries}. */
  entries(folder: FileTarget | string): fs.Dirent[] {
    const real = typeof folder === "string" ? this.#inside(folder) : folder.path;
    const entries = readdirConfined(real);
    if (this.#policy.hiddenPaths.length === 0) return entries;
    return entries.filter((entry) => !this.#policy.isHidden(path.posix.join(real, entry.name)));
  }

  /**
   * See {@linkcode FileDoor.openRead}. The open is its own re-check, as
   * {@linkcode FileDoor.openFound}'s is: in the folder pinned at the real path that
   * was judged (a folder swapped for a link since is refused), never
   * following a final link, non-blocking; the real path still lies in the
   * workspace and is not hidden. Resolving the path again before it, as the
   * writes do, would add nothing to that, and cost a read a sixth of its
   * time in-process: one lstat per name on the path and the policy's
   * judgement.
   */
  // deno-lint-ignore require-await -- async so that a refusal is a rejected promise, as for every other door.
  async openRead(target: FileTarget, check?: (now: fs.Stats | undefined) => void): Promise<number> {
    const real = this.#inside(target.path);
    return openReadCheckedConfined(real, (now) => {
      check?.(now);
      this.#policy.requireNotHiddenAlias(real, now);
    });
  }

  /** See {@linkcode FileDoor.openFound}. */
  openFound(realPath: string): number {
    return openReadConfined(this.#readable(realPath));
  }

  /** See {@linkcode FileDoor.locked}. */
  async locked<T>(targets: readonly FileTarget[], fn: () => Promise<T>): Promise<T> {
    return await withPathLocks(targets.map((t) => t.path), async () => {
      for (const target of targets) await this.#recheck(target);
      return await fn();
    });
  }

  /** See {@linkcode FileDoor.write}. */
  async write(target: FileTarget, data: string | Uint8Array, options?: { mode?: number }): Promise<string | undefined> {
    await this.#recheck(target);
    const created = mkdirsConfined(path.dirname(target.path), target.roots);
    try {
      await atomicWrite(target.path, data, { ...options, replace: target.existed });
    } catch (error) {
      if (created !== undefined) await discardConfined(created);
      throw this.#appeared(target, error);
    }
    return created;
  }

  /** See {@linkcode FileDoor.mkdir}. */
  async mkdir(target: FileTarget, options: { parentsOnly?: boolean } = {}): Promise<string | undefined> {
    await this.#recheck(target);
    return mkdirsConfined(options.parentsOnly ? path.dirname(target.path) : target.path, target.roots);
  }

  /** See {@linkcode FileDoor.copy}. */
  async copy(source: FileTarget, destination: FileTarget, signal?: AbortSignal): Promise<CopiedCounts> {
    await this.#recheck(source);
    await this.#recheck(destination);
    return await this.#copyInto(source, destination, signal ?? new AbortController().signal, "copy");
  }

  /** See {@linkcode FileDoor.move}. */
  async move(source: FileTarget, destination: FileTarget, signal?: AbortSignal): Promise<void> {
    await this.#recheck(source);
    await this.#recheck(destination);
    const stop = signal ?? new AbortController().signal;
    // A relative link leads elsewhere from another folder: every link the entry holds is judged where it will lie
    // (see #judgeLinks) before anything moves, and those below the top again once they are there.
    const links = await linksInTree(source.path, stop, source.stat);
    await this.#judgeLinks(links, destination.path, destination.path, "move");
    try {
      moveConfined(source.path, destination.path, destination.roots, { replace: destination.existed });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw this.#appeared(destination, error);
      // rename(2) cannot cross file systems (the temp dir often lives on another one), nor can a
      // confined move cross from the workdir to the temp dir: copy beside the destination, rename
      // into place, then remove the source.
      await this.#copyInto(source, destination, stop, "move");
      await this.#removeAt(source, stop);
      return;
    }
    try {
      await this.#judgeLinks(links.filter((link) => link.relative !== ""), destination.path, destination.path, "move");
    } catch (error) {
      // Only a folder has links below its top, and a folder never replaces anything: it goes back where it was.
      try {
        moveConfined(destination.path, source.path, destination.roots, { replace: false });
      } catch {
        await this.#dropLinks(destination.path, links);
      }
      throw error;
    }
  }

  /** See {@linkcode FileDoor.remove}. */
  async remove(target: FileTarget, signal?: AbortSignal): Promise<void> {
    await this.#recheck(target);
    await this.#removeAt(target, signal ?? new AbortController().signal);
  }

  /** See {@linkcode FileDoor.discard}. */
  async discard(realPath: string): Promise<void> {
    await discardConfined(this.#inside(realPath));
  }

  /** See {@linkcode FileDoor.lstat}. */
  lstat(realPath: string): fs.Stats | undefined {
    return lstatConfined(this.#inside(realPath));
  }

  /** See {@linkcode FileDoor.unchangedSince}. */
  unchangedSince(realPath: string, opened: fs.Stats): boolean {
    const now = lstatNow(this.#inside(realPath));
    return now !== undefined && now.ino === opened.ino && now.dev === opened.dev && now.size === opened.size &&
      now.mtimeMs === opened.mtimeMs && now.ctimeMs === opened.ctimeMs;
  }

  /** See {@linkcode FileDoor.snapshot}. */
  snapshot(realPath: string, room = 0): FileSnapshot | undefined {
    return fileEntryConfined(this.#readable(realPath), room);
  }

  // A real path whose bytes are about to be read: inside the workspace, not hidden, and not another name of a
  // hidden file (the lstat that tells costs a read only where a hidden file has other names).
  #readable(realPath: string): string {
    const real = this.#inside(realPath);
    if (this.#policy.mayHaveHiddenAliases()) {
      this.#policy.requireNotHiddenAlias(real, lstatNow(real));
    }
    return real;
  }

  async #copyInto(
    source: FileTarget,
    destination: FileTarget,
    signal: AbortSignal,
    verb: "copy" | "move",
  ): Promise<CopiedCounts> {
    const to = destination.path;
    const temp = path.join(path.dirname(to), tempName());
    const links: CopiedLink[] = [];
    // Within what the destination's disk has above its floor, as a command's writes are: before, a copy of a folder
    // of sparse files a command made (4 KiB of disk) wrote 1.1 GB, every hole, and one of a thousand wrote a TB.
    const room = diskRoom(path.dirname(to));
    const budget = room === undefined ? undefined : { bytes: room };
    let counts: CopiedCounts;
    try {
      counts = await copyTreeConfined(source.path, temp, signal, undefined, "", source.stat, links, budget);
      // The copy is built in the destination's own folder, so each link already lies as deep as it will.
      await this.#judgeLinks(links, temp, to, verb);
      const land = destination.existed ? renameInFolder : placeInFolder;
      land(path.dirname(to), path.basename(temp), path.basename(to));
    } catch (error) {
      await discardConfined(temp);
      if (budget !== undefined && budget.bytes < 0) {
        const shown = this.#policy.workspace.relative(source.path);
        throw new ToolError(
          `Copying ${shown} would take the disk below half of its free space: a copy writes every byte of a sparse ` +
            "file and of each name of a linked file, whatever they take where they are",
          {
            code: "no_space",
            recoveryHint: "Copy less (single files), or make a link or a sparse copy with a command (cp --sparse).",
            details: { path: source.path, room, reason: (error as Error).message },
            cause: error,
          },
        );
      }
      throw this.#appeared(destination, error);
    }
    const below = links.filter((link) => link.relative !== "");
    if (below.length === 0) return counts;
    try {
      // Judged again under the copy's own name, which a link's text may go through.
      await this.#judgeLinks(below, to, to, verb);
    } catch (error) {
      // Only a folder has links below its top, and a folder copy never replaces anything: it goes whole.
      await discardConfined(to);
      await this.#dropLinks(to, below);
      throw error;
    }
    return counts;
  }

  // Where each link of a tree leads once the tree lies at `top` (a real path where it lies now, or where it will
  // lie: a missing folder on the way is judged as it will be once made): the policy resolves its text from the
  // link's folder, following every link, and it must lie in the workspace, visible and allowed by the fence, as
  // any path a tool reads. A link that leads outside, to a denied path, or nowhere the policy can tell (a loop) is
  // refused: a relative link copied or moved to another depth would otherwise lead somewhere nobody judged.
  // `shownTop` is the tree's final place, for the message.
  async #judgeLinks(links: readonly CopiedLink[], top: string, shownTop: string, verb: "copy" | "move"): Promise<void> {
    for (const link of links) {
      const at = link.relative === "" ? top : top + "/" + link.relative;
      const leads = link.text.startsWith("/") ? link.text : path.posix.dirname(at) + "/" + link.text;
      try {
        await this.#policy.resolveTarget(leads, { access: "read" });
      } catch (error) {
        const shown = this.#policy.workspace.relative(link.relative === "" ? shownTop : shownTop + "/" + link.relative);
        const code = error instanceof ToolError ? error.code : "path_unresolvable";
        const where = code === "outside_workspace"
          ? "outside the workspace"
          : code === "permission_denied"
          ? "to a path the policy denies"
          : "where the policy cannot follow it";
        throw new ToolError(`Cannot ${verb} the symlink to ${shown}: from there it would lead ${where}`, {
          code: "symlink_target",
          kind: "policy",
          recoverable: false,
          recoveryHint: "Choose a destination from which the link still leads inside the workspace, or copy " +
            "the file it leads to instead of the link. Nothing was changed.",
          // The link's text is not repeated: it may name a path the policy hides.
          details: { link: shown, reason: code },
        });
      }
    }
  }

  // The last resort when a tree with a refused link could not be taken back: the refused links go.
  async #dropLinks(top: string, links: readonly CopiedLink[]): Promise<void> {
    for (const link of links) {
      if (link.relative === "") continue;
      await discardConfined(top + "/" + link.relative);
    }
  }

  async #removeAt(target: FileTarget, signal: AbortSignal): Promise<void> {
    if (lstatConfined(target.path)?.isDirectory()) await removeTreeConfined(target.path, signal);
    else unlinkConfined(target.path);
  }

  // A target must still lead where it was judged to lead: resolved again without following a
  // final link, it is the same real path (no link swapped in above it), still visible and
  // allowed by the fence.
  // A refusal here is a change under the call (the path was allowed when it was resolved), not a
  // refusal of the call: it is reported as `path_changed`, whatever else the call recorded.
  // Returns the target as resolved again, with its lstat of now.
  async #recheck(target: FileTarget): Promise<FileTarget> {
    const access = target.access ?? "read";
    let now: FileTarget;
    try {
      now = await this.#policy.resolveTarget(target.path, { access, followFinalSymlink: false });
    } catch (error) {
      throw this.#changed(target, error instanceof ToolError ? error.code : "unresolvable", error);
    }
    if (now.path !== target.path) throw this.#changed(target, now.path);
    return now;
  }

  // A target judged free (no question about replacing it was needed) takes its path only while it is free: an
  // entry that appeared there meanwhile is left alone, and the call reports the change.
  #appeared(target: FileTarget, error: unknown): unknown {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || target.existed) return error;
    return this.#changed(target, `${target.path} (it appeared there during the call and was left alone)`, error);
  }

  #changed(target: FileTarget, now: string, cause?: unknown): ToolError {
    return pathChangedError(
      `${this.#policy.workspace.relative(target.path)} changed during the call`,
      { path: target.path, now },
      cause,
    );
  }

  // A real path given back to the door must lie in the workspace's areas and not be hidden.
  #inside(realPath: string): string {
    const normal = path.posix.normalize(realPath);
    if (this.#policy.workspace.areaOf(normal) === undefined || normal !== realPath) {
      throw new ToolError(`Path ${realPath} is not within the agent's workspace`, {
        code: "outside_workspace",
        kind: "policy",
        details: { path: realPath, workdir: this.#policy.workspace.workdir },
      });
    }
    if (this.#policy.isHidden(normal)) {
      throw new ToolError(`Path ${this.#policy.workspace.relative(normal)} is denied by the policy`, {
        code: "permission_denied",
        kind: "policy",
        status: "skipped",
        recoverable: false,
        recoveryHint: "Do not try to reach this path in any other way; work on other files.",
        details: { path: normal },
      });
    }
    return normal;
  }
}

// The lstat of a path now, undefined when it cannot be taken (the caller's own stat then says why).
function lstatNow(real: string): fs.Stats | undefined {
  try {
    return quickLstat(real);
  } catch {
    return undefined;
  }
}
