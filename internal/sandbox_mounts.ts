/**
 * The bubblewrap mounts that keep secrets out of a sandbox and protected
 * paths read-only inside it: every home folder masked (the caller's own
 * replaced by an empty private one), credential files and folders elsewhere
 * masked, `/run` hidden, and the protected paths of the workspace bound
 * read-only, with read-only placeholders where they do not exist yet.
 *
 * @module
 */
import { closeSync, lstatSync, mkdirSync, openSync, realpathSync, rmdirSync, unlinkSync, writeSync } from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { ToolError } from "@toolfence/core";
import { isWithin } from "./paths.ts";
import {
  copyTreeConfined,
  createConfined,
  discardConfined,
  lstatConfined,
  mkdirsConfined,
  moveConfined,
  openFolderConfined,
  openReadConfined,
  removeConfined,
  unlinkConfined,
} from "./confined_fs.ts";
import { hasGlobSyntax, pathGlobMatcher } from "./path_globs.ts";
import { isRuntimePermissionError } from "./runtime_permissions.ts";
import { entriesIn, type ListedEntry } from "./_runtime_fs.ts";
import { shellOutput } from "./probe_process.ts";
import { linkedInodes, otherNames } from "./hidden_aliases.ts";

// Masked even when the runtime does not let us look (a narrow --allow-read):
// they exist on every Linux system, and a mask must fail closed.
const ALWAYS_PRESENT_FOLDERS = new Set(["/home", "/root", "/run"]);
const ALWAYS_PRESENT_FILES = new Set(["/etc/shadow"]);

/**
 * Credential files outside the home folders: password hashes, ssh host keys,
 * Kerberos keytabs, VPN and dial-up secrets, and the machine's own identity
 * (machine-id(5): "confidential, must not be exposed in untrusted
 * environments"; the same in every tenant's sandbox of a server, and a key
 * other services derive theirs from). Each that exists is replaced by an
 * empty read-only file.
 */
export const MASKED_FILES: readonly string[] = Object.freeze([
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/security/opasswd",
  "/etc/krb5.keytab",
  "/etc/ipsec.secrets",
  "/etc/ppp/chap-secrets",
  "/etc/ppp/pap-secrets",
  "/etc/sudoers",
  "/etc/machine-id",
  "/var/lib/dbus/machine-id",
  "/etc/hostid",
]);

/**
 * Credential folders outside the home folders: TLS private keys, network and
 * VPN secrets, container and orchestration secrets, backups of the password
 * files. Each that exists is replaced by an empty read-only folder. `/run`
 * (`/var/run`) is hidden as a whole: it holds the sockets of the container
 * engine, the session bus, ssh and gpg agents, and mounted secrets.
 */
export const MASKED_FOLDERS: readonly string[] = Object.freeze([
  "/home",
  "/root",
  "/run",
  "/var/run",
  "/etc/ssl/private",
  "/etc/NetworkManager/system-connections",
  "/etc/wireguard",
  "/etc/docker",
  "/etc/letsencrypt",
  "/etc/pki/tls/private",
  "/var/backups",
  "/var/lib/docker",
  "/var/lib/containerd",
  "/var/lib/kubelet",
  "/var/lib/sss",
  "/var/lib/postgresql",
  "/var/lib/mysql",
  "/var/mail",
  "/var/spool/mail",
  "/var/spool/cron",
]);

// Folders a command needs to run at all; a home folder at or above one of them
// (`/`, `/bin`, `/usr/sbin` for system accounts) is left alone.
const SYSTEM_FOLDERS = [
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/usr/bin",
  "/usr/sbin",
  "/usr/lib",
  "/usr/lib64",
  "/usr/share",
  "/usr/local/bin",
  "/usr/local/lib",
  "/etc",
  "/dev",
  "/proc",
  "/sys",
  "/tmp",
  "/var/tmp",
];

// Synchronous, as the walks below: a command's start asks this of a few dozen paths, and each asynchronous
// lstat waits its turn in the thread pool (on a loaded machine, most of a sandboxed command's start). Most of
// those paths do not exist, and a thrown ENOENT (the error and its stack) makes each lstat about three times dearer.
function kind(p: string): "file" | "dir" | "link" | "other" | undefined {
  try {
    const info = lstatSync(p, { throwIfNoEntry: false });
    if (info === undefined) return undefined;
    if (info.isSymbolicLink()) return "link";
    if (info.isDirectory()) return "dir";
    return info.isFile() ? "file" : "other";
  } catch {
    return undefined;
  }
}

/** The caller's home folder, when the runtime lets us read `HOME`. */
export function homeFolder(): string | undefined {
  try {
    const home = process.env.HOME;
    return home && path.isAbsolute(home) ? path.normalize(home) : undefined;
  } catch {
    return undefined;
  }
}

// Every home folder of /etc/passwd, except those of system accounts that are
// system folders themselves.
async function passwdHomes(): Promise<string[]> {
  let text = "";
  try {
    text = await fsp.readFile("/etc/passwd", "utf8");
  } catch (error) {
    if (!isRuntimePermissionError(error)) return [];
    // The server may not read /etc (`deno task serve`'s flags), but the sandbox shows the homes it names.
    const read = await shellOutput("cat /etc/passwd 2>/dev/null; exit 0", []);
    if (read === undefined) throw unseenBySandbox(["/etc/passwd"], "mask the home folders it names");
    text = read;
  }
  const homes: string[] = [];
  for (const line of text.split("\n")) {
    const home = line.split(":")[5];
    if (!home || !path.isAbsolute(home)) continue;
    const clean = path.normalize(home);
    if (SYSTEM_FOLDERS.some((system) => isWithin(system, clean))) continue; // at or above a system folder
    homes.push(clean);
  }
  return homes;
}

