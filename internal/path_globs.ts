/**
 * Matching paths against the policy's globs (the path rules, protected
 * paths, the sandbox's hidden-path masks): one matcher for all of them.
 *
 * Letter case never matters: `**\/.env` matches `.ENV` and `.Env` on every
 * system. Where the file system folds case (macOS, Windows) these name the
 * same file as `.env`, so a case-sensitive match would let another spelling
 * through; where it does not, they are other files, and treating them as
 * covered fails closed. A pattern `dir/**` also matches `dir` itself.
 *
 * Nor does Unicode normalization: `café` written precomposed (NFC) and
 * decomposed (NFD, `e` and a combining accent) match each other, patterns and
 * paths both compared in their NFC forms. macOS's file systems take the two
 * for one name, and a name checked out or unpacked there may arrive in either
 * form, so a rule written in one must cover a file named in the other.
 *
 * Letter case is folded as such a file system folds it, beyond the letters a
 * case-insensitive regular expression pairs: `ſecrets` is `secrets` (the long
 * s folds to s), `.ßh` is `.ssh`, `ﬁle` is `file` on an ext4 or tmpfs casefold
 * folder (Unicode's case folding) and, for the long s, on NTFS. A path and a
 * pattern holding letters beyond ASCII are compared in their NFC forms and in
 * their folded forms; either match counts (fail closed).
 *
 * @module
 */
import picomatchModule from "picomatch";
import { isWithin } from "./paths.ts";

/** Whether a path matches. */
export type PathMatcher = (candidate: string) => boolean;

interface GlobOptions {
  dot: boolean;
  nocase: boolean;
  flags?: string;
}

// picomatch ships no types; this is the part used here.
const picomatch = picomatchModule as unknown as
  & ((
    glob: string | readonly string[],
    options: GlobOptions,
  ) => PathMatcher)
  & { makeRe(glob: string, options: GlobOptions): RegExp };

// `s` (dotAll): picomatch writes `**` and a few other parts with `.`, which without it matches no line break, so a
// folder named `x<LF>y` took `x<LF>y/.env` out of `**/.env` (read_file, grep and a sandboxed `cat` printed it; so did
// a name with CR, U+2028 or U+2029). A name may hold any character but `/` and NUL, and every one is a character.
const OPTIONS: GlobOptions = { dot: true, nocase: true, flags: "is" };

// The characters that make a name a pattern (backslash, which escapes one, included).
const GLOB_CHARS = /[*?[\]{}!()+@\\]/;

