/**
 * The links a command reaches without naming them: what a glob matches, and
 * what a program that follows links finds while it walks a folder (`grep -R`,
 * `rg -L`, `diff -r`). A link inside the workspace that leads out (`link -> ~/.ssh`) is
 * reached by `cat *\/id_rsa` or `grep -R key .` though every path named lies
 * inside; the path rules judge each such link by where it leads. Without the
 * OS sandbox nothing else would stop the read.
 *
 * @module
 */
import fs from "node:fs";
import { Buffer } from "node:buffer";
import path from "node:path";
import type { BashWord } from "./_tree.ts";
import { codePoints, wildcardMatches, wildcardPattern } from "@toolfence/internal";

/** How many folder entries one pattern may make the checker look at; beyond, it asks. */
const MAX_ENTRIES = 10_000;

/** The characters that make a word segment a bash glob (brace expansion is read before). */
export const GLOB_CHARS = /[*?[]/;

/**
 * A glob segment as a matcher of names, wider than bash's where that is
 * simpler: a bracket expression or a backslash matches any name. A glob never
 * matches a name that starts with `.` (bash without dotglob; the patterns that
 * start with `.` or `[` ask before they get here).
 */
function segmentMatcher(segment: string): (name: string) => boolean {
  if (!GLOB_CHARS.test(segment)) return (name) => name === segment;
  if (/[[\\]/.test(segment)) return (name) => !name.startsWith(".");
  // Matched in linear time (`internal/wildcard.ts`). `?` is one character in a UTF-8 locale and one byte in the C
  // locale: a name either reading matches is matched.
  const characters = wildcardPattern(segment, false);
  const bytes = wildcardPattern([...Buffer.from(segment, "utf8")], false);
  return (name) =>
    !name.startsWith(".") &&
    (wildcardMatches(characters, codePoints(name)) || wildcardMatches(bytes, [...Buffer.from(name, "utf8")]));
}

/**
 * The links among what `segments` (a glob's parts after its static folder)
 * may match under `base`, each judged by the caller by where it leads, and
 * gone through where more segments follow (as bash does), so that the links
 * met beyond one are among them too. `undefined` when matching would look at more than
 * {@linkcode MAX_ENTRIES} entries.
 */
export function globLinks(base: string, segments: readonly string[]): string[] | undefined {
  const links: string[] = [];
  let folders = [base];
  let seen = 0;
  for (const [index, segment] of segments.entries()) {
    const matches = segmentMatcher(segment);
    const next: string[] = [];
    for (const folder of folders) {
      let names: string[];
      try {
        names = GLOB_CHARS.test(segment) ? fs.readdirSync(folder) : [segment];
      } catch {
        continue; // A folder bash cannot read matches nothing.
      }
      seen += names.length;
      if (seen > MAX_ENTRIES) return undefined;
      for (const name of names.filter(matches)) {
        const entry = path.join(folder, name);
        let stat: fs.Stats;
        try {
          stat = fs.lstatSync(entry);
        } catch {
          continue;
        }
        if (index < segments.length - 1 && stat.isSymbolicLink()) {
          // bash goes on through a link to a folder: what it meets there (`x/y` for `*/y`, with `x -> ../sub` and
          // `sub/y -> /srv`) is judged too.
          links.push(entry);
          if (leadsToFolder(entry)) next.push(entry);
        } else if (stat.isSymbolicLink() || deviceKind(stat) !== undefined) links.push(entry);
        else if (stat.isDirectory() && index < segments.length - 1) next.push(entry);
      }
    }
    folders = next;
  }
  return links;
}

/**
 * What a device node is (`a block device`, `a character device`), or `undefined` for any other entry: a device in the
 * workspace opens no file of it but what the device holds (a disk with every file of the machine, the kernel's log or
 * memory, a terminal), so it is judged as the outside (the file tools refuse it), and a pattern or a walk that meets
 * one lists it with the links it meets.
 */
export function deviceKind(stat: { isBlockDevice(): boolean; isCharacterDevice(): boolean }): string | undefined {
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isCharacterDevice()) return "a character device";
  return undefined;
}

/** Whether a folder entry is a device node (Deno's entries do not tell devices apart: the entry is looked at). */
function isDeviceEntry(full: string, entry: fs.Dirent): boolean {
  if (entry.isFile() || entry.isDirectory() || entry.isSymbolicLink()) return false;
  try {
    return deviceKind(fs.lstatSync(full)) !== undefined;
  } catch {
    return false;
  }
}

function leadsToFolder(link: string): boolean {
  try {
    return fs.statSync(link).isDirectory();
  } catch {
    return false; // dangling, or a loop
  }
}

/**
 * The programs that follow every link they meet while walking a folder (to
 * read what lies behind, or to list it), by the options that make them (GNU
 * grep takes abbreviations of its long options; a letter anywhere in a cluster
 * counts, which only asks more often; `word`: an option spelt whole; `always`:
 * with any options; `named`: only the folders it is given, never the one it
 * runs in; `primaries`: its expression comes after a `--`, which ends only
 * the options before the starting points).
 * The others open a link only when it is named, and the named paths are
 * judged by where they lead.
 */
const FOLLOWING: Readonly<Record<string, Following>> = {
  // grep -r skips the devices it meets unless -D/--devices tells it to read them (`-r -D read` reads a device node
  // of the workspace, a disk): with either option the walk is judged as -R's is, devices and links.
  grep: { short: "R", long: ["dereference-recursive"], devices: true },
  egrep: { short: "R", long: ["dereference-recursive"], devices: true },
  fgrep: { short: "R", long: ["dereference-recursive"], devices: true },
  rg: { short: "L", long: ["follow"] },
  // GNU diff compares what the links it meets lead to, unless --no-dereference: without -r too, the files of the
  // same name directly in two folders it is given (`diff . sub`), or in a folder and beside a file (`diff sub/f .`).
  diff: { short: "r", long: ["recursive"], always: true, named: true },
  // These list what lies behind the links they meet (names, sizes, dates): find's -L, or its -follow primary, which
  // follows the starting points: find's `--` ends only its leading options (`find -- . -follow`).
  find: { short: "L", word: "-follow", primaries: true },
  // ls -L shows a met link's target (its size, its type); with -R it walks into a folder it leads to.
  ls: { short: "L", long: ["dereference"] },
  du: { short: "L", long: ["dereference"] },
  tree: { short: "l" },
  // These store what lies behind the links they meet in the archive they write, in the workspace: tar's -h (`tar chf
  // x.tar src`, its first word a cluster without a dash) and bsdtar's -L; zip whenever it walks (-r, and -R, which
  // walks the folder it runs in for its patterns), unless -y, which only asks more often; gzip's and zstd's -r, which
  // print what a met link leads to with -c. Before, with the sandbox off and an automatic answer, `tar -chf x.tar
  // src`, `zip -r x.zip src` and `gzip -rc src` stored or printed a file outside through `src/l`.
  tar: { short: "h", long: ["dereference"], named: true, bundled: true },
  bsdtar: { short: "Lh", named: true, bundled: true },
  zip: { short: "rR", long: ["recurse-paths", "recurse-patterns"], named: true, here: "R" },
  gzip: { short: "r", long: ["recursive"], named: true },
  gunzip: { short: "r", long: ["recursive"], named: true },
  zstd: { short: "r", named: true },
  unzstd: { short: "r", named: true },
};

/** How a program of {@linkcode FOLLOWING} comes to follow links. */
interface Following {
  short: string;
  long?: readonly string[];
  word?: string;
  always?: true;
  named?: true;
  primaries?: true;
  devices?: true;
  /** Whether its first word, without a dash, is a cluster of options (`tar chf`). */
  bundled?: true;
  /** The letters of the options with which it walks the folder it runs in, whatever it is given (zip's -R). */
  here?: string;
}

/**
 * Whether the program, with these arguments, follows the links it meets while walking folders; a word that may
 * expand into an option counts as one that makes it follow.
 */
export function followsLinksDown(name: string, args: readonly BashWord[]): boolean {
  const options = Object.hasOwn(FOLLOWING, name) ? FOLLOWING[name] : undefined;
  if (options === undefined) return false;
  if (options.always === true) return true;
  const longs = [...options.long ?? [], ...options.devices === true ? ["devices"] : []];
  return hasOption(options, args, options.short + (options.devices === true ? "D" : ""), longs);
}

/**
 * Whether one of the options is among the words: a letter anywhere in a cluster, a long option by any start of its
 * name, or the option word; a word known only when it runs may become one (`*` matching a file named `-R`).
 */
function hasOption(options: Following, args: readonly BashWord[], shorts: string, longs: readonly string[]): boolean {
  for (const [index, arg] of args.entries()) {
    let value = arg.value;
    if (value === "--" && options.primaries !== true) return false;
    if (value === undefined && arg.mayBeOption) return true;
    if (index === 0 && options.bundled === true && value !== undefined && value !== "" && !value.startsWith("-")) {
      value = `-${value}`;
    }
    if (value === undefined || !value.startsWith("-")) continue;
    if (value === options.word) return true;
    if (value.startsWith("--")) {
      const given = value.slice(2).split("=", 1)[0];
      if (given !== "" && longs.some((long) => long.startsWith(given))) return true;
    } else if ([...shorts].some((short) => value.slice(1).includes(short))) {
      return true;
    }
  }
  return false;
}

/**
 * Whether the program walks the folder it runs in: when it is given none (diff compares only what it is given), or
 * with an option that makes it walk it whatever it is given (`zip -R x.zip '*.c'`).
 */
export function walksHere(name: string, args: readonly BashWord[], givenNone: boolean): boolean {
  const options = Object.hasOwn(FOLLOWING, name) ? FOLLOWING[name] : undefined;
  if (options?.here !== undefined && hasOption(options, args, options.here, [])) return true;
  return givenNone && options?.named !== true;
}

/**
 * The names in `folder` that a glob of one segment matches and that start with `-`, which bash hands the program as
 * option words; `undefined` when the folder has more than {@linkcode MAX_ENTRIES} entries to look at.
 */
export function optionNamesMatched(folder: string, segment: string): string[] | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return []; // A folder bash cannot read matches nothing.
  }
  if (names.length > MAX_ENTRIES) return undefined;
  const matches = segmentMatcher(segment);
  return names.filter((name) => name.startsWith("-") && matches(name));
}

