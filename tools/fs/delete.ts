/**
 * `delete`: remove a file, a symlink (as a link) or a folder.
 *
 * @module
 */

import type fs from "node:fs";
import path from "node:path";
import * as v from "valibot";
import { type FileDoor, ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, notFound } from "../_shared/fs_errors.ts";
import { typeName } from "../_shared/fs_open.ts";
import { withChangeReport } from "../_shared/fs_changes.ts";
import { DELETE_OUTPUT } from "./_outputs.ts";

/** The arguments of `delete`, defaults applied. */
export interface DeleteArgs {
  /** File, symlink or folder to delete, relative to the workspace or absolute inside it. */
  path: string;
  /** Required to delete a folder that is not empty, with everything in it. */
  recursive: boolean;
}

const input = v.object({
  path: v.pipe(v.string(), v.description("File, symlink or folder to delete, relative to the workspace or absolute")),
  recursive: v.optional(
    v.pipe(
      v.boolean(),
      v.description("Required to delete a folder that is not empty, with everything in it. Default false"),
    ),
    false,
  ),
});

/**
 * Counts the entries under `dir`, without following symlinks. Whether the
 * operating system lets each folder be emptied is not checked beforehand:
 * access(2) answers for the process's uid, which Deno does not reveal
 * without --allow-sys (its `access` then ends the process), and the answer
 * could change before the deletion anyway. A deletion stopped halfway says
 * how many entries it removed instead.
 */
async function countEntries(files: FileDoor, dir: string, shown: string, signal: AbortSignal): Promise<number> {
  signal.throwIfAborted();
  await Promise.resolve();
  let entries: fs.Dirent[];
  try {
    entries = files.entries(dir);
  } catch (error) {
    throw fileOpError(error, shown, dir, "listing");
  }
  let count = 0;
  for (const entry of entries) {
    count++;
    if (entry.isDirectory()) count += await countEntries(files, path.join(dir, entry.name), shown, signal);
  }
  return count;
}

// The error of a recursive deletion that failed, saying how far it got.
async function partialDeletion(
  files: FileDoor,
  error: unknown,
  shown: string,
  real: string,
  entries: number,
): Promise<ToolError> {
  const failed = fileOpError(error, shown, real, "deleting");
  const left = await countEntries(files, real, shown, new AbortController().signal).catch(() => undefined);
  if (left === undefined || left === entries) return failed;
  return new ToolError(`${failed.message}; ${entries - left} of its ${entries} entries were deleted, ${left} remain`, {
    code: failed.code,
    kind: failed.kind,
    recoverable: failed.recoverable,
    recoveryHint: failed.recoveryHint ?? "Look at what remains with list_dir; fix its permissions, or leave it.",
    details: { ...failed.details, entries, remaining: left },
    cause: error,
  });
}

/**
 * Deletes a path. A symlink is deleted as a link: deleting a link to a folder
 * outside the workspace leaves that folder untouched. A folder that is not
 * empty needs `recursive: true`; its symlinks are removed, never followed.
 * When the operating system stops the deletion of a folder halfway (a
 * folder in it may not be changed), the error says how many entries went and
 * how many remain. Deleting an existing path goes through the
 * write-permission flow (inside the temp dir it never asks). The workspace
 * folder and the temp dir themselves cannot be deleted.
 *
 * Requires `--allow-read` and `--allow-write` for the path.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { deleteTool } from "@toolfence/tools";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/old.txt`, "x");
 * const box = new ToolBox().register(deleteTool);
 * const session = new Session({ workspace: dir, autoConfirm: true });
 * console.log((await box.call(session, "delete", { path: "old.txt" })).output);
 * await session.close();
 * ```
 */
export const deleteTool: Tool<DeleteArgs> = tool({
  name: "delete",
  description: "Delete a file, a symlink or a folder.\n" +
    "A symlink is removed as a link; what it points to is untouched. A folder that is not empty is deleted only with " +
    "recursive: true. May ask the user for permission.",
  input,
  output: DELETE_OUTPUT,
  destructive: true,
  idempotent: false,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ path: shown, recursive }, ctx) {
    const target = await ctx.policy.files.resolve(shown, { access: "write", followFinalSymlink: false });
    const real = target.path;
    if (!target.existed) throw notFound(shown, real);
    const stat = target.stat;
    if (stat === undefined) throw fileOpError(new Error("lstat failed"), shown, real, "inspecting");
    let entries = 0;
    if (stat.isDirectory()) {
      try {
        entries = ctx.policy.files.entries(target).length;
      } catch (error) {
        throw fileOpError(error, shown, real, "listing");
      }
      if (entries > 0 && !recursive) {
        throw new ToolError(`${shown} is a folder with ${entries} entries; nothing was deleted`, {
          code: "directory_not_empty",
          recoveryHint: "Pass recursive: true to delete the folder with everything in it.",
          details: { path: real, entries },
        });
      }
    }
    await ctx.policy.files.authorize(target, "delete", ctx.signal, stat.isDirectory() ? { tree: real } : {});
    if (entries > 0) entries = await countEntries(ctx.policy.files, real, shown, ctx.signal);
    await withChangeReport(ctx, [real], async () => {
      try {
        await ctx.policy.files.remove(target, ctx.signal);
      } catch (error) {
        throw entries > 0
          ? await partialDeletion(ctx.policy.files, error, shown, real, entries)
          : fileOpError(error, shown, real, "deleting");
      }
    });
    return { path: real, deleted: typeName(stat), ...(stat.isDirectory() ? { entries } : {}) };
  },
});
