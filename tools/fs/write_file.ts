/**
 * `write_file`: create or replace a file atomically.
 *
 * @module
 */

import * as v from "valibot";
import { type FileDoor, type FileTarget, type Tool, tool } from "@toolfence/core";
import { fileOpError, hashConflict, wrongType } from "../_shared/fs_errors.ts";
import { sha256Of, sha256OfHandle } from "../_shared/fs_hash.ts";
import { describeType, openRegularFile } from "../_shared/fs_open.ts";
import { affectedPath, withChangeReport } from "../_shared/fs_changes.ts";
import { WRITE_FILE_OUTPUT } from "./_outputs.ts";

/** A hex SHA-256 argument, as read_file and file_info report it. */
export const sha256Argument = v.pipe(
  v.string(),
  v.regex(/^[0-9a-fA-F]{64}$/, "Expected 64 hex digits (a SHA-256 as read_file reports it)"),
);

/** The arguments of `write_file`. */
export interface WriteFileArgs {
  /** File to write, relative to the workspace or absolute inside it. */
  path: string;
  /** The complete new content, written as UTF-8. */
  content: string;
  /** Write only if the file's current sha256 is this (from read_file). */
  expected_sha256?: string;
}

const input = v.object({
  path: v.pipe(v.string(), v.description("File to write, relative to the workspace or absolute inside it")),
  content: v.pipe(v.string(), v.description("The complete new content, written as UTF-8")),
  expected_sha256: v.optional(
    v.pipe(
      sha256Argument,
      v.description(
        "Write only if the file's current sha256 is this (from read_file); guards against overwriting changes you have not seen",
      ),
    ),
  ),
});

/**
 * The current sha256 of `real`, or null when nothing is there; refuses
 * anything but a regular file.
 */
export async function currentSha256(files: FileDoor, target: FileTarget, shown: string): Promise<string | null> {
  try {
    if (files.lstat(target.path) === undefined) return null;
  } catch (error) {
    throw fileOpError(error, shown, target.path, "reading");
  }
  const { handle, stat } = await openRegularFile(files, target, shown, "Give the path of a file, not a directory.");
  try {
    return await sha256OfHandle(handle, stat.size);
  } finally {
    await handle.close();
  }
}

/** Throws `hash_conflict` unless the file at `target` has the expected hash. */
export async function checkExpectedHash(
  files: FileDoor,
  target: FileTarget,
  shown: string,
  expected: string | undefined,
): Promise<void> {
  if (expected === undefined) return;
  const actual = await currentSha256(files, target, shown);
  if (actual !== expected.toLowerCase()) throw hashConflict(shown, target.path, expected.toLowerCase(), actual);
}

/**
 * Writes a whole file: atomically (a temp file in the same folder, flushed,
 * then renamed over the target, keeping the mode of a file it replaces),
 * creating missing parent folders. Overwriting an existing file goes through
 * the write-permission flow; a new file inside the workspace does not ask.
 * With `expected_sha256`, the write happens only if the file still has that
 * hash. A failure leaves the disk as it was (folders it created are removed).
 *
 * Requires `--allow-read` and `--allow-write` for the file's folder.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { writeFileTool } from "@toolfence/tools";
 * const box = new ToolBox().register(writeFileTool);
 * const session = new Session({ workspace: await Deno.makeTempDir() });
 * const result = await box.call(session, "write_file", { path: "notes/todo.md", content: "- test\n" });
 * console.log(result.output);
 * await session.close();
 * ```
 */
export const writeFileTool: Tool<WriteFileArgs> = tool({
  name: "write_file",
  description: "Create a file or replace its whole content.\n" +
    "Writes atomically and creates missing parent folders. Replacing an existing file may ask the user for " +
    "permission. Pass expected_sha256 (from read_file) to write only if the file has not changed since you read it. " +
    "To change part of a file, prefer edit_file.",
  input,
  output: WRITE_FILE_OUTPUT,
  destructive: true,
  idempotent: true,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ path, content, expected_sha256 }, ctx) {
    const target = await ctx.policy.files.resolve(path, { access: "write" });
    if (target.existed && !target.stat?.isFile()) {
      const found = target.stat ? describeType(target.stat) : "something that cannot be inspected";
      throw wrongType(path, target.path, found, "a regular file", "Choose a path that is a file or free.");
    }
    const real = target.path;
    await checkExpectedHash(ctx.policy.files, target, path, expected_sha256);
    await ctx.policy.files.authorize(target, "write", ctx.signal, { proposed: content });
    await ctx.policy.files.locked([target], async () => {
      // The person may have taken a while to answer, and another write of this file
      // may have landed meanwhile: the file must still be what was checked.
      await checkExpectedHash(ctx.policy.files, target, path, expected_sha256);
      ctx.signal.throwIfAborted();
      await withChangeReport(ctx, [affectedPath(ctx, real)], async () => {
        try {
          await ctx.policy.files.write(target, content);
        } catch (error) {
          throw fileOpError(error, path, real, "writing");
        }
      });
    });
    return {
      path: real,
      created: !target.existed,
      bytes: new TextEncoder().encode(content).length,
      sha256: sha256Of(content),
    };
  },
});
