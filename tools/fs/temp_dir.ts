/**
 * `temp_dir`: the session's scratch folder.
 *
 * @module
 */

import * as v from "valibot";
import { type Tool, tool } from "@toolfence/core";
import { TEMP_DIR_OUTPUT } from "./_outputs.ts";

/** The arguments of `temp_dir`: none. */
export type TempDirArgs = Record<string, never>;

/**
 * Returns the session's temp dir, creating it on first use. It is part of the
 * workspace from then on, writes in it never ask for permission, and it is
 * removed when the session closes.
 *
 * Requires `--allow-read` and `--allow-write` for the system temp folder.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { tempDirTool } from "@toolfence/tools";
 * const box = new ToolBox().register(tempDirTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "temp_dir", {})).output);
 * await session.close();
 * ```
 */
export const tempDirTool: Tool<TempDirArgs> = tool({
  name: "temp_dir",
  description: "Get the path of this session's private temporary folder, creating it if needed.\n" +
    "Use it for scratch files: writing there never asks for permission, and it is deleted when the session ends.",
  input: v.object({}),
  output: TEMP_DIR_OUTPUT,
  destructive: false,
  idempotent: true,
  effects: ["writes_files"],
  needs: { read: ["temp"], write: ["temp"] },
  async run(_args, ctx) {
    return { path: await ctx.workspace.tempDir() };
  },
});
