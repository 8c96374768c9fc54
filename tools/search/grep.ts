/**
 * `grep`: search file contents, with ripgrep or a built-in engine.
 *
 * @module
 */

import path from "node:path";
import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import type { FileDoor, ToolContext } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { SPAWN_ENV } from "@toolfence/policy";
import { requireFence } from "@toolfence/core";
import { CHUNK_BYTES, type LineHit, searchFile, yieldEvery } from "./_file_search.ts";
import { type FileFilter, fileFilter } from "./_globs.ts";
import { parentLevels, rebasedIgnoreText } from "./_ignore.ts";
import { type CompiledPattern, compilePattern } from "./_pattern.ts";
import { findRipgrep, ripgrepMatchingFiles } from "./_ripgrep.ts";
import { searchRoot } from "./_root.ts";
import { SkipList } from "./_skipped.ts";
import { NOT_UTF8_REASON, skipReason, walkTree } from "./_walk.ts";
import { GREP_OUTPUT } from "./_outputs.ts";

export type { LineHit } from "./_file_search.ts";

/** Default cap on the number of matching lines returned. */
export const DEFAULT_MAX_MATCHES = 100;

/** Which engine searches: ripgrep, the built-in one, or ripgrep when it can run (`auto`). */
export type GrepEngine = "auto" | "ripgrep" | "builtin";

/** Options of {@linkcode grepTool}. */
export interface GrepToolOptions {
  /** Default `auto`: ripgrep when one is found and the fence lets it run, else the built-in engine. */
  engine?: GrepEngine;
  /** A ripgrep binary to use instead of looking for one. */
  ripgrepPath?: string;
}

/** One matching line in grep's output. */
export interface GrepMatch extends LineHit {
  /** The file, relative to the search root. */
  path: string;
}

/** The arguments of `grep`, defaults applied. */
export interface GrepArgs {
  /** What to search for: a regular expression, or literal text when `regex` is false. */
  pattern: string;
  /** Folder or file to search, relative to the workspace. */
  path: string;
  /** Only search files matching this glob: a file name at any depth without a `/`, else a path relative to `path`. */
  glob?: string;
  /** Whether `pattern` is a regular expression (true) or literal text. */
  regex: boolean;
  /** Whether case matters. */
  case_sensitive: boolean;
  /** Lines of context to show before and after each match. */
  context: number;
  /** Whether to include the text of matching lines; false gives only paths and line numbers. */
  include_content: boolean;
  /** Most matching lines to return. */
  max_matches: number;
  /** Whether to skip files that .gitignore files exclude. */
  skip_ignored: boolean;
}

const input = v.object({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      "What to search for: a regular expression (JavaScript/ripgrep syntax: classes, groups, alternation, " +
        "quantifiers, ^ $ \\b \\w \\d \\s; no lookaround or backreferences), or literal text with regex: false",
    ),
  ),
  path: v.optional(
    v.pipe(v.string(), v.description('Folder or file to search, relative to the workspace. Default "."')),
    ".",
  ),
  glob: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'Only search files matching this glob: without a "/" it matches file names at any depth ("*.ts"), ' +
          'with one the path relative to `path` ("src/**/*.ts")',
      ),
    ),
  ),
  regex: v.optional(
    v.pipe(v.boolean(), v.description("Treat pattern as a regular expression (true) or literal text. Default true")),
    true,
  ),
  case_sensitive: v.optional(v.pipe(v.boolean(), v.description("Whether case matters. Default true")), true),
  context: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.maxValue(20),
      v.description("Lines of context to show before and after each match. Default 0"),
    ),
    0,
  ),
  include_content: v.optional(
    v.pipe(v.boolean(), v.description("Include the text of matching lines; false gives only paths and line numbers")),
    true,
  ),
  max_matches: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(5000),
      v.description(`Most matching lines to return. Default ${DEFAULT_MAX_MATCHES}`),
    ),
    DEFAULT_MAX_MATCHES,
  ),
  skip_ignored: v.optional(
    v.pipe(v.boolean(), v.description("Skip files that .gitignore files exclude. Default true")),
    true,
  ),
});

// Longest stretch of synchronous file reading before the event loop gets a turn.
const YIELD_MS = 10;

interface Candidate {
  rel: string;
  abs: string;
}

interface Collected {
  matches: GrepMatch[];
  truncated: boolean;
  /** The cut came from the output size budget rather than max_matches. */
  overBudget?: boolean;
}

/**
 * Characters of JSON the matches may take, so that a result fits the
 * toolbox's default 40,000-character cap and is never cut in the middle.
 */
export const GREP_BUDGET_CHARS = 36_000;

