/**
 * `apply_patch`: apply a multi-file patch, all or nothing.
 *
 * @module
 */

import path from "node:path";
import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import type { ToolContext } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import type { FileDoor, FileTarget, WriteKind } from "@toolfence/core";
import { fileOpError, hashConflict } from "../_shared/fs_errors.ts";
import { currentSha256 } from "../fs/write_file.ts";
import { affectedPath, withChangeReport } from "../_shared/fs_changes.ts";
import { applyHunks, checkDeletion, lineCounts } from "./_patch_apply.ts";
import { type FilePatch, parsePatch } from "./_patch_parse.ts";
import { encodeText, loadTextFile, type TextFile } from "./_text.ts";
import { APPLY_PATCH_OUTPUT } from "./_outputs.ts";

/** The arguments of `apply_patch`, defaults applied. */
export interface ApplyPatchArgs {
  /** The patch: a unified diff or a `*** Begin Patch` ... `*** End Patch` block. */
  patch: string;
  /** Folder the patch's paths are relative to; no path may lead outside it. */
  directory: string;
}

const input = v.object({
  patch: v.pipe(
    v.string(),
    v.minLength(1),
    v.description(
      "The patch: a unified diff (--- a/path, +++ b/path, @@ hunks; several files allowed; /dev/null to create or " +
        "delete) or a *** Begin Patch ... *** End Patch block with *** Add File / *** Update File / *** Delete File",
    ),
  ),
  directory: v.optional(
    v.pipe(
      v.string(),
      v.description('Folder the patch\'s paths are relative to; no path may lead outside it. Default "."'),
    ),
    ".",
  ),
});

function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith("/") ? parent : parent + "/");
}

/** A file change, checked and computed, ready to be written. */
interface Step {
  file: FilePatch;
  /** Real path of the file the patch names. */
  real: string;
  /** Its resolved target. */
  target: FileTarget;
  /** Real path it moves to. */
  moveTo?: string;
  /** Its resolved target. */
  moveTarget?: FileTarget;
  /** The file as it is now (updates and deletions). */
  before?: TextFile;
  /** The new content (adds and updates). */
  after?: Uint8Array;
}

async function resolveTarget(ctx: ToolContext, directory: string, name: string) {
  if (name === "" || name.includes("\0")) {
    throw new ToolError(`The patch names an invalid path ${JSON.stringify(name)}`, {
      code: "invalid_patch",
      kind: "semantic",
      details: { path: name },
    });
  }
  const absolute = path.posix.isAbsolute(name) ? name : path.posix.join(directory, name);
  const resolved = await ctx.policy.files.resolve(absolute, { access: "write", followFinalSymlink: false });
  if (!isWithin(resolved.path, directory)) {
    throw new ToolError(`The patch path ${name} leads outside ${directory}; nothing was changed`, {
      code: "outside_directory",
      kind: "policy",
      recoveryHint: "Use paths relative to the directory, without .. leading out of it.",
      details: { path: name, resolved: resolved.path, directory },
    });
  }
  if (resolved.stat?.isSymbolicLink()) {
    throw new ToolError(`The patch targets ${name}, which is a symlink; patches do not write through links`, {
      code: "symlink_target",
      recoveryHint: "Patch the file the link points to, by its own path.",
      details: { path: resolved.path },
    });
  }
  return { real: resolved.path, existed: resolved.existed, target: resolved };
}

function exists(name: string, real: string): ToolError {
  return new ToolError(`The patch adds ${name}, but it already exists; nothing was changed`, {
    code: "already_exists",
    recoveryHint: "Update the existing file instead, or delete it first.",
    details: { path: real },
  });
}

function missing(name: string, real: string): ToolError {
  return new ToolError(`The patch changes ${name}, which does not exist; nothing was changed`, {
    code: "not_found",
    recoveryHint: "Check the path; to create a file, add it (--- /dev/null, or *** Add File).",
    details: { path: real },
  });
}

