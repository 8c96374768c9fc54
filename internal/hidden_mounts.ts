// The bubblewrap mounts that hide the policy's denied paths inside a sandbox:
// every existing entry matching a deny glob is covered, a file by an empty
// read-only file, a folder by an empty read-only tmpfs. In the workspace, the
// folders above a covered entry are pinned (bound onto themselves), so that a
// command cannot rename them: a cover moves with its folder, and the next
// command's walk would find the denied file under a name no rule matches.
// Outside it, absolute globs are covered wherever the read view shows them (a
// token file under /etc).
import fs from "node:fs";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import { entriesIn, walkListed } from "./_runtime_fs.ts";
import { linkedInodes, otherNames } from "./hidden_aliases.ts";
import { globBase, pathGlobMatcher } from "./path_globs.ts";
import { isWithin } from "./paths.ts";
import { shellOutput } from "./probe_process.ts";
import { isRuntimePermissionError } from "./runtime_permissions.ts";
import { unseenBySandbox } from "./sandbox_mounts.ts";

// A workspace (or a folder outside it an absolute glob names) with more
// entries than this cannot be walked before each command; the command is
// refused rather than run with a secret in view.
const MAX_ENTRIES = 200_000;

/**
 * Where a repository keeps the content of files besides the files themselves: git every version ever staged or
 * committed (objects and packs, a submodule's own repository, Git LFS's copies), the sides of a conflict (`rr-cache`),
 * a rebase's patches, what `git fsck --lost-found` wrote, the last commit message with `git commit -v`'s diff.
 * While the policy hides paths of the workspace, they are hidden too (`PolicyRules.decidePath` denies them; not in
 * `PolicyRules.hiddenGlobs`: the process door hides them from every command but one a person allowed, so that the
 * git such a line runs works). Before, with `**\/.env` denied, the sandbox on and nobody to ask, a reader's
 * `od -An -tx1 .git/objects/fa/709a...` printed the zlib stream of a committed `.env` (`blob 15\0ENV_SECRET_ABC`),
 * and so did `od` of the copy tool's copy of it. Among hidden globs, {@linkcode hiddenMountArgs} covers their entries
 * without looking for other names of the files in them (a local clone's packs are hard links of another repository's,
 * and the look-up walked the whole workspace before each command). Not public API.
 */
export const REPOSITORY_STORE_GLOBS: readonly string[] = Object.freeze([
  "**/.git/objects",
  "**/.git/modules",
  "**/.git/rr-cache",
  "**/.git/rebase-apply",
  "**/.git/rebase-merge",
  "**/.git/lost-found",
  "**/.git/lfs",
  // `git commit -v` leaves the staged diff in it.
  "**/.git/COMMIT_EDITMSG",
  // The other version control systems keep every file's content too: Subversion a plain copy of each
  // (`.svn/pristine/d0/d094....svn-base`; `text-base` in every folder before 1.7), Mercurial its revlogs (small
  // files stored as they are), Jujutsu a git repository, Bazaar its packs, darcs its pristine tree and patches.
  "**/.svn/pristine",
  "**/.svn/text-base",
  "**/.hg/store",
  "**/.hg/strip-backup",
  "**/.hg/shelved",
  "**/.jj/repo/store",
  "**/.bzr/repository",
  "**/_darcs/pristine",
  "**/_darcs/pristine.hashed",
  "**/_darcs/patches",
]);

/** The mounts of {@linkcode hiddenMountArgs}, in the order they must be given. */
export interface HiddenMounts {
  /**
   * The workspace folders above a covered entry (real paths, parents first),
   * each to be bound onto itself (a mount point cannot be renamed). Before the
   * protected paths' read-only mounts, so that a pin never makes one of them
   * writable again. Bound by a descriptor opened confined where the caller can
   * pass one: bubblewrap resolves a source path itself, through a link a
   * command swapped in meanwhile.
   */
  pins: string[];
  /** The covers, after every other bind. */
  covers: string[];
}

/**
 * The bwrap arguments hiding every existing entry the globs deny (matched as
 * {@linkcode pathGlobMatcher} does, letter case ignored): relative globs and
 * absolute ones under `root`, by a walk of `root`; absolute globs elsewhere,
 * by a walk of the folder each names (its part before the first glob
 * character) where it lies in `view`, the folders the sandbox shows (or as
 * `listed` gives a folder the runtime may not list: {@linkcode listOutside}).
 * A file of the workspace that is another name of a denied file (a hard link)
 * is hidden as the file is ({@linkcode otherNames}). Not public API.
 */