// The ssh host keys (private halves) in /etc/ssh.
async function sshHostKeys(): Promise<string[]> {
  let names: string[];
  try {
    names = await fsp.readdir("/etc/ssh");
  } catch (error) {
    if (!isRuntimePermissionError(error)) return [];
    // The server may not read /etc (`deno task serve`'s flags): a child lists the folder the sandbox shows.
    const listed = await shellOutput(
      'cd /etc/ssh 2>/dev/null || exit 0; for f in ssh_host_*_key; do [ -e "$f" ] && printf \'%s\\0\' "$f"; done; exit 0',
      [],
    );
    if (listed === undefined) throw unseenBySandbox(["/etc/ssh"], "mask the ssh host keys");
    names = listed.split("\0").filter((name) => name !== "");
  }
  return names.filter((name) => /^ssh_host_.*_key$/.test(name)).map((name) => path.join("/etc/ssh", name));
}

// The configuration folders of the read view: the system's, that of what was installed under /usr/local (a service's
// own config with its password, the global npmrc), and /usr/etc (npm's global config under a /usr prefix, openSUSE's
// vendor configuration).
const CONFIG_FOLDERS = ["/etc", "/usr/local/etc", "/usr/etc"];

// The entries of the configuration folders that others may not read: a file without the read bit for others, a
// folder without read or search for others (not entered). Private by the system's own convention (TLS and ssh host
// keys, keytabs, VPN, network and database credentials, a service's tokens), whatever the names above list; the read
// view shows them (/usr whole), so a command of a server running as their owner (or in their group) would read them.
// Until 2026-12-05 only /etc was looked at: a 0600 root file in /usr/local/etc was read by a command of a server run
// as root. Listed by find(1) in a child process, as the server's runtime may not read them at all (`deno task
// serve`'s flags), while the sandbox shows them whole. Each entry is its type (`d` or `f`) and path, then a NUL; a
// link is judged where it leads, if that is shown. A configuration folder that is a link is not entered (what it
// leads to is outside the view, or looked at there). Into the file systems mounted below them too, as the sandbox
// binds them whole: with -xdev, a 0600 key on a volume mounted at /etc/app (a container's secret) was read.
const PRIVATE_CONFIG_SCRIPT = `command -v find >/dev/null || exit 127; find ${CONFIG_FOLDERS.join(" ")} ` +
  "\\( -type d ! -perm -o=rx -prune -printf '%y%p\\0' \\) -o \\( -type f ! -perm -o=r -printf '%y%p\\0' \\) " +
  "2>/dev/null; exit 0";

/** The private entries of the configuration folders (see `PRIVATE_CONFIG_SCRIPT`), or undefined without find(1). */
async function privateConfigEntries(): Promise<{ folders: string[]; files: string[] } | undefined> {
  const listed = await shellOutput(PRIVATE_CONFIG_SCRIPT, []);
  if (listed === undefined) return undefined;
  const folders: string[] = [];
  const files: string[] = [];
  for (const line of listed.split("\0")) {
    const type = line[0];
    const found = line.slice(1);
    const root = CONFIG_FOLDERS.find((folder) => found.startsWith(`${folder}/`));
    if ((type !== "d" && type !== "f") || root === undefined) continue;
    // A name that is not UTF-8 does not come back as itself: its folder is masked instead (unless that is /etc).
    const entry = found.includes("\uFFFD") ? path.dirname(found) : found;
    if (entry === "/etc" || !isWithin(entry, root) || entry.includes("\uFFFD")) continue;
    (entry !== found || type === "d" ? folders : files).push(entry);
  }
  return { folders, files };
}

// For each path given: its type (`d` a folder, where a link leads; `f` a file that is not a link), the path, and its
// real path, each ended by a NUL; nothing for a path that does not exist or is something else.
const KINDS_SCRIPT = 'command -v realpath >/dev/null || exit 127; for p; do r=$(realpath -e -- "$p" 2>/dev/null) ' +
  '|| continue; if [ -d "$r" ]; then t=d; elif [ -f "$p" ] && [ ! -L "$p" ]; then t=f; else continue; fi; ' +
  'printf \'%s\\0%s\\0%s\\0\' "$t" "$p" "$r"; done; exit 0';

/** The kinds of `paths` as a child process sees them, or undefined when it could not look. */
async function kindsByChild(
  paths: readonly string[],
): Promise<{ type: "d" | "f"; named: string; real: string }[] | undefined> {
  const text = await shellOutput(KINDS_SCRIPT, paths);
  if (text === undefined) return undefined;
  const fields = text.split("\0");
  const kinds: { type: "d" | "f"; named: string; real: string }[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [type, named, real] = [fields[i], fields[i + 1], fields[i + 2]];
    if ((type === "d" || type === "f") && paths.includes(named) && path.isAbsolute(real)) {
      kinds.push({ type, named, real: path.normalize(real) });
    }
  }
  return kinds;
}

/**
 * The refusal of a sandbox that needs a look at `paths` (to `purpose`: mask,
 * cover, list what a deny rule names) which neither the server's runtime nor
 * a child shell could take: the sandbox is not made without it. Not public API.
 */
export function unseenBySandbox(paths: readonly string[], purpose: string): ToolError {
  return new ToolError(
    `The sandbox cannot ${purpose}: the server may not look at ${paths.join(", ")}, and a child shell (/bin/sh) ` +
      "could not look either (allow reading them, or --allow-run=/bin/sh)",
    { code: "sandbox_unavailable", kind: "policy", recoverable: false, details: { paths: [...paths] } },
  );
}

/** What the secret masks are, for {@linkcode secretMounts} and the documentation. */
export interface SecretMasks {
  /** Folders replaced by an empty read-only folder. */
  folders: string[];
  /** Files replaced by an empty read-only file. */
  files: string[];
  /** The caller's home folder, replaced by an empty writable private folder. */
  home?: string;
}

/**
 * The masks that apply on this machine: every existing folder of
 * {@linkcode MASKED_FOLDERS}, every home folder named in `/etc/passwd` (but
 * not system folders), the caller's home, every existing file of
 * {@linkcode MASKED_FILES}, the ssh host keys, and every file and folder of
 * `/etc` that others may not read. Folders that are symlinks are masked at
 * their target. A look is kept a few seconds; `fresh` takes a new one.
 */
