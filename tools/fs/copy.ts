/**
 * `copy`: copy a file, folder or symlink.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, notFound, wrongType } from "../_shared/fs_errors.ts";
import { resolveDestination } from "./_destination.ts";
import { describeType, typeName } from "../_shared/fs_open.ts";
import { makeParents, undoParents } from "../_shared/fs_write.ts";
import { affectedPath, withChangeReport } from "../_shared/fs_changes.ts";
import { COPY_OUTPUT } from "./_outputs.ts";

/** The arguments of `copy`. */
export interface CopyArgs {
  /** What to copy: a file, folder or symlink, relative to the workspace. */
  src: string;
  /** Where the copy goes: the new path, or an existing folder to copy it into (keeping its name). */
  dst: string;
}

const input = v.object({
  src: v.pipe(v.string(), v.description("What to copy: a file, folder or symlink, relative to the workspace")),
  dst: v.pipe(
    v.string(),
    v.description("Where the copy goes: the new path, or an existing folder to copy it into (keeping its name)"),
  ),
});

/**
 * Copies a file, folder or symlink. Symlinks are copied as links (the same
 * target text), never followed, and each only where it still leads inside the
 * workspace to a path the policy lets be read: a relative link copied to
 * another depth leads elsewhere, and one that would lead outside (or copying a
 * folder that holds a link to a file outside) is refused with
 * `symlink_target`, nothing copied. Files keep their
 * mode. When `dst` is an existing folder the copy goes into it. An existing
 * file at the destination is replaced only through the write-permission flow;
 * folders are never merged. The copy is built beside the destination and
 * renamed into place, so a failure leaves nothing behind. FIFOs, sockets and
 * devices inside a folder are skipped and listed.
 *
 * Requires `--allow-read` for `src` and `--allow-read` and `--allow-write` for `dst`.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { copyTool } from "@toolfence/tools";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.txt`, "x");
 * const box = new ToolBox().register(copyTool);
 * const session = new Session({ workspace: dir });
 * console.log((await box.call(session, "copy", { src: "a.txt", dst: "b.txt" })).output);
 * await session.close();
 * ```
 */
export const copyTool: Tool<CopyArgs> = tool({
  name: "copy",
  description: "Copy a file, folder or symlink.\n" +
    "Folders are copied with everything in them; symlinks are copied as links, not followed. If dst is an existing " +
    "folder, the copy goes into it. Replacing an existing file at dst may ask the user for permission; folders are " +
    "never merged. Missing parent folders of dst are created. A symlink that would lead outside the workspace or to a " +
    "denied path from its new place is refused.",
  input,
  output: COPY_OUTPUT,
  destructive: true,
  idempotent: true,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ src, dst }, ctx) {
    const source = await ctx.policy.files.resolve(src, { followFinalSymlink: false });
    if (!source.existed) throw notFound(src, source.path);
    const stat = source.stat;
    if (stat === undefined) throw fileOpError(new Error("lstat failed"), src, source.path, "inspecting");
    if (!stat.isFile() && !stat.isDirectory() && !stat.isSymbolicLink()) {
      throw wrongType(src, source.path, describeType(stat), "a file, folder or symlink", "Only those can be copied.");
    }
    const destination = await resolveDestination(ctx, "copy", source, dst);
    await ctx.policy.files.authorize(destination, "copy", ctx.signal, stat.isDirectory() ? { tree: source.path } : {});
    const to = destination.path;
    return await withChangeReport(ctx, [affectedPath(ctx, to)], async () => {
      const created = await makeParents(ctx, destination, dst);
      try {
        const counts = await ctx.policy.files.copy(source, destination, ctx.signal);
        return { from: source.path, to, type: typeName(stat), replaced: destination.existed, ...counts };
      } catch (error) {
        await undoParents(ctx, created);
        throw fileOpError(error, src, source.path, "copying");
      }
    });
  },
});