export function hiddenMountArgs(
  root: string,
  globs: readonly string[],
  view: readonly string[] = [],
  listed: ReadonlyMap<string, ChildListing> = new Map(),
): HiddenMounts {
  const ways = new Set<string>();
  const covered = deniedEntries(root, globs, view, listed, ways);
  if (covered.size === 0) return { pins: [], covers: [] };
  const store = globs.some((glob) => REPOSITORY_STORE_GLOBS.includes(glob))
    ? pathGlobMatcher(REPOSITORY_STORE_GLOBS)
    : () => false;
  const inWorkspace = new Map(
    [...covered].filter(([abs]) => abs.startsWith(`${root}/`) && !store(abs.slice(root.length + 1))),
  );
  const aliases = otherNames(root, linkedInodes(inWorkspace), covered);
  if (aliases === undefined) throw tooMany(root);
  for (const abs of aliases) covered.set(abs, false);
  const byDepth = (a: string, b: string) => a.split("/").length - b.split("/").length;
  // An entry inside a covered folder is out of sight already (and a cover there would find no place in the tmpfs).
  const kept = [...covered.keys()].sort(byDepth).filter((abs, i, all) =>
    !all.slice(0, i).some((other) => covered.get(other) && isWithin(abs, other))
  );
  const pins = new Set<string>();
  for (const abs of kept) {
    for (let dir = path.dirname(abs); isWithin(dir, root) && dir !== root; dir = path.dirname(dir)) pins.add(dir);
  }
  // So are the folders a denied link goes through (`x` of `app/.env -> ../x/../conf/prod.txt`): removed or renamed
  // by a command, the link would lead nowhere, and the next command's walk would show what it hid. (A link on its
  // way cannot be pinned; the file tools refuse to move or delete one, see Policy.)
  for (const way of ways) {
    if (kept.some((abs) => covered.get(abs) && isWithin(way, abs)) || !isFolder(way)) continue;
    for (let dir = way; isWithin(dir, root) && dir !== root; dir = path.dirname(dir)) pins.add(dir);
  }
  return {
    pins: [...pins].sort(byDepth),
    covers: kept.flatMap((abs) =>
      covered.get(abs) ? ["--tmpfs", abs, "--remount-ro", abs] : ["--ro-bind", "/dev/null", abs]
    ),
  };
}

/**
 * Every existing entry the globs deny, as {@linkcode hiddenMountArgs} finds
 * them (where `view` shows them, outside `root`), by real path, with whether
 * it is a folder; a denied link stands for where it leads. Throws
 * `sandbox_unavailable` past 200,000 entries in one walk. When `ways` is
 * given, it receives every entry below `root` that the kernel looks up to
 * follow a denied link of the workspace, besides where it leads (the links
 * and folders its text and the links met name: `app/.env -> ../via/prod.txt`
 * with `via -> conf` goes through `via` and `conf`): removing or renaming one
 * would leave the link leading nowhere, and show what it hides. Not public
 * API.
 */
export function deniedEntries(
  root: string,
  globs: readonly string[],
  view: readonly string[] = [],
  listed: ReadonlyMap<string, ChildListing> = new Map(),
  ways?: Set<string>,
): Map<string, boolean> {
  const covered = new Map<string, boolean>();
  const relative = globs.filter((glob) => !glob.startsWith("/"));
  const absolute = globs.filter((glob) => glob.startsWith("/"));
  if (relative.length === 0 && absolute.length === 0) return covered;
  const matchRel = pathGlobMatcher(relative);
  const matchAbs = pathGlobMatcher(absolute);
  const shown = (abs: string) => abs.startsWith(`${root}/`) || view.some((folder) => isWithin(abs, folder));
  const cover = (abs: string, dir: boolean) => {
    if (shown(abs)) covered.set(abs, dir);
  };
  walk(root, root, (abs) => matchRel(abs.slice(root.length + 1)) || matchAbs(abs), cover, ways);
  for (const start of outsideStarts(absolute, root, view)) {
    const listing = listed.get(start);
    if (listing) coverListed(listing, root, matchAbs, cover);
    else walk(start, root, matchAbs, cover);
  }
  return covered;
}

/** The entries under a folder as find(1) listed them in a child process (see {@linkcode listOutside}). */
export interface ChildListing {
  /** Each entry below the folder, parents before their children. */
  entries: readonly { abs: string; type: "d" | "f" | "l" | "other"; target?: string; targetIsFolder?: boolean }[];
}

