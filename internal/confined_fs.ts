/**
 * Confined file operations: every change the file tools and the atomic write
 * make to the disk goes through here, and cannot be redirected out of the
 * workspace by a process that swaps a folder for a symlink while it runs.
 *
 * The threat: an attacker that can write inside the workspace (the model
 * through a shell, or any other local process) renames a folder away and puts
 * a symlink to an outside folder in its place, in a loop. A path checked a
 * moment ago then leads out, and `mkdir`, `open(O_CREAT)`, `rename` or
 * `unlink` on the absolute path would act outside.
 *
 * The technique: Node and Deno have no `openat()`, so each operation pins the
 * folder it acts in as the process's working folder: `chdir()` into the
 * folder, then `getcwd()` (the kernel's real path of where the process now
 * is) must be exactly the folder's real path; the operation then uses a single
 * name relative to it (`mkdir`, `open(O_CREAT|O_EXCL|O_NOFOLLOW)`, `rename`,
 * `unlink`, `rmdir`, `lstat`, `symlink`, `readdir`), which the kernel looks up
 * in that very folder and never through a link; then the working folder is
 * restored. All of it runs in one synchronous block, so no other JavaScript
 * runs in between. A folder swapped for a link fails the `getcwd()` check
 * (`path_changed`); a folder moved after the check stays inside the workspace
 * (the attacker cannot write outside), so the operation still lands inside.
 *
 * A move between two folders cannot pin both at once. It goes in single steps
 * of one level: from a pinned folder to `../` (its parent, found by the kernel
 * through the folder itself, never through a name) up to the two paths'
 * common folder, then down from each pinned child's `../`, under a temporary
 * name (`.toolfence-moving-<pid>-<random>.tmp`, never swept as debris: it is
 * the user's entry) until the last step. A single `..` from a folder strictly inside the
 * workspace always stays inside it, however folders are moved meanwhile.
 *
 * Why not `/proc/self/fd/N/name` paths on folders opened with
 * `O_DIRECTORY|O_NOFOLLOW`: Deno checks its permissions on the path text, so
 * they need `--allow-read=/proc/self/fd --allow-write=/proc/self/fd`, and that
 * grant lets any code in the process reach anywhere through a link met after
 * the descriptor, which would undo Deno's own fence.
 *
 * Limits: under Deno with path-scoped grants the kernel gets absolute paths
 * again (see {@linkcode confinementMode}). The working folder is process-wide. Other code of the process that
 * uses relative paths in asynchronous operations already handed to Node's
 * thread pool may see the pinned folder during the microseconds of a pinned
 * block (absolute paths are unaffected; Deno resolves paths when an operation
 * starts): measured, 3 of 2,000 relative reads misdirected under Node, 0
 * under Deno. Under Deno without read access to the process's own working
 * folder (`--allow-read=W` with the server started elsewhere), `chdir()`
 * back by name is refused; the block then returns through a symlink to the
 * working folder made for the moment in the pinned folder (Deno checks the
 * path text, the kernel follows the link), removed at once. Node worker
 * threads cannot `chdir()`: confined writes are refused there.
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";
import process from "node:process";
import { ToolError } from "@toolfence/core";
import { isWithin } from "./paths.ts";
import { quickLstat } from "./quick_stat.ts";
import { namesIn } from "./_runtime_fs.ts";
import { queryRuntimePermission, runtimeFenceKind } from "./runtime_permissions.ts";

const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
// Opening something to read never waits: a FIFO swapped in for a file would
// otherwise block the whole process in a synchronous open.
const READ_NOW = fs.constants.O_RDONLY | NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0);
const TEMP_PATTERN = /^\.toolfence-(\d+)-[0-9a-f]{16}\.tmp$/;

/** The identity of a pinned folder, to notice that a later pin reached a different one. */
export interface FolderPin {
  /** Device of the folder. */
  dev: number;
  /** Inode of the folder. */
  ino: number;
}

/** A name for a temp file or folder: hidden, of this process, and recognisable as debris once the process is gone. */
export function tempName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `.toolfence-${process.pid}-${hex}.tmp`;
}

/**
 * The process id in a name made by {@linkcode tempName}, or undefined for
 * other names.
 *
 * @example
 * ```ts
 * import { tempName, tempNameOwner } from "@toolfence/internal";
 * console.log(tempNameOwner(tempName()) === Deno.pid); // true
 * ```
 */
export function tempNameOwner(name: string): number | undefined {
  const match = TEMP_PATTERN.exec(name);
  return match ? Number(match[1]) : undefined;
}

/**
 * The error of a path that changed while a call used it (`path_changed`): something else is changing the folder at
 * the same time. `message` names the path as the model knows it; `details` say what changed.
 */
