/**
 * `move`: rename or move a file, folder or symlink.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, notFound } from "../_shared/fs_errors.ts";
import { resolveDestination } from "./_destination.ts";
import { typeName } from "../_shared/fs_open.ts";
import { makeParents, undoParents } from "../_shared/fs_write.ts";
import { affectedPath, withChangeReport } from "../_shared/fs_changes.ts";
import { MOVE_OUTPUT } from "./_outputs.ts";

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
    "the user for permission. Folders are never merged. Missing parent folders of dst are created. A symlink (also one " +
    "inside a folder) that would lead outside the workspace or to a denied path from its new place is refused.",
  input,
  output: MOVE_OUTPUT,
  destructive: true,
  idempotent: false,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ src, dst }, ctx) {
    const source = await ctx.policy.files.resolve(src, { access: "write", followFinalSymlink: false });
    if (!source.existed) throw notFound(src, source.path);
    const stat = source.stat;
    if (stat === undefined) throw fileOpError(new Error("lstat failed"), src, source.path, "inspecting");
    const destination = await resolveDestination(ctx, "move", source, dst);
    const tree = stat.isDirectory() ? { tree: source.path } : {};
    await ctx.policy.files.authorize(source, "move", ctx.signal, tree);
    await ctx.policy.files.authorize(destination, "copy", ctx.signal, tree);
    const from = source.path;
    const to = destination.path;
    await withChangeReport(ctx, [from, affectedPath(ctx, to)], async () => {
      const created = await makeParents(ctx, destination, dst);
      try {
        await ctx.policy.files.move(source, destination, ctx.signal);
      } catch (error) {
        await undoParents(ctx, created);
        throw fileOpError(error, src, from, "moving");
      }
    }, { moves: [{ from, to }] });
    return { from, to, type: typeName(stat), replaced: destination.existed };
  },
});
