/**
 * Every path a command line may read, write or run, judged by the rules the
 * file tools follow: inside the workspace or the session's temp dir, not
 * denied (hidden) by a policy file, not read-only for writes. The operands of
 * programs (every operand of a program not known to take none), option
 * values, redirections, the files the argument readers record
 * (`FlagContext.pathOperands`), and `cd`'s folder, from every folder the line
 * may have changed into. What the programs that write name (`cp`'s
 * destination and the name a source gets in it, `rm -r`'s folder and all below
 * it; `WRITERS`) is judged as written: a read-only path of the policy denies.
 *
 * A path known only when the command runs (a variable, a command
 * substitution, a glob or brace that may reach outside, any tilde) asks. A
 * link inside the workspace that leads out is judged by its target, where the
 * file exists; the OS sandbox's read view covers what the analysis cannot see.
 *
 * The judging itself sits behind one function, {@linkcode PathJudge}, so that
 * it can be pointed at the policy's file door.
 *
 * @module
 */
import fs from "node:fs";
import path from "node:path";
import type { BashAnalysis, BashRedirect, BashSimpleCommand, BashWord } from "./_tree.ts";
import { expandBraces } from "./_literals.ts";
import {
  deviceKind,
  entriesBelow,
  followsLinksDown,
  GLOB_CHARS,
  globLinks,
  ignoreFileLinks,
  linksBelow,
  linksFollowedBelow,
  optionNamesMatched,
  readsIgnoreFiles,
  walksHere,
} from "./_links_reached.ts";
import type { PathAccess, PathOperand } from "./_path_operands.ts";
import { describeRule, type PathOutcome, type PathRule, type PolicyRules } from "../config/rules.ts";
import { isProtectedPath } from "../protected_paths.ts";
import { globMayMatchWithin } from "@toolfence/internal";
import { DEFAULT_COMMAND_ALLOWLIST, PROJECT_CODE_COMMANDS } from "./allowlist.ts";
import { hasFlagRule } from "./_flag_rules.ts";
import { findStartingPoints } from "./_find_expression.ts";

/** What the path rules decide for one path. */
export interface PathJudgement {
  decision: "allow" | "ask" | "deny";
  /** Why, as a predicate after the path ("lies outside the workspace /w ..."); absent when allowed. */
  reason?: string;
  /** The policy file's path rule that decided, when one did. */
  rule?: PathRule;
  /** Where the path really leads, when the analysis could see it. */
  real?: string;
  /** The protected path (relative to its root) a write reaches, which only a person or the sandbox may let change. */
  protected?: string;
}

/**
 * Judges one absolute path, lexically normal and free of `..`, for an access. With `unknownNames`, the path is a
 * folder the command creates entries in whose names only the run knows (an archive's, a patch's, a prefix's): the
 * judgement covers whatever may lie below it.
 */
export type PathJudge = (absolute: string, access: PathAccess, unknownNames?: boolean) => PathJudgement;

/** One path of the line and how it was judged; plain data. */
export interface CommandPath {
  /** The simple command (or redirection) it belongs to, as written. */
  command: string;
  /** The path as written on the line. */
  written: string;
  /** The absolute path it names, when known before the command runs. */
  path?: string;
  /** Where it really leads, when the analysis could see it. */
  real?: string;
  /** What the program does with it. */
  access: PathAccess;
  /** Where it came from: `operand`, `--files0-from`, `<`, `sed script 'r'`. */
  origin: string;
  /** `allow`: within the rules; `ask`: outside or unknown; `deny`: a policy file forbids it. */
  decision: "allow" | "ask" | "deny";
  /** Why it asks or is denied, naming the path and the rule. */
  reason?: string;
  /** The policy file's rule, when one decided. */
  rule?: PathRule;
  /**
   * The protected path (relative to its root) it writes, when it writes one; {@linkcode ANY_PATH} when it writes a
   * path only the run knows, which may be one.
   */
  protected?: string;
}

/** What a write whose path is only known when the command runs may be: any path, a protected one too. */
export const ANY_PATH = "**";

/** Where commands may reach: the places the file tools may reach. */
export interface PathScope {
  /** The workspace root (absolute); commands run there. */
  workspaceRoot?: string;
  /** The session's temp dir (absolute), when it exists. */
  tempDir?: string;
  /** The policy files' path rules. */
  rules?: PolicyRules;
  /** The protected-path globs (`.git/hooks/**`, `.npmrc`, ...): a write of one is marked. */
  protectedPaths?: readonly string[];
}

/** The file tools' rule, named in every reason for a path outside. */
const AREA_RULE = "paths must lie inside the workspace or the session's temp dir, as for the file tools";

/** Devices that hold nothing of anybody's: reading or writing them is harmless. */
const HARMLESS_DEVICES = new Set([
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/stdin",
  "/dev/stdout",
  "/dev/stderr",
]);

const ORDER = { allow: 0, "read-only": 1, deny: 2 } as const;

function within(absolute: string, root: string | undefined): boolean {
  return root !== undefined && (absolute === root || absolute.startsWith(root === "/" ? "/" : `${root}/`));
}

/**
 * Where `absolute` really leads: the real path of its deepest existing
 * folder, with the rest appended; `undefined` when it cannot be looked at.
 */
function realOf(absolute: string, hops = 0): string | undefined {
  const rest: string[] = [];
  for (let at = absolute;;) {
    try {
      const real = fs.realpathSync(at);
      return rest.length === 0 ? real : path.join(real, ...rest.reverse());
    } catch (error) {
      const code = (error as { code?: string }).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || at === "/") return undefined;
      // A dangling link leads where its target would be: the kernel follows it (`touch l` creates the target, a
      // file outside for `l -> /srv/new`), so the rest of the path is taken from there, as far as links go.
      const target = danglingTarget(at);
      if (target !== undefined) {
        return hops >= MAX_LINK_HOPS ? undefined : realOf(path.join(target, ...rest.reverse()), hops + 1);
      }
      rest.push(path.basename(at));
      at = path.dirname(at);
    }
  }
}

/** What the device node at `real` is ({@linkcode deviceKind}); `undefined` for anything else or nothing there. */
function deviceAt(real: string): string | undefined {
  try {
    return deviceKind(fs.statSync(real));
  } catch {
    return undefined;
  }
}

/** As many links as the kernel follows in one path (Linux's MAXSYMLINKS); beyond, it fails with ELOOP. */
const MAX_LINK_HOPS = 40;

/** Where the link at `at` points, from the real folder it lies in; `undefined` when `at` is no link. */
function danglingTarget(at: string): string | undefined {
  try {
    if (!fs.lstatSync(at).isSymbolicLink()) return undefined;
    return path.resolve(fs.realpathSync(path.dirname(at)), fs.readlinkSync(at));
  } catch {
    return undefined;
  }
}

/**
 * The judge of the file tools' rules for a scope: the area (workspace or
 * temp dir, by the path as named and where it leads), then the policy files'
 * path rules (the stricter of the path as named and where it leads).
 */
export function scopeJudge(scope: PathScope): PathJudge {
  const root = scope.workspaceRoot === undefined ? undefined : path.resolve(scope.workspaceRoot);
  const temp = scope.tempDir === undefined ? undefined : path.resolve(scope.tempDir);
  const inArea = (p: string) => within(p, root) || within(p, temp);
  return (absolute, access, unknownNames) => {
    if (HARMLESS_DEVICES.has(absolute)) return { decision: "allow" };
    if (!inArea(absolute)) {
      return {
        decision: "ask",
        reason: root === undefined
          ? `is an absolute path and the workspace is not known (${AREA_RULE})`
          : `lies outside the workspace ${root} (${AREA_RULE})`,
      };
    }
    const real = realOf(absolute);
    if (real === undefined) {
      return { decision: "ask", reason: `cannot be looked at to see where it leads (${AREA_RULE})` };
    }
    if (!inArea(real)) {
      return { decision: "ask", real, reason: `leads through a link to ${real}, outside the workspace (${AREA_RULE})` };
    }
    const device = deviceAt(real);
    if (device !== undefined) {
      return {
        decision: "ask",
        real,
        reason:
          `is ${device}, which holds no file of the workspace but a disk, the kernel or a terminal (${AREA_RULE})`,
      };
    }
    const marked = access !== "write" ? undefined : protectedOf([absolute, real], [root, temp], scope.protectedPaths) ??
      (unknownNames === true ? protectedBelow([absolute, real], [root, temp], scope.protectedPaths) : undefined);
    const allowed = { decision: "allow" as const, real, ...(marked === undefined ? {} : { protected: marked }) };
    const rules = scope.rules;
    if (rules === undefined || !rules.hasPathRules) return allowed;
    const below = unknownNames === true && access === "write" ? rules.ruleWithin([absolute, real]) : undefined;
    if (below !== undefined && rules.decidePath(absolute).decision === "allow") {
      return {
        decision: "ask",
        real,
        ...(marked === undefined ? {} : { protected: marked }),
        reason: `is a folder the command creates files in whose names are only known when it runs, and the ${
          describeRule(below)
        } covers paths in it`,
      };
    }
    const lexical = rules.decidePath(absolute);
    const resolved = rules.decidePath(real);
    const outcome: PathOutcome = ORDER[resolved.decision] > ORDER[lexical.decision] ? resolved : lexical;
    if (outcome.decision === "deny" && outcome.rule) {
      return { decision: "deny", real, rule: outcome.rule, reason: `is denied by the ${describeRule(outcome.rule)}` };
    }
    if (outcome.decision === "read-only" && outcome.rule && access === "write") {
      return {
        decision: "deny",
        real,
        rule: outcome.rule,
        reason: `is read-only by the ${describeRule(outcome.rule)}`,
      };
    }
    return allowed;
  };
}

/** The first of the paths (as named, where it leads) that is protected in the root it lies in, relative to it. */
function protectedOf(
  paths: readonly string[],
  roots: readonly (string | undefined)[],
  patterns: readonly string[] | undefined,
): string | undefined {
  if (patterns === undefined) return undefined;
  for (const p of paths) {
    for (const root of roots) {
      if (root === undefined || !within(p, root) || p === root) continue;
      const relative = p.slice(root === "/" ? 1 : root.length + 1);
      if (isProtectedPath(relative, patterns)) return relative;
    }
  }
  return undefined;
}

/**
 * The first protected-path glob that may match a path below one of the folders (as named, where it leads), in the
 * root it lies in: where a command creates files whose names only the run knows, any of them may be one.
 */
