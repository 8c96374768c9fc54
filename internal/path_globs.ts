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

/** Whether a path matches. */
export type PathMatcher = (candidate: string) => boolean;

// picomatch ships no types; this is the part used here.
const picomatch = picomatchModule as unknown as (
  glob: string | readonly string[],
  options: { dot: boolean; nocase: boolean },
) => PathMatcher;

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
    matcher = expanded.length === 0 ? () => false : picomatch(expanded, { dot: true, nocase: true });
    if (cache.size > 64) cache.clear();
    cache.set(patterns, matcher);
  }
  return matcher;
}