export function secretMasks(fresh = false): Promise<SecretMasks> {
  // Looked up again after a few seconds (or at once, `fresh`, where a kept look proved stale): the folders of a
  // machine rarely change, and /home and /root are masked whole whatever appears in them.
  const home = homeFolder();
  const now = Date.now();
  if (
    fresh || cachedMasks === undefined || cachedMasks.home !== home || now - cachedMasks.at > MASK_CACHE_MS
  ) {
    cachedMasks = { home, at: now, masks: findSecretMasks(home) };
    cachedMasks.masks.catch(() => cachedMasks = undefined);
  }
  return cachedMasks.masks;
}

const MASK_CACHE_MS = 10_000;
let cachedMasks: { home: string | undefined; at: number; masks: Promise<SecretMasks> } | undefined;

async function findSecretMasks(home: string | undefined): Promise<SecretMasks> {
  const folders = new Set<string>();
  const addFolder = (real: string) => {
    if (real === "/" || SYSTEM_FOLDERS.some((system) => isWithin(system, real))) return;
    folders.add(real);
  };
  // Those the runtime may not look at (a narrow --allow-read: a policy file's `sandbox.read` folder the server
  // may not read) are looked at by a child process: the sandbox shows them whatever the server may read.
  const unseen: string[] = [];
  const unseenFiles = new Set<string>();
  for (const candidate of [...MASKED_FOLDERS, ...await passwdHomes()]) {
    let real: string;
    try {
      real = await fsp.realpath(candidate);
    } catch (error) {
      if (isRuntimePermissionError(error)) unseen.push(candidate);
      continue;
    }
    if (kind(real) === "dir") addFolder(real);
  }
  // Without find(1) the lists above stand alone, as the names they know are all that is known then.
  const privateConfig = await privateConfigEntries();
  for (const folder of privateConfig?.folders ?? []) folders.add(folder);
  const files: string[] = [...privateConfig?.files ?? []];
  for (const file of [...MASKED_FILES, ...await sshHostKeys()]) {
    if (files.includes(file)) continue;
    try {
      if ((await fsp.lstat(file)).isFile()) files.push(file);
    } catch (error) {
      if (isRuntimePermissionError(error)) {
        unseen.push(file);
        unseenFiles.add(file);
      }
    }
  }
  if (unseen.length > 0) {
    const seen = await kindsByChild(unseen);
    if (seen === undefined) {
      // Without a child's look, only what exists on every Linux system is masked by name; anything else fails closed.
      const unknown = unseen.filter((p) => !ALWAYS_PRESENT_FOLDERS.has(p) && !ALWAYS_PRESENT_FILES.has(p));
      if (unknown.length > 0) throw unseenBySandbox(unknown, "mask the secrets there");
      for (const p of unseen) ALWAYS_PRESENT_FOLDERS.has(p) ? folders.add(p) : files.push(p);
    } else {
      for (const { type, named, real } of seen) {
        const wanted = unseenFiles.has(named) ? "f" : "d";
        if (type !== wanted) continue;
        if (type === "d") addFolder(real);
        else if (!files.includes(named)) files.push(named);
      }
    }
  }
  // A mask inside another is redundant: the outer one hides it already.
  const outermost = [...folders].filter((f) => ![...folders].some((o) => o !== f && isWithin(f, o)));
  let realHome: string | undefined;
  if (home !== undefined && home !== "/") {
    try {
      realHome = await fsp.realpath(home);
      if (kind(realHome) !== "dir") realHome = undefined;
    } catch (error) {
      // Unreadable under the runtime's fence: mask it as named.
      realHome = isRuntimePermissionError(error) ? home : undefined;
    }
    if (realHome !== undefined && SYSTEM_FOLDERS.some((s) => isWithin(s, realHome!))) realHome = undefined;
  }
  return { folders: outermost.sort(), files, home: realHome };
}

/**
 * The bubblewrap arguments for `masks`, in two parts: `before` goes right after
 * the root mounts (the masks, so that binds of the workspace and temp dir below
 * a mask come after and stay visible), `after` at the end (the masks made
 * read-only once the binds below them exist).
 */
export function secretMountArgs(masks: SecretMasks): { before: string[]; after: string[] } {
  const before: string[] = [];
  const after: string[] = [];
  for (const folder of masks.folders) {
    // The home folder gets its own writable mask below.
    if (folder === masks.home) continue;
    before.push("--perms", "0755", "--tmpfs", folder);
    after.push("--remount-ro", folder);
  }
  for (const file of masks.files) before.push("--ro-bind", "/dev/null", file);
  if (masks.home !== undefined) before.push("--perms", "0700", "--tmpfs", masks.home);
  return { before, after };
}

// Protected-path mounts ------------------------------------------------------

/**
 * Past this many entries (outside the folders the walk skips) the workspace is
 * not searched for protected paths before a command, and a command that may
 * write there is refused (`workspace_too_large`): a protected path the walk
 * did not reach would be writable. The walk after a command has no bound: it
 * must see whatever the command made.
 */
const MAX_PROTECTED_WALK_ENTRIES = 200_000;
// Folders whose contents are never protected paths and can be huge: packages,
// and git's object store, refs and logs. Packages are walked where a pattern names them (a read-only rule
// `node_modules/pkg/**`; see skipsPackages).
const WALK_SKIPPED = new Set(["node_modules"]);
const GIT_SKIPPED = new Set(["objects", "lfs", "logs", "refs"]);
const PROBE_CHILD = "toolfence-probe-child";

/** One protected-path mount. */
export interface ProtectedMount {
  /** Absolute path. */
  path: string;
  /**
   * `read-only`: bound read-only (the path and everything under it);
   * `pinned`: a folder bound onto itself, so that it cannot be moved, removed
   * or replaced, while the protected paths below it get their own mounts.
   */
  how: "read-only" | "pinned";
  /** A placeholder this process created for a path that did not exist. */
  placeholder?: "file" | "dir";
  /**
   * The entry's descriptor, opened without following a link: bubblewrap binds
   * this open file, never a path that a racing process could have swapped
   * for a link.
   */
  fd?: number;
}