/**
 * The links below `folder` (not descended into: the caller judges where each
 * leads), and the device nodes ({@linkcode deviceKind}), or `undefined` when there are more than
 * {@linkcode MAX_ENTRIES} entries to look at. A file or a missing path has none.
 */
export function linksBelow(folder: string): string[] | undefined {
  const links: string[] = [];
  return walkBelow(
      folder,
      (full, entry) => (entry.isSymbolicLink() || isDeviceEntry(full, entry)) && links.push(full),
    )
    ? links
    : undefined;
}

/**
 * The files a program opens by a fixed name in every folder it walks, and with `above` in the folders above one it is
 * given (ripgrep's `rg x src` reads `./.ignore` too), a link among them followed like any name: ripgrep prints every
 * line of an ignore file it cannot read as a glob (`error parsing glob 'token={...'`), and `tree --info` the indented
 * lines of a `.info` under each line that names a file of the folder, so a link to a file outside shows its lines,
 * whatever `-L` or `-l` say.
 */
const IGNORE_FILES: Readonly<Record<string, { names: readonly string[]; above: boolean; gitExclude?: boolean }>> = {
  rg: { names: [".ignore", ".rgignore", ".gitignore"], above: true, gitExclude: true },
  tree: { names: [".info", ".gitignore"], above: false },
};

