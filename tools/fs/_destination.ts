// Where a move or copy lands: `dst` itself, or `dst/<name of src>` when `dst`
// is an existing folder (as `mv` and `cp` do). Checked before anything is
// asked or written: no merging into an existing folder, no replacing a
// symlink, no folder into itself.

import type fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { fileOpError } from "../_shared/fs_errors.ts";
import { describeType } from "../_shared/fs_open.ts";

/** The checked destination of a move or copy. */
export interface Destination {
  /** Absolute path the source will have afterwards. */
  path: string;
  /** Whether a file is there now (and will be replaced). */
  replaces: boolean;
}

async function lstatOrUndefined(real: string, shown: string): Promise<fs.Stats | undefined> {
  try {
    return await fsp.lstat(real);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw fileOpError(error, shown, real, "inspecting");
  }
}

function refuse(message: string, code: string, hint: string, details: Record<string, unknown>): ToolError {
  return new ToolError(message, { code, recoveryHint: hint, details });
}

/**
 * Resolves and checks the destination for moving or copying `source` (its
 * real location, not followed if it is a link) of type `sourceStat`.
 */
export async function resolveDestination(
  ctx: ToolContext,
  verb: "move" | "copy",
  source: string,
  sourceStat: fs.Stats,
  dst: string,
): Promise<Destination> {
  const own = await ctx.workspace.resolve(dst, { followFinalSymlink: false });
  const ownStat = own.exists ? await lstatOrUndefined(own.path, dst) : undefined;
  let target = own.path;
  if (ownStat?.isSymbolicLink()) {
    const followed = await ctx.workspace.resolve(dst);
    const followedStat = followed.exists ? await lstatOrUndefined(followed.path, dst) : undefined;
    if (!followedStat?.isDirectory()) {
      throw refuse(
        `${dst} is a symlink; ${verb} will not replace it or write through it`,
        "invalid_destination",
        "Choose another destination, or delete the link first.",
        { path: own.path },
      );
    }
    target = path.join(followed.path, path.basename(source));
  } else if (ownStat?.isDirectory()) {
    target = path.join(own.path, path.basename(source));
  }
  if (target === source) {
    throw refuse(`${dst} is where the source already is`, "invalid_destination", "Choose a different destination.", {
      path: target,
    });
  }
  if (sourceStat.isDirectory() && (target + "/").startsWith(source + "/")) {
    throw refuse(
      `Cannot ${verb} the folder ${source} into itself (${target})`,
      "invalid_destination",
      "Choose a destination outside the folder.",
      { source, target },
    );
  }
  const existing = await lstatOrUndefined(target, dst);
  if (existing && !(existing.isFile() && !sourceStat.isDirectory())) {
    throw refuse(
      `${target} already exists as ${describeType(existing)}; ${verb} only replaces a file with a file or a link`,
      "already_exists",
      "Choose another destination, or delete what is there first.",
      { path: target, found: describeType(existing) },
    );
  }
  return { path: target, replaces: existing !== undefined };
}