// A listing's fields, each ended by a NUL: the entry's type and its target's type (find's %y%Y), its path, and
// a link's text (empty for others). Into the file systems mounted below the folder too, as the in-process walk
// goes and the sandbox shows them.
const LIST_SCRIPT = 'command -v find >/dev/null || exit 127; find "$1" -mindepth 1 ' +
  "-printf '%y%Y\\0%p\\0%l\\0' 2>/dev/null; exit 0";

/**
 * Listings, by find(1) in a child process, of the folders outside `root`
 * that {@linkcode hiddenMountArgs} walks for the absolute `globs` and that
 * the runtime may not list itself (a server under narrow `--allow-read`
 * flags, whose sandbox still shows `/etc`). A folder that the child cannot
 * list either is given as an error: the sandbox would show what it cannot
 * judge. Not public API.
 */
export async function listOutside(
  root: string,
  globs: readonly string[],
  view: readonly string[],
): Promise<Map<string, ChildListing>> {
  const listed = new Map<string, ChildListing>();
  for (const start of outsideStarts(globs.filter((glob) => glob.startsWith("/")), root, view)) {
    try {
      entriesIn(start);
      continue;
    } catch (error) {
      if (!isRuntimePermissionError(error)) continue;
    }
    const text = await shellOutput(LIST_SCRIPT, [start]);
    if (text === undefined) throw unseenBySandbox([start], "hide the policy's denied paths there");
    const fields = text.split("\0");
    const entries: ChildListing["entries"][number][] = [];
    for (let i = 0; i + 2 < fields.length; i += 3) {
      const [types, abs, target] = [fields[i], fields[i + 1], fields[i + 2]];
      if (entries.length >= MAX_ENTRIES) throw tooMany(start);
      const type = types[0] === "d" || types[0] === "f" || types[0] === "l" ? types[0] : "other";
      entries.push(
        type === "l" && target !== ""
          ? {
            abs,
            type,
            target: path.resolve(path.dirname(abs), target),
            ...(types[1] === "d" || types[1] === "f" ? { targetIsFolder: types[1] === "d" } : {}),
          }
          : { abs, type },
      );
    }
    listed.set(start, { entries });
  }
  return listed;
}

// The walk of a child's listing: as `walk`, an entry under a covered or skipped folder is not looked at.
function coverListed(
  listing: ChildListing,
  root: string,
  denied: (abs: string) => boolean,
  cover: (abs: string, dir: boolean) => void,
): void {
  const closed: string[] = [];
  for (const entry of listing.entries) {
    if (closed.some((folder) => entry.abs.startsWith(`${folder}/`))) continue;
    if (entry.abs === root) {
      closed.push(entry.abs);
      continue;
    }
    if (!denied(entry.abs)) continue;
    if (entry.type === "d") closed.push(entry.abs);
    if (entry.type !== "l") cover(entry.abs, entry.type === "d");
    // A link is covered where it leads (as far as its own text says), as a folder when that is one; a dangling
    // one leads nowhere to see.
    else if (entry.type === "l" && entry.target !== undefined && entry.targetIsFolder !== undefined) {
      cover(entry.target, entry.targetIsFolder);
    }
  }
}

// The folders to walk for the absolute globs outside the workspace: where each glob's matches lie (a literal
// path's own folder), where the sandbox shows it; one above what it shows (`/**/id_rsa`) is walked only in the
// shown folders under it.
function outsideStarts(globs: readonly string[], root: string, view: readonly string[]): string[] {
  const starts = new Set<string>();
  for (const glob of globs) {
    const base = globBase(glob);
    const start = base === glob ? path.dirname(base) : base;
    if (isWithin(start, root)) continue;
    if (view.some((folder) => isWithin(start, folder))) starts.add(start);
    else for (const folder of view) if (isWithin(folder, start)) starts.add(folder);
  }
  return [...starts];
}

