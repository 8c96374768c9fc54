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
 * @module
 */
import picomatchModule from "picomatch";
import { isWithin } from "./paths.ts";

/** Whether a path matches. */
export type PathMatcher = (candidate: string) => boolean;

interface GlobOptions {
  dot: boolean;
  nocase: boolean;
}

// picomatch ships no types; this is the part used here.
const picomatch = picomatchModule as unknown as
  & ((
    glob: string | readonly string[],
    options: GlobOptions,
  ) => PathMatcher)
  & { makeRe(glob: string, options: GlobOptions): RegExp };

const OPTIONS: GlobOptions = { dot: true, nocase: true };

// A back-reference (or a named group) in a pattern's expression would refer to another group once the
// expressions are joined; picomatch writes none, but where one appears the patterns are matched one by one.
const NUMBERED = /\\[1-9]|\(\?</;

// The patterns as one expression, tried at the start of the path only (sticky), and picomatch's own rules around
// it: the empty path matches nothing, and a path equal to a pattern matches it. picomatch matches an array one
// pattern after another, each a call and an expression of its own: 10 µs for one path against the 100 or so
// expanded default protected paths, which the sandbox's walks of the workspace ask for every entry.
function joinedMatcher(patterns: readonly string[]): PathMatcher {
  const sources = patterns.map((p) => picomatch.makeRe(p, OPTIONS).source);
  if (sources.some((source) => NUMBERED.test(source))) return picomatch(patterns, OPTIONS);
  const joined = new RegExp(sources.map((source) => `(?:${source})`).join("|"), "iy");
  const literal = new Set(patterns);
  return (candidate) => {
    if (candidate === "") return false;
    if (literal.has(candidate)) return true;
    joined.lastIndex = 0;
    return joined.test(candidate);
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

// The characters that make a name a pattern (backslash, which escapes one, included).
const GLOB_CHARS = /[*?[\]{}!()+@\\]/;

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