/** How many folder entries the checker looks through for the files of {@linkcode IGNORE_FILES}; beyond, it asks. */
const MAX_NAMED_ENTRIES = 300_000;

/** Whether the program opens ignore files by name in the folders it walks ({@linkcode ignoreFileLinks}). */
export function readsIgnoreFiles(name: string): boolean {
  return Object.hasOwn(IGNORE_FILES, name);
}

/**
 * The files of {@linkcode IGNORE_FILES} that are links, which `name` opens walking `folder`: below it, in it, and
 * (for ripgrep) in the folders above it for which `above` holds (those of the workspace); `undefined` when there are
 * more than {@linkcode MAX_NAMED_ENTRIES} entries to look at.
 */
export function ignoreFileLinks(
  name: string,
  folder: string,
  above: (folder: string) => boolean,
  cwd: string = folder,
): string[] | undefined {
  const { names, above: climbs, gitExclude } = Object.hasOwn(IGNORE_FILES, name)
    ? IGNORE_FILES[name]
    : { names: [], above: false, gitExclude: false };
  const found: string[] = [];
  const git = (at: string) => gitExclude === true && found.push(...gitExcludeFiles(at, cwd));
  // Only names are compared, so a bigger tree is looked through than for the links a program follows (a repository
  // with its node_modules). git's own folder is not walked: what ripgrep reads of it is judged by gitExcludeFiles.
  const walked = walkBelow(
    folder,
    (full, entry) => {
      if (entry.isSymbolicLink() && names.includes(entry.name)) found.push(full);
      if (entry.name === ".git") git(path.dirname(full));
    },
    MAX_NAMED_ENTRIES,
    (entry) => entry.name === ".git",
  );
  if (!walked) return undefined;
  for (let at = path.dirname(folder); climbs && at !== path.dirname(at) && above(at); at = path.dirname(at)) {
    for (const file of names.map((ignore) => path.join(at, ignore))) {
      try {
        if (fs.lstatSync(file).isSymbolicLink()) found.push(file);
      } catch {
        // No such file here.
      }
    }
    if (fs.existsSync(path.join(at, ".git"))) git(at);
  }
  return found;
}

