/**
 * The agent's workspace: its working folder plus a session temp dir that is
 * created lazily and only then counts as part of the workspace. Every path a
 * tool receives goes through {@linkcode Workspace.resolve}, which follows
 * symlinks itself, component by component, and judges where the path really
 * leads.
 *
 * @module
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { textPrefix, ToolError, UsageError } from "@toolfence/core";
import { isWithin, PATH_MAX_BYTES, quickLstat } from "@toolfence/internal";
import { type FolderPin, inFolder, removeConfined, requireRoot } from "@toolfence/internal";
import { sweepDebris, type SweepReport, sweepSessionTempDirs } from "./_debris.ts";
import { isRuntimePermissionError, queryRuntimePermission, runtimeFlag, systemTempFolder } from "@toolfence/internal";

/** Where a resolved path lies. */
export interface ResolvedPath {
  /** Absolute path with every symlink resolved (but see `followFinalSymlink`). */
  path: string;
  /** `temp` for the session temp dir (also when it lies inside the workdir), else `workdir`. */
  area: "workdir" | "temp";
  /** Whether something exists at `path` now. */
  exists: boolean;
}

// The lstat a resolution took of the entry it names on its way (a path walked component by component, its last
// one not followed), for the policy's target, which carries one: looking again would cost another system call.
const statsTaken = new WeakMap<ResolvedPath, fs.Stats>();

/** The lstat `resolved` took of `resolved.path` while it walked it, if it did. */
export function statTaken(resolved: ResolvedPath): fs.Stats | undefined {
  return statsTaken.get(resolved);
}

/** Options of {@linkcode Workspace.resolve}. */
export interface ResolveOptions {
  /**
   * Whether a symlink at the last component is followed (default `true`). Pass
   * `false` for operations that act on the link itself (delete, the source of a
   * move): the link's location must then lie in the workspace, not its target.
   */
  followFinalSymlink?: boolean;
}

/** Options of the {@linkcode Workspace} constructor. */
export interface WorkspaceOptions {
  /** Folder in which the session temp dir is created; default the system temp folder. */
  tempParent?: string;
  /**
   * Whether opening the workspace removes the temp files that writes of
   * processes killed mid-way left in it (`.toolfence-<pid>-*.tmp`, see
   * `atomic_write.ts`); default `true`. The sweep is bounded (50,000 entries,
   * half a second).
   */
  sweepDebris?: boolean;
  /**
   * Folders whose entries a path's walk never looks at, other than the
   * workspace's own (a server's tenant root, the other tenants' workspaces): a
   * path that steps into one is outside the workspace at that step, whatever
   * lies there. Without it, a path through another tenant's folder that comes
   * back (`/srv/tenants/bob/x/../../alice/f`) was walked as the kernel walks it,
   * and its answer told whether bob's `x` was a link.
   */
  closedFolders?: readonly string[];
}

// Linux gives up after 40 symlinks in one lookup (ELOOP); so do we.
const MAX_SYMLINK_HOPS = 40;
// NAME_MAX on Linux, in bytes (PATH_MAX is the scans' PATH_MAX_BYTES).
const MAX_NAME_BYTES = 255;

const encoder = new TextEncoder();

interface Walked {
  real: string;
  exists: boolean;
  stat?: fs.Stats;
}

/**
 * The folder an agent works in, plus its lazily created temp dir.
 *
 * Requires `--allow-read` for the workdir (and the temp folder once used) and
 * `--allow-write` for the temp folder to create the temp dir.
 *
 * @example
 * ```ts
 * import { Workspace } from "@toolfence/policy";
 * const ws = new Workspace(Deno.cwd());
 * const resolved = await ws.resolve("README.md");
 * console.log(resolved.path, resolved.area, resolved.exists);
 * await ws.dispose();
 * ```
 */
export class Workspace {
  /** The workdir's absolute real path. */
  readonly workdir: string;
  /** What the sweep of debris did when the workspace was opened (undefined when it was not asked for). */
  readonly swept: SweepReport | undefined;
  readonly #tempParent: string;
  readonly #tempParentPin: (FolderPin & { real: string }) | undefined;
  readonly #workdirId: string;
  readonly #closedFolders: readonly string[];
  #tempDir: string | undefined;
  #tempDirId: string | undefined;
  // Held open until dispose, so that the folder's inode cannot be given to another folder made in its place: the
  // runtime's birth times are whole milliseconds under Deno, and Linux reuses a freed inode number at once.
  #tempDirFd: number | undefined;
  #tempDirPromise: Promise<string> | undefined;