// Opens `mount.path` confined: in its pinned folder (a folder itself pinned), never through a link at any
// component; undefined when it is gone, or it or a folder of its path is a link now. By the absolute path, a folder
// of it that a command of the session swapped for a link since the walk or the listing (`sub -> ~`) made the open
// follow it, and bubblewrap bound what lay there (`~/.npmrc`) read-only where the link leads inside (the private
// home). Synchronous, as the walk: where an asynchronous open waits its turn in the runtime's thread pool.
function openMount(mount: ProtectedMount, isDir: boolean): ProtectedMount | undefined {
  try {
    return { ...mount, fd: isDir ? openFolderConfined(mount.path) : openReadConfined(mount.path) };
  } catch {
    return undefined;
  }
}

/**
 * Read-only mounts of `folders` (absolute), each opened without following a
 * final link and bound by its descriptor, so that the mount is that very
 * folder, never a link a command put in its place since; one that is gone or
 * no folder is left out. Close them with {@linkcode closeMounts}.
 */
export function readOnlyFolderMounts(folders: readonly string[]): ProtectedMount[] {
  return folders.flatMap((folder) => openMount({ path: path.normalize(folder), how: "read-only" }, true) ?? []);
}

/**
 * Read-only mounts of `entries` (absolute; files or folders), each opened without following a link on its way (in
 * its pinned folder) and bound by its descriptor: bubblewrap resolving a path itself, later, followed a link a
 * command of the session had swapped in for a folder on it since the path was judged (a checker's file bound from
 * another tenant's workspace). One that is gone, or no longer what it was, is left out.
 */
export function readOnlyEntryMounts(entries: readonly string[]): ProtectedMount[] {
  return entries.flatMap((entry) => {
    const at = path.normalize(entry);
    let isDir: boolean;
    try {
      isDir = lstatSync(at).isDirectory();
    } catch {
      return [];
    }
    return openMount({ path: at, how: "read-only" }, isDir) ?? [];
  });
}

/** Closes the descriptors of `mounts`. */
export function closeMounts(mounts: readonly ProtectedMount[]): Promise<void> {
  for (const mount of mounts) {
    if (mount.fd === undefined) continue;
    try {
      closeSync(mount.fd);
    } catch {
      // closed already
    }
  }
  return Promise.resolve();
}

// Whether everything below `rel` is protected (a folder pattern such as
// `.vscode/**`), or only the entry itself (`**/.git`).
function wholeFolder(rel: string, patterns: readonly string[]): boolean {
  return pathGlobMatcher(patterns)(`${rel}/${PROBE_CHILD}`);
}

/** What lies at a path: a file, a folder, a symbolic link or another kind of entry. */
export type EntryKind = "file" | "dir" | "link" | "other";

/**
 * The session's own view of its workspace's entries (`watchWorkspace`'s
 * window, brought up to date as the window opened), which the protected-path
 * plan reads instead of walking the workspace before and after a command.
 */
export interface WorkspaceListing {
  /**
   * The entries `matches` accepts (relative paths), with their kinds; undefined
   * where the view does not hold every entry (then the workspace is walked).
   */
  matching(matches: (rel: string) => boolean): Promise<ReadonlyMap<string, EntryKind> | undefined>;
  /** What lies at `rel` (relative) now; undefined where nothing the view keeps does. */
  kindOf(rel: string): EntryKind | undefined;
  /**
   * Once the command and everything it started are gone: looks at the
   * workspace and returns the entries `matches` accepts that were made since
   * the window opened (undefined where the view lost count).
   */
  created(matches: (rel: string) => boolean): Promise<readonly string[] | undefined>;
  /** Looks again at `rels` (relative paths the server moved away). */
  movedAway(rels: readonly string[]): Promise<void>;
  /**
   * Leaves `paths` (absolute: placeholders the sandbox made) out of every look
   * until the window closes. Called as each is made, before any other look can
   * run, so that none sees it.
   */
  ignore(paths: readonly string[]): void;
}

const protectedMatchers = new WeakMap<readonly string[], (rel: string) => boolean>();

// Whether `rel` is a protected path the walk would reach: one the patterns name, not below a `node_modules` folder
// or git's object store, refs and logs (one function per patterns array, so that a listing keeps one index for it).
function protectedMatcher(patterns: readonly string[]): (rel: string) => boolean {
  let matcher = protectedMatchers.get(patterns);
  if (matcher === undefined) {
    const matches = pathGlobMatcher(patterns);
    const packages = !skipsPackages(patterns);
    matcher = (rel) => matches(rel) && walked(rel, packages);
    protectedMatchers.set(patterns, matcher);
  }
  return matcher;
}

// Whether the walk enters every folder above `rel` (see existingProtected); `packages`: node_modules too.
function walked(rel: string, packages: boolean): boolean {
  const parts = rel.split("/");
  for (let i = 0; i < parts.length - 1; i++) {
    if (skipped(parts[i], i > 0 && parts[i - 1] === ".git", packages)) return false;
  }
  return true;
}

// Whether the walk leaves out what lies in a folder named `name` (`inGit`: a folder of `.git`).
function skipped(name: string, inGit: boolean, packages: boolean): boolean {
  return (!packages && WALK_SKIPPED.has(name)) || (inGit && GIT_SKIPPED.has(name));
}

// Whether no pattern names a package folder: then what lies in one is never looked at. A read-only rule that names
// one (`node_modules/pkg/**`) must hold there as everywhere, and was left writable.
function skipsPackages(patterns: readonly string[]): boolean {
  return !patterns.some((pattern) => /node_modules/i.test(pattern));
}

// What the walk saw of a folder: its entries by name, and their names in lower case where every one is printable
// ASCII, whose folding is plain lower case (a non-ASCII name may fold onto an ASCII one, the Kelvin sign onto k,
// and then the listing rules nothing out).
interface Listing {
  byName: Map<string, ListedEntry>;
  folded: Set<string> | undefined;
}

const PRINTABLE_ASCII = /^[ -~]*$/;

function listingOf(entries: readonly ListedEntry[]): Listing {
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const ascii = entries.every((entry) => PRINTABLE_ASCII.test(entry.name));
  return { byName, folded: ascii ? new Set(entries.map((entry) => entry.name.toLowerCase())) : undefined };
}