// A back-reference (or a named group) in a pattern's expression would refer to another group once the
// expressions are joined; picomatch writes none, but where one appears the patterns are matched one by one.
const NUMBERED = /\\[1-9]|\(\?</;

// The patterns as one expression, tried at the start of the path only (sticky), and picomatch's own rules around
// it: the empty path matches nothing, and a path equal to a pattern matches it. picomatch matches an array one
// pattern after another, each a call and an expression of its own: 10 µs for one path against the 100 or so
// expanded default protected paths, which the sandbox's walks of the workspace ask for every entry.
function joinedMatcher(given: readonly string[]): PathMatcher {
  const patterns = [...new Set([...given.map(nfc), ...given.map(folded)])];
  const sources = patterns.map((p) => picomatch.makeRe(p, OPTIONS).source);
  let test: PathMatcher;
  if (sources.some((source) => NUMBERED.test(source))) {
    test = picomatch(patterns, OPTIONS);
  } else {
    const joined = new RegExp(sources.map((source) => `(?:${source})`).join("|"), "isy");
    const literal = new Set(patterns);
    const mayMatch = namesPrefilter(patterns);
    test = (candidate) => {
      if (literal.has(candidate)) return true;
      if (!mayMatch(candidate)) return false;
      joined.lastIndex = 0;
      return joined.test(candidate);
    };
  }
  return (raw) => {
    if (raw === "") return false;
    // Each form on its own: an ASCII pattern can match a name that is not ASCII in one form only (`?` one
    // character of the NFC form, `s` the long s of the folded form).
    const candidate = nfc(raw);
    if (test(candidate)) return true;
    const fold = folded(raw);
    return fold !== candidate && test(fold);
  };
}

const NON_ASCII = /[\u0080-\uffff]/;

// `text` in Unicode's composed form (NFC), in which patterns and paths are compared.
function nfc(text: string): string {
  return NON_ASCII.test(text) ? text.normalize("NFC") : text;
}

// `text` as a file system that folds case compares it: its NFC form with every letter case-folded, as upper case
// then lower case gives it (the full folding: ſ to s, ß to ss, ﬁ to fi, ς to σ). A regular expression's `i` pairs
// only letters whose upper cases are one character and never a letter beyond ASCII with one in it, so `ſecrets`
// was not `secrets/**`, though an ext4 casefold folder opens secrets/ for it. ASCII is left as it is (`i` folds it).
function folded(text: string): string {
  return NON_ASCII.test(text) ? text.normalize("NFC").toUpperCase().toLowerCase().normalize("NFC") : text;
}

// The names of a pattern, split at its slashes; undefined where a slash may not part names (inside braces,
// brackets or parentheses: `{a,b/c}`), after an escape, or for a negated pattern, which matches almost anything.
function patternNames(pattern: string): string[] | undefined {
  if (pattern.startsWith("!") || pattern.includes("\\")) return undefined;
  let depth = 0;
  for (const ch of pattern) {
    if (ch === "{" || ch === "[" || ch === "(") depth++;
    else if ((ch === "}" || ch === "]" || ch === ")") && depth > 0) depth--;
    else if (ch === "/" && depth > 0) return undefined;
  }
  return pattern.split("/");
}

// A letter as a case-insensitive expression compares it (ECMAScript's Canonicalize without the u flag): its upper
// case, where that is one character, and never a non-ASCII letter onto an ASCII one.
function canonical(text: string): string {
  if (!/[\u0080-\uffff]/.test(text)) return text.toUpperCase();
  let out = "";
  for (const ch of text) {
    if (ch.length !== 1) {
      out += ch;
      continue;
    }
    const upper = ch.toUpperCase();
    out += upper.length !== 1 || (ch.charCodeAt(0) >= 128 && upper.charCodeAt(0) < 128) ? ch : upper;
  }
  return out;
}

// What a path must hold to match any of `patterns`, tested before the expression: most paths of a workspace match
// none of the protected paths, and the names alone say so at a fraction of the expression's cost. Each pattern
// contributes one name of its own that a match must have as a whole name of the path (a name without pattern
// syntax, which matches only itself, in any letter case), else the literal start of one of its names (`lefthook.`
// of `lefthook.{yml,json}`), which a name of the path must start with. A pattern with neither, or a negated one,
// leaves every path to the expression.
function namesPrefilter(patterns: readonly string[]): (candidate: string) => boolean {
  const names = new Set<string>();
  const starts = new Set<string>();
  for (const pattern of patterns) {
    const parts = patternNames(pattern);
    if (parts === undefined) return () => true;
    const plain = parts.filter((part) => part !== "" && part !== "." && part !== ".." && !hasGlobSyntax(part));
    if (plain.length > 0) {
      names.add(canonical(plain.reduce((a, b) => b.length > a.length ? b : a)));
      continue;
    }
    const heads = parts.map((part) => part.slice(0, part.search(GLOB_CHARS))).filter((head) => head !== "");
    if (heads.length === 0) return () => true;
    starts.add(canonical(heads.reduce((a, b) => b.length > a.length ? b : a)));
  }
  const startList = [...starts];
  return (candidate) => {
    for (const name of canonical(candidate).split("/")) {
      if (names.has(name)) return true;
      for (const start of startList) if (name.startsWith(start)) return true;
    }
    return false;
  };
}

const cache = new Map<readonly string[], PathMatcher>();

/**
 * The matcher of `patterns` (globs, `**` for any number of folders, `*`
 * within one name, dot files included), case-insensitive, each `dir/**` also
 * matching `dir`. Matchers of the same array are cached.
 *
 * @example
 * ```ts
 * import { pathGlobMatcher } from "@toolfence/internal";
 * console.log(pathGlobMatcher(["**\/.env"])("app/.ENV")); // true
 * ```
 */
export function pathGlobMatcher(patterns: readonly string[]): PathMatcher {
  let matcher = cache.get(patterns);
  if (matcher === undefined) {
    const expanded = patterns.flatMap((p) => p.endsWith("/**") ? [p, p.slice(0, -3)] : [p]);
    matcher = expanded.length === 0 ? () => false : joinedMatcher(expanded);
    if (cache.size > 64) cache.clear();
    cache.set(patterns, matcher);
  }
  return matcher;
}

/**
 * Whether {@linkcode pathGlobMatcher} would read any character of `p` as
 * pattern syntax (a backslash escape included): a `p` without any names only
 * itself.
 *
 * @example
 * ```ts
 * import { hasGlobSyntax } from "@toolfence/internal";
 * console.log(hasGlobSyntax(".git/hooks"), hasGlobSyntax("src/*.ts")); // false true
 * ```
 */
export function hasGlobSyntax(p: string): boolean {
  return GLOB_CHARS.test(p);
}

/**
 * `p` as a glob that matches only itself: each character {@linkcode pathGlobMatcher}
 * would read as a pattern escaped.
 *
 * @example
 * ```ts
 * import { literalGlob } from "@toolfence/internal";
 * console.log(literalGlob("/etc/a[1].json")); // "/etc/a\\[1\\].json"
 * ```
 */
export function literalGlob(p: string): string {
  return p.replace(new RegExp(GLOB_CHARS.source, "g"), "\\$&");
}

/**
 * Where an absolute glob's matches lie: its part before the first name that
 * holds a glob character (`/etc/app/**` in `/etc/app`, `/**\/.env` anywhere
 * under `/`), or, for a glob with none, the path it names.
 *
 * @example
 * ```ts
 * import { globBase } from "@toolfence/internal";
 * console.log(globBase("/etc/app/*.json")); // "/etc/app"
 * ```
 */
export function globBase(glob: string): string {
  const parts = glob.split("/");
  const first = parts.findIndex(hasGlobSyntax);
  return (first === -1 ? parts : parts.slice(0, first)).join("/") || "/";
}

/**
 * Whether an absolute glob may match `folder` or a path inside it (a relative
 * glob always may): `/etc/**` may not match in `/srv/w`, `/**\/.env` may.
 *
 * @example
 * ```ts
 * import { globMayMatchWithin } from "@toolfence/internal";
 * console.log(globMayMatchWithin("/srv/*.db", "/srv/w")); // false
 * ```
 */
export function globMayMatchWithin(glob: string, folder: string): boolean {
  if (!glob.startsWith("/")) return true;
  const base = globBase(glob);
  if (isWithin(base, folder)) return true;
  if (!isWithin(folder, base)) return false;
  if (glob.includes("**")) return true;
  // Without `**`, each name of the glob stands for one of the path: it reaches `folder` only with as many.
  const names = glob.split("/");
  const depth = folder === "/" ? 1 : folder.split("/").length;
  return names.length >= depth && pathGlobMatcher([names.slice(0, depth).join("/") || "/"])(folder);
}