async function collect(
  door: FileDoor,
  files: Candidate[],
  pattern: CompiledPattern,
  context: number,
  includeContent: boolean,
  max: number,
  signal: AbortSignal,
  skipped: SkipList,
): Promise<Collected> {
  const matches: GrepMatch[] = [];
  const buffer = new Uint8Array(CHUNK_BYTES);
  const pause = yieldEvery(YIELD_MS, signal);
  let limit = max;
  let used = 0;
  for (const file of files) {
    await pause();
    const result = await searchFile(() => door.openFound(file.abs), {
      pattern,
      context,
      includeContent,
      limit,
      signal,
      buffer,
      pause,
    });
    if (result === "binary") continue;
    if ("unreadable" in result) {
      // A file that vanished since it was listed held nothing to miss.
      const code = (result.unreadable as NodeJS.ErrnoException)?.code;
      if (code === "ENOENT" && !file.rel.includes("\uFFFD")) continue;
      skipped.add({
        path: file.rel,
        reason: code === "ENOENT" ? NOT_UTF8_REASON : skipReason(result.unreadable, file.abs),
      });
      continue;
    }
    if (result.hits.length === 0) continue;
    const room = max - matches.length;
    if (room === 0) return { matches, truncated: true };
    for (const hit of result.hits.slice(0, room)) {
      const match = { path: file.rel, ...hit };
      used += JSON.stringify(match).length + 1;
      if (used > GREP_BUDGET_CHARS && matches.length > 0) return { matches, truncated: true, overBudget: true };
      matches.push(match);
    }
    if (result.more || result.hits.length > room) return { matches, truncated: true };
    // Once full, later files only need to show whether anything more exists.
    if (matches.length === max) limit = 1;
  }
  return { matches, truncated: false };
}

async function builtinCandidates(
  door: FileDoor,
  root: string,
  base: string,
  skipIgnored: boolean,
  filter: FileFilter | undefined,
  signal: AbortSignal,
  skipped: SkipList,
): Promise<Candidate[]> {
  const files: Candidate[] = [];
  await walkTree({
    root,
    base,
    skipIgnored,
    files: door,
    signal,
    onSkip: (skip) => skipped.add(skip),
    onEntry(entry) {
      if (entry.kind === "file" && (!filter || filter.matches(entry.rel))) {
        files.push({ rel: entry.rel, abs: entry.abs });
      }
    },
  });
  return files;
}

// Deno gives a child's stdin a real pipe; Node a socket pair.
const STDIN_IS_A_PIPE = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";

async function ripgrepCandidates(
  ctx: ToolContext,
  rg: string,
  root: string,
  base: string,
  skipIgnored: boolean,
  filter: FileFilter | undefined,
  pattern: CompiledPattern,
  skipped: SkipList,
): Promise<Candidate[] | undefined> {
  const parents = skipIgnored ? parentLevels(ctx.policy.files, base, root) : undefined;
  const parentRules = rebasedIgnoreText(parents);
  // ripgrep reads the parent folders' rules from /dev/stdin, which cannot be
  // opened where the child's stdin is a socket (Node's pipes): there the
  // built-in engine, which gives the same files, takes the search (undefined).
  if (parentRules.trim() !== "" && !STDIN_IS_A_PIPE) return undefined;
  const found = await ripgrepMatchingFiles(ctx, rg, {
    base,
    root,
    rust: pattern.rust,
    skipIgnored,
    parentRules,
    nameGlob: filter?.nameGlob,
  });
  if (found === undefined) return undefined;
  // What the policy hides is masked in ripgrep's sandbox, where it may read as unreadable: never named.
  const hidden = (rel: string) => rel !== "" && ctx.policy.files.isHidden(path.join(root, rel));
  for (const skip of found.skipped) {
    if (!hidden(skip.path) && (!filter || skip.path === "" || filter.matches(skip.path))) skipped.add(skip);
  }
  return found.files.filter((rel) => !filter || filter.matches(rel)).map((rel) => ({ rel, abs: path.join(root, rel) }));
}

async function chooseEngine(ctx: ToolContext, options: GrepToolOptions): Promise<string | undefined> {
  const wanted = options.engine ?? "auto";
  if (wanted === "builtin") return undefined;
  if (options.ripgrepPath !== undefined) {
    if (wanted === "ripgrep") requireFence(ctx.policy.fence, "run", options.ripgrepPath);
    return ctx.policy.fence.query("run", options.ripgrepPath).allowed ? options.ripgrepPath : undefined;
  }
  const rg = await findRipgrep(ctx.policy.fence);
  if (rg === undefined && wanted === "ripgrep") {
    throw new ToolError("ripgrep was asked for, but none was found that the runtime allows to run", {
      code: "engine_unavailable",
      recoverable: false,
      recoveryHint: "Use the default engine, or allow running rg (--allow-run).",
      details: { engine: wanted },
    });
  }
  return rg;
}

function byPath(a: Candidate, b: Candidate): number {
  return a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0;
}