function protectedBelow(
  folders: readonly string[],
  roots: readonly (string | undefined)[],
  patterns: readonly string[] | undefined,
): string | undefined {
  for (const folder of folders) {
    for (const root of roots) {
      if (root === undefined || !within(folder, root)) continue;
      // Matched case-insensitively, as the protected paths are.
      const found = patterns?.find((pattern) =>
        globMayMatchWithin(path.posix.join(root, pattern).toLowerCase(), folder.toLowerCase())
      );
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** How much the judgements weigh, the worst first: deny before ask before allow. */
const WEIGHT = { allow: 0, ask: 1, deny: 2 } as const;

type Judged = Omit<CommandPath, "command" | "written" | "origin" | "access">;

function worst(list: readonly Judged[]): Judged {
  const found = list.reduce<Judged>(
    (a, b) => WEIGHT[b.decision] > WEIGHT[a.decision] ? b : a,
    list[0] ?? { decision: "allow" },
  );
  // A protected path written is kept whatever else decides: asking the risk assessor is no person's yes.
  const marked = found.protected ?? list.find((judged) => judged.protected !== undefined)?.protected;
  return marked === undefined ? found : { ...found, protected: marked };
}

/** Bash's folders the line may run in: the workspace root, and every folder `cd` may have changed into. */
export type Folders = readonly string[];

const MAX_FOLDERS = 16;

function tildeReason(text: string): string {
  if (/^~[+]/.test(text)) {
    return `starts with \`~+\`, the folder the shell is in when it runs ($PWD), which the line can change (${AREA_RULE})`;
  }
  if (/^~-/.test(text)) {
    return `starts with \`~-\`, the previous folder ($OLDPWD), which may lie outside the workspace (${AREA_RULE})`;
  }
  if (/^~[^/]/.test(text)) {
    return `starts with \`~user\`, another user's home folder, outside the workspace (${AREA_RULE})`;
  }
  return `is in the home folder (\`~\`), outside the workspace (${AREA_RULE})`;
}

/** A static path, judged from every folder the command may run in. */
function judgeValue(value: string, access: PathAccess, folders: Folders, judge: PathJudge): Judged {
  if (value === "" || value === "-") return { decision: "allow" };
  // Some programs expand `~` themselves (git, rg's config paths): taken as the home folder.
  if (value.startsWith("~")) return { decision: "ask", reason: tildeReason(value) };
  if (/^\/dev\/(tcp|udp)\//.test(value)) {
    return { decision: "ask", reason: "is a network connection bash opens in a redirection, not a file" };
  }
  if (value.split("/").includes("..")) {
    return { decision: "ask", reason: `steps out of the folder with \`..\` (${AREA_RULE})` };
  }
  const results: Judged[] = [];
  for (const folder of path.isAbsolute(value) ? ["/"] : folders) {
    if (!path.isAbsolute(folder)) {
      results.push({ decision: "ask", reason: `is relative, and the folder the command runs in is not known` });
      continue;
    }
    const absolute = path.resolve(folder, value);
    const judged = judge(absolute, access);
    results.push({ path: absolute, ...judged });
  }
  return worst(results);
}

/** A glob, brace or tilde pattern: judged by the folder it starts in; asks where it may reach out. */
function judgePattern(pattern: string, access: PathAccess, folders: Folders, judge: PathJudge): Judged {
  // bash expands `~` at the start and after `=` or `:` in words like `--opt=~/x`.
  if (/(^|[=:])~/.test(pattern)) return { decision: "ask", reason: tildeReason(pattern.replace(/^.*[=:](?=~)/, "")) };
  const expansions = expandBraces(pattern);
  if (expansions === undefined) {
    return { decision: "ask", reason: "uses a brace expansion the checker does not follow, which may reach outside" };
  }
  const results: Judged[] = [];
  for (const expansion of expansions) {
    const parts = expansion.split("/");
    if (parts.includes("..")) {
      results.push({ decision: "ask", reason: `steps out of the folder with \`..\` (${AREA_RULE})` });
      continue;
    }
    const firstGlob = parts.findIndex((part) => GLOB_CHARS.test(part));
    if (firstGlob < 0) {
      results.push(judgeValue(expansion, access, folders, judge));
      continue;
    }
    // `.*` and `[.]*` may match `..` (bash before 5.2, or without globskipdots).
    if (parts.slice(firstGlob).some((part) => GLOB_CHARS.test(part) && /^[.[]/.test(part))) {
      results.push({ decision: "ask", reason: `is a pattern that may match \`..\`, the folder above (${AREA_RULE})` });
      continue;
    }
    const prefix = parts.slice(0, firstGlob).join("/") || (expansion.startsWith("/") ? "/" : ".");
    const judged = judgeValue(prefix, "read", folders, judge);
    if (judged.decision !== "allow") {
      results.push({ ...judged, reason: `is a pattern that matches in ${prefix}, which ${judged.reason}` });
      continue;
    }
    if (access === "write") {
      results.push({ decision: "ask", reason: "is a pattern, so what it writes is only known when the command runs" });
      continue;
    }
    results.push(judged, ...judgeMatchedLinks(prefix, parts.slice(firstGlob), access, folders, judge));
  }
  return worst(results);
}

/**
 * The files named by the option words a pattern may become: an expansion that starts with `-`, or a glob of one
 * segment matching names that do. Bash handed `hexdump ?flf`, beside a file named `-flf`, the option `-flf`, which
 * reads `lf` (a link leading out) and prints its lines as bad formats; with an allow rule for cp, `cp ?tlnk a` copied
 * into where `lnk` leads. Their values are judged as read from the folder the pattern matches in, as those of an
 * option word written out are ({@linkcode attachedValues}).
 */
function judgeOptionWords(expansion: string, folders: Folders, judge: PathJudge): Judged[] {
  const values = (name: string) =>
    attachedValues({ text: name, value: name, mayBeOption: true }).map(({ word }) => word.value!);
  if (!GLOB_CHARS.test(expansion)) {
    return expansion.startsWith("-") ? values(expansion).map((value) => judgeValue(value, "read", folders, judge)) : [];
  }
  if (expansion.includes("/")) return []; // Its matches start with the folder, never with `-`.
  return reachedLinks(
    ".",
    (folder) =>
      optionNamesMatched(folder, expansion)?.flatMap((name) =>
        values(name).map((value) => path.resolve(folder, value))
      ),
    "read",
    folders,
    judge,
  ).map((reached) =>
    reached === undefined
      ? { decision: "ask", reason: `is a pattern that matches more files than the checker looks through` }
      : {
        path: reached.link,
        ...reached.judged,
        reason: `is a pattern that may match an option whose value \`${reached.shown}\` ${reached.judged.reason}`,
      }
  );
}

/** The links a pattern may match (bash opens them), each judged by where it leads, from every folder. */
function judgeMatchedLinks(
  prefix: string,
  segments: readonly string[],
  access: PathAccess,
  folders: Folders,
  judge: PathJudge,
): Judged[] {
  return reachedLinks(prefix, (base) => globLinks(base, segments), access, folders, judge).map((reached) =>
    reached === undefined
      ? { decision: "ask", reason: `is a pattern that matches more files than the checker looks through` }
      : {
        path: reached.link,
        ...reached.judged,
        reason: `is a pattern that may match the link ${reached.shown}, which ${reached.judged.reason}`,
      }
  );
}

/**
 * The links `find` reaches from `start` (resolved in every folder the command
 * may run in) that the rules do not allow, each with how it was judged and
 * how it is shown; `undefined` for a folder where `find` gave up (too many
 * entries to look through).
 */
function reachedLinks(
  start: string,
  find: (absolute: string, cwd: string) => string[] | undefined,
  access: PathAccess,
  folders: Folders,
  judge: PathJudge,
): ({ link: string; shown: string; judged: PathJudgement } | undefined)[] {
  const reached: ({ link: string; shown: string; judged: PathJudgement } | undefined)[] = [];
  for (const folder of path.isAbsolute(start) ? ["/"] : folders) {
    if (!path.isAbsolute(folder)) continue; // the start is judged as relative already: asks
    const links = find(path.resolve(folder, start), folder);
    if (links === undefined) {
      reached.push(undefined);
      continue;
    }
    for (const link of links) {
      const judged = judge(link, access);
      if (judged.decision !== "allow") reached.push({ link, shown: path.relative(folder, link) || link, judged });
    }
  }
  return reached;
}

/** The folder of a glob, the part before its last `/`; the folder the command runs in when there is none. */
function globFolder(pattern: string): string {
  const slash = pattern.lastIndexOf("/");
  return slash < 0 ? "." : pattern.slice(0, slash) || "/";
}

/** A folder bash reads to match a glob, judged for reading. */
function judgeFolderRead(folder: string, folders: Folders, judge: PathJudge): Judged {
  if (GLOB_CHARS.test(folder)) return judgePattern(folder, "read", folders, judge);
  const judged = judgeValue(folder, "read", folders, judge);
  return judged.decision === "allow"
    ? judged
    : { ...judged, reason: `reads the folder ${folder}, which ${judged.reason}` };
}

/**
 * The folders bash reads to expand a word's globs, whatever the program does
 * with the words it gets (`echo /srv/*` lists /srv): for every alternative of
 * its braces that holds a glob, the folder before its last `/`, itself a
 * pattern when it holds one. For a word with quotes (`"my dir"/*.ts`), the
 * folder of the static text before its glob, where no `..` or dot-pattern
 * after it may step out.
 */
function judgeGlobFolders(word: BashWord, folders: Folders, judge: PathJudge): Judged {
  if (word.pattern !== undefined) {
    const expansions = expandBraces(word.pattern);
    if (expansions === undefined) {
      return { decision: "ask", reason: "uses a brace expansion the checker does not follow, which may reach outside" };
    }
    return worst(
      expansions.filter((expansion) => GLOB_CHARS.test(expansion)).map((expansion) =>
        judgeFolderRead(globFolder(expansion), folders, judge)
      ),
    );
  }
  const prefix = word.glob?.prefix;
  if (prefix === undefined) {
    return {
      decision: "ask",
      reason: `holds a glob after a part only known when the command runs (${
        word.dynamic ?? "an expansion"
      }), so the folders read to match it cannot be judged; quote the glob, or write the folder as plain text`,
    };
  }
  // A dot-pattern may match `..`: after a `/`, or first in the word with a `/` after it (`.*/"a"*`).
  if (/\.\.|[{~]/.test(word.text) || /\/["'\\]*[.[]|^["'\\]*[.[][^/]*\//.test(word.text)) {
    return {
      decision: "ask",
      reason:
        `mixes quotes with a glob that may step out of its folder (\`..\`, a dot-pattern, braces or \`~\`), which the checker does not follow; write it without quotes`,
    };
  }
  return judgeFolderRead(globFolder(prefix), folders, judge);
}

/** Judges one word used as a path. */
export function judgeWord(word: BashWord, access: PathAccess, folders: Folders, judge: PathJudge): Judged {
  return unresolvedWrite(access, judgeWordPath(word, access, folders, judge));
}

/**
 * A write the analysis could not follow to a path (a variable, `..`, a relative path in an unknown folder) may write
 * any path, a protected one too: marked {@linkcode ANY_PATH}, so that without the sandbox a person decides, as for
 * a protected path named.
 */
function unresolvedWrite(access: PathAccess, judged: Judged): Judged {
  if (access !== "write" || judged.decision !== "ask" || judged.path !== undefined || judged.protected !== undefined) {
    return judged;
  }
  return { ...judged, protected: ANY_PATH };
}

function judgeWordPath(word: BashWord, access: PathAccess, folders: Folders, judge: PathJudge): Judged {
  if (word.value !== undefined) return judgeValue(word.value, access, folders, judge);
  if (word.pattern !== undefined) {
    return worst([
      judgePattern(word.pattern, access, folders, judge),
      ...(expandBraces(word.pattern) ?? []).flatMap((expansion) => judgeOptionWords(expansion, folders, judge)),
    ]);
  }
  // `<(sort a)` is a pipe to a command judged on its own.
  if (/^[<>]\(/.test(word.text) && word.text.endsWith(")")) return { decision: "allow" };
  return {
    decision: "ask",
    reason: `is only known when the command runs (${
      word.dynamic ?? "an expansion"
    }), so where it points cannot be judged`,
  };
}

/**
 * Programs whose operands are never opened as files: printers, and the shell's builtins and the small programs that
 * only count, wait or print what they are given or who runs them.
 */
const NO_PATHS = new Set(
  ("echo printf true false whoami uname basename dirname pwd : sleep seq expr yes nproc tty logname id groups " +
    "factor numfmt wait jobs type exit return shift break continue times").split(" "),
);

/**
 * What an option does with its value: `text` (a pattern, a separator, a
 * number, never opened), `path` (a file it opens), `script-text` and
 * `script-path` (the program's script given by option: the first operand is
 * then a file), `text-text`/`text-path` (two words: jq's `--arg NAME VALUE`,
 * `--rawfile NAME FILE`), `flag` (no value), `optional` (a text value only
 * when attached: deno's `--allow-read=/x`, which widens what the sandboxed
 * code may do and opens nothing), `no-pattern` (`rg --files`: every operand
 * is a path).
 */
export type OptionKind =
  | "flag"
  | "optional"
  | "text"
  | "path"
  | "script-text"
  | "script-path"
  | "text-text"
  | "text-path"
  | "no-pattern";

/** How a program reads its options, for the programs whose first operand is not a file. */
export interface ProgramShape {
  short: Readonly<Record<string, OptionKind>>;
  long: Readonly<Record<string, OptionKind>>;
  /** Whether the first operand is a pattern, script or filter (unless a script option gives it). */
  first?: "text";
  /**
   * Whether a letter that takes a value takes the next word even inside a cluster, the letters after it options
   * still (tree's own parser: `tree -Ll 2` descends 2 levels and follows links).
   */
  valuesAfter?: true;
}

function kinds(spec: string): Record<string, OptionKind> {
  const out: Record<string, OptionKind> = {};
  for (const group of spec.trim().split(/\s*;\s*/)) {
    const [kind, names] = group.split(":");
    for (const name of names.trim().split(/\s+/)) if (name !== "") out[name] = kind.trim() as OptionKind;
  }
  return out;
}

function letters(spec: string): Record<string, OptionKind> {
  const out: Record<string, OptionKind> = {};
  for (const group of spec.trim().split(/\s*;\s*/)) {
    const [kind, names] = group.split(":");
    for (const letter of names.trim()) out[letter] = kind.trim() as OptionKind;
  }
  return out;
}

const GREP: ProgramShape = {
  first: "text",
  short: letters("flag: rRniElwvcoHhFxsqLPzUaIbTZGy; text: ABCmdD; script-text: e; script-path: f"),
  long: kinds(
    "flag: recursive dereference-recursive line-number ignore-case no-ignore-case extended-regexp files-with-matches " +
      "files-without-match invert-match count word-regexp line-regexp fixed-strings basic-regexp perl-regexp " +
      "only-matching with-filename no-filename no-messages quiet silent null null-data byte-offset initial-tab text " +
      "color colour; text: after-context before-context context max-count label binary-files devices directories " +
      "include exclude exclude-dir group-separator; script-text: regexp; script-path: file exclude-from",
  ),
};

const RG: ProgramShape = {
  first: "text",
  short: letters("flag: inwlvcoFHSsuUxLPzNpIqb0a.; text: gtTABCmMjErd; script-text: e; script-path: f"),
  long: kinds(
    "flag: hidden no-ignore no-ignore-vcs files-with-matches files-without-match count count-matches fixed-strings " +
      "ignore-case smart-case case-sensitive line-number no-line-number no-heading heading vimgrep json follow " +
      "multiline multiline-dotall word-regexp line-regexp invert-match only-matching stats null no-messages quiet " +
      "pcre2 text binary no-filename with-filename trim column byte-offset; " +
      "text: glob iglob type type-not type-add max-count context after-context before-context replace sort sortr " +
      "max-depth max-filesize threads color colors encoding engine context-separator field-match-separator " +
      "path-separator; script-text: regexp; script-path: file ignore-file; no-pattern: files type-list",
  ),
};

const SED: ProgramShape = {
  first: "text",
  short: letters("flag: nEsrzui; text: l; script-text: e; script-path: f"),
  long: kinds(
    "flag: quiet silent regexp-extended separate unbuffered null-data posix debug sandbox follow-symlinks; " +
      "text: line-length; script-text: expression; script-path: file",
  ),
};

const AWK: ProgramShape = { first: "text", short: letters("text: Fv; script-path: f"), long: {} };

const JQ: ProgramShape = {
  first: "text",
  short: letters("flag: nrcsjaSCMeRh; path: L; script-path: f"),
  long: kinds(
    "flag: raw-output raw-output0 compact-output slurp null-input join-output ascii-output sort-keys color-output " +
      "monochrome-output tab exit-status raw-input seq stream stream-errors args jsonargs; text: indent; " +
      "text-text: arg argjson; text-path: slurpfile rawfile; script-path: from-file",
  ),
};

// Permission flags only widen what the code run may do inside the sandbox; the runner rules judge the rest.
const DENO: ProgramShape = {
  short: letters("flag: Aqhr; optional: RWNESIP"),
  long: kinds(
    "optional: allow-all allow-read allow-write allow-net allow-env allow-run allow-sys allow-ffi allow-hrtime " +
      "allow-import deny-read deny-write deny-net deny-env deny-run deny-sys deny-ffi deny-import",
  ),
};

/**
 * The programs whose options the path check reads by their shape. An option declared to take a value hides the word
 * after it from the check, so a flag declared as one is a way past it; tests/oracle/option_arity_test.ts runs every
 * such option for real to prove that it consumes that word.
 */
export const SHAPES: ReadonlyMap<string, ProgramShape> = new Map([
  ["deno", DENO],
  ...["grep", "egrep", "fgrep"].map((name) => [name, GREP] as const),
  ["rg", RG],
  ["sed", SED],
  ...["awk", "gawk", "mawk", "nawk"].map((name) => [name, AWK] as const),
  ["jq", JQ],
  ["cut", { short: letters("text: dfcb"), long: kinds("text: delimiter fields characters bytes") }],
  ["sort", { short: letters("text: tkS"), long: kinds("text: field-separator key buffer-size") }],
  ["paste", { short: letters("text: d"), long: kinds("text: delimiters") }],
  // util-linux's column: -t, -x and the other letters without a value are flags (declared, so that the word after
  // them is the file it is: `column -t ../secret`).
  ["column", {
    short: letters("flag: tdeLJxhV; text: nONlEHRTWripcos"),
    long: kinds(
      "flag: table table-noheadings table-header-repeat keep-empty-lines json fillrows help version; " +
        "text: table-name table-order table-columns table-columns-limit table-noextreme table-hide table-right " +
        "table-truncate table-wrap tree tree-id tree-parent output-width output-separator separator",
    ),
  }],
  ["join", { short: letters("text: tjo12ae"), long: {} }],
  // ls -L and du -L follow the links of the folders they walk, `.` when they are given none: the word after an option
  // that takes one is no folder given (`ls -RL -I x` walks `.`).
  ["ls", {
    short: letters("flag: aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1; text: ITw"),
    long: kinds(
      "flag: all almost-all author escape ignore-backups directory dired file-type full-time " +
        "group-directories-first no-group human-readable si dereference-command-line " +
        "dereference-command-line-symlink-to-dir inode kibibytes dereference numeric-uid-gid literal " +
        "hide-control-chars show-control-chars quote-name reverse recursive size context zero help version; " +
        "optional: color classify hyperlink; " +
        "text: block-size format hide indicator-style ignore quoting-style sort tabsize time time-style width",
    ),
  }],
  ["tree", {
    short: letters("flag: acdfghilnpqrstuvxACDFJQNSUXR; text: LPIHT; path: o"),
    long: kinds(
      "flag: help version inodes device noreport nolinks dirsfirst filesfirst si du prune ignore-case matchdirs " +
        "metafirst gitignore info fromfile fflinks; text: sort charset timefmt filelimit; " +
        "path: gitfile hintro houtro infofile",
    ),
    valuesAfter: true,
  }],
  ["du", {
    short: letters("flag: 0abcDHhklLmPSsx; text: Bdt; path: X"),
    long: kinds(
      "flag: null all apparent-size bytes total dereference-args human-readable inodes dereference count-links " +
        "no-dereference separate-dirs si summarize one-file-system help version; optional: time; " +
        "text: block-size max-depth threshold time-style exclude; path: exclude-from files0-from",
    ),
  }],
  ["date", { short: letters("text: d"), long: kinds("text: date") }],
]);

/** A word used as a path by a command, with where it came from. */
interface PathWord {
  word: BashWord;
  access: PathAccess;
  origin: string;
  /** For a destination: the names the sources get in it when it is a folder (`cp a b dir` writes `dir/a`). */
  inside?: string[];
  /** Whether what lies below it, when it is a folder, is written too (`rm -r`, `mv`, `chmod -R`, `cp -r`). */
  tree?: boolean;
  /**
   * For a destination: the links the command puts there, which lead elsewhere from there (`ln -s TEXT`: each
   * source is a link's text; `mv`, `cp -P`: the sources, links among them and below them keep their text).
   */
  links?: { kind: "text" | "kept"; sources: string[] };
  /** For a destination: the sources whose folders are copied or moved whole into it (`cp -r`, `mv`). */
  carries?: string[];
  /** Whether it is a folder the command creates files in whose names only the run knows (`unzip -d D`). */
  unknown?: boolean;
  /**
   * For an operand: whether it may instead be the value of an option the check cannot read (one no shape lists, or
   * of a program without one), or the pattern such an option leaves first; the program may have been given none.
   */
  uncertain?: boolean;
}

/** Options of a program, by letter, by long name, and as whole words with one dash (openssl's `-out`). */
interface Options {
  short?: string;
  long?: readonly string[];
  words?: readonly string[];
}

/** How a program of {@linkcode WRITERS} writes what it names. */
interface Writer {
  /**
   * `every` operand is written, the `target`, the `first` (an archive), the `second` (`uniq IN OUT`), or `none`
   * besides what the options say.
   */
  writes: "every" | "target" | "first" | "second" | "none";
  /** The letters of the options that make it reach below a folder. */
  recursive: string;
  /** The long options that do. */
  long?: readonly string[];
  /** The options whose value is a file it writes (`sort -o F`, `patch --output=F`). */
  outputs?: Options;
  /** The options whose value is an archive it writes with one of the `archiveWritten` options, reads without. */
  archive?: Options;
  /** The options with which it writes the `archive` (`tar -c`, `tar -r`): `tar -cf F` writes F, `tar -xf F` reads it. */
  archiveWritten?: Options;
  /**
   * The options whose value is a folder it creates files in whose names only the run knows, whatever `unknown` says
   * (`rsync --backup-dir=D`).
   */
  folders?: Options;
  /** Whether a relative folder of `folders` lies in the destination, the last of two or more operands (rsync's). */
  foldersInDestination?: boolean;
  /** The `key=` words whose rest is a file it reads or writes (`dd if=F of=G`). */
  keys?: Readonly<Record<string, PathAccess>>;
  /**
   * Where it creates files whose names only the run knows (what an archive or a patch holds, a prefix's pieces),
   * judged as writes of anything below the folder: `folder`, the values of `into` or else the folder it runs in;
   * `prefix`, the folder of the prefix (the values of `into`, or the last of two or more operands when
   * `prefixOperand`); `operands`, the values of `into` and the folder of each operand (`gzip -S rc .npm` writes
   * `.npmrc`, `mktemp .git/hooks/xXXX` a file there); `destination`,
   * the last of two or more operands (`rsync -a src/ .`); `within`, each operand, or the folder it runs in without
   * one (`tree -R` writes `00Tree.html` in every folder below).
   */
  unknown?: "folder" | "prefix" | "operands" | "destination" | "within";
  /** The options whose value is that folder or prefix (`unzip -d D`, `tar -C D`, `csplit -f P`). */
  into?: Options;
  /** Whether the last of two or more operands is the prefix (`split FILE PREFIX`). */
  prefixOperand?: boolean;
  /** The options only with which it creates those files (`tar -x`); always when absent. */
  unknownWhen?: Options;
  /** The options with which it writes nothing (`gzip -c`, `gzip -l`). */
  none?: Options;
  /** The other options that take the next word as their value, which is then no operand. */
  values?: Options;
  /** Names it gives the `first` operand too (`zip out` writes `out.zip`). */
  suffixes?: readonly string[];
  /** Whether a first word without a dash is a cluster of options (`tar xf a.tar`). */
  bundled?: boolean;
}

function writers(names: string, writer: Writer): [string, Writer][] {
  return names.split(" ").map((name) => [name, writer]);
}

/** Whether an option is among `options`: a letter, or a long name (GNU getopt takes any unambiguous start). */
function among(options: Options | undefined, option: { letter?: string; long?: string }): boolean {
  if (options === undefined) return false;
  if (option.letter !== undefined) return options.short?.includes(option.letter) ?? false;
  const long = option.long ?? "";
  return long !== "" && (options.long?.some((name) => name.startsWith(long)) ?? false);
}

const COMPRESSOR: Writer = {
  writes: "every",
  recursive: "r",
  long: ["recursive"],
  unknown: "operands",
  none: { short: "clt", long: ["stdout", "to-stdout", "list", "test"] },
  values: { short: "S", long: ["suffix"] },
};

/**
 * Programs that write, change or remove the files they name, which a policy file's allow rule may let run (the
 * default allowlist holds none): `every` operand is written (`mv`'s sources go away), or only the `target`, the last
 * operand or the folder of `-t` (`cp`, `ln`, `install`), with the name each source gets in it. The letters are the
 * options with which they reach everything below a folder (`mv` always does). Those that write a file named by an
 * option (`-o`) or a `key=value` word (`of=`), and those that create files whose names only the run knows (an
 * archive's, a patch's, a prefix's pieces), which are judged as writes of anything in the folder they land in.
 */
const WRITERS: ReadonlyMap<string, Writer> = new Map([
  ...writers("rmdir unlink shred mkdir touch truncate mkfifo mknod tee mv", { writes: "every", recursive: "" }),
  ...writers("rm", { writes: "every", recursive: "rR", long: ["recursive"] }),
  ...writers("chmod chown chgrp", { writes: "every", recursive: "R", long: ["recursive"] }),
  ...writers("cp", { writes: "target", recursive: "rRa", long: ["recursive", "archive"] }),
  ...writers("ln link", { writes: "target", recursive: "" }),
  // `install -d A B` creates every folder it names (`directories`).
  ["install", { writes: "target", recursive: "", values: { short: "mog", long: ["mode", "owner", "group"] } }],
  ["dd", { writes: "none", recursive: "", keys: { if: "read", of: "write" } }],
  ["shuf", { writes: "none", recursive: "", outputs: { short: "o", long: ["output"] } }],
  // `sort -T D` makes its temporary files in D.
  ["sort", {
    writes: "none",
    recursive: "",
    outputs: { short: "o", long: ["output"] },
    folders: { short: "T", long: ["temporary-directory"] },
    values: { short: "ktS", long: ["key", "field-separator", "buffer-size", "compress-program", "files0-from"] },
  }],
  ["gpg", { writes: "none", recursive: "", outputs: { short: "o", long: ["output"] } }],
  ["iconv", {
    writes: "none",
    recursive: "",
    outputs: { short: "o", long: ["output"] },
    values: { short: "ft", long: ["from-code", "to-code"] },
  }],
  ["openssl", {
    writes: "none",
    recursive: "",
    outputs: { words: ["-out", "-keyout", "-writerand", "-sess_out", "-signature", "-CAserial", "-outdir"] },
  }],
  ["mktemp", {
    writes: "none",
    recursive: "",
    unknown: "operands",
    into: { short: "p", long: ["tmpdir"] },
    none: { short: "u", long: ["dry-run"] },
    values: { long: ["suffix"] },
  }],
  ["patch", {
    writes: "every",
    recursive: "",
    outputs: { short: "or", long: ["output", "reject-file"] },
    unknown: "folder",
    into: { short: "d", long: ["directory"] },
    values: {
      short: "iBpzFYVgxD",
      long: ["input", "prefix", "strip", "suffix", "basename-prefix", "fuzz", "version-control", "get", "define"],
    },
  }],
  ["unzip", { writes: "none", recursive: "", unknown: "folder", into: { short: "d" } }],
  // `uniq IN OUT` writes OUT.
  ["uniq", {
    writes: "second",
    recursive: "",
    values: { short: "fsw", long: ["skip-fields", "skip-chars", "check-chars"] },
  }],
  ["tar", {
    writes: "none",
    recursive: "",
    // The snapshot of `-g` is rewritten, the index file and the volume number file written.
    outputs: { short: "g", long: ["listed-incremental", "index-file", "volno-file"] },
    archive: { short: "f", long: ["file"] },
    archiveWritten: { short: "cruA", long: ["create", "append", "update", "catenate", "concatenate", "delete"] },
    unknown: "folder",
    into: { short: "C", long: ["directory"] },
    unknownWhen: { short: "x", long: ["extract", "get"] },
    values: { short: "bTXHKLNV", long: ["files-from", "exclude-from", "format", "label"] },
    bundled: true,
  }],
  ["split", {
    writes: "none",
    recursive: "",
    unknown: "prefix",
    prefixOperand: true,
    values: { short: "abClnt", long: ["additional-suffix", "filter", "separator"] },
  }],
  ["csplit", {
    writes: "none",
    recursive: "",
    unknown: "prefix",
    into: { short: "f", long: ["prefix"] },
    values: { short: "bn", long: ["suffix-format", "digits"] },
  }],
  ["zip", {
    writes: "first",
    recursive: "",
    outputs: { short: "O", long: ["output-file"] },
    suffixes: [".zip"],
    values: {
      short: "bnxiPZst",
      long: ["temp-path", "suffixes", "exclude", "include", "password", "compression-method"],
    },
  }],
  ["rsync", {
    writes: "none",
    recursive: "",
    outputs: { long: ["log-file", "write-batch", "only-write-batch"] },
    // Where it keeps what it replaces, half-copied files, and the copies it is making.
    folders: { short: "T", long: ["backup-dir", "partial-dir", "temp-dir"] },
    foldersInDestination: true,
    unknown: "destination",
    values: {
      short: "efBM",
      long: [
        "rsh",
        "rsync-path",
        "filter",
        "exclude",
        "include",
        "exclude-from",
        "include-from",
        "files-from",
        "suffix",
        "compare-dest",
        "copy-dest",
        "link-dest",
        "chmod",
        "chown",
        "usermap",
        "groupmap",
        "remote-option",
        "password-file",
        "block-size",
        "max-size",
        "min-size",
        "timeout",
        "bwlimit",
        "read-batch",
      ],
    },
  }],
  ["tree", {
    writes: "none",
    recursive: "",
    outputs: { short: "o", long: ["output"] },
    unknown: "within",
    unknownWhen: { short: "R" },
    values: {
      short: "LPIHT",
      long: ["charset", "filelimit", "timefmt", "sort", "gitfile", "infofile", "hintro", "houtro"],
    },
  }],
  // `git diff --output=F` writes F, `git format-patch --output-directory D` its patches in D.
  ["git", { writes: "none", recursive: "", outputs: { long: ["output"] }, folders: { long: ["output-directory"] } }],
  // `file -C` compiles the magic files into the folder it runs in (`magic.mgc`).
  ["file", {
    writes: "none",
    recursive: "",
    unknown: "folder",
    unknownWhen: { short: "C", long: ["compile"] },
    values: { short: "eFPfm", long: ["exclude", "separator", "parameter", "files-from", "magic-file"] },
  }],
  ["cpio", {
    writes: "none",
    recursive: "",
    outputs: { short: "O" },
    unknown: "folder",
    into: { short: "D", long: ["directory"] },
    unknownWhen: { short: "ip", long: ["extract", "pass-through"] },
    values: { short: "FEIHMRC", long: ["file", "pattern-file", "format", "message", "owner", "io-size"] },
  }],
  ...writers("gzip gunzip bzip2 bunzip2 xz unxz lzma unlzma zstd unzstd lz4 lzip compress uncompress", COMPRESSOR),
  // Other archivers: what they extract gets the names the archive holds (`ar x`, `jar xf` in the folder they run in,
  // `dpkg-deb -x A D` in D), whatever their mode; the operands may be the archive they write (`ar r A`, `7z a A`).
  ...writers("ar jar pax uudecode unrar unar lha", {
    writes: "every",
    recursive: "",
    unknown: "folder",
    bundled: true,
  }),
  ...writers("7z 7za 7zr", { writes: "every", recursive: "", unknown: "folder", into: { short: "o" } }),
  ["cabextract", { writes: "none", recursive: "", unknown: "folder", into: { short: "d", long: ["directory"] } }],
  // gpgtar extracts an archive's names into `ARCHIVE_1_/` of the folder it runs in, or into -C's folder.
  ["gpgtar", {
    writes: "none",
    recursive: "",
    unknown: "folder",
    into: { short: "C", long: ["directory"] },
    outputs: { short: "o", long: ["output"] },
  }],
  ["dpkg-deb", { writes: "every", recursive: "", unknown: "within" }],
  ["bsdtar", {
    writes: "none",
    recursive: "",
    archive: { short: "f", long: ["file"] },
    archiveWritten: { short: "cruA", long: ["create", "append", "update"] },
    unknown: "folder",
    into: { short: "C", long: ["cd", "directory"] },
    unknownWhen: { short: "x", long: ["extract"] },
    values: { short: "bTXsWI", long: ["files-from", "exclude-from", "format", "options", "include"] },
    bundled: true,
  }],
]);

/**
 * The words a writing program (see {@linkcode WRITERS}) writes, judged as writes besides the reads every operand
 * is judged as: a read-only path of the policy must not change through them.
 */
function writtenWords(name: string, args: readonly BashWord[]): PathWord[] {
  const writer = WRITERS.get(name);
  if (writer === undefined) return [];
  // Whether it puts its sources in a destination (`mv` writes its sources too: they go away).
  const places = writer.writes === "target" || name === "mv";
  const operands: BashWord[] = [];
  let target: PathWord | undefined;
  let tree = name === "mv";
  // Whether links are made or carried as they are: `ln -s`, `mv`, `cp -P`, `cp -a`, `cp -r` (no `-L`).
  let symbolic = false;
  let keeps = name === "mv" || name === "ln" || name === "link";
  // `ln SRC DST`, `cp -l`: a hard link is the source itself under another name, so a later write to it writes the
  // source (`ln .npmrc n` then `cp a n` rewrites .npmrc): its sources are judged as written.
  let hard = name === "ln" || name === "link";
  // `-S SUFFIX` (`--suffix`): cp, mv, ln and install keep what they replace under its name with the suffix
  // (`cp -S rc a .npm` writes .npm's old content to `.npmrc`).
  let suffix: BashWord | undefined;
  // `-T`: the last operand is the destination itself, even a folder (`cp -rT src .` writes `./a` for `src/a`).
  let itself = false;
  // `cp --parents a/b/f dst` writes `dst/a/b/f`: the source's whole path is its name in the destination.
  let parents = false;
  // `install -d`: every operand is a folder it creates, none a source.
  let directories = false;
  // Files named by options, the folders or prefixes of files only the run names, and whether it writes them.
  const named: PathWord[] = [];
  const into: BashWord[] = [];
  // The archive, written only in the modes that write it; the folders an option names for files only the run names.
  const archives: PathWord[] = [];
  let archiveWritten = false;
  const folders: BashWord[] = [];
  let unknown = writer.unknown !== undefined && writer.unknownWhen === undefined;
  let nothing = false;
  /** What an option with a value does with it: written, the folder of unknown names, or only taken. */
  const optionValue = (option: { letter?: string; long?: string }, given: BashWord | undefined, shownAs: string) => {
    if (given === undefined) return;
    if (among(writer.outputs, option)) named.push({ word: given, access: "write", origin: shownAs });
    else if (among(writer.archive, option)) archives.push({ word: given, access: "write", origin: shownAs });
    else if (among(writer.folders, option)) folders.push(given);
    else if (among(writer.into, option)) into.push(given);
  };
  const takesValue = (option: { letter?: string; long?: string }) =>
    among(writer.outputs, option) || among(writer.archive, option) || among(writer.folders, option) ||
    among(writer.into, option) || among(writer.values, option);
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    let value = word.value;
    if (i === 0 && writer.bundled === true && value !== undefined && value !== "" && !value.startsWith("-")) {
      value = `-${value}`;
    }
    if (value === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (value === undefined || !value.startsWith("-") || value === "-") {
      const key = value === undefined
        ? undefined
        : Object.keys(writer.keys ?? {}).find((name) => value!.startsWith(`${name}=`));
      if (key !== undefined) {
        const file = { text: value!, value: value!.slice(key.length + 1), mayBeOption: false };
        named.push({ word: file, access: writer.keys![key], origin: `${key}=` });
        continue;
      }
      operands.push(word);
      continue;
    }
    if (writer.outputs?.words?.includes(value)) {
      const given = args[++i];
      if (given !== undefined) named.push({ word: given, access: "write", origin: value });
      continue;
    }
    if (value.startsWith("--")) {
      const equals = value.indexOf("=");
      const long = value.slice(2, equals < 0 ? undefined : equals);
      if (among(writer.unknownWhen, { long })) unknown = true;
      if (among(writer.archiveWritten, { long })) archiveWritten = true;
      if (among(writer.none, { long })) nothing = true;
      if (takesValue({ long })) {
        const given = equals < 0 ? args[++i] : { text: value, value: value.slice(equals + 1), mayBeOption: false };
        optionValue({ long }, given, `--${long}`);
        continue;
      }
      if (long !== "" && writer.long?.some((option) => option.startsWith(long))) tree = true;
      if (name === "ln" && long !== "" && "symbolic".startsWith(long)) symbolic = true;
      if (name === "cp" && long.length > 1 && "symbolic-link".startsWith(long)) symbolic = true;
      if (name === "cp" && long !== "" && "link".startsWith(long)) hard = true;
      if (name === "cp" && long !== "" && ["no-dereference", "archive", "recursive"].some((o) => o.startsWith(long))) {
        keeps = true;
      }
      if (places && long.length > 1 && "suffix".startsWith(long)) {
        suffix = equals < 0 ? args[++i] : { text: value, value: value.slice(equals + 1), mayBeOption: false };
        continue;
      }
      if (places && long.length > 2 && "no-target-directory".startsWith(long)) itself = true;
      if (name === "cp" && long.length > 1 && "parents".startsWith(long)) parents = true;
      if (name === "install" && long !== "" && "directory".startsWith(long)) directories = true;
      // GNU getopt takes any unambiguous start of `--target-directory`.
      if (places && long !== "" && "target-directory".startsWith(long)) {
        const given = equals < 0 ? args[++i] : { text: value, value: value.slice(equals + 1), mayBeOption: false };
        if (given !== undefined) target = { word: given, access: "write", origin: "--target-directory" };
      }
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const option = { letter: value[letter] };
      if (among(writer.unknownWhen, option)) unknown = true;
      if (among(writer.archiveWritten, option)) archiveWritten = true;
      if (among(writer.none, option)) nothing = true;
      if (takesValue(option)) {
        const rest = value.slice(letter + 1);
        const given = rest === "" ? args[++i] : { text: value, value: rest, mayBeOption: false };
        optionValue(option, given, `-${value[letter]}`);
        break;
      }
      if (writer.recursive.includes(value[letter])) tree = true;
      if (name === "ln" && value[letter] === "s") symbolic = true;
      if (name === "cp" && value[letter] === "s") symbolic = true;
      if (name === "cp" && value[letter] === "l") hard = true;
      if (name === "cp" && "PdaRr".includes(value[letter])) keeps = true;
      if (name === "install" && value[letter] === "d") directories = true;
      if (places && value[letter] === "T") itself = true;
      if (places && value[letter] === "S") {
        const rest = value.slice(letter + 1);
        suffix = rest === "" ? args[++i] : { text: value, value: rest, mayBeOption: false };
        break;
      }
      if (places && value[letter] === "t") {
        const rest = value.slice(letter + 1);
        const given = rest === "" ? args[++i] : { text: value, value: rest, mayBeOption: false };
        if (given !== undefined) target = { word: given, access: "write", origin: "-t" };
        break;
      }
    }
  }
  if (nothing) return [];
  // `uniq IN OUT`: the second word bash passes; when an earlier one may be several words, any of them may be it.
  const second = operands.findIndex((word, index) => index === 1 || word.value === undefined);
  const every = writer.writes === "second"
    ? second < 0 ? [] : operands.slice(second).map((word): PathWord => ({ word, access: "write", origin: "operand" }))
    : writer.writes === "every" || directories
    ? operands.map((word): PathWord => ({ word, access: "write", origin: "operand", tree }))
    : writer.writes === "first" && operands.length > 0
    ? [operands[0], ...(writer.suffixes ?? []).map((suffix) => withSuffix(operands[0], suffix))].map((
      word,
    ): PathWord => ({ word, access: "write", origin: "operand" }))
    : [];
  every.push(...named);
  if (archiveWritten) every.push(...archives);
  every.push(...writtenFolders(writer, folders, operands));
  if (unknown) every.push(...unknownFolders(writer, operands, into));
  if (!places) return every;
  let sources = operands;
  if (target === undefined) {
    // `ln SRC` makes `./SRC's name`; otherwise the last operand is the destination.
    const last = operands.length > 1 ? operands[operands.length - 1] : { text: ".", value: ".", mayBeOption: false };
    if (operands.length > 1) sources = operands.slice(0, -1);
    target = { word: last, access: "write", origin: "operand" };
  }
  const inside = sources.flatMap((source) =>
    source.value === undefined
      ? []
      : [parents ? source.value.replace(/^\/+/, "") : path.basename(source.value.replace(/\/+$/, "")) || source.value]
  );
  if (suffix !== undefined) {
    // The backups: the destination's name, or each name in it, with the suffix (only the run knows an unknown one).
    const backup = suffix.value === undefined
      ? { text: suffix.text, mayBeOption: false }
      : withSuffix(target.word, suffix.value);
    every.push({ word: backup, access: "write", origin: "the backup of what it replaces" });
    if (suffix.value !== undefined) {
      every.push({ ...target, inside: inside.map((name) => `${name}${suffix!.value}`), origin: "the backup" });
    }
  }
  const statics = sources.flatMap((source) => source.value === undefined ? [] : [source.value]);
  if (hard && !symbolic) {
    every.push(...sources.map((word): PathWord => ({ word, access: "write", origin: "hard link source" })));
  }
  const links = symbolic || keeps
    ? { links: { kind: symbolic ? "text" as const : "kept" as const, sources: statics } }
    : {};
  const carried = tree ? { carries: statics } : {};
  return [
    ...every,
    itself && operands.length > 1
      ? { ...target, tree, ...links, ...carried }
      : { ...target, inside, tree, ...links, ...carried },
  ];
}

/** A word with a suffix added to its value (`zip out` writes `out.zip`); one known only at run time as it is. */
function withSuffix(word: BashWord, suffix: string): BashWord {
  return word.value === undefined
    ? word
    : { text: `${word.text}${suffix}`, value: `${word.value}${suffix}`, mayBeOption: false };
}

/**
 * The folders options name for a {@linkcode WRITERS} program to create files in (`Writer.folders`), a relative one
 * taken from the destination when it lies there (`rsync -b --backup-dir=../ro src/ dst/` writes `ro/f`).
 */
function writtenFolders(writer: Writer, folders: readonly BashWord[], operands: readonly BashWord[]): PathWord[] {
  const destination = operands.length > 1 ? operands.at(-1)! : undefined;
  return folders.flatMap((word): PathWord[] => {
    let folder = word;
    if (writer.foldersInDestination === true && (word.value === undefined || !path.isAbsolute(word.value))) {
      // Without a destination nothing is copied; one known only at run time is judged as it is (it asks).
      if (destination === undefined) return [];
      folder = destination.value === undefined || word.value === undefined ? destination : {
        text: word.text,
        value: path.join(destination.value, word.value),
        mayBeOption: false,
      };
    }
    return [{ word: folder, access: "write", origin: "files named when it runs", unknown: true }];
  });
}

/** The folders a {@linkcode WRITERS} program creates files in whose names only the run knows (`Writer.unknown`). */
function unknownFolders(writer: Writer, operands: readonly BashWord[], into: readonly BashWord[]): PathWord[] {
  const here: BashWord = { text: ".", value: ".", mayBeOption: false };
  const folderOf = (word: BashWord): BashWord =>
    word.value === undefined ? word : { text: word.text, value: path.dirname(word.value), mayBeOption: false };
  let folders: BashWord[];
  if (writer.unknown === "folder") folders = into.length > 0 ? [...into] : [here];
  else if (writer.unknown === "operands") folders = [...into, ...operands.map(folderOf)];
  else if (writer.unknown === "destination") folders = operands.length > 1 ? [operands.at(-1)!] : [];
  else if (writer.unknown === "within") folders = operands.length > 0 ? [...operands] : [here];
  else if (into.length > 0) folders = into.map(folderOf);
  else folders = [writer.prefixOperand === true && operands.length > 1 ? folderOf(operands.at(-1)!) : here];
  return folders.map((word) => ({ word, access: "write", origin: "files named when it runs", unknown: true }));
}

/** The suffixes of an option word (`-f/etc/x`, `--file=/etc/x`) that may be its value. */
/**
 * The values a word of options may carry: after the `=` of a long option; with one dash, every rest of the word from
 * its second letter up to its first `=` (getopt's reading: `=` is no separator there, so `date -fk=y` reads the file
 * `k=y`, which may be a link leading out), and what follows that `=` (Go's `-name=x`, clap's `-f=x`).
 */
function attachedValues(word: BashWord): PathWord[] {
  const value = word.value!;
  const equals = value.indexOf("=");
  // `--file=x`: the value follows the `=`.
  if (value.startsWith("--")) {
    if (equals < 0) return [];
    return [{
      word: { text: value, value: value.slice(equals + 1), mayBeOption: false },
      access: "read",
      origin: value.slice(0, equals),
    }];
  }
  const out: PathWord[] = [];
  // A letter after the `=` is no option: getopt stops the program at `=`, which is none.
  for (let i = 2; i < (equals < 0 ? value.length : equals + 1); i++) {
    out.push({
      word: { text: value, value: value.slice(i), mayBeOption: false },
      access: "read",
      origin: value.slice(0, i),
    });
  }
  if (equals >= 0) {
    out.push({
      word: { text: value, value: value.slice(equals + 1), mayBeOption: false },
      access: "read",
      origin: value.slice(0, equals),
    });
  }
  return out;
}

/** A scheme or address type before a `:` (`text:`, `OPEN:`, `file:`, `unix-connect:`). */
const TYPE_PREFIX = /^[A-Za-z][A-Za-z0-9+._-]*:/;

/**
 * The files a word of a program whose use of its words is not known may name inside it: after a leading `@` (a
 * response file or a list of names: `7z a x @list`, ImageMagick's `@F`, `-d @F`), after the first `=` (`key=F`,
 * `--opt=@F`), and after a type or scheme (socat's `OPEN:F`, ImageMagick's `text:F`, `file:///F`; a URL's `//host/`
 * names no file here). Each is judged as the path the word itself is.
 */
function embeddedPaths(named: PathWord): PathWord[] {
  const value = named.word.value;
  if (value === undefined) return [];
  const found = new Set<string>();
  const pending = [value];
  while (pending.length > 0) {
    const current = pending.pop()!;
    const inner: string[] = [];
    if (current.startsWith("@")) inner.push(current.slice(1));
    const equals = current.indexOf("=");
    if (equals >= 0) inner.push(current.slice(equals + 1));
    const type = TYPE_PREFIX.exec(current)?.[0];
    if (type !== undefined) {
      const rest = current.slice(type.length);
      if (/^file:$/i.test(type) && rest.startsWith("//")) inner.push(rest.replace(/^\/\/[^/]*/, ""));
      else if (!rest.startsWith("//")) inner.push(rest);
    }
    for (const candidate of inner) {
      if (candidate === "" || candidate === value || found.has(candidate)) continue;
      found.add(candidate);
      pending.push(candidate);
    }
  }
  return [...found].map((candidate) => ({
    word: { text: named.word.text, value: candidate, mayBeOption: false },
    access: named.access,
    origin: named.origin === "operand" ? "a file named inside a word" : named.origin,
  }));
}

/** The words of a simple command that may name files, by how its program reads its arguments. */
export function pathWords(name: string, args: readonly BashWord[]): PathWord[] {
  if (NO_PATHS.has(name)) return [];
  if (name === "test" || name === "[") {
    // Only tested for existence and kind; a value known only at run time is a string as often as a path, but a
    // tilde or a glob (`[ -r ~/.ssh/id_rsa ]`) is bash naming files.
    return args.filter((word) => (word.value ?? word.pattern)?.startsWith("-") === false).map((word) => ({
      word,
      access: "read",
      origin: "operand",
    }));
  }
  if (name === "which") {
    // A name is looked up on the PATH; a name with a `/` is tested where it points (whether it exists and may run),
    // and so may a word only the run knows (`which "$PWD/../x"`).
    return args.filter((word) => word.value === undefined || word.value.includes("/")).map((
      word,
    ) => ({ word, access: "read", origin: "operand" }));
  }
  const shape = SHAPES.get(name);
  const out: PathWord[] = [];
  const operands: BashWord[] = [];
  let scripted = false;
  // GNU programs permute their arguments: an option anywhere before `--`, even after the operands, may be the one
  // (`-f`, `-e`) that makes the first operand a file.
  let unknownOption = false;
  // Whether the word after the last option may be its value: the option is one the check cannot read.
  let valueMayFollow = false;
  const uncertain = new Set<BashWord>();
  const operand = (word: BashWord) => {
    if (valueMayFollow) uncertain.add(word);
    valueMayFollow = false;
    operands.push(word);
  };
  const kindOf = (table: Readonly<Record<string, OptionKind>>, key: string) =>
    Object.hasOwn(table, key) ? table[key] : undefined;
  const takeValue = (kind: OptionKind, option: string, i: number): number => {
    if (kind === "flag" || kind === "optional" || kind === "no-pattern") return i;
    const words = kind === "text-text" || kind === "text-path" ? 2 : 1;
    for (let n = 0; n < words && i + 1 < args.length; n++) {
      i++;
      const pathValue = kind === "path" || kind === "script-path" || (kind === "text-path" && n === 1);
      if (pathValue) out.push({ word: args[i], access: "read", origin: option });
    }
    return i;
  };
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    const value = word.value;
    if (value === undefined) {
      if (word.mayBeOption) unknownOption = true;
      operand(word);
      continue;
    }
    if (value === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!value.startsWith("-") || value === "-") {
      operand(word);
      continue;
    }
    valueMayFollow = false;
    // A program that stops reading options at its first operand (xxd; the BSD tools; GNU's under POSIXLY_CORRECT)
    // opens an option-looking word after one as a file: `cat a -x` reads `./-x`, which may be a link leading out.
    if (operands.length > 0) out.push({ word, access: "read", origin: "operand" });
    if (shape === undefined) {
      // Any option may take the next word (`ls -RL -I x`, `tree -l -L 2`).
      valueMayFollow = !value.startsWith("--") || !value.includes("=");
      out.push(...attachedValues(word));
      continue;
    }
    if (value.startsWith("--")) {
      const equals = value.indexOf("=");
      const long = value.slice(2, equals < 0 ? undefined : equals);
      const kind = kindOf(shape.long, long);
      if (kind === undefined) {
        // An option the shape does not list, or a start of one's name (GNU getopt takes any unambiguous one:
        // `grep -R --max-c 1 x` searches `.` for `x`), may take the next word.
        unknownOption = true;
        valueMayFollow = equals < 0;
        out.push(...attachedValues(word));
        continue;
      }
      if (kind.startsWith("script") || kind === "no-pattern") scripted = true;
      if (equals >= 0) {
        const pathValue = kind === "path" || kind === "script-path" || kind === "flag";
        if (pathValue) out.push(...attachedValues(word));
        continue;
      }
      i = takeValue(kind, `--${long}`, i);
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const kind = kindOf(shape.short, value[letter]);
      if (kind === undefined) {
        unknownOption = true;
        valueMayFollow = letter === value.length - 1;
        out.push(...attachedValues({ text: value, value: `-${value.slice(letter)}`, mayBeOption: true }));
        break;
      }
      if (kind.startsWith("script")) scripted = true;
      if (kind === "flag") continue;
      const rest = value.slice(letter + 1);
      if (shape.valuesAfter === true) {
        i = takeValue(kind, `-${value[letter]}`, i);
        continue;
      }
      if (rest === "") i = takeValue(kind, `-${value[letter]}`, i);
      else if (kind === "path" || kind === "script-path") {
        // getopt's reading, the whole rest (`-X=f` reads `=f`), and Go's and clap's, after the `=`.
        const equals = rest.indexOf("=");
        for (const attached of equals < 0 ? [rest] : [rest, rest.slice(equals + 1)]) {
          out.push({
            word: { text: value, value: attached, mayBeOption: false },
            access: "read",
            origin: `-${value[letter]}`,
          });
        }
      }
      break;
    }
  }
  const skipFirst = shape?.first === "text" && !scripted && !unknownOption;
  // Where an option the check cannot read stands, the pattern may be the first operand that is no option's value.
  const pattern = shape?.first === "text" && !scripted && unknownOption
    ? operands.find((word) => !uncertain.has(word))
    : undefined;
  if (pattern !== undefined) uncertain.add(pattern);
  for (const [index, word] of operands.entries()) {
    if (skipFirst && index === 0) continue;
    out.push({ word, access: "read", origin: "operand", ...(uncertain.has(word) ? { uncertain: true } : {}) });
  }
  return out;
}

const REDIRECT_ACCESS: Readonly<Record<string, PathAccess>> = {
  "<": "read",
  ">": "write",
  ">>": "write",
  ">|": "write",
  "&>": "write",
  "&>>": "write",
  ">&": "write",
  "<&": "read",
};

function redirectWords(redirects: readonly BashRedirect[]): PathWord[] {
  const out: PathWord[] = [];
  for (const redirect of redirects) {
    const access = REDIRECT_ACCESS[redirect.operator];
    const target = redirect.target;
    if (access === undefined || target === undefined) continue;
    // `2>&1`, `>&-`: descriptors, not files.
    if ((redirect.operator === ">&" || redirect.operator === "<&") && /^[0-9]+-?$|^-$/.test(target.value ?? "")) {
      continue;
    }
    out.push({ word: target, access, origin: redirect.operator });
  }
  return out;
}

/** The folders the commands of the line may run in: the root, and every `cd` of the line applied in order. */
export function lineFolders(analysis: BashAnalysis, root: string | undefined): string[] {
  const start = root ?? ".";
  let folders = [start];
  for (const command of analysis.commands) {
    const [name, dir] = command.words;
    if (command.kind !== "command" || name?.value !== "cd" || dir?.value === undefined) continue;
    if (dir.value.startsWith("-") || dir.value.startsWith("~") || dir.value.split("/").includes("..")) continue;
    // A `cd` in a loop runs any number of times: `while cd a; do :; done` ends in `a/a/a/...`, as deep as the
    // folders go (and wherever a link down there leads), which no list of folders holds.
    if (command.repeated === true && !path.isAbsolute(dir.value)) return [...folders.slice(0, 1), "?"];
    const next = folders.map((folder) => path.resolve(folder, dir.value!));
    folders = [...new Set([...folders, ...next])];
    if (folders.length > MAX_FOLDERS) return [...folders.slice(0, 1), "?"];
  }
  return folders;
}

/** Where a program walking an operand starts: the operand, or for a pattern the static folder its matches lie in. */
function walkedFrom(word: BashWord): string[] {
  if (word.value !== undefined) return [word.value];
  if (word.pattern !== undefined) {
    return (expandBraces(word.pattern) ?? []).map((expansion) => {
      const parts = expansion.split("/");
      const firstGlob = parts.findIndex((part) => GLOB_CHARS.test(part));
      if (firstGlob < 0) return expansion;
      return parts.slice(0, firstGlob).join("/") || (expansion.startsWith("/") ? "/" : ".");
    });
  }
  return word.glob?.prefix === undefined ? [] : [globFolder(word.glob.prefix)];
}

/**
 * The links below the folders a program that follows links walks (its
 * operands, or the folder it runs in), each judged by where it leads.
 */
/**
 * The operands of a program's words, walked when it walks what it is given; with `certain`, only those no option may
 * have taken for its value (`PathWord.uncertain`): whether it is given any decides whether it walks the folder it runs
 * in (`tree -l -L 2` walks `.`, and through `.`'s links).
 */
function operandWords(words: readonly PathWord[], certain = false): BashWord[] {
  return words.filter(({ origin, uncertain }) => origin === "operand" && !(certain && uncertain === true)).map((
    { word },
  ) => word);
}

/**
 * Whether the program may be given no folder, and walk the one it runs in: no operand names one, or a word known only
 * at run time may expand into options, which changes what the other words are (`ls -{L,R}` is `ls -L -R`; in
 * `grep -{R,n} x`, `x` is the pattern, and grep walks `.`).
 */
function mayWalkHere(named: readonly BashWord[], words: readonly BashWord[]): boolean {
  // `--include=../*` expands into options of its own name alone, each with its value.
  return named.length === 0 ||
    words.some((word) => word.value === undefined && word.mayBeOption && !/^--[A-Za-z0-9-]+=/.test(word.text));
}

function judgeFollowedLinks(
  name: string,
  command: string,
  args: readonly BashWord[],
  words: readonly PathWord[],
  folders: Folders,
  judge: PathJudge,
) {
  // find walks its starting points, which a `--` does not end (`find -- -follow` walks `.`).
  const named = name === "find" ? findStartingPoints(args).words : operandWords(words);
  // A folder an option names is walked too (`diff --to-file=. sub/f`); a file has no links below it.
  const given = words.filter(({ origin, access }) => origin !== "operand" && access === "read").map(({ word }) => word);
  // An operand known only at run time asks on its own; a pattern is walked from the folder its matches lie in, since
  // the program walks the folders it matches (`grep -R x *` follows the links inside `sub`).
  const roots = [
    ...new Set([
      ...(walksHere(name, args, mayWalkHere(name === "find" ? named : operandWords(words, true), args)) ? ["."] : []),
      ...named.flatMap(walkedFrom),
      ...given.flatMap(walkedFrom),
    ]),
  ];
  return roots.flatMap((root) =>
    reachedLinks(
      root,
      (folder) => linksFollowedBelow(folder, (link) => judge(link, "read").decision === "allow"),
      "read",
      folders,
      judge,
    ).map((reached): CommandPath => {
      const base = { command, written: root, access: "read" as const, origin: "operand" };
      return reached === undefined
        ? {
          ...base,
          decision: "ask",
          reason: "is a folder with more files than the checker looks through for links the command follows out",
        }
        : {
          ...base,
          path: reached.link,
          ...reached.judged,
          reason: `holds the link ${reached.shown}, which the command follows, and which ${reached.judged.reason}`,
        };
    })
  );
}

/**
 * The ignore files a program opens by name in the folders it walks and above them (ripgrep's `.ignore`), each judged
 * by where it leads when it is a link.
 */
function judgeIgnoreFiles(
  name: string,
  command: string,
  words: readonly PathWord[],
  folders: Folders,
  judge: PathJudge,
): CommandPath[] {
  const named = operandWords(words);
  const roots = [
    ...new Set([
      ...(mayWalkHere(operandWords(words, true), words.map(({ word }) => word)) ? ["."] : []),
      ...named.flatMap(walkedFrom),
    ]),
  ];
  const inside = (folder: string) => judge(folder, "read").decision === "allow";
  return roots.flatMap((root) =>
    reachedLinks(root, (folder, cwd) => ignoreFileLinks(name, folder, inside, cwd), "read", folders, judge).map(
      (reached): CommandPath => {
        const base = { command, written: root, access: "read" as const, origin: "operand" };
        return reached === undefined
          ? {
            ...base,
            decision: "ask",
            reason: "is a folder with more files than the checker looks through for the ignore files the command reads",
          }
          : {
            ...base,
            path: reached.link,
            ...reached.judged,
            reason:
              `has the file ${reached.shown}, which the command reads (and prints lines of), and which ${reached.judged.reason}`,
          };
      },
    )
  );
}

/**
 * Judges every path one simple command names: its operands and option
 * values by how its program reads them, its redirections, and the files its
 * argument readers recorded. `unread`: the program's flag rule stopped at a
 * problem, so what its words name is judged as a program's the analysis
 * does not know (each may be written).
 */
export function judgeCommandPaths(
  command: BashSimpleCommand,
  recorded: readonly PathOperand[],
  folders: Folders,
  judge: PathJudge,
  unread = false,
): CommandPath[] {
  const [name, ...args] = command.words;
  const words: PathWord[] = [];
  if (command.kind === "command" && name?.value !== undefined) {
    words.push(
      ...(name.value === "cd"
        ? args.slice(0, 1).map((word) => ({ word, access: "read" as const, origin: "cd" }))
        : pathWords(name.value, args)),
    );
  }
  if (command.kind === "command" && name?.value !== undefined) words.push(...writtenWords(name.value, args));
  // What a program the analysis does not know does with what it names is not known either: it may write it. So
  // with a program whose rule stopped reading its words at a problem (`xxd -r a .npmrc`, `curl -o .npmrc`).
  const unknownUse = command.kind === "command" && name?.value !== undefined &&
    (unread || !knownProgram(command.words.map((word) => word.value)));
  // What a program names inside its words is known for the programs read by their shape or a flag rule only; a
  // writer is known for what it writes (`openssl enc -pass file:F` reads F).
  const program = name?.value ?? "";
  if (unknownUse || (WRITERS.has(program) && !SHAPES.has(program) && !hasFlagRule(program))) {
    words.push(...words.flatMap(embeddedPaths));
  }
  const named = unknownUse ? new Set(words.map(({ word }) => word)) : undefined;
  words.push(...redirectWords(command.redirects));
  const paths = words.map(({ word, access, origin, inside, tree, links, carries, unknown }) => ({
    command: command.text,
    written: word.value !== undefined && word.text !== word.value && origin !== "operand" ? word.value : word.text,
    access,
    origin,
    ...worst([
      judgeWord(word, access, folders, judge),
      ...(named?.has(word) && access === "read"
        ? [mayWrite(name!.value!, judgeWord(word, "write", folders, judge), unread)]
        : []),
      ...judgeWrittenBelow(word, inside, tree, folders, judge),
      ...judgeUnknownBelow(word, unknown, folders, judge),
      ...judgeRelocatedLinks(word, inside, links, folders, judge),
      ...judgeCarried(word, inside, carries, folders, judge),
    ]),
  }));
  if (command.kind === "command" && name?.value !== undefined && followsLinksDown(name.value, args)) {
    paths.push(...judgeFollowedLinks(name.value, command.text, args, words, folders, judge));
  }
  if (command.kind === "command" && name?.value !== undefined && readsIgnoreFiles(name.value)) {
    paths.push(...judgeIgnoreFiles(name.value, command.text, words, folders, judge));
  }
  // A word judged as a path above is judged with the folders its pattern reads.
  const asPaths = new Set(words.map(({ word }) => word));
  for (const word of command.words) {
    if (word.glob === undefined || asPaths.has(word)) continue;
    paths.push({
      command: command.text,
      written: word.text,
      access: "read",
      origin: "glob",
      ...judgeGlobFolders(word, folders, judge),
    });
  }
  for (const operand of recorded) {
    const judged = operand.value === undefined
      ? unresolvedWrite(operand.access, {
        decision: "ask",
        reason: "is only known when the command runs, so where it points cannot be judged",
      })
      : worst([
        unresolvedWrite(operand.access, judgeValue(operand.value, operand.access, folders, judge)),
        ...judgeUnknownBelow(
          { text: operand.value, value: operand.value, mayBeOption: false },
          operand.below,
          folders,
          judge,
        ),
      ]);
    paths.push({
      command: command.text,
      written: operand.value ?? "?",
      access: operand.access,
      origin: operand.origin,
      ...judged,
    });
  }
  return paths;
}

/**
 * The programs whose use of the words they name the analysis knows: the default allowlist's and the project-code
 * commands' (their options judged by flag rules), those it reads by their shape ({@linkcode SHAPES}), the writers
 * ({@linkcode WRITERS}), and those that name no files. A policy file's allow rule may let any other program run.
 */
export function knownProgram(words: readonly (string | undefined)[]): boolean {
  const name = words[0] ?? "";
  // A program known by its subcommands is known in those only: `deno test`'s options are, `deno bundle`'s not.
  if (BY_SUBCOMMAND.has(name)) {
    return KNOWN_SUBCOMMANDS.some((entry) => entry.every((word, index) => words[index] === word));
  }
  return KNOWN_PROGRAMS.has(name) || SHAPES.has(name) || WRITERS.has(name) || NO_PATHS.has(name) ||
    hasFlagRule(name) || name === "cd";
}

const KNOWN_PROGRAMS: ReadonlySet<string> = new Set(
  [...DEFAULT_COMMAND_ALLOWLIST, ...PROJECT_CODE_COMMANDS].map((entry) => entry.replace(/^[!=]/, "").split(" ")[0]),
);

/** The programs whose flag rules know some subcommands only (the test runners'). */
const BY_SUBCOMMAND: ReadonlySet<string> = new Set(["deno", "npm", "cargo", "go", "python", "python3"]);

/** Their subcommands whose use of their words is known: the default allowlist's and the test runners'. */
const KNOWN_SUBCOMMANDS: readonly (readonly string[])[] = [
  ...DEFAULT_COMMAND_ALLOWLIST.filter((entry) => !entry.startsWith("=") && entry.includes(" ")),
  ...["deno test", "npm test", "npm t", "npm run test", "python -m pytest", "python3 -m pytest", "cargo test"],
  "go test",
].map((entry) => entry.replace(/^!/, "").split(" "));

/**
 * A path a program the analysis does not know names, judged as the write it may be (`prettier --write .npmrc`,
 * `gcc -o ro/f`): a protected path it names needs a person, and a path a rule keeps from writes asks rather than
 * runs (the program may only read it, so it is not denied).
 */
function mayWrite(program: string, judged: Judged, unread: boolean): Judged {
  if (judged.decision !== "deny") return judged;
  const why = unread
    ? `the checker does not read ${program}'s arguments past the option it asks for`
    : `${program} is not a program whose use of its arguments is known`;
  return { ...judged, decision: "ask", reason: `${judged.reason} (${why}: it may write it)` };
}

/**
 * What a writing program writes besides the path it names: in a destination that is a folder, the name each source
 * gets there; below a folder it removes, moves or changes whole (`tree`), every entry.
 */
function judgeWrittenBelow(
  word: BashWord,
  inside: readonly string[] | undefined,
  tree: boolean | undefined,
  folders: Folders,
  judge: PathJudge,
): Judged[] {
  const value = word.value;
  if (value === undefined || (inside === undefined && tree !== true)) return [];
  if (value.startsWith("~") || value.split("/").includes("..")) return []; // asks as the path itself
  const results: Judged[] = [];
  for (const folder of path.isAbsolute(value) ? ["/"] : folders) {
    if (!path.isAbsolute(folder)) continue; // the path is relative to an unknown folder: asks already
    const absolute = path.resolve(folder, value);
    if (inside === undefined) {
      results.push(judgeTree(absolute, judge));
      continue;
    }
    let folderThere = false;
    try {
      folderThere = fs.statSync(absolute).isDirectory();
    } catch {
      // A destination that does not exist is the new name itself, judged as written already.
    }
    if (!folderThere) continue;
    for (const name of inside) {
      const placed = path.join(absolute, name);
      const judged = judge(placed, "write");
      results.push(
        judged.decision === "allow"
          ? judged
          : { path: placed, ...judged, reason: `puts ${placed} there, which ${judged.reason}` },
      );
      if (tree === true) results.push(judgeTree(placed, judge));
    }
  }
  return results;
}

/** One source a command puts in a destination: where it is (`from`, absolute) and where it will lie (`home`). */
interface Placed {
  source: string;
  from: string;
  home: string;
}

/**
 * Where each source lands, from every folder the command may run in: in a destination that is a folder, under the
 * name `inside` gives it, in the order of the sources (`cp -r src/. dst` lands in `dst` itself); otherwise (a new
 * name, `-T`) as the destination.
 */
function placedSources(
  word: BashWord,
  inside: readonly string[] | undefined,
  sources: readonly string[],
  folders: Folders,
): Placed[] {
  const value = word.value;
  if (value === undefined) return [];
  const placed: Placed[] = [];
  for (const folder of path.isAbsolute(value) ? ["/"] : folders) {
    if (!path.isAbsolute(folder)) continue;
    const destination = path.resolve(folder, value);
    let folderThere = false;
    try {
      folderThere = inside !== undefined && fs.statSync(destination).isDirectory();
    } catch {
      // A new name.
    }
    for (const [index, source] of sources.entries()) {
      const home = folderThere
        ? path.join(destination, inside?.[index] ?? (path.basename(source.replace(/\/+$/, "")) || source))
        : destination;
      placed.push({ source, from: path.resolve(path.isAbsolute(source) ? "/" : folder, source), home });
    }
  }
  return placed;
}

/** A folder a command creates files in whose names only the run knows, judged for whatever may lie below it. */
function judgeUnknownBelow(word: BashWord, unknown: boolean | undefined, folders: Folders, judge: PathJudge): Judged[] {
  const value = word.value;
  if (unknown !== true || value === undefined) return [];
  if (value.startsWith("~") || value.split("/").includes("..")) return []; // asks as the path itself
  const results: Judged[] = [];
  for (const folder of path.isAbsolute(value) ? ["/"] : folders) {
    if (!path.isAbsolute(folder)) continue;
    const absolute = path.resolve(folder, value);
    const judged = judge(absolute, "write", true);
    results.push(
      judged.decision === "allow" ? judged : { path: absolute, ...judged, reason: `(${absolute}) ${judged.reason}` },
    );
  }
  return results;
}

/**
 * The links a command makes or carries into a destination, judged from where they will lie: a link's relative text
 * leads elsewhere from there (`mv a/l l` with `a/l -> ../outside/f` makes `l` lead out of the workspace, and a later
 * `cat l` in the line reads through it, where the analysis saw no file).
 */
function judgeRelocatedLinks(
  word: BashWord,
  inside: readonly string[] | undefined,
  links: PathWord["links"],
  folders: Folders,
  judge: PathJudge,
): Judged[] {
  if (links === undefined) return [];
  const results: Judged[] = [];
  for (const { source, from, home } of placedSources(word, inside, links.sources, folders)) {
    if (links.kind === "text") {
      results.push(judgeLinkText(source, home, judge));
      continue;
    }
    let stat: fs.Stats | undefined;
    try {
      stat = fs.lstatSync(from);
    } catch {
      continue; // Nothing there to carry.
    }
    if (stat.isSymbolicLink()) results.push(judgeLinkText(fs.readlinkSync(from), home, judge));
    else if (stat.isDirectory()) {
      const below = linksBelow(from);
      if (below === undefined) {
        results.push({
          decision: "ask",
          reason: "is a folder with more files than the checker looks through for links",
        });
        continue;
      }
      for (const link of below) {
        results.push(judgeLinkText(fs.readlinkSync(link), path.join(home, path.relative(from, link)), judge));
      }
    }
  }
  return results;
}

/**
 * What a command that copies or moves folders whole writes in the destination: every entry below each source, under
 * the name it will have there. `cp -rT src .` and `cp -r src/. .` put `src/.npmrc` at `./.npmrc`, which was not
 * there to be judged before the command ran.
 */
function judgeCarried(
  word: BashWord,
  inside: readonly string[] | undefined,
  carries: readonly string[] | undefined,
  folders: Folders,
  judge: PathJudge,
): Judged[] {
  if (carries === undefined) return [];
  const results: Judged[] = [];
  for (const { from, home } of placedSources(word, inside, carries, folders)) {
    const entries = entriesBelow(from);
    if (entries === undefined) {
      results.push({
        decision: "ask",
        reason: `copies ${from}, a folder with more files than the checker looks through for paths it writes`,
      });
      continue;
    }
    for (const entry of entries) {
      const placed = path.join(home, path.relative(from, entry));
      const judged = judge(placed, "write");
      results.push(
        judged.decision === "allow"
          ? judged
          : { path: placed, ...judged, reason: `puts ${entry} at ${placed}, which ${judged.reason}` },
      );
    }
  }
  return results;
}

/** A link with this text lying at `home`: where it leads, judged for reading. */
function judgeLinkText(text: string, home: string, judge: PathJudge): Judged {
  const parts = text.split("/");
  const firstName = parts.findIndex((part) => part !== ".." && part !== "." && part !== "");
  if (parts.slice(Math.max(firstName, 0)).includes("..") && firstName >= 0) {
    return {
      decision: "ask",
      reason: `makes the link ${home} -> ${text}, whose \`..\` after a name the checker does not follow`,
    };
  }
  const from = path.isAbsolute(text) ? "/" : realOf(path.dirname(home));
  if (from === undefined) {
    return { decision: "ask", reason: `makes the link ${home}, whose folder cannot be looked at` };
  }
  const leads = path.resolve(from, text);
  // What is later written through the link is written where it leads (`ln -s .git/hooks h; cp a h/pre-commit`):
  // a protected path or a read-only one there counts as written; making the link changes nothing yet, so a
  // read-only one asks rather than denies.
  const written = judge(leads, "write");
  const judged = worst([judge(leads, "read"), written.decision === "deny" ? { ...written, decision: "ask" } : written]);
  if (judged.decision !== "allow") {
    return { path: home, ...judged, reason: `makes the link ${home} -> ${text}, which ${judged.reason}` };
  }
  // A folder it leads to is entered through it by a later command of the line, under a name the analysis did not
  // see there: a link below that leads out is reached so (`ln -s d l; cat l/s` with `d/s -> /outside/secret`, and
  // `ln -s . l; cat l/d/s`, `mv a b; cat b/up/s` with `a/up -> ../d`).
  const through = judgeBelowLinked(leads, judge, new Set());
  return through.decision === "allow"
    ? judged
    : { path: home, ...through, reason: `makes the link ${home} -> ${text}, through which ${through.reason}` };
}

/**
 * What lies below a folder a link the line makes leads to, judged for reading: each link there by where it leads
 * (and, where that is a folder of the workspace, by what lies below it in turn), each device node as the outside.
 */
function judgeBelowLinked(folder: string, judge: PathJudge, seen: Set<string>): Judged {
  const real = realOf(folder);
  if (real === undefined) return { decision: "ask", reason: `${folder} cannot be looked at` };
  let stat: fs.Stats;
  try {
    stat = fs.statSync(real);
  } catch {
    return { decision: "allow" }; // Nothing there yet: what the line puts there is judged where it is put.
  }
  if (!stat.isDirectory() || seen.has(real)) return { decision: "allow" };
  seen.add(real);
  const below = linksBelow(real);
  if (below === undefined) {
    return {
      decision: "ask",
      reason: `${folder} is a folder with more files than the checker looks through for links`,
    };
  }
  for (const entry of below) {
    let judged = judge(entry, "read");
    if (judged.decision === "allow") judged = judgeBelowLinked(entry, judge, seen);
    if (judged.decision !== "allow") return { path: entry, ...judged, reason: `${entry} ${judged.reason}` };
  }
  return { decision: "allow" };
}

/** Every entry below a folder a command removes, moves or changes whole, judged as written. */
function judgeTree(folder: string, judge: PathJudge): Judged {
  const entries = entriesBelow(folder);
  if (entries === undefined) {
    return {
      decision: "ask",
      reason: "is a folder with more files than the checker looks through for paths the rules keep from writes",
    };
  }
  const found = worst(entries.map((entry) => ({ path: entry, ...judge(entry, "write") })));
  return found.decision === "allow" ? found : { ...found, reason: `holds ${found.path}, which ${found.reason}` };
}

/**
 * Judges the redirections that belong to no simple command (`done < f`, `$(< f)`), and the text bash evaluates as
 * code (`BashAnalysis.evaluated`): what a command substitution hidden in a value there runs, and the files it
 * touches, only the run knows. Before, with the sandbox off and an automatic answer, `x='a[$(CMD)]'; echo $((x))`,
 * `test -v 'a[$(CMD)]'` and `x='$(CMD)'; echo "${x@P}"` ran CMD: the line asked, but for nothing the risk assessor
 * took for more than unsure.
 */
export function judgeLinePaths(analysis: BashAnalysis, folders: Folders, judge: PathJudge): CommandPath[] {
  const tested = (analysis.fileTests ?? []).map((test) => ({
    word: test.target!,
    access: "read" as const,
    origin: `[[ ${test.operator}`,
  }));
  const evaluated = (analysis.evaluated ?? []).map((text): CommandPath => ({
    command: text,
    written: text,
    access: "run",
    origin: "code bash evaluates",
    decision: "ask",
    reason: "may run a command hidden in a value bash evaluates there, which only the run knows",
  }));
  return [
    ...[...redirectWords(analysis.redirects), ...tested].map(({ word, access, origin }) => ({
      command: `${origin} ${word.text}`,
      written: word.text,
      access,
      origin,
      ...judgeWord(word, access, folders, judge),
    })),
    ...evaluated,
  ];
}

/** The reason a person reads for a path that asks or is denied. */
export function pathReason(found: CommandPath): string {
  if (found.origin === "glob") {
    return `\`${found.written}\`, which the shell matches against file names, ${
      found.reason ?? "is judged by the path rules"
    }`;
  }
  const what = found.origin === "operand" || found.origin === "cd"
    ? `\`${found.written}\``
    : found.origin.startsWith("-")
    ? `the value \`${found.written}\` of \`${found.origin}\``
    : /^[<>&]/.test(found.origin)
    ? `the redirection \`${found.origin} ${found.written}\``
    : `\`${found.written}\` (${found.origin})`;
  const verb = found.access === "write" ? "written" : found.access === "run" ? "run" : "read";
  return `${what}, ${verb} by the command, ${found.reason ?? "is judged by the path rules"}`;
}
