// Where a move or copy lands: `dst` itself, or `dst/<name of src>` when `dst`
// is an existing folder (as `mv` and `cp` do). Checked before anything is
// asked or written: no merging into an existing folder, no replacing a
// symlink, no folder into itself. `dst` is resolved once, by the policy.

import path from "node:path";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import type { FileTarget } from "@toolfence/core";
import { describeType } from "../_shared/fs_open.ts";

function refuse(message: string, code: string, hint: string, details: Record<string, unknown>): ToolError {
  return new ToolError(message, { code, recoveryHint: hint, details });
}

/**
 * Resolves and checks the destination for moving or copying `source` (its
 * resolved target, a final link not followed), returning the target the
 * source will have afterwards; `existed` says whether a file there will be
 * replaced.
 */
export async function resolveDestination(
  ctx: ToolContext,
  verb: "move" | "copy",
  source: FileTarget,
  dst: string,
): Promise<FileTarget> {
  const sourceIsFolder = source.stat?.isDirectory() ?? false;
  let target = await ctx.policy.files.resolve(dst, { access: "write", followFinalSymlink: false });
  if (target.stat?.isSymbolicLink()) {
    // Only a link to a folder is gone through, as `mv` and `cp` do; it is then resolved once, following it.
    const followed = await ctx.policy.files.resolve(dst, { access: "write" });
    if (!followed.stat?.isDirectory()) {
      throw refuse(
        `${dst} is a symlink; ${verb} will not replace it or write through it`,
        "invalid_destination",
        "Choose another destination, or delete the link first.",
        { path: target.path },
      );
    }
    target = await ctx.policy.files.child(followed, path.basename(source.path));
  } else if (target.stat?.isDirectory()) {
    target = await ctx.policy.files.child(target, path.basename(source.path));
  }
  if (target.path === source.path) {
    throw refuse(`${dst} is where the source already is`, "invalid_destination", "Choose a different destination.", {
      path: target.path,
    });
  }
  if (sourceIsFolder && (target.path + "/").startsWith(source.path + "/")) {
    throw refuse(
      `Cannot ${verb} the folder ${source.path} into itself (${target.path})`,
      "invalid_destination",
      "Choose a destination outside the folder.",
      { source: source.path, target: target.path },
    );
  }
  const existing = target.stat;
  if (target.existed && !(existing?.isFile() && !sourceIsFolder)) {
    const found = existing ? describeType(existing) : "something that cannot be inspected";
    throw refuse(
      `${target.path} already exists as ${found}; ${verb} only replaces a file with a file or a link`,
      "already_exists",
      "Choose another destination, or delete what is there first.",
      { path: target.path, found },
    );
  }
  return target;
}