/**
 * The files ripgrep opens for the git folder of `folder` (one holding `.git`), each to be judged by where it leads:
 * the `info/exclude` of that folder, whose lines it prints as it prints an ignore file's. When `.git` is a file (a
 * worktree's or a submodule's), ripgrep reads the folder its first line's `gitdir:` names and the `commondir` file
 * there, either taken against the folder ripgrep runs in or the one before, and reads that folder's `info/exclude`: a
 * `.git` file of the workspace can name any folder on the machine, with no link. Every reading is listed.
 */
function gitExcludeFiles(folder: string, cwd: string): string[] {
  const dotGit = path.join(folder, ".git");
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dotGit);
  } catch {
    return []; // missing or a dangling link: ripgrep reads nothing
  }
  if (!stat.isFile()) return existing([path.join(dotGit, "info", "exclude")]);
  const gitdir = firstLine(dotGit)?.match(/^gitdir:(.*)$/)?.[1]?.trim();
  const found = [dotGit];
  if (gitdir === undefined || gitdir === "") return found;
  for (const real of new Set([path.resolve(cwd, gitdir), path.resolve(folder, gitdir)])) {
    const commondirFile = path.join(real, "commondir");
    const common = firstLine(commondirFile);
    if (common === undefined) continue;
    found.push(commondirFile);
    for (const base of new Set([path.resolve(real, common), path.resolve(cwd, common)])) {
      found.push(...existing([path.join(base, "info", "exclude")]));
    }
  }
  return found;
}

function existing(files: string[]): string[] {
  return files.filter((file) => fs.existsSync(file));
}

// Opened without waiting (a FIFO put in the file's place between a look and the open would hold the server's one
// thread until a writer came), and judged by what was opened.
const READ_NOW = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/** The first line of a regular file (of its first 4 KiB), or `undefined` when it is no readable regular file. */
function firstLine(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, READ_NOW);
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(4096);
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, read).toString("utf8").split(/\r?\n/)[0];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** How many folders a program that follows links may be followed into by the checker; beyond, it asks. */
const MAX_FOLLOWED = 64;

/**
 * The links a program that follows links meets below `folder`: those below
 * it, and below the folders that the links `onward` lets through lead to (a
 * link to another folder of the workspace that holds a link out is followed
 * on), each folder once; `undefined` when there are more than
 * {@linkcode MAX_ENTRIES} entries in one, or {@linkcode MAX_FOLLOWED} folders,
 * to look at.
 */
export function linksFollowedBelow(folder: string, onward: (link: string) => boolean): string[] | undefined {
  const found: string[] = [];
  const walked = new Set<string>();
  const pending = [folder];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let real: string;
    try {
      real = fs.realpathSync(current);
    } catch {
      continue; // missing, or a dangling link: nothing below it
    }
    if (walked.has(real)) continue;
    if (walked.size >= MAX_FOLLOWED) return undefined;
    walked.add(real);
    const links = linksBelow(current);
    if (links === undefined) return undefined;
    found.push(...links);
    pending.push(...links.filter(onward));
  }
  return found;
}

/**
 * Every entry below `folder` (links not descended into), or `undefined` when
 * there are more than {@linkcode MAX_ENTRIES} to look at: what a program that
 * removes, moves or changes a whole folder reaches. A file or a missing path
 * has none.
 */
export function entriesBelow(folder: string): string[] | undefined {
  const found: string[] = [];
  return walkBelow(folder, (full) => found.push(full)) ? found : undefined;
}

// Hands `take` every entry below `folder`, descending into folders and never into links; false, part way, once
// more than MAX_ENTRIES have been listed. A folder that cannot be listed (or a file) is skipped: the program
// cannot list it either.
function walkBelow(
  folder: string,
  take: (full: string, entry: fs.Dirent) => unknown,
  limit = MAX_ENTRIES,
  skip?: (entry: fs.Dirent) => boolean,
): boolean {
  const pending = [folder];
  let seen = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    seen += entries.length;
    if (seen > limit) return false;
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      take(full, entry);
      if (entry.isDirectory() && skip?.(entry) !== true) pending.push(full);
    }
  }
  return true;
}
