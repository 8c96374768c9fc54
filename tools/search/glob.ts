/**
 * `glob`: find files and folders by name pattern.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { pathGlob } from "./_globs.ts";
import { searchRoot } from "./_root.ts";
import { SkipList } from "./_skipped.ts";
import { type WalkEntry, walkTree } from "./_walk.ts";
import { GLOB_OUTPUT } from "./_outputs.ts";

/** Default cap on the number of paths returned. */
export const DEFAULT_MAX_RESULTS = 1000;

/**
 * Characters the paths may take, so that a result fits the toolbox's default
 * 40,000-character cap and is never cut in the middle.
 */
export const GLOB_BUDGET_CHARS = 36_000;

/** The arguments of `glob`, defaults applied. */
export interface GlobArgs {
  /** Glob relative to `path`: `*` matches within one folder, `**` across folders. */
  pattern: string;
  /** Folder to search in, relative to the workspace. */
  path: string;
  /** What to list: files, folders (ending with `/`), or both. */
  type: "file" | "directory" | "any";
  /** Whether to leave out what .gitignore files exclude. */
  skip_ignored: boolean;
  /** Most paths to return. */
  max_results: number;
}

const input = v.object({
  pattern: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      'Glob relative to `path`: "*" matches within one folder, "**" across folders ("**/*.ts" finds .ts files ' +
        'at any depth, "*.ts" only at the top), "{a,b}" and "[abc]" as usual',
    ),
  ),
  path: v.optional(
    v.pipe(v.string(), v.description('Folder to search in, relative to the workspace. Default "."')),
    ".",
  ),
  type: v.optional(
    v.pipe(
      v.picklist(["file", "directory", "any"]),
      v.description('What to list: "file" (default), "directory", or "any" (folders end with "/")'),
    ),
    "file",
  ),
  skip_ignored: v.optional(
    v.pipe(v.boolean(), v.description("Leave out what .gitignore files exclude. Default true")),
    true,
  ),
  max_results: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(100_000),
      v.description(`Most paths to return. Default ${DEFAULT_MAX_RESULTS}`),
    ),
    DEFAULT_MAX_RESULTS,
  ),
});

/**
 * Finds paths under a folder that match a glob, sorted, relative to that
 * folder. `.git` is never listed; with `skip_ignored` (default) neither is
 * what the workspace's .gitignore files exclude. Symlinks are never followed:
 * a link whose target lies inside the workspace is listed as what it points
 * to, one leading outside (or nowhere) is left out. Folders that cannot hold a
 * match are not walked.
 *
 * Requires `--allow-read` for the folder.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { globTool } from "@toolfence/tools";
 * const box = new ToolBox().register(globTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "glob", { pattern: "**\/*.ts", path: "tools" })).output);
 * await session.close();
 * ```
 */
export const globTool: Tool<GlobArgs> = tool({
  name: "glob",
  description: "Find files or folders whose paths match a glob pattern.\n" +
    'Returns paths relative to `path`, sorted, at most max_results (the result says when it cut). "**/*.ts" finds ' +
    "TypeScript files at any depth. Skips .git and, by default, what .gitignore excludes. To search file " +
    "contents, use grep.",
  input,
  output: GLOB_OUTPUT,
  destructive: false,
  idempotent: true,
  needs: { read: ["workspace"] },
  async run({ pattern, path, type, skip_ignored, max_results }, ctx) {
    const glob = pathGlob(pattern);
    const root = await searchRoot(ctx, path);
    if (!root.stat.isDirectory()) {
      throw new ToolError(`${path} is not a folder`, {
        code: "not_directory",
        recoveryHint: "Give the folder to search as path, and the file pattern as pattern.",
        details: { path: root.path },
      });
    }
    const found: string[] = [];
    const links: WalkEntry[] = [];
    const skipped = new SkipList();
    const wantFiles = type !== "directory";
    const wantDirs = type !== "file";
    await walkTree({
      root: root.path,
      base: root.base,
      skipIgnored: skip_ignored,
      signal: ctx.signal,
      descend: (rel) => glob.mayContain(rel),
      files: ctx.policy.files,
      onSkip: (skip) => skipped.add(skip),
      onEntry(entry) {
        if (entry.kind === "symlink") {
          if (glob.matches(entry.rel)) links.push(entry);
        } else if (entry.kind === "dir") {
          if (wantDirs && glob.matches(entry.rel)) found.push(type === "any" ? entry.rel + "/" : entry.rel);
        } else if (wantFiles && glob.matches(entry.rel)) found.push(entry.rel);
      },
    });
    for (const link of links) {
      ctx.signal.throwIfAborted();
      let isDir: boolean;
      try {
        // Through the door, as any path: a link to something hidden or outside is refused there.
        const target = await ctx.policy.files.resolve(link.abs);
        if (!target.existed || target.stat === undefined) continue;
        isDir = target.stat.isDirectory();
      } catch {
        continue; // outside the workspace, a loop, or unreadable: not listed
      }
      if (isDir && wantDirs) found.push(type === "any" ? link.rel + "/" : link.rel);
      else if (!isDir && wantFiles) found.push(link.rel);
    }
    found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let shown = 0;
    let used = 0;
    while (shown < found.length && shown < max_results) {
      used += found[shown].length + 3; // quotes and comma
      if (used > GLOB_BUDGET_CHARS && shown > 0) break;
      shown++;
    }
    const truncated = shown < found.length;
    const why = shown < max_results ? "the output size limit was reached" : `max_results is ${max_results}`;
    const notes = [
      truncated ? `Showing the first ${shown} of ${found.length} paths (${why}); narrow the pattern or the path.` : "",
      skipped.sentence() ?? "",
    ].filter(Boolean);
    return {
      root: root.path,
      matches: truncated ? found.slice(0, shown) : found,
      truncated,
      ...skipped.fields(),
      ...(notes.length > 0 ? { note: notes.join(" ") } : {}),
    };
  },
});