// A breadth-first walk of `start` covering each entry `denied` names (the workspace `root`, when met outside it,
// has its own walk; an unreadable folder for us is unreadable inside too). Synchronous, as the sandbox's other
// walks: a listing is a few µs, and each asynchronous one waited its turn in the runtime's thread pool.
function walk(
  start: string,
  root: string,
  denied: (abs: string) => boolean,
  cover: (abs: string, dir: boolean) => void,
  ways?: Set<string>,
): void {
  let seen = 0;
  try {
    walkListed(start, (abs, entry) => {
      if (++seen > MAX_ENTRIES) throw tooMany(start);
      if (abs === root && start !== root) return false;
      // One that could be or hold a denied path cannot be judged: refused (a plain file no rule names is left).
      if ((entry.isDirectory || denied(abs)) && unnamable(entry.name, abs)) throw unwalkable(start, { code: "EILSEQ" });
      if (!denied(abs)) return true;
      if (entry.isDirectory) cover(abs, true);
      // A unix socket or a FIFO is covered as a file is (bubblewrap binds /dev/null over it): before, only files were,
      // and a command connected to a denied `agent.sock` of the workspace, or read a denied FIFO a host process wrote.
      else if (!entry.isSymlink) cover(abs, false);
      else {
        // A link is covered where it leads, where the sandbox shows that.
        if (ways !== undefined && abs.startsWith(`${root}/`)) traceLink(abs, root, ways);
        try {
          const target = fs.realpathSync(abs);
          cover(target, fs.statSync(target).isDirectory());
        } catch {
          // Dangling: nothing to see.
        }
      }
      return false;
    });
  } catch (error) {
    throw error instanceof ToolError ? error : unwalkable(start, error);
  }
}

// Linux gives up after 40 links in one lookup (ELOOP).
const MAX_LINK_HOPS = 40;

// Adds to `ways` every entry strictly below `root` that following the link `link` looks up, as the kernel does (each
// name of its text and of the links met on the way, `..` taken from the real folder reached), but where it ends.
function traceLink(link: string, root: string, ways: Set<string>): void {
  let hops = 0;
  const queue = [...readLink(link).split("/")];
  let current = path.dirname(link);
  let last: string | undefined;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === "" || name === ".") continue;
    if (last !== undefined) ways.add(last);
    last = undefined;
    if (name === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = current === "/" ? `/${name}` : `${current}/${name}`;
    last = next.startsWith(`${root}/`) ? next : undefined;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch {
      return;
    }
    if (stat.isSymbolicLink()) {
      if (++hops > MAX_LINK_HOPS) return;
      const text = readLink(next);
      if (text.startsWith("/")) current = "/";
      queue.unshift(...text.split("/"));
      if (last !== undefined) ways.add(last);
      last = undefined;
      continue;
    }
    current = next;
  }
}

function isFolder(at: string): boolean {
  try {
    return fs.lstatSync(at).isDirectory();
  } catch {
    return false;
  }
}

function readLink(at: string): string {
  try {
    return fs.readlinkSync(at);
  } catch {
    return "";
  }
}

// Whether the entry `name` of a listing is one the runtime cannot name: a name that is not UTF-8 comes with each bad
// byte as U+FFFD, a path no call finds. Its folder cannot be listed, nor it covered, and a command reaches it by its
// bytes: before, a `.env` in a folder named `bad<0xff>` was printed by `grep -ra`, and a denied file so named had
// bubblewrap fail on the cover it could not place, naming the file in its error.
function unnamable(name: string, abs: string): boolean {
  if (!name.includes("\uFFFD")) return false;
  try {
    fs.lstatSync(abs);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

// A folder of `start` the walk could not list (a path past PATH_MAX, no descriptors left): a command could still reach
// it step by step, so the sandbox is refused rather than made without its masks there.
function unwalkable(start: string, error: unknown): ToolError {
  const code = String((error as { code?: unknown }).code ?? "an error");
  const why = code === "ENAMETOOLONG"
    ? "a folder in it has a path longer than the system lets a program name (PATH_MAX)"
    : code === "EILSEQ"
    ? "an entry in it has a name that is not UTF-8, which this runtime cannot name"
    : `a folder in it could not be listed (${code})`;
  return new ToolError(
    `${start}: ${why}, so the policy's denied paths there cannot be hidden from the sandbox before the command runs`,
    {
      code: "sandbox_unavailable",
      kind: "policy",
      recoverable: false,
      recoveryHint: code === "EILSEQ"
        ? "Ask the user to rename the entries whose names are not UTF-8, then run the command again."
        : "Move or shorten the deeply nested folders (or ask the user to), then run the command again.",
      details: { root: start, reason: code },
      cause: error,
    },
  );
}

function tooMany(start: string): ToolError {
  return new ToolError(
    `${start} has more than ${MAX_ENTRIES} entries, too many to hide the policy's denied paths ` +
      "from the sandbox before the command runs",
    { code: "sandbox_unavailable", kind: "policy", recoverable: false, details: { root: start } },
  );
}
