/**
 * `move`: rename or move a file, folder or symlink.
 *
 * @module
 */

import type fs from "node:fs";
import fsp from "node:fs/promises";
import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, notFound } from "../_shared/fs_errors.ts";
import { resolveDestination } from "./_destination.ts";
import { typeName } from "../_shared/fs_open.ts";
import { copyTree, makeParents, siblingTempPath, undoParents } from "../_shared/fs_write.ts";

/** The arguments of `move`. */
export interface MoveArgs {
  /** What to move: a file, folder or symlink, relative to the workspace. */
  src: string;
  /** Where it goes: the new path, or an existing folder to move it into (keeping its name). */
  dst: string;
}

const input = v.object({
  src: v.pipe(v.string(), v.description("What to move: a file, folder or symlink, relative to the workspace")),
  dst: v.pipe(
    v.string(),
    v.description("Where it goes: the new path, or an existing folder to move it into (keeping its name)"),
  ),
});

// rename(2) cannot cross file systems (the temp dir often lives on another
// one): copy beside the destination, rename into place, then remove the source.
async function moveAcrossDevices(from: string, to: string, signal: AbortSignal): Promise<void> {
  const temp = siblingTempPath(to);
  try {
    await copyTree(from, temp, signal);
    await fsp.rename(temp, to);
  } catch (error) {
    await fsp.rm(temp, { recursive: true, force: true }).catch(() => {});
    throw error;
  }
  await fsp.rm(from, { recursive: true });
}

/**
 * Moves (renames) a file, folder or symlink. A symlink is moved as a link, never
 * followed. When `dst` is an existing folder the source moves into it. An
 * existing file at the destination is replaced only through the
 * write-permission flow, as is moving the source away; folders are never
 * merged or replaced. Missing parent folders of the destination are created.
 *
 * Requires `--allow-read` and `--allow-write` for both paths.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { moveTool } from "@toolfence/tools";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.txt`, "x");
 * const box = new ToolBox().register(moveTool);
 * const session = new Session({ workspace: dir, autoConfirm: true });
 * console.log((await box.call(session, "move", { src: "a.txt", dst: "docs/b.txt" })).output);
 * await session.close();
 * ```
 */
export const moveTool: Tool<MoveArgs> = tool({
  name: "move",
  description: "Move or rename a file, folder or symlink.\n" +
    "If dst is an existing folder, src moves into it. Replacing an existing file at dst, and moving src away, may ask " +
    "the user for permission. Folders are never merged. Missing parent folders of dst are created.",
  input,
  destructive: true,
  idempotent: false,
  permissions: ["read", "write"],
  async run({ src, dst }, ctx) {
    const at = await ctx.workspace.resolve(src, { followFinalSymlink: false });
    if (!at.exists) throw notFound(src, at.path);
    let stat: fs.Stats;
    try {
      stat = await fsp.lstat(at.path);
    } catch (error) {
      throw fileOpError(error, src, at.path, "inspecting");
    }
    const destination = await resolveDestination(ctx, "move", at.path, stat, dst);
    const from = await ctx.policy.resolveForWrite(src, "move", ctx.signal);
    const to = await ctx.policy.resolveForWrite(destination.path, "copy", ctx.signal);
    const created = await makeParents(to, dst);
    try {
      try {
        await fsp.rename(from, to);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
        await moveAcrossDevices(from, to, ctx.signal);
      }
    } catch (error) {
      await undoParents(created);
      throw fileOpError(error, src, from, "moving");
    }
    return { from, to, type: typeName(stat), replaced: destination.replaces };
  },
});
