/**
 * `list_dir`: the entries of one folder.
 *
 * @module
 */

import type fs from "node:fs";
import path from "node:path";
import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, wrongType } from "../_shared/fs_errors.ts";
import { describeType, typeName } from "../_shared/fs_open.ts";
import { lostName, NOT_UTF8_REASON } from "../_shared/fs_lost_name.ts";
import { LIST_DIR_OUTPUT } from "./_outputs.ts";

/** The arguments of `list_dir`, defaults applied. */
export interface ListDirArgs {
  /** Folder to list, relative to the workspace or absolute inside it. */
  path: string;
  /** Whether to also give sizes and modification times, and where symlinks lead. */
  details: boolean;
}

const input = v.object({
  path: v.optional(
    v.pipe(v.string(), v.description('Folder to list, relative to the workspace or absolute inside it. Default "."')),
    ".",
  ),
  details: v.optional(
    v.pipe(
      v.boolean(),
      v.description("Also give sizes and modification times, and where symlinks lead. Default false"),
    ),
    false,
  ),
});

// Most entries whose details are looked up at once.
const STAT_CONCURRENCY = 32;

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function linkTarget(ctx: ToolContext, linkPath: string): Promise<string> {
  try {
    const resolved = await ctx.policy.files.resolve(linkPath);
    if (!resolved.existed) return "missing (broken link)";
    return resolved.stat ? typeName(resolved.stat) : "unknown";
  } catch (error) {
    if (error instanceof ToolError && error.code === "outside_workspace") return "outside the workspace";
    if (error instanceof ToolError && error.code === "symlink_loop") return "a symlink loop";
    return "unknown";
  }
}

/**
 * Lists a folder: the names of its files, folders, symlinks and other entries,
 * sorted. With `details`, files carry size and modification time, and each
 * symlink says what it leads to (a file or folder, a broken link, or
 * "outside the workspace", never followed there). An entry whose name is not
 * UTF-8 cannot be opened under Deno by any spelling: it is named under
 * `skipped`, with the reason, not listed as reachable.
 *
 * Requires `--allow-read` for the folder.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { listDirTool } from "@toolfence/tools";
 * const box = new ToolBox().register(listDirTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "list_dir", { path: ".", details: true })).output);
 * await session.close();
 * ```
 */
export const listDirTool: Tool<ListDirArgs> = tool({
  name: "list_dir",
  description: "List the contents of a folder.\n" +
    "Returns the names of its files, folders, symlinks and other entries, sorted. With details, also file sizes " +
    "and modification times, and what each symlink points to. To find files by pattern across folders, use glob.",
  input,
  output: LIST_DIR_OUTPUT,
  destructive: false,
  idempotent: true,
  needs: { read: ["workspace"] },
  async run({ path: dir, details }, ctx) {
    const target = await ctx.policy.files.resolve(dir);
    const real = target.path;
    let entries: fs.Dirent[];
    try {
      if (target.stat !== undefined && !target.stat.isDirectory()) {
        const found = describeType(target.stat);
        throw wrongType(dir, real, found, "a directory", "Use read_file or file_info for a single file.");
      }
      // Through the door: what the policy hides is not listed. A folder that is not there is said so by the door's
      // confined listing (ENOENT, ENOTDIR as the folder's own names show), never by a stat of the path: that would
      // follow a link swapped in for a folder of the path, and say what lies where it leads.
      entries = ctx.policy.files.entries(target);
    } catch (error) {
      throw fileOpError(error, dir, real, "listing");
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const kinds = { directories: [] as fs.Dirent[], files: [] as fs.Dirent[], links: [] as fs.Dirent[] };
    const others: fs.Dirent[] = [];
    const lost = await lostNames(real, entries);
    for (const entry of entries) {
      if (lost.has(entry)) continue;
      if (entry.isDirectory()) kinds.directories.push(entry);
      else if (entry.isFile()) kinds.files.push(entry);
      else if (entry.isSymbolicLink()) kinds.links.push(entry);
      else others.push(entry);
    }
    if (!details) {
      return {
        path: real,
        directories: kinds.directories.map((e) => e.name),
        files: kinds.files.map((e) => e.name),
        ...(kinds.links.length ? { symlinks: kinds.links.map((e) => e.name) } : {}),
        ...(others.length ? { other: others.map((e) => e.name) } : {}),
        ...(lost.size ? { skipped: [...lost.values()] } : {}),
      };
    }
    ctx.signal.throwIfAborted();
    // Each entry's lstat through the door, in the folder pinned at its real path, never by the path: a folder
    // swapped for a link after it was read gave the size and times of the files of the same names where the link
    // led, outside the workspace (tests/tools/fs/list_dir_test.ts). Undefined when it changed or went since.
    const lstat = (e: fs.Dirent): fs.Stats | undefined => {
      try {
        return ctx.policy.files.lstat(path.join(real, e.name));
      } catch {
        return undefined;
      }
    };
    const files = kinds.files.map((e) => {
      const stat = lstat(e);
      return { name: e.name, size: stat?.size ?? null, modified: stat?.mtime.toISOString() ?? null };
    });
    const links = await mapLimited(
      kinds.links,
      STAT_CONCURRENCY,
      async (e) => ({ name: e.name, points_to: await linkTarget(ctx, path.join(real, e.name)) }),
    );
    const other = others.map((e) => {
      const stat = lstat(e);
      return { name: e.name, type: stat === undefined ? "unknown" : typeName(stat) };
    });
    return {
      path: real,
      directories: kinds.directories.map((e) => e.name),
      files,
      ...(links.length ? { symlinks: links } : {}),
      ...(other.length ? { other } : {}),
      ...(lost.size ? { skipped: [...lost.values()] } : {}),
    };
  },
});

/**
 * The entries whose names this runtime lost (not UTF-8: see `fs_lost_name.ts`),
 * with the reason: a spelling no file has, or one a second entry also decodes to.
 */
async function lostNames(dir: string, entries: fs.Dirent[]): Promise<Map<fs.Dirent, { name: string; reason: string }>> {
  const lost = new Map<fs.Dirent, { name: string; reason: string }>();
  const seen = new Set<string>();
  for (const entry of entries) {
    if (!entry.name.includes("\uFFFD")) continue;
    if (seen.has(entry.name)) {
      lost.set(entry, { name: entry.name, reason: `${NOT_UTF8_REASON} (another entry's name reads the same)` });
    } else if (await lostName(path.join(dir, entry.name))) {
      lost.set(entry, { name: entry.name, reason: NOT_UTF8_REASON });
    }
    seen.add(entry.name);
  }
  return lost;
}