// The walk's listings by folder, each indexed only once a path in it is asked about: a walk lists every folder of
// the workspace, and asks about the few dozen the patterns name.
class Listings {
  readonly #entries = new Map<string, readonly ListedEntry[]>();
  readonly #indexed = new Map<string, Listing>();

  add(folder: string, entries: readonly ListedEntry[]): void {
    this.#entries.set(folder, entries);
  }

  of(folder: string): Listing | undefined {
    let listing = this.#indexed.get(folder);
    if (listing === undefined) {
      const entries = this.#entries.get(folder);
      if (entries === undefined) return undefined;
      this.#indexed.set(folder, listing = listingOf(entries));
    }
    return listing;
  }
}

function listedEntryKind(entry: ListedEntry): EntryKind {
  return entry.isSymlink ? "link" : entry.isDirectory ? "dir" : entry.isFile ? "file" : "other";
}

// What lies at `rel` by the walk's listing of its folder: the kind of the entry of that very name, "missing" when
// no entry there has the name in any letter case, or when its folder is missing itself (so that the few dozen
// paths the patterns name need no lstat each, on a case-folding file system too), undefined when the listings do
// not settle it (the folder was not listed, or a name is not printable ASCII).
function listedKind(listings: Listings, rel: string): EntryKind | "missing" | undefined {
  const slash = rel.lastIndexOf("/");
  const folder = slash === -1 ? "" : rel.slice(0, slash);
  const listing = listings.of(folder);
  if (listing === undefined) return folder !== "" && listedKind(listings, folder) === "missing" ? "missing" : undefined;
  const name = rel.slice(slash + 1);
  const entry = listing.byName.get(name);
  if (entry !== undefined) return listedEntryKind(entry);
  return listing.folded && PRINTABLE_ASCII.test(name) && !listing.folded.has(name.toLowerCase())
    ? "missing"
    : undefined;
}

/** What a walk of the workspace found (see existingProtected). */
interface WalkFindings {
  /** Whether the walk stopped at its bound before it had seen every entry. */
  incomplete: boolean;
  mounts: ProtectedMount[];
  /** Every protected entry seen (links and other entries too, which get no mount). */
  seen: Set<string>;
  /** The protected entries that are links, below folders bound read-only whole too (see protectedLinkTargets). */
  links: string[];
  /** Whether the first name of `rel` surely does not exist at the root (see listedKind). */
  absent(rel: string): boolean;
  /** What lies at `rel` now: from the walk's listing where it settles it, else from lstat. */
  kindOf(rel: string): EntryKind | undefined;
}

// The absolute path of `rel` under `root`, by string: `root` is a clean absolute path and a name holds no slash.
function under(root: string, rel: string): string {
  return rel === "" ? root : root === "/" ? `/${rel}` : `${root}/${rel}`;
}

// The mount a protected entry gets: a folder with protected paths below it is pinned (bound onto itself, its
// protected paths with their own mounts), a file or a folder protected whole is bound read-only, and a link (or
// socket, fifo), which cannot be mounted over, none: its folder stays writable.
function mountOf(abs: string, rel: string, kind: EntryKind, patterns: readonly string[]): ProtectedMount | undefined {
  if (kind === "dir" && !wholeFolder(rel, patterns)) return { path: abs, how: "pinned" };
  return kind === "dir" || kind === "file" ? { path: abs, how: "read-only" } : undefined;
}

// Every existing protected path of the workspace, found by a walk of at most `limit` entries at any depth, and every
// protected entry seen, with the listings of the folders walked. No bound on the depth: a protected path nine folders
// down (a nested checkout's `.git/hooks`) is one as much as one at the root.
function existingProtected(root: string, patterns: readonly string[], limit: number): WalkFindings {
  const found: ProtectedMount[] = [];
  const seenProtected = new Set<string>();
  const listings = new Listings();
  let seen = 0;
  const matches = pathGlobMatcher(patterns);
  const packages = !skipsPackages(patterns);
  const at = (rel: string) => under(root, rel);
  const links: string[] = [];
  // The folders bound read-only whole: below them the walk looks for links only (their entries need no mount).
  const whole = new Set<string>();
  const queue: string[] = [""];
  let incomplete = false;
  for (let next = 0; next < queue.length && !incomplete; next++) {
    const rel = queue[next];
    let entries: ListedEntry[];
    try {
      entries = entriesIn(at(rel));
    } catch {
      continue;
    }
    const covered = whole.has(rel);
    if (!covered) listings.add(rel, entries);
    const inGit = path.basename(rel) === ".git";
    for (const entry of entries) {
      if (++seen > limit) {
        incomplete = true;
        break;
      }
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (covered) {
        if (entry.isSymlink) links.push(at(childRel));
        else if (entry.isDirectory && !skipped(entry.name, inGit, packages)) whole.add(childRel), queue.push(childRel);
        continue;
      }
      if (matches(childRel)) {
        const abs = at(childRel);
        seenProtected.add(abs);
        const kind = listedEntryKind(entry);
        if (kind === "link") links.push(abs);
        const mount = mountOf(abs, childRel, kind, patterns);
        if (mount !== undefined) found.push(mount);
        // Below a pinned folder the walk goes on; below one bound read-only whole it looks for links only.
        if (mount?.how === "read-only" && kind === "dir") whole.add(childRel), queue.push(childRel);
        if (mount?.how !== "pinned") continue;
      }
      if (entry.isDirectory && !skipped(entry.name, inGit, packages)) queue.push(childRel);
    }
  }
  return {
    incomplete,
    mounts: found,
    seen: seenProtected,
    links,
    absent: (rel) => listedKind(listings, rel.split("/")[0]) === "missing",
    kindOf(rel) {
      const listed = listedKind(listings, rel);
      return listed === "missing" ? undefined : listed ?? kind(path.join(root, rel));
    },
  };
}

