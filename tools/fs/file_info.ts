/**
 * `file_info`: what a path is, without reading more than its first bytes.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import type { FileDoor, FileTarget, ToolContext } from "@toolfence/core";
import { fileOpError, notFound } from "../_shared/fs_errors.ts";
import { sha256OfHandle } from "../_shared/fs_hash.ts";
import { openRegularFile, readFully, typeName } from "../_shared/fs_open.ts";
import { FULL_SCAN_BYTES } from "./_read_window.ts";
import { binaryKind, detectBom, invalidUtf8At, SNIFF_BYTES } from "../_shared/fs_sniff.ts";
import { FILE_INFO_OUTPUT } from "./_outputs.ts";

/** The arguments of `file_info`. */
export interface FileInfoArgs {
  /** File, folder or link to describe, relative to the workspace or absolute. */
  path: string;
}

const input = v.object({
  path: v.pipe(v.string(), v.description("File, folder or link to describe, relative to the workspace or absolute")),
});

function octal(mode: number): string {
  return "0" + (mode & 0o7777).toString(8).padStart(3, "0");
}

async function describeContent(files: FileDoor, target: FileTarget, shown: string, size: number) {
  const { handle } = await openRegularFile(files, target, shown, "");
  try {
    const head = new Uint8Array(Math.min(size, SNIFF_BYTES));
    const n = await readFully(handle, head, head.length, 0);
    const bytes = head.subarray(0, n);
    const bom = detectBom(bytes);
    const binary = binaryKind(bytes);
    let content: Record<string, unknown>;
    if (binary) content = { content: "binary", binary_type: binary };
    else if (bom && bom.encoding !== "UTF-8") content = { content: "text", encoding: bom.encoding };
    else {
      const utf8 = invalidUtf8At(bytes, bom?.length ?? 0, n, n < size) === -1;
      content = { content: "text", encoding: utf8 ? (bom ? "UTF-8 with BOM" : "UTF-8") : "not UTF-8" };
    }
    const sha256 = size <= FULL_SCAN_BYTES ? await sha256OfHandle(handle, size) : null;
    return {
      ...content,
      sha256,
      ...(sha256 === null ? { sha256_skipped: `larger than ${FULL_SCAN_BYTES >> 20} MiB` } : {}),
    };
  } finally {
    await handle.close();
  }
}

async function describeLink(linkPath: string, ctx: ToolContext) {
  try {
    const target = await ctx.policy.files.resolve(linkPath);
    if (!target.existed) return { target: target.path, target_type: "missing (broken link)" };
    return { target: target.path, target_type: target.stat ? typeName(target.stat) : "unknown" };
  } catch (error) {
    if (error instanceof ToolError && error.code === "outside_workspace") {
      return { target: null, target_type: "outside the workspace (not followed)" };
    }
    if (error instanceof ToolError && error.code === "symlink_loop") {
      return { target: null, target_type: "symlink loop" };
    }
    throw error;
  }
}

/**
 * Describes one path without following a final symlink: its type (file,
 * directory, symlink, fifo, socket, char_device, block_device), size, mode
 * and times; for a symlink where it leads (never followed out of the
 * workspace); for a file whether it is text (and its encoding) or binary (and
 * what kind), and its sha256 when it is at most 64 MiB. FIFOs and devices are
 * described from their metadata and never opened.
 *
 * Requires `--allow-read` for the path.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { fileInfoTool } from "@toolfence/tools";
 * const box = new ToolBox().register(fileInfoTool);
 * const session = new Session({ workspace: Deno.cwd() });
 * console.log((await box.call(session, "file_info", { path: "deno.json" })).output);
 * await session.close();
 * ```
 */
export const fileInfoTool: Tool<FileInfoArgs> = tool({
  name: "file_info",
  description: "Describe a file, folder or symlink without reading it whole.\n" +
    "Returns its type, size, permissions and times; for a symlink, what it points to; for a file, whether it is " +
    "text (and its encoding) or binary (and what kind), and its sha256 when it is at most 64 MiB.",
  input,
  output: FILE_INFO_OUTPUT,
  destructive: false,
  idempotent: true,
  needs: { read: ["workspace"] },
  async run({ path }, ctx) {
    const at = await ctx.policy.files.resolve(path, { followFinalSymlink: false });
    if (!at.existed) throw notFound(path, at.path);
    const stat = at.stat;
    if (stat === undefined) throw fileOpError(new Error("lstat failed"), path, at.path, "inspecting");
    const base = {
      path: at.path,
      type: typeName(stat),
      size: stat.size,
      mode: octal(stat.mode),
      modified: stat.mtime.toISOString(),
      changed: stat.ctime.toISOString(),
    };
    if (stat.isSymbolicLink()) return { ...base, ...(await describeLink(path, ctx)) };
    if (stat.isDirectory()) {
      try {
        return { ...base, entries: ctx.policy.files.entries(at).length };
      } catch (error) {
        throw fileOpError(error, path, at.path, "listing");
      }
    }
    if (stat.isFile()) return { ...base, ...(await describeContent(ctx.policy.files, at, path, stat.size)) };
    return base;
  },
});