export function pathChangedError(message: string, details: Record<string, unknown>, cause?: unknown): ToolError {
  return new ToolError(message, {
    code: "path_changed",
    kind: "policy",
    recoverable: false,
    recoveryHint: "Something is changing the folder at the same time; check it, then try again.",
    details,
    ...(cause === undefined ? {} : { cause }),
  });
}

function pathChanged(folder: string, why: string): ToolError {
  return pathChangedError(`The folder ${folder} changed during the call (${why}); nothing was done there`, { folder });
}

const NOT_THAT_FOLDER = "it is not the folder it was: a link or another folder is in its place";

// An operating-system error of the folder itself, as chdir() would have thrown it (the tools turn its code into
// their answer: not_found, not_directory).
function folderError(code: "ENOENT" | "ENOTDIR", folder: string): NodeJS.ErrnoException {
  const text = code === "ENOENT" ? "no such file or directory" : "not a directory";
  return Object.assign(new Error(`${code}: ${text}, chdir '${folder}'`), { code, syscall: "chdir", path: folder });
}

/**
 * Why the folder `folder` (an absolute real path, resolved a moment before) could not be entered, or was entered
 * somewhere else, judged from the folder's own names and never from where a link among them leads. chdir() and
 * realpath() follow links: with a link swapped in for a folder of the workspace after its path was resolved, their
 * error (ENOTDIR for a link to a file, ENOENT for a link to nothing) or the folder they landed in told whether a
 * path outside the workspace, another tenant's file, exists, and its real path ("it now leads to
 * /srv/tenants/bob/notes"). Here each name from the deepest folder the runtime lets this process enter is looked
 * at with lstat() in its pinned parent: a missing name is ENOENT and a file ENOTDIR, as the operation would have
 * said; a link, a folder that is not the one looked at, or a path whole again is path_changed. The answer depends
 * on the folder's names alone, whatever a link leads to.
 */
function whyNotEntered(folder: string, pinned = true): Error {
  const names = folder.split("/").filter((name) => name !== "");
  // The walk starts at the shallowest folder of the path that the runtime lets this process read (the root under
  // Node and unscoped Deno; a granted folder under path-scoped grants, above which lies only what the operator set).
  let start = 0;
  while (start < names.length && !readable(`/${names.slice(0, start).join("/")}`)) start += 1;
  if (start === names.length) return pathChanged(folder, NOT_THAT_FOLDER);
  let at = `/${names.slice(0, start).join("/")}`;
  if (pinned) {
    try {
      process.chdir(at);
    } catch {
      return pathChanged(folder, NOT_THAT_FOLDER);
    }
  }
  for (const name of names.slice(start)) {
    at = at === "/" ? `/${name}` : `${at}/${name}`;
    let stat: fs.Stats;
    try {
      // Pinned, the name in its parent; checked (no chdir), its absolute path, whose folders were looked at just
      // before (a link swapped in among them between two lstat() calls goes unseen: that mode's race).
      stat = fs.lstatSync(pinned ? name : at);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT"
        ? folderError("ENOENT", folder)
        : pathChanged(folder, NOT_THAT_FOLDER);
    }
    if (stat.isSymbolicLink()) return pathChanged(folder, NOT_THAT_FOLDER);
    if (!stat.isDirectory()) return folderError("ENOTDIR", folder);
    if (!pinned) continue;
    try {
      // A link swapped in since the lstat() is followed here: whatever its error, or the folder it lands in, the
      // answer is the same.
      process.chdir(name);
      const here = fs.lstatSync(".");
      if (here.dev !== stat.dev || here.ino !== stat.ino) return pathChanged(folder, NOT_THAT_FOLDER);
    } catch (error) {
      // A folder of the path this process may not enter (no search permission), still the very folder looked at.
      return (error as NodeJS.ErrnoException).code === "EACCES" && sameEntry(name, stat)
        ? Object.assign(new Error(`EACCES: permission denied, chdir '${folder}'`), { code: "EACCES", path: folder })
        : pathChanged(folder, NOT_THAT_FOLDER);
    }
  }
  return pathChanged(folder, NOT_THAT_FOLDER);
}

function sameEntry(name: string, stat: fs.Stats): boolean {
  try {
    const now = fs.lstatSync(name);
    return now.dev === stat.dev && now.ino === stat.ino;
  } catch {
    return false;
  }
}

// Whether the runtime's own fence lets this process read `folder`: Deno's flags, Node's permission model (under
// `--allow-fs-read=W` an lstat above W is refused, and the walk must start at W), or no fence at all.
function readable(folder: string): boolean {
  return queryRuntimePermission("read", folder).allowed;
}