// What existingProtected finds, from the session's listing of the workspace instead of a walk: the same mounts
// (nothing below a folder bound read-only whole); undefined where the listing does not hold every entry.
async function listedProtected(
  root: string,
  patterns: readonly string[],
  listing: WorkspaceListing,
): Promise<WalkFindings | undefined> {
  const found = await listing.matching(protectedMatcher(patterns));
  if (found === undefined) return undefined;
  const mounts: ProtectedMount[] = [];
  const seen = new Set<string>();
  const links: string[] = [];
  const readOnly: string[] = [];
  const depth = (rel: string) => rel.split("/").length;
  for (const [rel, kind] of [...found].sort(([a], [b]) => depth(a) - depth(b))) {
    if (kind === "link") links.push(under(root, rel));
    if (readOnly.some((folder) => rel.startsWith(folder + "/"))) continue;
    const abs = under(root, rel);
    seen.add(abs);
    const mount = mountOf(abs, rel, kind, patterns);
    if (mount !== undefined) mounts.push(mount);
    if (mount?.how === "read-only" && kind === "dir") readOnly.push(rel);
  }
  return {
    incomplete: false,
    mounts,
    seen,
    links,
    absent: (rel) => listing.kindOf(rel.split("/")[0]) === undefined,
    kindOf: (rel) => listing.kindOf(rel),
  };
}

// The concrete paths at the workspace root that the patterns name: `**/.npmrc`
// gives `.npmrc`, `**/.vscode/**` the folder `.vscode`; patterns with other
// wildcards name no single path.
// Protected files whose mere presence changes what a program does: git takes an existing `commondir` as the
// folder of its configuration and dies on an empty one. A missing one gets no placeholder; it is watched.
const EMPTY_FILE_BREAKS = new Set(["commondir"]);

function rootCandidates(patterns: readonly string[]): { rel: string; dir: boolean }[] {
  const out = new Map<string, boolean>();
  for (const pattern of patterns) {
    let p = pattern;
    while (p.startsWith("**/")) p = p.slice(3);
    const dir = p.endsWith("/**");
    if (dir) p = p.slice(0, -3);
    if (p === "" || hasGlobSyntax(p) || p.split("/").some((c) => c === "" || c === "." || c === "..")) continue;
    out.set(p, (out.get(p) ?? false) || dir);
  }
  return [...out].map(([rel, dir]) => ({ rel, dir }));
}

// Where the protected links `links` (absolute) lead in `root` that no pattern protects, by real path, with whether a
// folder: a protected name that is a link (`.git/hooks/pre-commit -> ../../scripts/pre-commit`, the usual way of
// sharing a hook; `.vscode -> ../shared/vscode`) runs or loads what it leads to, which was writable: a command
// rewrote scripts/pre-commit, and the next `git commit` ran it on the host. A dangling link leads nowhere to cover;
// one leading outside leads where no command writes (the read view is read-only).
function linkTargets(root: string, patterns: readonly string[], links: readonly string[]): Map<string, boolean> {
  const places = new Map<string, boolean>();
  for (const link of links) {
    let place: string;
    let folder: boolean;
    try {
      place = realpathSync(link);
      folder = lstatSync(place).isDirectory();
    } catch {
      continue;
    }
    if (!isWithin(place, root) || place === root) continue;
    if (!pathGlobMatcher(patterns)(place.slice(root.length + 1))) places.set(place, folder);
  }
  return places;
}

/**
 * Where the protected links of the workspace `root` lead in it that no
 * pattern protects (real path: whether a folder), found by a walk as
 * {@linkcode protectedMounts} finds them (the sandbox binds them read-only;
 * the file tools ask a person before they change them). Throws
 * `workspace_too_large` past {@linkcode MAX_PROTECTED_WALK_ENTRIES} entries.
 * Not public API.
 */
export function protectedLinkTargets(root: string, patterns: readonly string[]): Map<string, boolean> {
  if (patterns.length === 0) return new Map();
  const existing = existingProtected(root, patterns, MAX_PROTECTED_WALK_ENTRIES);
  if (existing.incomplete) throw workspaceTooLarge(root);
  return linkTargets(root, patterns, existing.links);
}

/** The protected-path mounts of a sandbox, and the missing protected paths to watch. */
export interface ProtectedPlan {
  /** Mounts, parents before children. */
  mounts: ProtectedMount[];
  /** Absolute protected paths at the workspace root that do not exist yet and cannot be covered by a mount. */
  watched: string[];
  /**
   * The workspace root and patterns, every protected entry that existed before the command, and the session's
   * listing where the plan was made from one (it tells what the command made).
   */
  before?: { root: string; patterns: readonly string[]; seen: Set<string>; listing?: WorkspaceListing };
}

/**
 * The mounts that make the protected paths of `root` read-only: every
 * existing one (found by a walk of the workspace at every depth, skipping
 * `node_modules` and git's object store; past
 * {@linkcode MAX_PROTECTED_WALK_ENTRIES} entries it throws
 * `workspace_too_large`, as a path it did not reach would be writable). A
 * protected path the
 * patterns name at the root that does not exist yet is covered when it would
 * lie inside an existing protected folder (`.git/hooks` in `.git`): a
 * placeholder (an empty file for a file pattern, an empty folder otherwise) is
 * created there, exclusively, and bound read-only; git and directory listings
 * of the workspace never show it. Any other missing one (`.npmrc`, `.vscode`
 * at the root) cannot be covered without leaving visible empty files in the
 * workspace, so it is returned in `watched`, for {@linkcode quarantineCreated}
 * to move away if the command creates it. Placeholders must be released with
 * {@linkcode releasePlaceholders} once the sandbox has ended.
 */