function addedText(file: FilePatch): string {
  const lines = file.hunks.flatMap((h) => h.lines.filter((l) => l.op === "+").map((l) => l.text));
  if (lines.length === 0) return "";
  return lines.join("\n") + (file.hunks.at(-1)?.newNoNewline ? "" : "\n");
}

async function planStep(ctx: ToolContext, directory: string, file: FilePatch): Promise<Step> {
  const { real, existed, target } = await resolveTarget(ctx, directory, file.path);
  const step: Step = { file, real, target };
  if (file.kind === "add") {
    if (existed) throw exists(file.path, real);
    step.after = encodeText(addedText(file), false);
    return step;
  }
  if (!existed) throw missing(file.path, real);
  step.before = await loadTextFile(ctx.policy.files, target, file.path);
  if (file.kind === "delete") {
    checkDeletion(step.before.text, step.before.eol, file, file.path);
    return step;
  }
  const text = file.hunks.length
    ? applyHunks(step.before.text, step.before.eol, file.hunks, file.path)
    : step.before.text;
  step.after = encodeText(text, step.before.bom);
  if (file.moveTo !== undefined) {
    const to = await resolveTarget(ctx, directory, file.moveTo);
    if (to.real !== real) {
      if (to.existed) throw exists(file.moveTo, to.real);
      step.moveTo = to.real;
      step.moveTarget = to.target;
    }
  }
  return step;
}

type Undo = () => Promise<unknown>;

async function authorize(ctx: ToolContext, steps: Step[]): Promise<void> {
  const ask = (target: FileTarget, action: WriteKind) => ctx.policy.files.authorize(target, action, ctx.signal);
  for (const step of steps) {
    if (step.file.kind === "add") await ask(step.target, "create");
    else if (step.file.kind === "delete") await ask(step.target, "delete");
    else if (step.moveTarget !== undefined) {
      await ask(step.target, "move");
      await ask(step.moveTarget, "create");
    } else await ask(step.target, "overwrite");
  }
}

async function write(files: FileDoor, steps: Step[], undo: Undo[]): Promise<void> {
  const created = (folder: string | undefined) => folder !== undefined && undo.push(() => files.discard(folder));
  for (const step of steps) {
    const { file, real, before, after, target } = step;
    if (file.kind === "add") {
      created(await files.write(target, after!));
      undo.push(() => files.discard(real));
    } else if (file.kind === "delete") {
      await files.remove(target);
      undo.push(() => files.write(target, before!.bytes, { mode: before!.mode }));
    } else if (step.moveTarget !== undefined) {
      const moveTarget = step.moveTarget;
      created(await files.write(moveTarget, after!, { mode: before!.mode }));
      undo.push(() => files.discard(moveTarget.path));
      await files.remove(target);
      undo.push(() => files.write(target, before!.bytes, { mode: before!.mode }));
    } else {
      await files.write(target, after!, { mode: before!.mode });
      undo.push(() => files.write(target, before!.bytes, { mode: before!.mode }));
    }
  }
}

/**
 * Applies a patch to files under `directory`: unified diffs (one or many
 * files, `a/` `b/` prefixes, git headers, `/dev/null` to create or delete,
 * renames) or the `*** Begin Patch` format OpenAI's models write (`*** Add
 * File`, `*** Update File` with `*** Move to`, `*** Delete File`, `@@` anchors,
 * `*** End of File`). Every hunk of every file is checked before anything is
 * written, then each write is asked for through the write-permission flow; a
 * write that still fails rolls back the ones before it. So a patch applies
 * whole or changes nothing. Paths may not lead outside `directory`; symlinks,
 * binary files and non-UTF-8 text are refused. Hunks are located by their
 * lines (exactly, then ignoring trailing whitespace, then surrounding
 * whitespace), so line numbers that are off do not matter; header line counts
 * are not trusted.
 *
 * Requires `--allow-read` and `--allow-write` for the directory.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { applyPatchTool } from "@toolfence/tools";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.txt`, "one\ntwo\n");
 * const box = new ToolBox().register(applyPatchTool);
 * const session = new Session({ workspace: dir, autoConfirm: true });
 * const patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n";
 * console.log((await box.call(session, "apply_patch", { patch })).output);
 * await session.close();
 * ```
 */