function checkName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new TypeError(`confined operations take a single name, got ${JSON.stringify(name)}`);
  }
}

/** Addresses a name in the folder of a block: relative when pinned, absolute when not. */
export type At = (name: string) => string;

// The process's working folder to return to, or undefined when the runtime
// would refuse the way back. Only Deno gates chdir() (read access to the
// target); its permission is queried, never tried: a refused check turns the
// whole permission to "denied" for the rest of the process.
function home(current: string | undefined = workingFolder()): string | undefined {
  // The working folder deleted: nothing relative to it can work any more, so
  // the root will do as the place to return to.
  const cwd = current ?? "/";
  if (runtimeFenceKind() !== "deno" || queryRuntimePermission("read", cwd).allowed) return cwd;
  return undefined;
}

// getcwd(): the kernel's real path of the process's working folder now, or
// undefined when it has none (deleted).
function workingFolder(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/**
 * How confined operations hold in this process now:
 * - `pinned`: race-free (see the module notes). Node, with or without its
 *   permission model, and Deno with unscoped `--allow-read` and
 *   `--allow-write`: the single name reaches the kernel as it is.
 * - `resolved`: Deno with path-scoped grants (`--allow-write=W`) resolves a
 *   relative name against the working folder itself and hands the kernel the
 *   absolute path, which is walked again: the folder is still pinned and
 *   checked, but a swap that lands in the microseconds between Deno's
 *   `getcwd()` and the system call goes through (measured: 1 in 5,000
 *   `mkdir`s, 4 in 5,000 folder moves, up to 1 in 60 new files on a loaded
 *   machine, against 15% of `mkdir`s before).
 * - `checked`: Deno without read access to the working folder, where
 *   `chdir()` could not come back: the folder's real path is checked right
 *   before each operation (start the process inside the workspace, as
 *   `toolfence serve` does, or grant reading its working folder).
 *
 * @example
 * ```ts
 * import { confinementMode } from "@toolfence/internal";
 * console.log(confinementMode()); // "pinned" under deno run -A
 * ```
 */
export function confinementMode(): "pinned" | "resolved" | "checked" {
  if (home() === undefined) return "checked";
  if (runtimeFenceKind() !== "deno") return "pinned";
  return queryRuntimePermission("read").allowed && queryRuntimePermission("write").allowed ? "pinned" : "resolved";
}

const relative: At = (name) => name;

// Deno gates chdir() and realpath() on read access: asked first, so that a
// refusal is a clear error and not a tried check (which would turn the whole
// read permission to "denied" for the rest of the process).
function requireReadable(folder: string): void {
  if (runtimeFenceKind() !== "deno") return;
  const answer = queryRuntimePermission("read", folder);
  if (answer.allowed) return;
  throw new ToolError(`The runtime does not grant read access to ${folder}: it needs ${answer.flag}`, {
    code: "fence_denied",
    kind: "policy",
    recoverable: false,
    recoveryHint: `Ask the user to allow reading ${folder}.`,
    details: { path: folder, permission: "read", flag: answer.flag },
  });
}

/**
 * Runs `fn` with the folder `folder` pinned as the process's working folder;
 * `folder` must be an absolute real path, and with `pin` also the same
 * folder (device and inode) as when the pin was taken. `fn` addresses names
 * in the folder through `at`. Throws `path_changed` when the folder is now a
 * link or another folder; a folder that cannot be entered is ENOENT,
 * ENOTDIR or EACCES only as its own names show it, never as a link among them
 * leads (see whyNotEntered). The working folder is restored before it returns
 * or throws. See {@linkcode confinementMode} for when it can only check.
 */
export function inFolder<T>(folder: string, fn: (at: At) => T, pin?: FolderPin): T {
  requireReadable(folder);
  const current = workingFolder();
  const back = home(current);
  if (back === undefined) return checkedIn(folder, fn, pin);
  // Already there (a server works in its workspace, where most files lie):
  // getcwd() has just given the folder's real path for the working folder, so
  // it is pinned as a chdir() would pin it, and the call and its check are
  // saved.
  if (current === folder) return pinnedHere(folder, fn, pin);
  try {
    try {
      process.chdir(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ERR_WORKER_UNSUPPORTED_OPERATION") throw whyNotEntered(folder);
      throw new ToolError("Confined file operations need the main thread (a worker thread cannot change folder)", {
        code: "unsupported_runtime",
        kind: "execution",
        recoverable: false,
        details: { reason: "process.chdir is not available in worker threads" },
        cause: error,
      });
    }
    if (process.cwd() !== folder) throw whyNotEntered(folder);
    return pinnedHere(folder, fn, pin);
  } finally {
    try {
      process.chdir(back);
    } catch {
      // The working folder went away meanwhile; leave the pinned folder anyway.
      process.chdir("/");
    }
  }
}

// `fn` in the working folder, which getcwd() has just found to be `folder`.
function pinnedHere<T>(folder: string, fn: (at: At) => T, pin?: FolderPin): T {
  if (pin !== undefined) checkPin(folder, fs.lstatSync("."), pin);
  return fn(relative);
}

function checkPin(folder: string, now: fs.Stats, pin: FolderPin): void {
  if (now.dev !== pin.dev || now.ino !== pin.ino) throw pathChanged(folder, "it is another folder now");
}

// The `checked` mode of confinementMode().
function checkedIn<T>(folder: string, fn: (at: At) => T, pin?: FolderPin): T {
  let real: string | undefined;
  try {
    real = fs.realpathSync(folder);
  } catch {
    // Judged from the folder's names (see whyNotEntered), never from realpath's error through a link.
  }
  if (real !== folder) throw whyNotEntered(folder, false);
  if (pin !== undefined) checkPin(folder, fs.lstatSync(folder), pin);
  return fn((name) => (name === "." ? folder : `${folder}/${name}`));
}

/** {@linkcode inFolder} on the folder of `real`, passing `fn` its last name (addressed) and `at`. */
function inParent<T>(real: string, fn: (name: string, at: At) => T, pin?: FolderPin): T {
  const name = path.posix.basename(real);
  checkName(name);
  return inFolder(path.posix.dirname(real), (at) => fn(at(name), at), pin);
}

function pinOf(stat: fs.Stats): FolderPin {
  return { dev: stat.dev, ino: stat.ino };
}

/**
 * The lstat of `real` (never following a final link), looked up in its
 * pinned folder; undefined when nothing is there.
 */
export function lstatConfined(real: string): fs.Stats | undefined {
  try {
    return inParent(real, (name) => fs.lstatSync(name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/** The root among `roots` that `real` lies in, the deepest one when they nest. */
function rootOf(real: string, roots: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const root of roots) {
    if (isWithin(real, root) && (best === undefined || root.length > best.length)) best = root;
  }
  return best;
}

function outsideRoots(real: string, roots: readonly string[]): ToolError {
  return new ToolError(`${real} is not within the agent's workspace`, {
    code: "outside_workspace",
    kind: "policy",
    details: { path: real, roots },
  });
}

/**
 * Creates the folder `dir` and its missing parents below the root among
 * `roots` it lies in, one pinned step per level; returns the topmost folder
 * it created (remove it to undo), or undefined when all existed. Never
 * creates a root itself: a missing root is `workspace_missing`.
 */
export function mkdirsConfined(dir: string, roots: readonly string[], mode = 0o777): string | undefined {
  const root = rootOf(dir, roots);
  if (root === undefined) throw outsideRoots(dir, roots);
  requireRoot(root);
  let created: string | undefined;
  let current = root;
  for (const name of dir === root ? [] : dir.slice(root.length + 1).split("/")) {
    const next = current + "/" + name;
    inFolder(current, (at) => {
      try {
        fs.mkdirSync(at(name), { mode });
        created ??= next;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const there = fs.lstatSync(at(name));
        if (there.isSymbolicLink()) throw pathChanged(next, "it is a symlink now");
        if (!there.isDirectory()) throw Object.assign(new Error(`ENOTDIR: ${next}`), { code: "ENOTDIR", path: next });
      }
    });
    current = next;
  }
  return created;
}

/**
 * Throws `workspace_missing` when the root folder `root` is gone or is no
 * longer a folder (never re-created).
 */
export function requireRoot(root: string): void {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  if (stat?.isDirectory()) return;
  throw new ToolError(`The workspace folder ${root} no longer exists; nothing was changed`, {
    code: "workspace_missing",
    kind: "execution",
    recoverable: false,
    recoveryHint: "Ask the user to restore the workspace folder or start a new session.",
    details: { root, found: stat === undefined ? "nothing" : "not a folder" },
  });
}

/** A file created exclusively, open for writing, and the folder it lies in. */
export interface CreatedFile {
  /** The file descriptor, open for writing. */
  fd: number;
  /** The folder it was created in. */
  pin: FolderPin;
}

/**
 * Creates `real` exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`: never over an
 * existing entry, never through a link) in its pinned folder, with exactly
 * `mode` when `exact` (not masked by the umask).
 */
export function createConfined(real: string, mode = 0o666, exact = false): CreatedFile {
  return inParent(real, (name, at) => {
    const pin = pinOf(fs.lstatSync(at(".")));
    const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW;
    if (exact && nodePermissionModel()) {
      // Node's permission model disables fchmod on a descriptor; create with the mode instead.
      const mask = process.umask(0);
      try {
        return { fd: fs.openSync(name, flags, mode), pin };
      } finally {
        process.umask(mask);
      }
    }
    const fd = fs.openSync(name, flags, mode);
    try {
      if (exact) fs.fchmodSync(fd, mode);
    } catch (error) {
      fs.closeSync(fd);
      fs.unlinkSync(name);
      throw error;
    }
    return { fd, pin };
  });
}

/**
 * Creates each of `names` exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) in the
 * folder `dir`, pinned once for all of them, and returns their descriptors,
 * open for writing, in order. On a failure the files it made are closed and
 * removed, and the error is thrown (ENOENT when `dir` is missing).
 */
export function createAllConfined(dir: string, names: readonly string[], mode = 0o666): number[] {
  for (const name of names) checkName(name);
  return inFolder(dir, (at) => {
    const fds: number[] = [];
    const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW;
    try {
      for (const name of names) fds.push(fs.openSync(at(name), flags, mode));
      return fds;
    } catch (error) {
      for (const [index, fd] of fds.entries()) {
        fs.closeSync(fd);
        fs.unlinkSync(at(names[index]));
      }
      throw error;
    }
  });
}

// Node's permission model (--permission, --experimental-permission) refuses
// fd-level fchmod and fsync.
function nodePermissionModel(): boolean {
  return typeof (process as { permission?: unknown }).permission === "object";
}

/** Opens the file `real` for reading without following a final link, in its pinned folder. */
export function openReadConfined(real: string): number {
  return inParent(real, (name) => fs.openSync(name, READ_NOW));
}

/**
 * Opens the file `real` for reading as {@linkcode openReadConfined} does, after
 * `check` was given its lstat (undefined when nothing is there), taken by the
 * same single name in the same pinned folder: what `check` judges is what is
 * opened, or nothing, and never an entry that a link swapped in for a folder
 * of the path leads to (a stat by the absolute path would follow it, and its
 * answer, or its error, would tell what lies outside).
 */
export function openReadCheckedConfined(real: string, check: (now: fs.Stats | undefined) => void): number {
  return inParent(real, (name) => {
    let now: fs.Stats | undefined;
    try {
      now = quickLstat(name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    check(now);
    return fs.openSync(name, READ_NOW);
  });
}

/** Opens the folder `dir` itself for reading (for `fsync`), pinned. */
export function openFolderConfined(dir: string, pin?: FolderPin): number {
  return inFolder(dir, (at) => fs.openSync(at("."), fs.constants.O_RDONLY), pin);
}

/** Renames `from` to `to` within the pinned folder `dir`; replaces a file or link at `to`, never following it. */
export function renameInFolder(dir: string, from: string, to: string, pin?: FolderPin): void {
  checkName(from);
  checkName(to);
  inFolder(dir, (at) => fs.renameSync(at(from), at(to)), pin);
}

/**
 * Renames `from` to `to` within the pinned folder `dir`, only where nothing
 * lies at `to`: an entry that appeared there since the caller looked is left
 * alone and the call throws `EEXIST`. A file or link is placed by `link(2)`,
 * which never replaces, then its temporary name removed. A folder (or a file
 * system without hard links) is renamed after an `lstat` finds the name free:
 * in the moment between, `rename(2)` can replace only an empty folder, never
 * a file.
 */
export function placeInFolder(dir: string, from: string, to: string, pin?: FolderPin): void {
  checkName(from);
  checkName(to);
  inFolder(dir, (at) => placeEntry(at(from), at(to)), pin);
}

// rename(from, to) where nothing lies at `to` (see placeInFolder); both are addressed in pinned folders.
function placeEntry(from: string, to: string): void {
  if (!fs.lstatSync(from).isDirectory()) {
    try {
      fs.linkSync(from, to);
      fs.unlinkSync(from);
      return;
    } catch (error) {
      if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
    }
  }
  try {
    fs.lstatSync(to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return fs.renameSync(from, to);
  }
  throw Object.assign(new Error(`EEXIST: file already exists, rename '${from}' -> '${to}'`), { code: "EEXIST" });
}

// link(2)'s errors on a file system that has no hard links (FAT, some network and FUSE file systems).
const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/** Removes the file or link `real` (never what a link points to), in its pinned folder. */
export function unlinkConfined(real: string, pin?: FolderPin): void {
  inParent(real, (name) => fs.unlinkSync(name), pin);
}

/** Removes the empty folder `real`, in its pinned parent. */
export function rmdirConfined(real: string): void {
  inParent(real, (name) => fs.rmdirSync(name));
}

/** Creates the folder `real` (its parent must exist), in its pinned parent. */
export function mkdirConfined(real: string, mode = 0o777): void {
  inParent(real, (name) => fs.mkdirSync(name, { mode }));
}

/** Creates a symlink `real` with the target text `target`, in its pinned folder. */
export function symlinkConfined(target: string, real: string): void {
  inParent(real, (name) => fs.symlinkSync(target, name));
}

/** The target text of the link `real`, read in its pinned folder. */
export function readlinkConfined(real: string): string {
  return inParent(real, (name) => fs.readlinkSync(name));
}

/** The entries of the folder `dir` with their types (from the folder itself, links not followed), pinned. */
export function readdirConfined(dir: string): fs.Dirent[] {
  return inFolder(dir, (at) => fs.readdirSync(at("."), { withFileTypes: true }));
}

/**
 * The names in the folder `dir`, pinned, in the file system's order: the runtime's own listing, without the
 * `Dirent`s of {@linkcode readdirConfined}, which under Deno took 2.8 s for a folder of 100,000 names here.
 */
export function namesConfined(dir: string): string[] {
  return inFolder(dir, (at) => namesIn(at(".")));
}

/** Sets the mode of `real` without following a link: a link is left as it is. */
export function chmodConfined(real: string, mode: number): void {
  inParent(real, (name) => {
    if (nodePermissionModel()) {
      // No fchmod there: chmod by name, right after checking in the same block that it is no link.
      if (fs.lstatSync(name).isSymbolicLink()) throw pathChanged(real, "it is a symlink now");
      return fs.chmodSync(name, mode);
    }
    const fd = fs.openSync(name, READ_NOW);
    try {
      fs.fchmodSync(fd, mode);
    } finally {
      fs.closeSync(fd);
    }
  });
}

/**
 * Moves the entry `from` to `to` (absolute real paths whose folders exist),
 * replacing a file or link at `to` the way `rename(2)` does, or, with
 * `replace: false`, only where nothing lies at `to` (see
 * {@linkcode placeInFolder}). Within one folder it is one rename; across
 * folders it moves one level per step (see the module notes), the last step
 * under the final name. Both paths must lie under the same root among
 * `roots`; otherwise it throws an `EXDEV` error and the caller copies instead.
 */
export function moveConfined(
  from: string,
  to: string,
  roots: readonly string[],
  options: { replace?: boolean } = {},
): void {
  const fromDir = path.posix.dirname(from);
  const toDir = path.posix.dirname(to);
  const fromName = path.posix.basename(from);
  const toName = path.posix.basename(to);
  checkName(fromName);
  checkName(toName);
  const land = options.replace === false ? placeInFolder : renameInFolder;
  if (fromDir === toDir) return land(fromDir, fromName, toName);
  const root = rootOf(fromDir, roots);
  if (root === undefined || rootOf(toDir, roots) !== root) {
    throw Object.assign(new Error(`EXDEV: ${from} and ${to} lie in different areas`), { code: "EXDEV" });
  }
  let common = fromDir;
  while (!isWithin(toDir, common)) common = path.posix.dirname(common);
  if (!isWithin(common, root)) throw outsideRoots(common, roots);
  // Not a tempName(): what travels is the user's own entry, and a move cut
  // short must leave it where the user can find it, not as debris to sweep.
  const hop = tempName().replace(".toolfence-", ".toolfence-moving-");
  let name = fromName;
  let current = fromDir;
  try {
    // Up: from each pinned folder to its parent, strictly inside the root.
    while (current !== common) {
      const here = current;
      const leaving = name;
      inFolder(here, (at) => fs.renameSync(at(leaving), at("..") + "/" + hop));
      name = hop;
      current = path.posix.dirname(here);
    }
    // Down: pin each child and pull the entry in from its parent.
    const below = toDir === common ? [] : toDir.slice(common.length + 1).split("/");
    for (const [index, part] of below.entries()) {
      const child = current + "/" + part;
      const last = index === below.length - 1;
      const arriving = name;
      const landing = last ? toName : hop;
      const step = last && options.replace === false ? placeEntry : fs.renameSync;
      inFolder(child, (at) => step(at("..") + "/" + arriving, at(landing)));
      name = landing;
      current = child;
    }
    if (current === toDir && name !== toName) land(current, name, toName);
  } catch (error) {
    if (name === hop) {
      (error as { details?: unknown }).details ??= { strandedAt: path.posix.join(current, hop) };
    }
    throw error;
  }
}

// One folder's share of a tree removal: its files and links go, its
// subfolders are returned for the caller to descend into.
function emptyFolderStep(dir: string, onRemoved: () => void): string[] {
  const entries = readdirConfined(dir);
  const others = entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name).sort();
  if (others.length > 0) {
    inFolder(dir, (at) => {
      for (const name of others) {
        fs.unlinkSync(at(name));
        onRemoved();
      }
    });
  }
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
}

/**
 * Removes the folder `dir` and everything in it, entry by entry, each in its
 * pinned folder and never following a link; a cancel stops it between
 * folders. `onRemoved` counts the entries removed.
 */
export function removeTreeConfined(
  dir: string,
  signal: AbortSignal,
  onRemoved: () => void = () => {},
): Promise<void> {
  return removeTreeBelow(dir, dir, signal, onRemoved);
}

// Past this many bytes of path a folder of a tree being removed is first moved up to the tree's top: a path longer
// than PATH_MAX cannot be entered by name, and a command's nested folders (30 of 200 letters) made the removal of a
// scratch copy or a temp dir fail, leaving it on the disk.
const DEEP_PATH_BYTES = 2048;

// The folder `dir` (below or at `top`) itself, or, when its path is long, the same folder moved to a fresh name
// right under `top`, one level a step.
function shallow(dir: string, top: string): string {
  if (dir === top || Buffer.byteLength(dir) <= DEEP_PATH_BYTES) return dir;
  const to = top + "/" + tempName();
  moveConfined(dir, to, [top], { replace: false });
  return to;
}

async function removeTreeBelow(dir: string, top: string, signal: AbortSignal, onRemoved: () => void): Promise<void> {
  signal.throwIfAborted();
  for (const name of emptyFolderStep(dir, onRemoved)) {
    // Other work runs between folders.
    await Promise.resolve();
    await removeTreeBelow(shallow(dir + "/" + name, top), top, signal, onRemoved);
    onRemoved();
  }
  rmdirConfined(dir);
}

/** {@linkcode removeTreeConfined} in one synchronous run, for small trees (debris). */
export function removeTreeConfinedSync(dir: string): void {
  removeTreeSyncBelow(dir, dir);
}

function removeTreeSyncBelow(dir: string, top: string): void {
  for (const name of emptyFolderStep(dir, () => {})) removeTreeSyncBelow(shallow(dir + "/" + name, top), top);
  rmdirConfined(dir);
}

/** What a tree copy did. */
export interface CopyCounts {
  /** Regular files copied. */
  files: number;
  /** Folders copied. */
  directories: number;
  /** Symlinks recreated as links. */
  links: number;
  /** Paths (relative to the source) of FIFOs, sockets and devices that were not copied. */
  skipped: string[];
}

/** A link a tree copy made, or a tree walk found: where it lies below the tree's top ("" for the top), and its text. */
export interface CopiedLink {
  /** Its path relative to the top of the tree, "" when the top itself is the link. */
  relative: string;
  /** Its target text, as `readlink` gives it. */
  text: string;
}

/**
 * Every symlink in the tree at `top` (the top itself included), found
 * without following any link, each folder read in its pinned folder; a
 * cancel stops it between folders.
 */
export async function linksInTree(top: string, signal: AbortSignal, known?: fs.Stats): Promise<CopiedLink[]> {
  const found: CopiedLink[] = [];
  const visit = async (real: string, relative: string, stat: fs.Stats | undefined): Promise<void> => {
    if (stat?.isSymbolicLink()) {
      found.push({ relative, text: readlinkConfined(real) });
    } else if (stat?.isDirectory()) {
      signal.throwIfAborted();
      await Promise.resolve();
      for (const entry of readdirConfined(real)) {
        // A file system that gives no type in its listing is asked with lstat: a link is never missed.
        if (entry.isFile()) continue;
        const below = real + "/" + entry.name;
        await visit(below, path.posix.join(relative, entry.name), lstatConfined(below));
      }
    }
  };
  await visit(top, "", known ?? lstatConfined(top));
  return found;
}

function copyBytes(fromFd: number, toFd: number, budget?: { bytes: number }, shown = ""): Promise<void> {
  return new Promise((resolve, reject) => {
    const buffer = new Uint8Array(1 << 20);
    const step = () => {
      fs.read(fromFd, buffer, 0, buffer.length, null, (error, read) => {
        if (error) return reject(error);
        if (read === 0) return resolve();
        if (budget !== undefined && (budget.bytes -= read) < 0) return reject(pastBudget(shown));
        writeAll(toFd, buffer.subarray(0, read)).then(step, reject);
      });
    };
    step();
  });
}

// The refusal of a copy past its budget, as the device's: the caller says how to go on as for a full disk.
function pastBudget(file: string): Error {
  return Object.assign(new Error(`ENOSPC: copying ${file} would pass the bytes the copy may write`), {
    code: "ENOSPC",
    path: file,
  });
}

/** Writes all of `data` to `fd`, asynchronously. */
export function writeAll(fd: number, data: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    let offset = 0;
    const step = () => {
      if (offset >= data.length) return resolve();
      fs.write(fd, data, offset, data.length - offset, null, (error, written) => {
        if (error) return reject(error);
        offset += written;
        step();
      });
    };
    step();
  });
}

/**
 * `fsync` of a descriptor, asynchronously. Under Node's permission model,
 * which refuses fd-level fsync, it does nothing: the write stays atomic
 * for readers and across a crash of the process, only not across a power
 * failure.
 */
export function syncFd(fd: number): Promise<void> {
  if (nodePermissionModel()) return Promise.resolve();
  return new Promise((resolve, reject) => fs.fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/**
 * Copies `from` to `to` (which must not exist; its folder must) without
 * following any symlink: links are recreated with the same target text, so
 * a link to something outside never brings that content in. Regular files
 * keep their mode; special files are skipped and listed. Every read and
 * every write is done in its pinned folder. `known` is the lstat of `from`
 * when the caller has it (the top of a copy may be a workspace root, whose
 * own folder lies outside). `links`, when given, receives each link made
 * (its path relative to `to`, "" for `to` itself, and its target text), for
 * the caller to judge where it leads at its new place. `budget`, when given,
 * is the most bytes the copy may write (shared by the copies given the same
 * object): past it the copy fails with `ENOSPC` before writing the rest, and
 * the budget is below zero. A
 * copy writes every byte a source's size says, the holes of a sparse file and
 * each name of a file with many, which cost whoever made them nothing.
 */
export async function copyTreeConfined(
  from: string,
  to: string,
  signal: AbortSignal,
  counts: CopyCounts = { files: 0, directories: 0, links: 0, skipped: [] },
  relative = "",
  known?: fs.Stats,
  links?: CopiedLink[],
  budget?: { bytes: number },
): Promise<CopyCounts> {
  signal.throwIfAborted();
  const stat = known ?? lstatConfined(from);
  if (stat === undefined) throw Object.assign(new Error(`ENOENT: ${from}`), { code: "ENOENT", path: from });
  if (stat.isSymbolicLink()) {
    const text = readlinkConfined(from);
    symlinkConfined(text, to);
    links?.push({ relative, text });
    counts.links++;
  } else if (stat.isFile()) {
    const source = openReadConfined(from);
    try {
      const opened = fs.fstatSync(source);
      if (!opened.isFile()) throw pathChanged(path.posix.dirname(from), "a file became something else");
      // Refused before it writes, the budget left below zero as by a write past it (whose caller then knows why).
      if (budget !== undefined && opened.size > budget.bytes) {
        budget.bytes -= opened.size;
        throw pastBudget(from);
      }
      const { fd } = createConfined(to, stat.mode & 0o7777, true);
      try {
        await copyBytes(source, fd, budget, from);
      } finally {
        fs.closeSync(fd);
      }
    } finally {
      fs.closeSync(source);
    }
    counts.files++;
  } else if (stat.isDirectory()) {
    mkdirConfined(to, 0o700);
    for (const entry of readdirConfined(from).map((e) => e.name).sort()) {
      const below = path.posix.join(relative, entry);
      await copyTreeConfined(from + "/" + entry, to + "/" + entry, signal, counts, below, undefined, links, budget);
    }
    chmodConfined(to, stat.mode & 0o7777);
    counts.directories++;
  } else {
    counts.skipped.push(relative || path.posix.basename(from));
  }
  return counts;
}

/**
 * Removes `real` whatever it is (a file, a link, or a folder tree), confined,
 * never following a link; nothing there is no error. A cancel of `signal`
 * stops a folder's removal between folders.
 */
export async function removeConfined(
  real: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<void> {
  const stat = lstatConfined(real);
  if (stat === undefined) return;
  if (stat.isDirectory()) await removeTreeConfined(real, signal);
  else unlinkConfined(real);
}

/**
 * {@linkcode removeConfined}, quietly, since it runs while handling another
 * failure.
 */
export async function discardConfined(real: string): Promise<void> {
  try {
    await removeConfined(real);
  } catch {
    // best effort, see above
  }
}

/** The synchronous {@linkcode discardConfined}; whether it removed something. */
export function discardConfinedSync(real: string): boolean {
  try {
    const stat = lstatConfined(real);
    if (stat === undefined) return false;
    if (stat.isDirectory()) removeTreeConfinedSync(real);
    else unlinkConfined(real);
    return true;
  } catch {
    return false;
  }
}