export async function protectedMounts(
  root: string,
  patterns: readonly string[],
  options: { placeholders: boolean; listing?: WorkspaceListing },
): Promise<ProtectedPlan> {
  const byDepth = (a: ProtectedMount, b: ProtectedMount) => a.path.split("/").length - b.path.split("/").length;
  if (patterns.length === 0) return { mounts: [], watched: [] };
  const mounts = new Map<string, ProtectedMount>();
  const listed = options.listing && await listedProtected(root, patterns, options.listing);
  const existing = listed ?? existingProtected(root, patterns, MAX_PROTECTED_WALK_ENTRIES);
  if (existing.incomplete) throw workspaceTooLarge(root);
  for (const mount of existing.mounts) {
    const opened = openMount(
      mount,
      mount.how === "pinned" || existing.kindOf(path.relative(root, mount.path)) === "dir",
    );
    if (opened !== undefined) mounts.set(mount.path, opened);
  }
  for (const [place, folder] of linkTargets(root, patterns, existing.links)) {
    if (mounts.has(place)) continue;
    const opened = openMount({ path: place, how: "read-only" }, folder);
    if (opened !== undefined) mounts.set(place, opened);
  }
  // Another name (a hard link) of a protected file is that file: a command appended to scripts/pre-push, the second
  // name of the hook .git/hooks/pre-push, which the next `git push` ran. The workspace is walked for them only where
  // a protected file has more than one name; past the walk's bound the command is refused, as for the walk above.
  const readOnly = new Map([...mounts.values()].filter((m) => m.how === "read-only").map((m) => [m.path, false]));
  const aliases = otherNames(root, linkedInodes(readOnly), readOnly);
  if (aliases === undefined) throw workspaceTooLarge(root);
  for (const alias of aliases) {
    const opened = openMount({ path: alias, how: "read-only" }, false);
    if (opened !== undefined) mounts.set(alias, opened);
  }
  if (!options.placeholders) return { mounts: [...mounts.values()].sort(byDepth), watched: [] };
  // File placeholders first, so that a folder pattern at the same path wins.
  const candidates = rootCandidates(patterns).sort((a, b) => Number(a.dir) - Number(b.dir));
  const wanted = new Map<string, "file" | "dir">();
  const parents = new Map<string, number>();
  const watched: string[] = [];
  for (const { rel, dir } of candidates) {
    if (existing.absent(rel)) {
      watched.push(path.join(root, rel));
      continue;
    }
    const parts = rel.split("/");
    for (let i = 0; i < parts.length; i++) {
      const abs = path.join(root, ...parts.slice(0, i + 1));
      const found = existing.kindOf(parts.slice(0, i + 1).join("/"));
      if (found === "dir") continue;
      if (found === undefined && !mounts.has(abs)) {
        const parentRel = parts.slice(0, i).join("/");
        const parent = mounts.get(path.join(root, parentRel));
        const asFile = i === parts.length - 1 && !dir;
        const coverable = !(asFile && EMPTY_FILE_BREAKS.has(parts[i]));
        if (parentRel !== "" && parent?.how === "pinned" && parent.fd !== undefined && coverable) {
          wanted.set(abs, asFile && wanted.get(abs) !== "dir" ? "file" : "dir");
          parents.set(abs, parent.fd);
        } else {
          watched.push(path.join(root, rel));
        }
      }
      // Found a file, link or other: a missing path below it cannot be created anyway,
      // or (a link) it is not ours to cover.
      break;
    }
  }
  for (const [abs, type] of wanted) {
    // Made through the open parent folder, so that a parent swapped for a link meanwhile is not followed.
    const made = acquirePlaceholder(abs, type, parents.get(abs)!);
    if (made) options.listing?.ignore([abs]);
    const opened = made && openMount({ path: abs, how: "read-only", placeholder: type }, type === "dir");
    if (opened) mounts.set(abs, opened);
    else if (made) await releasePlaceholders([{ path: abs, how: "read-only", placeholder: type }]);
    // Not made (the runtime may not write there, or something appeared): the walk after the command looks.
  }
  return {
    mounts: [...mounts.values()].sort(byDepth),
    watched,
    before: { root, patterns, seen: existing.seen, ...(listed ? { listing: options.listing } : {}) },
  };
}

// The refusal of a command that may write in a workspace too large to search for its protected paths.
function workspaceTooLarge(root: string): ToolError {
  const most = MAX_PROTECTED_WALK_ENTRIES.toLocaleString("en-US");
  return new ToolError(
    `The workspace ${root} holds more than ${most} entries outside node_modules and git's object store: the sandbox ` +
      "cannot find every protected path in it (.git/hooks, .npmrc, ...), so a command that may write there is refused.",
    {
      code: "workspace_too_large",
      kind: "policy",
      recoverable: false,
      recoveryHint: "Run commands that only read, or ask the user to serve a smaller folder as the workspace.",
      details: { root, maxEntries: MAX_PROTECTED_WALK_ENTRIES },
    },
  );
}

/** A protected path a sandboxed command created, and where it was moved. */
export interface QuarantinedPath {
  /** Where the command created it. */
  path: string;
  /** Where it is now. */
  movedTo: string;
}

/**
 * Moves every protected path the sandboxed command created into the folder
 * `quarantine`, so that nothing it wrote there steers a program later: what
 * the session's listing says the command made, where the plan was made from
 * one; else the watched root paths that exist now, and any protected path a
 * second walk of the workspace finds that the first did not. Returns what was
 * moved.
 */