/**
 * Makes the `grep` tool. Both engines give identical results: ripgrep (the
 * `@vscode/ripgrep` binary or a system `rg`) walks the tree in parallel and
 * names the files that match; the built-in engine walks it in JavaScript; then
 * the same code reads those files in path order and extracts lines, context and
 * the cap. The pattern is compiled once for both (see the pattern rules in the
 * tool description). Hidden files are searched, `.git` never; `.gitignore`
 * files inside the workspace are honoured with `skip_ignored`; symlinks are not
 * followed; binary files (a NUL byte) are skipped; a UTF-8 byte-order mark is
 * dropped and UTF-16 with one is read.
 *
 * ripgrep runs through the policy's process door, as a program request: in
 * the OS sandbox's read view (the workspace read-only, the policy's hidden
 * and denied paths masked), with its output bounded. `auto` uses ripgrep when
 * one is found, the fence allows running it and the sandbox runs, and the
 * built-in engine otherwise (e.g. a read-only `deno run` without
 * `--allow-run`, or no bubblewrap); ripgrep never runs unconfined.
 *
 * Requires `--allow-read` for the workspace. The ripgrep engine also needs
 * what the process door needs (`--allow-run` for the binary and bubblewrap,
 * `--allow-write` for the session temp dir) and, under Deno,
 * `--allow-env=NODE_V8_COVERAGE` (read by `node:child_process`), plus
 * `--allow-env=PATH` to find a system `rg` or `--allow-env=npm_config_arch`
 * for the npm one; without them the built-in engine searches.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { grepTool } from "@toolfence/tools";
 * const box = new ToolBox().register(grepTool());
 * const session = new Session({ workspace: Deno.cwd() });
 * const result = await box.call(session, "grep", { pattern: "export function", glob: "*.ts" });
 * console.log(result.output);
 * await session.close();
 * ```
 */
export function grepTool(options: GrepToolOptions = {}): Tool<GrepArgs> {
  return tool({
    name: "grep",
    description: "Search file contents for a pattern.\n" +
      "Returns matching lines as {path, line, content}, paths relative to the searched folder, lines 1-based, in " +
      "path order, at most max_matches (default 100; the result says when it cut). Searches hidden files too, " +
      "skips binary files, .git and (by default) what .gitignore excludes. The pattern is a regular expression " +
      "(\\w \\d \\b are ASCII; no lookaround or backreferences) unless regex is false. To find files by name, " +
      "use glob.",
    input,
    output: GREP_OUTPUT,
    destructive: false,
    idempotent: true,
    // `run` is optional: without it the built-in engine searches, so the tool
    // must stay listed under a fence that closes `run`.
    needs: { read: ["workspace"] },
    // ripgrep is looked for on PATH, then in the usual places.
    optionalNeeds: { run: ["rg"], env: [...SPAWN_ENV, "PATH"] },
    async run(args, ctx) {
      const pattern = compilePattern(args.pattern, { regex: args.regex, caseSensitive: args.case_sensitive });
      const filter = args.glob === undefined ? undefined : fileFilter(args.glob);
      const root = await searchRoot(ctx, args.path);
      let engine: "ripgrep" | "builtin" = "builtin";
      let files: Candidate[];
      const skipped = new SkipList();
      if (root.stat.isFile()) {
        const name = path.basename(root.path);
        files = !filter || filter.matches(name) ? [{ rel: name, abs: root.path }] : [];
      } else if (root.stat.isDirectory()) {
        const rg = await chooseEngine(ctx, options);
        files = [];
        if (rg !== undefined) {
          try {
            const found = await ripgrepCandidates(
              ctx,
              rg,
              root.path,
              root.base,
              args.skip_ignored,
              filter,
              pattern,
              skipped,
            );
            if (found !== undefined) {
              files = found;
              engine = "ripgrep";
            }
          } catch (error) {
            // ripgrep would not run here (no sandbox, removed, too old): the built-in engine takes over.
            const searchFailed = error instanceof ToolError && error.code === "search_failed";
            if (searchFailed || ctx.signal.aborted || options.engine === "ripgrep") throw error;
          }
        }
        if (engine === "builtin") {
          files = await builtinCandidates(
            ctx.policy.files,
            root.path,
            root.base,
            args.skip_ignored,
            filter,
            ctx.signal,
            skipped,
          );
        }
        // What the policy hides is not searched, whichever engine listed it.
        const hidden = ctx.policy.files.isHidden.bind(ctx.policy.files);
        if (hidden) files = files.filter((file) => !hidden(file.abs));
      } else {
        throw new ToolError(`${args.path} is neither a file nor a folder`, {
          code: "not_regular_file",
          recoveryHint: "Search a folder or a regular file.",
          details: { path: root.path },
        });
      }
      files.sort(byPath);
      const found = await collect(
        ctx.policy.files,
        files,
        pattern,
        args.context,
        args.include_content,
        args.max_matches,
        ctx.signal,
        skipped,
      );
      const note = found.overBudget
        ? `Showing the first ${found.matches.length} matches in path order; the output size limit was reached and ` +
          "there are more. Narrow the search with path or glob, or set include_content: false."
        : found.truncated
        ? `Showing the first ${found.matches.length} matches in path order; there are more. Narrow the search with ` +
          "path or glob, or raise max_matches."
        : found.matches.length === 0
        ? "No matches."
        : undefined;
      const notes = [note, skipped.sentence()].filter(Boolean).join(" ");
      return {
        root: root.path,
        engine,
        matches: found.matches,
        truncated: found.truncated,
        ...skipped.fields(),
        ...(notes ? { note: notes } : {}),
      };
    },
  });
}