export const applyPatchTool: Tool<ApplyPatchArgs> = tool({
  name: "apply_patch",
  description: "Apply a patch to one or more files, all or nothing.\n" +
    "Accepts a unified diff (--- a/path, +++ b/path, @@ hunks; /dev/null creates or deletes a file) or a " +
    "*** Begin Patch ... *** End Patch block (*** Add File:, *** Update File: with optional *** Move to:, " +
    "*** Delete File:, hunks after @@ with ' ', '-', '+' lines). Paths are relative to `directory`. Every hunk is " +
    "checked first; if any does not fit, no file is changed and the error names the hunk. May ask the user for " +
    "permission to change existing files.",
  input,
  output: APPLY_PATCH_OUTPUT,
  destructive: true,
  idempotent: false,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ patch, directory }, ctx) {
    const folder = await ctx.policy.files.resolve(directory);
    const dir = folder.path;
    if (!folder.stat?.isDirectory()) {
      throw new ToolError(`${directory} is not a folder`, {
        code: "not_directory",
        recoveryHint: "Give the folder the patch's paths are relative to.",
        details: { path: dir },
      });
    }
    const { format, files } = parsePatch(patch);
    const steps: Step[] = [];
    for (const file of files) steps.push(await planStep(ctx, dir, file));
    const touched = new Set<string>();
    for (const step of steps) {
      for (const p of [step.real, step.moveTo]) {
        if (p === undefined) continue;
        if (touched.has(p)) {
          throw new ToolError(`The patch changes ${path.relative(dir, p)} more than once; nothing was changed`, {
            code: "invalid_patch",
            kind: "semantic",
            recoveryHint: "Put all changes to one file in one section.",
            details: { path: p },
          });
        }
        touched.add(p);
      }
    }
    await authorize(ctx, steps);
    // A person may have taken a while to answer, and another write may have landed
    // meanwhile: under the locks, the files must still be what was planned on.
    const targets = steps.flatMap((step) =>
      step.moveTarget === undefined ? [step.target] : [step.target, step.moveTarget]
    );
    const locked = targets.map((target) => target.path);
    await ctx.policy.files.locked(targets, async () => {
      for (const step of steps) {
        if (!step.before) {
          if (await currentSha256(ctx.policy.files, step.target, step.file.path) !== null) {
            throw exists(step.file.path, step.real);
          }
          continue;
        }
        const now = await currentSha256(ctx.policy.files, step.target, step.file.path);
        if (now !== step.before.sha256) throw hashConflict(step.file.path, step.real, step.before.sha256, now);
      }
      const moves = steps.filter((step) => step.moveTo !== undefined)
        .map((step) => ({ from: step.real, to: step.moveTo!, edited: true }));
      // What the patch did is reported after any rollback: a patch rolled back whole reports nothing.
      await withChangeReport(ctx, locked.map((real) => affectedPath(ctx, real)), async () => {
        const undo: Undo[] = [];
        try {
          await write(ctx.policy.files, steps, undo);
        } catch (error) {
          const failures: string[] = [];
          for (const step of undo.reverse()) await step().catch((e: Error) => failures.push(e.message));
          const cause = fileOpError(error, "a patched file", dir, "writing");
          throw new ToolError(
            `Writing the patch failed (${cause.message}); ${
              failures.length ? "rolling back also failed, the files may be partly changed" : "every file was restored"
            }`,
            {
              code: cause.code,
              recoverable: failures.length === 0,
              details: { ...cause.details, rollbackFailures: failures },
            },
          );
        }
      }, { moves });
    });
    return {
      directory: dir,
      format,
      files: steps.map((step) => ({
        path: step.moveTo ?? step.real,
        action: step.file.kind === "add"
          ? "added"
          : step.file.kind === "delete"
          ? "deleted"
          : step.moveTo !== undefined
          ? "moved"
          : "updated",
        ...(step.moveTo !== undefined ? { from: step.real } : {}),
        ...lineCounts(step.file),
      })),
    };
  },
});