export async function quarantineCreated(
  plan: ProtectedPlan,
  quarantine: string,
  roots: readonly string[],
): Promise<QuarantinedPath[]> {
  const moved: QuarantinedPath[] = [];
  const before = plan.before;
  const made = before?.listing && await before.listing.created(protectedMatcher(before.patterns));
  const candidates = new Set(made?.map((rel) => path.join(before!.root, rel)) ?? plan.watched);
  let kindNow = kind;
  if (made === undefined && before !== undefined) {
    // Anywhere else in the workspace (`pkg/.npmrc`, a new `sub/.git`): what the walk finds now and did not before.
    const now = existingProtected(before.root, before.patterns, Infinity);
    for (const entry of now.seen) if (!before.seen.has(entry)) candidates.add(entry);
    kindNow = (file) =>
      isWithin(file, before.root) && file !== before.root ? now.kindOf(path.relative(before.root, file)) : kind(file);
  }
  // Outermost first; whatever lies inside a moved folder moves with it. The placeholders of every running sandbox
  // (another session's command on the same workspace too) are no command's making.
  const ordered = [...candidates].filter((file) => !placeholders.has(file))
    .map((file) => ({ file, depth: file.split("/").length }))
    .sort((a, b) => a.depth - b.depth);
  const budget = { bytes: QUARANTINE_COPY_BYTES };
  for (const { file } of ordered) {
    if (moved.some((m) => isWithin(file, m.path))) continue;
    if (kindNow(file) === undefined) continue;
    quarantineFolder(quarantine, roots);
    const target = path.join(
      quarantine,
      `${Date.now()}-${Math.random().toString(36).slice(2, 8)}-${path.basename(file)}`,
    );
    // Confined, as every change the server makes: a folder on either path that a command swapped for a link
    // must not carry the move (or the copy and removal) out of the workspace.
    try {
      moveConfined(file, target, roots, { replace: false });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") continue; // gone meanwhile, or cannot move: next
      // Across file systems the move is a copy, of bytes the command may have made for free (a sparse file, many
      // names of one file), into a temp dir that is often a tmpfs: only within QUARANTINE_COPY_BYTES for the whole
      // command. A path past it, or whose copy fails, is removed all the same, a note in its place: before, a copy that
      // failed (the temp dir's file system full, or past its minute) left the protected path in the workspace for
      // good, and `.npmrc` with a sparse tail of 48 MiB stayed there, unreported.
      let why: string | undefined;
      const left = budget.bytes;
      try {
        await copyTreeConfined(
          file,
          target,
          AbortSignal.timeout(QUARANTINE_COPY_MS),
          undefined,
          "",
          undefined,
          [],
          budget,
        );
      } catch (error) {
        await discardConfined(target);
        budget.bytes = left; // what it wrote is gone with it
        // Led by the error's code, as each runtime words the message its own way (Deno's "No space left on
        // device", Node's "ENOSPC: no space left on device, write").
        const { code, message } = error as NodeJS.ErrnoException;
        const reason = code !== undefined && !message.startsWith(code) ? `${code}: ${message}` : message;
        why = `its copy failed (${reason}; the quarantine copies ${QUARANTINE_COPY_BYTES >> 20} MiB for one command)`;
      }
      try {
        await removeConfined(file, AbortSignal.timeout(QUARANTINE_COPY_MS));
      } catch {
        continue; // it stays where the command made it (and its copy, if any, in the quarantine)
      }
      if (why !== undefined) noteRemoved(target, file, why);
    }
    moved.push({ path: file, movedTo: target });
  }
  if (made !== undefined && moved.length > 0) {
    await before!.listing!.movedAway(moved.map((m) => path.relative(before!.root, m.path)));
  }
  return moved;
}

// How long a quarantine copy (across file systems) or removal may take before it is left where it is.
const QUARANTINE_COPY_MS = 60_000;
// The most bytes the quarantine of one command copies across file systems.
const QUARANTINE_COPY_BYTES = 64 << 20;

// A note at `target` in the quarantine, where the protected path `file` would have been copied: why it was removed
// without a copy. Nothing when it cannot be written (the temp dir's file system full): the result still lists it.
function noteRemoved(target: string, file: string, why: string): void {
  try {
    const { fd } = createConfined(target, 0o600, true);
    try {
      writeSync(fd, `toolfence removed ${file}, a protected path a command created, without a copy: ${why}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // nothing more to keep
  }
}

// The quarantine folder, made confined. It lies in the session temp dir, which commands may change: a link a
// command put in its place is removed (it is the command's, not the user's), never followed.
function quarantineFolder(quarantine: string, roots: readonly string[]): void {
  if (lstatConfined(quarantine)?.isSymbolicLink()) unlinkConfined(quarantine);
  mkdirsConfined(quarantine, roots, 0o700);
}

/**
 * The bubblewrap arguments for protected mounts (parents before children),
 * binding each mount's open handle, and the descriptors to pass to bubblewrap
 * in that order as its descriptors `firstFd`, `firstFd + 1`, ...
 */
export function protectedMountArgs(
  mounts: readonly ProtectedMount[],
  firstFd: number,
): { args: string[]; fds: number[] } {
  const args: string[] = [];
  const fds: number[] = [];
  for (const m of mounts) {
    if (m.fd === undefined) continue;
    args.push(m.how === "pinned" ? "--bind-fd" : "--ro-bind-fd", String(firstFd + fds.length), m.path);
    fds.push(m.fd);
  }
  return { args, fds };
}

// Placeholders shared by sandboxes running at once, with how many use each.
const placeholders = new Map<string, { count: number; type: "file" | "dir"; ino: number }>();

// Synchronous, as releasePlaceholders: a few system calls per placeholder, which asynchronously each waited
// their turn in the runtime's thread pool (about 3 ms per command in a git checkout at load 3).
function acquirePlaceholder(abs: string, type: "file" | "dir", parent: number): boolean {
  const held = placeholders.get(abs);
  if (held !== undefined) {
    let now;
    try {
      now = lstatSync(abs, { throwIfNoEntry: false });
    } catch {
      // not ours to look at: made again below, or not
    }
    if (now !== undefined && now.ino === held.ino) {
      held.count++;
      return true;
    }
    placeholders.delete(abs);
  }
  try {
    // Never follows a link, never takes over an existing entry: `wx` and mkdir fail on anything there.
    const through = `/proc/self/fd/${parent}/${path.basename(abs)}`;
    if (type === "file") closeSync(openSync(through, "wx", 0o444));
    else mkdirSync(through, { mode: 0o555 });
    const info = lstatSync(through);
    placeholders.set(abs, { count: 1, type, ino: info.ino });
    return true;
  } catch {
    // Appeared meanwhile, or the parent is not writable: nothing to cover, or nothing the sandbox can create.
    return false;
  }
}

/**
 * Removes the placeholders of `mounts` that no other running sandbox uses,
 * when they are still the empty entries this process created.
 */
export function releasePlaceholders(mounts: readonly ProtectedMount[]): Promise<void> {
  for (const mount of mounts) {
    if (mount.placeholder === undefined) continue;
    const held = placeholders.get(mount.path);
    if (held === undefined || --held.count > 0) continue;
    placeholders.delete(mount.path);
    try {
      const info = lstatSync(mount.path);
      if (info.ino !== held.ino) continue;
      if (held.type === "file" && info.isFile() && info.size === 0) unlinkSync(mount.path);
      if (held.type === "dir" && info.isDirectory()) rmdirSync(mount.path);
    } catch {
      // Gone already, or someone put something in it: it is theirs now.
    }
  }
  return Promise.resolve();
}
