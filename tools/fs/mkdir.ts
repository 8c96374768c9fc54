/**
 * `mkdir`: create a folder and its missing parents.
 *
 * @module
 */

import fsp from "node:fs/promises";
import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, wrongType } from "../_shared/fs_errors.ts";
import { describeType } from "../_shared/fs_open.ts";

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
  destructive: false,
  idempotent: true,
  permissions: ["read", "write"],
  async run({ path }, ctx) {
    const real = await ctx.policy.resolveForWrite(path, "mkdir", ctx.signal);
    try {
      const stat = await fsp.stat(real);
      if (stat.isDirectory()) return { path: real, created: false };
      throw wrongType(path, real, describeType(stat), "a directory", "Choose another path, or delete what is there.");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw fileOpError(error, path, real, "checking");
    }
    try {
      await fsp.mkdir(real, { recursive: true });
    } catch (error) {
      throw fileOpError(error, path, real, "creating");
    }
    return { path: real, created: true };
  },
});
