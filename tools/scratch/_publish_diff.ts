// The diff a publication shows the person before it applies anything.

import { createHash } from "node:crypto";
import { createTwoFilesPatch } from "diff";
import { type FileChange, type FileState, ToolError } from "@toolfence/core";
import type { Scratch } from "@toolfence/policy";

/** The most characters of diff shown; the rest is summarised. */
export const MAX_DIFF_CHARS = 40_000;
const MAX_TEXT_BYTES = 512 * 1024;

function describe(state: FileState | null): string {
  if (state === null) return "absent";
  const mode = state.mode.toString(8).padStart(4, "0");
  if (state.type === "directory") return `folder, mode ${mode}`;
  const hash = state.sha256 === null ? "content too large to hash" : `sha256 ${state.sha256}`;
  return `${state.type}, mode ${mode}, ${state.size} bytes, ${hash}`;
}

function asText(bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined || bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

function changedWhileShown(relative: string): ToolError {
  return new ToolError(`Nothing was published: ${relative} changed in the scratch copy while its diff was being made`, {
    code: "publish_failed",
    recoveryHint: "Wait until nothing writes to the scratch copy, then publish again.",
    details: { path: relative },
  });
}

/** One line per change: what happens to which path (and, for a link, where the new link leads). */
export function summaryLine(change: FileChange, marks: readonly string[], linkTarget?: string): string {
  const mark = marks.map((m) => ` [${m}]`).join("");
  const link = linkTarget === undefined ? "" : `, link to ${JSON.stringify(linkTarget)}`;
  if (change.change === "moved") return `moved    ${change.from} -> ${change.path}${mark}${link}`;
  return `${change.change.padEnd(8)} ${change.path}${mark} (${describe(change.before)} -> ${
    describe(change.after)
  }${link})`;
}

/** What a person must look at in a change: protected paths, and links that lead out of the workspace. */
export function marksOf(
  scratch: Scratch,
  change: FileChange,
  isProtected: (relative: string) => boolean,
): { marks: string[]; linkTarget?: string } {
  const marks: string[] = [];
  if (isProtected(change.path) || (change.from !== undefined && isProtected(change.from))) marks.push("protected path");
  const linkTarget = change.after?.type === "symlink" ? scratch.readLink(change.path, "scratch") : undefined;
  if (linkTarget !== undefined && scratch.leadsOutside(change.path, linkTarget)) {
    marks.push("link leads outside the workspace");
  }
  return { marks, linkTarget };
}

/**
 * The unified diff of the text files among `changes` (old: the workspace, new:
 * the scratch copy), and a line for every other change, cut to
 * {@linkcode MAX_DIFF_CHARS}.
 */
export async function publicationDiff(
  scratch: Scratch,
  changes: readonly FileChange[],
  isProtected: (relative: string) => boolean,
): Promise<{ text: string; cut: boolean }> {
  const parts: string[] = [];
  let size = 0;
  let cut = false;
  for (const change of changes) {
    const { marks, linkTarget } = marksOf(scratch, change, isProtected);
    if (linkTarget !== undefined && sha256(linkTarget) !== change.after!.sha256) throw changedWhileShown(change.path);
    const header = summaryLine(change, marks, linkTarget);
    let body = "";
    const files = change.before?.type !== "directory" && change.after?.type !== "directory";
    // Once the diff is cut, no more contents are read: only their summary lines are shown.
    if (
      !cut && files && change.change !== "moved" && (change.before?.type === "file" || change.after?.type === "file")
    ) {
      const old = change.before?.type === "file" ? asText(await scratch.read(change.path, "host", MAX_TEXT_BYTES)) : "";
      // What is shown must be what will be applied: the publication checks the same hash as it copies.
      const nowBytes = change.after?.type === "file"
        ? await scratch.read(change.path, "scratch", MAX_TEXT_BYTES)
        : new Uint8Array();
      if (change.after?.type === "file" && nowBytes !== undefined && sha256(nowBytes) !== change.after.sha256) {
        throw changedWhileShown(change.path);
      }
      const now = asText(nowBytes);
      if (old !== undefined && now !== undefined) {
        body = createTwoFilesPatch(`a/${change.path}`, `b/${change.path}`, old, now, undefined, undefined, {
          context: 3,
        });
      } else body = "(binary or large content: compare the hashes)\n";
    }
    const part = `${header}\n${body}`;
    if (size + part.length > MAX_DIFF_CHARS) {
      cut = true;
      parts.push(`${header}\n(diff cut: ${MAX_DIFF_CHARS} characters shown at most)\n`);
      size += header.length;
      continue;
    }
    parts.push(part);
    size += part.length;
  }
  return { text: parts.join("\n"), cut };
}