  /** Creates a workspace over `workdir`, which must be an existing folder. */
  constructor(workdir: string, options: WorkspaceOptions = {}) {
    if (
      typeof workdir !== "string" || workdir === "" || workdir.includes("\0")
    ) {
      throw new UsageError(
        `Workspace needs a folder path, got ${JSON.stringify(workdir)}`,
      );
    }
    let real: string;
    try {
      real = fs.realpathSync(path.resolve(workdir));
    } catch (error) {
      throw new UsageError(
        `Workspace folder ${workdir} cannot be opened: ${(error as Error).message}`,
      );
    }
    const stat = fs.statSync(real);
    if (!stat.isDirectory()) {
      throw new UsageError(`Workspace folder ${workdir} is not a folder`);
    }
    this.workdir = real;
    this.#workdirId = identity(stat);
    this.#tempParent = path.resolve(options.tempParent ?? systemTempFolder());
    this.#tempParentPin = pinOfFolder(this.#tempParent);
    this.swept = options.sweepDebris === false ? undefined : sweepDebris(real);
    this.#closedFolders = (options.closedFolders ?? []).map((folder) =>
      realpathOrUndefined(path.resolve(folder))?.real ?? path.resolve(folder)
    );
  }

  // The temp dir is made in the temp folder as it was when the workspace was made: by a single name in it, pinned
  // and checked to be that very folder. It may lie where commands write (a scratch copy's lies in its host's temp
  // dir), and a link put in its place would have the temp dir, and all the session puts there, made outside.
  #makeTempDir(): string {
    const prefix = `toolfence-${process.pid}-`;
    const pin = this.#tempParentPin;
    if (pin === undefined) return fs.mkdtempSync(path.join(this.#tempParent, prefix));
    const made = inFolder(pin.real, (at) => fs.mkdtempSync(at(prefix)), pin);
    return pin.real + "/" + path.posix.basename(made);
  }

  /** The folder the session temp dir is made in (absolute). */
  get tempParent(): string {
    return this.#tempParent;
  }

  /** Whether the session temp dir has been created (and so is part of the workspace). */
  get tempDirCreated(): boolean {
    return this.#tempDir !== undefined;
  }

  /**
   * The session temp dir's real path, creating it on first use with `mkdtemp`
   * under the temp folder. From then on it is part of the workspace.
   *
   * Requires `--allow-write` and `--allow-read` for the temp folder.
   *
   * @example
   * ```ts
   * import { Workspace } from "@toolfence/policy";
   * const ws = new Workspace(Deno.cwd());
   * console.log(await ws.tempDir());
   * await ws.dispose();
   * ```
   */
  tempDir(): Promise<string> {
    this.#tempDirPromise ??= (async () => {
      let created: string;
      try {
        created = this.#makeTempDir();
      } catch (error) {
        if (!isRuntimePermissionError(error)) throw error;
        const flag = runtimeFlag("write", this.#tempParent);
        throw new ToolError(
          `The runtime does not grant write access to ${this.#tempParent}, where the session temp dir is made: it needs ${flag}`,
          {
            code: "fence_denied",
            kind: "policy",
            recoverable: false,
            recoveryHint: "Work in the workspace instead of the temp dir.",
            details: { permission: "write", target: this.#tempParent, flag },
            cause: error,
          },
        );
      }
      const real = await fsp.realpath(created);
      // Session temp dirs of processes that died without cleaning up go now.
      sweepSessionTempDirs(this.#tempParent);
      this.#tempDirFd = fs.openSync(real, "r");
      this.#tempDirId = identity(fs.fstatSync(this.#tempDirFd));
      this.#tempDir = real;
      return real;
    })();
    // A failed creation must not poison later attempts.
    this.#tempDirPromise.catch(() => {
      this.#tempDirPromise = undefined;
    });
    return this.#tempDirPromise;
  }

  /**
   * Resolves `input` (relative to the workdir, or absolute) to its real path
   * and checks that it lies in the workdir or the created temp dir. Symlinks
   * are followed wherever they occur; for a path that does not exist yet, the
   * deepest existing ancestor is resolved and the rest appended. No tilde
   * expansion: `~/x` is a folder named `~` in the workdir. The empty string is
   * refused rather than read as the workdir, so that a missing argument never
   * means "everything"; use `.` for the workdir.
   *
   * Throws `ToolError`s: `outside_workspace` (kind `policy`), `invalid_path`
   * (NUL byte, empty, too long), `symlink_loop`, `fence_denied` when the
   * runtime forbids looking at a path inside the workspace.
   *
   * Requires `--allow-read` for the workspace.
   *
   * @example
   * ```ts
   * import { Workspace } from "@toolfence/policy";
   * const ws = new Workspace(Deno.cwd());
   * try {
   *   await ws.resolve("../../etc/passwd");
   * } catch (error) {
   *   console.log((error as Error).message); // Path ../../etc/passwd is not within the agent's workspace
   * }
   * ```
   */
  // deno-lint-ignore require-await -- async so that a refusal is a rejected promise, which callers rely on.
  async resolve(
    input: string,
    options: ResolveOptions = {},
  ): Promise<ResolvedPath> {
    checkSyntax(input);
    this.#requirePresent(this.workdir, this.#workdirId);
    const absolute = path.posix.isAbsolute(input) ? input : this.workdir + "/" + input;
    const followFinal = options.followFinalSymlink ?? true;
    // realpath(3) resolves links and `..` exactly as the walk below does, in one
    // call; the walk is for what it cannot answer (a missing path, a loop, a
    // fence that hides an ancestor, a final link kept as a link), and for a
    // path one or two names below the workdir, where it costs no more calls
    // than realpath and the lstat the policy takes next (which it saves).
    // Not where folders are closed: the kernel's walk would look inside them.
    const quick = followFinal && this.#closedFolders.length === 0 && !nearWorkdir(absolute, this.workdir);
    const walked = (quick ? realpathOrUndefined(absolute) : undefined) ??
      this.#walk(input, absolute, followFinal, { hops: 0 });
    const area = this.#areaOf(walked.real);
    if (area === undefined) throw this.#outside(input, walked.real);
    if (area === "temp") this.#requirePresent(this.#tempDir!, this.#tempDirId!);
    const resolved: ResolvedPath = { path: walked.real, area, exists: walked.exists };
    if (walked.stat) statsTaken.set(resolved, walked.stat);
    return resolved;
  }

  /**
   * The real paths of the workspace's areas: the workdir, and the temp dir
   * once created. Confined operations work strictly below them.
   *
   * @example
   * ```ts
   * import { Workspace } from "@toolfence/policy";
   * const ws = new Workspace(Deno.cwd());
   * console.log(ws.roots()); // [the workdir]
   * ```
   */
  roots(): string[] {
    return this.#tempDir === undefined ? [this.workdir] : [this.workdir, this.#tempDir];
  }

  // A workspace folder deleted or replaced while the session runs is an error:
  // nothing may silently re-create it (or write into its replacement).
  // One lstat when all is well (every resolution pays it); requireRoot looks again only to say what is wrong.
  #requirePresent(root: string, id: string): void {
    let now: string | undefined;
    try {
      now = identity(quickLstat(root));
    } catch {
      // nothing there, or not to be looked at: requireRoot says which
    }
    if (now === id) return;
    requireRoot(root);
    throw new ToolError(`The workspace folder ${root} was replaced by another folder; nothing was changed`, {
      code: "workspace_missing",
      kind: "execution",
      recoverable: false,
      recoveryHint: "Ask the user to start a new session on the folder.",
      details: { root, found: "another folder" },
    });
  }

  /**
   * A path for display: relative to the workdir when inside it, else absolute.
   *
   * @example
   * ```ts
   * import { Workspace } from "@toolfence/policy";
   * const ws = new Workspace("/tmp");
   * console.log(ws.relative("/tmp/a/b.txt")); // a/b.txt
   * ```
   */
  relative(absPath: string): string {
    const normal = path.resolve(absPath);
    if (!isWithin(normal, this.workdir)) return normal;
    return path.relative(this.workdir, normal) || ".";
  }

  /**
   * Removes the temp dir if it was created; a later {@linkcode tempDir} makes a new one.
   *
   * Requires `--allow-write` for the temp folder.
   *
   * @example
   * ```ts
   * import { Workspace } from "@toolfence/policy";
   * const ws = new Workspace(Deno.cwd());
   * await ws.tempDir();
   * await ws.dispose();
   * ```
   */
  async dispose(): Promise<void> {
    const pending = this.#tempDirPromise;
    this.#tempDirPromise = undefined;
    if (pending === undefined) return;
    let dir: string;
    try {
      dir = await pending;
    } catch {
      return;
    }
    this.#tempDir = undefined;
    if (this.#tempDirFd !== undefined) fs.closeSync(this.#tempDirFd);
    this.#tempDirFd = undefined;
    // Removed without following a link at any depth: commands wrote there, and one a session's close did not end
    // (a daemon where no cgroup holds them) could swap a folder for a link to another while it goes.
    await removeConfined(dir);
  }

  /**
   * Which area an absolute real path lies in, judged by path components
   * alone (no symlinks are followed): `temp`, `workdir`, or `undefined` for
   * outside. For paths that came from {@linkcode resolve}.
   *
   * @example
   * ```ts
   * import { Workspace } from "@toolfence/policy";
   * const ws = new Workspace("/tmp");
   * console.log(ws.areaOf("/tmp/a"), ws.areaOf("/etc/passwd")); // workdir undefined
   * ```
   */
  areaOf(realPath: string): "workdir" | "temp" | undefined {
    return this.#areaOf(path.posix.normalize(realPath));
  }

  #areaOf(real: string): "workdir" | "temp" | undefined {
    if (this.#tempDir !== undefined && isWithin(real, this.#tempDir)) {
      return "temp";
    }
    if (isWithin(real, this.workdir)) return "workdir";
    return undefined;
  }

  // Whether `next` lies in one of the closed folders and is neither in an area nor on the way to one.
  #closed(next: string): boolean {
    if (!this.#closedFolders.some((folder) => next !== folder && isWithin(next, folder))) return false;
    if (this.#areaOf(next) !== undefined || isWithin(this.workdir, next)) return false;
    return this.#tempDir === undefined || !isWithin(this.#tempDir, next);
  }

  #outside(input: string, real: string): ToolError {
    return new ToolError(`Path ${input} is not within the agent's workspace`, {
      code: "outside_workspace",
      kind: "policy",
      recoveryHint: `Use a path inside the workspace ${this.workdir}${
        this.#tempDir ? ` or the temp dir ${this.#tempDir}` : ""
      }.`,
      details: {
        path: input,
        resolved: real,
        workdir: this.workdir,
        tempDir: this.#tempDir,
      },
    });
  }

  // Strict ancestors of the workdir and the temp dir were real folders when
  // those were resolved, and lie outside the workspace (so the agent cannot
  // swap them). A narrowly fenced Deno (--allow-read=W) may not look at them;
  // they are then taken as they were. The workdir and temp dir themselves are
  // always looked at: a temp dir replaced by a symlink must not be trusted.
  #unseenAncestor(p: string): boolean {
    return (p !== this.workdir && isWithin(this.workdir, p)) ||
      (this.#tempDir !== undefined && p !== this.#tempDir && isWithin(this.#tempDir, p) &&
        !isWithin(p, this.workdir));
  }

  // Synchronous on purpose, as realpathOrUndefined below: an lstat takes microseconds, while each asynchronous one
  // is a round trip through the runtime's thread pool, and a walk makes one per component of the path.
  #walk(
    input: string,
    absolute: string,
    followFinal: boolean,
    budget: { hops: number; outside?: boolean },
  ): Walked {
    // A path below the workdir is walked from the workdir: resolve() has just found that very folder (device,
    // inode, birth time) at its path, so a link swapped in above it would have to lead back to the same folder,
    // and the confined operations check the whole real path of the folder they act in anyway (getcwd).
    const below = absolute.startsWith(this.workdir + "/");
    const queue = (below ? absolute.slice(this.workdir.length + 1) : absolute).split("/");
    let current = below ? this.workdir : "/";
    // The lstat of `current`, while `current` is the entry it was taken of.
    let currentStat: fs.Stats | undefined;
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (name === "" || name === ".") continue;
      if (name === "..") {
        // `current` is a real path, so its parent is the true parent, as the
        // kernel would find it; a lexical `..` would be wrong after a symlink.
        current = path.posix.dirname(current);
        currentStat = undefined;
        continue;
      }
      const next = current === "/" ? "/" + name : current + "/" + name;
      if (this.#closedFolders.length > 0 && this.#closed(next)) throw this.#outside(input, next);
      let stat: fs.Stats;
      try {
        stat = quickLstat(next);
      } catch (error) {
        if (isRuntimePermissionError(error) && this.#unseenAncestor(next)) {
          current = next;
          currentStat = undefined;
          continue;
        }
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") {
          const rest = [name, ...queue].filter((c) => c !== "" && c !== ".");
          const joined = path.posix.join(current, ...rest);
          // A `..` after a missing folder: judge the path as it will be once
          // the missing folders are created, resolving links met on the way.
          if (rest.includes("..")) {
            return this.#walk(input, joined, followFinal, budget);
          }
          return { real: joined, exists: false };
        }
        throw this.#lookupError(input, next, error);
      }
      const last = queue.length === 0;
      if (stat.isSymbolicLink() && (followFinal || !last)) {
        if (this.#areaOf(next) === undefined) budget.outside = true;
        if (++budget.hops > MAX_SYMLINK_HOPS) {
          // A loop through a link outside the workspace is refused as the outside is, whatever lies there (see
          // #lookupError): a link outside that leads to a file or nowhere answers outside_workspace.
          if (budget.outside) throw this.#outside(input, next);
          throw new ToolError(
            `Path ${input} cannot be resolved: too many levels of symbolic links (a loop?)`,
            {
              code: "symlink_loop",
              kind: "semantic",
              recoveryHint: "Use a path that does not go through a symlink loop.",
              details: { path: input, at: next },
            },
          );
        }
        let target: string;
        try {
          target = fs.readlinkSync(next);
        } catch (error) {
          throw this.#lookupError(input, next, error);
        }
        if (target.startsWith("/")) {
          current = "/";
          currentStat = undefined;
        }
        queue.unshift(...target.split("/"));
        continue;
      }
      current = next;
      currentStat = stat;
    }
    return { real: current, exists: true, ...(currentStat ? { stat: currentStat } : {}) };
  }

  // What went wrong looking at a name outside the workspace (a link loop, a folder the server may not search) says
  // nothing: the path is outside, as it is when nothing or a plain file lies there. Before, a tenant's read_file of
  // `/srv/tenants/bob/x` answered symlink_loop where bob's x was a loop of links and outside_workspace where it was
  // a file or nothing, and an EACCES named the folder and the errno.
  #lookupError(input: string, at: string, error: unknown): ToolError {
    if (this.#areaOf(at) === undefined) return this.#outside(input, at);
    if (isRuntimePermissionError(error)) {
      const flag = runtimeFlag("read", at);
      return new ToolError(
        `The runtime does not grant read access to ${at}: it needs ${flag}`,
        {
          code: "fence_denied",
          kind: "policy",
          recoverable: false,
          recoveryHint: `Ask the user to allow reading ${at}.`,
          details: { path: input, at, permission: "read", flag },
          cause: error,
        },
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENAMETOOLONG") return tooLong(input);
    if (code === "ELOOP") {
      return new ToolError(
        `Path ${input} cannot be resolved: too many levels of symbolic links (a loop?)`,
        {
          code: "symlink_loop",
          kind: "semantic",
          details: { path: input, at },
          cause: error,
        },
      );
    }
    // The operating system refused to show us part of the path (e.g. EACCES):
    // we cannot tell where it leads, so it is not accepted.
    return new ToolError(
      `Path ${input} cannot be resolved: ${(error as Error).message}`,
      {
        code: "path_unresolvable",
        kind: "execution",
        details: { path: input, at, errno: code },
        cause: error,
      },
    );
  }
}

/**
 * Where the folder `a` lies from the folder `b`, by their real paths (a path
 * that does not exist yet taken as given, made absolute) and whole
 * components: `same`, `inside` (`a` lies in `b`), `around` (`b` lies in
 * `a`), or `undefined` when neither holds the other. For keeping the
 * workspaces of tenants apart.
 *
 * Requires `--allow-read` of the folders (a path that may not be looked at is
 * taken as given).
 *
 * @example
 * ```ts
 * import { folderRelation } from "@toolfence/policy";
 * console.log(folderRelation("/srv/a/b", "/srv/a"), folderRelation("/srv/a", "/srv/b")); // inside undefined
 * ```
 */
export function folderRelation(a: string, b: string): "same" | "inside" | "around" | undefined {
  const real = (folder: string) => {
    const absolute = path.resolve(folder);
    try {
      return fs.realpathSync(absolute);
    } catch {
      return absolute;
    }
  };
  const [ra, rb] = [real(a), real(b)];
  if (ra === rb) return "same";
  if (isWithin(ra, rb)) return "inside";
  if (isWithin(rb, ra)) return "around";
  return undefined;
}

// Which folder this is: inode numbers are reused at once on Linux (a folder
// deleted and made again often gets the same one), its birth time is not
// (but under Deno it has whole milliseconds only: see #tempDirFd).
function identity(stat: fs.Stats): string {
  return `${stat.dev}:${stat.ino}:${stat.birthtimeMs}`;
}

function tooLong(input: string): ToolError {
  const shown = input.length > 80 ? textPrefix(input, 77) + "..." : input;
  return new ToolError(
    `Path ${shown} is too long (names at most ${MAX_NAME_BYTES} bytes, paths ${PATH_MAX_BYTES})`,
    {
      code: "invalid_path",
      kind: "semantic",
      recoveryHint: "Use a shorter path.",
      details: { length: input.length },
    },
  );
}

function checkSyntax(input: string): void {
  if (typeof input !== "string") {
    throw new ToolError(`Path must be a string, got ${typeof input}`, {
      code: "invalid_path",
      kind: "semantic",
    });
  }
  if (input === "") {
    throw new ToolError(`Path is empty; use "." for the workspace folder`, {
      code: "invalid_path",
      kind: "semantic",
      recoveryHint: `Pass "." for the workspace folder or a path inside it.`,
    });
  }
  if (input.includes("\0")) {
    throw new ToolError(`Path ${JSON.stringify(input)} contains a NUL byte`, {
      code: "invalid_path",
      kind: "semantic",
      recoveryHint: "Remove the NUL byte from the path.",
    });
  }
  // A UTF-16 code unit takes at most 3 bytes of UTF-8: a short path cannot be too long, and is not encoded to tell.
  if (input.length * 3 <= MAX_NAME_BYTES) return;
  if (encoder.encode(input).length > PATH_MAX_BYTES) throw tooLong(input);
  for (const name of input.split("/")) {
    if (encoder.encode(name).length > MAX_NAME_BYTES) throw tooLong(input);
  }
}

// Whether `absolute` names an entry one or two names below `workdir`, without `..`.
function nearWorkdir(absolute: string, workdir: string): boolean {
  if (!absolute.startsWith(workdir + "/")) return false;
  const names = absolute.slice(workdir.length + 1).split("/").filter((name) => name !== "" && name !== ".");
  return names.length > 0 && names.length <= 2 && !names.includes("..");
}

// Synchronous on purpose: one realpath syscall takes a few microseconds, while an
// async one waits 40 to 100 µs for the thread pool, which dominated small reads.
function realpathOrUndefined(absolute: string): Walked | undefined {
  try {
    return { real: fs.realpathSync.native(absolute), exists: true };
  } catch {
    return undefined;
  }
}

// The real path and identity of the folder `dir`, or undefined when it cannot be taken now (missing, not readable
// under the runtime's grants): the temp dir is then made by path, as the folder is when it is used.
function pinOfFolder(dir: string): (FolderPin & { real: string }) | undefined {
  // Asked, never tried: a refused read would be a runtime permission error here.
  if (!queryRuntimePermission("read", dir).allowed) return undefined;
  try {
    const real = fs.realpathSync(dir);
    const stat = fs.statSync(real);
    return stat.isDirectory() ? { real, dev: stat.dev, ino: stat.ino } : undefined;
  } catch {
    return undefined;
  }
}
