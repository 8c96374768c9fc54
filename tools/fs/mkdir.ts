/**
 * `mkdir`: create a folder and its missing parents.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { wrongType } from "../_shared/fs_errors.ts";
import { describeType } from "../_shared/fs_open.ts";
import { makeFolder } from "../_shared/fs_write.ts";
import { affectedPath, withChangeReport } from "../_shared/fs_changes.ts";
import { MKDIR_OUTPUT } from "./_outputs.ts";

/** The arguments of `mkdir`. */
export interface MkdirArgs {
  /** Folder to create, relative to the workspace or absolute inside it. */
  path: string;
}

const input = v.object({
  path: v.pipe(v.string(), v.description("Folder to create, relative to the workspace or absolute inside it")),
});

/**
 * Creates a folder with its missing parents; a folder that already exists is
 * fine (`created: false`), anything else at that path is an error. Creating
 * folders never asks for permission.
 *
 * Requires `--allow-read` and `--allow-write` for the folder.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { mkdirTool } from "@toolfence/tools";
 * const box = new ToolBox().register(mkdirTool);
 * const session = new Session({ workspace: await Deno.makeTempDir() });
 * console.log((await box.call(session, "mkdir", { path: "src/lib" })).output);
 * await session.close();
 * ```
 */
export const mkdirTool: Tool<MkdirArgs> = tool({
  name: "mkdir",
  description: "Create a folder, with any missing parent folders.\n" +
    "Succeeds without change when the folder already exists.",
  input,
  output: MKDIR_OUTPUT,
  destructive: false,
  idempotent: true,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ path }, ctx) {
    const target = await ctx.policy.files.resolve(path, { access: "write" });
    if (target.existed) {
      // The resolution followed every link, so this is what really is there.
      if (target.stat?.isDirectory()) return { path: target.path, created: false };
      const found = target.stat ? describeType(target.stat) : "something that cannot be inspected";
      throw wrongType(path, target.path, found, "a directory", "Choose another path, or delete what is there.");
    }
    await ctx.policy.files.authorize(target, "mkdir", ctx.signal);
    await withChangeReport(ctx, [affectedPath(ctx, target.path)], () => makeFolder(ctx, target, path));
    return { path: target.path, created: true };
  },
});
