// A short unified diff of an edit, for the model to check what changed. Only
// the changed region (plus context) is diffed, so a one-line edit of a big
// file stays cheap; long diffs are cut.

import { structuredPatch } from "diff";

/** Diff lines shown at most. */
export const MAX_DIFF_LINES = 60;

const CONTEXT = 2;
// Regions longer than this (in lines) are not diffed line by line.
const MAX_REGION_LINES = 5000;

function lineStartBefore(text: string, index: number, extraLines: number): number {
  let at = text.lastIndexOf("\n", index - 1) + 1;
  for (let k = 0; k < extraLines && at > 0; k++) at = text.lastIndexOf("\n", at - 2) + 1;
  return at;
}

function lineEndAfter(text: string, index: number, extraLines: number): number {
  let at = index;
  for (let k = 0; k <= extraLines; k++) {
    const nl = text.indexOf("\n", at);
    if (nl === -1) return text.length;
    at = nl + 1;
  }
  return at;
}

function countLines(text: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * The unified diff from `before` to `after` (texts with `\n` line breaks) for
 * `name`, at most {@linkcode MAX_DIFF_LINES} lines.
 */
export function shortDiff(name: string, before: string, after: string): string {
  if (before === after) return "";
  let prefix = 0;
  const shorter = Math.min(before.length, after.length);
  while (prefix < shorter && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (
    suffix < shorter - prefix &&
    before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)
  ) suffix++;
  const start = lineStartBefore(before, prefix, CONTEXT + 1);
  const oldEnd = lineEndAfter(before, before.length - suffix, CONTEXT + 1);
  const newEnd = after.length - (before.length - oldEnd);
  const oldRegion = before.slice(start, oldEnd);
  const newRegion = after.slice(start, newEnd);
  const firstLine = countLines(before, start);
  if (countLines(oldRegion, oldRegion.length) > MAX_REGION_LINES) {
    return `(the change spans more than ${MAX_REGION_LINES} lines; no diff shown)`;
  }
  const patch = structuredPatch(name, name, oldRegion, newRegion, "", "", { context: CONTEXT });
  const out: string[] = [`--- ${name}`, `+++ ${name}`];
  for (const hunk of patch.hunks) {
    out.push(
      `@@ -${hunk.oldStart + firstLine},${hunk.oldLines} +${hunk.newStart + firstLine},${hunk.newLines} @@`,
      ...hunk.lines,
    );
  }
  if (out.length <= MAX_DIFF_LINES) return out.join("\n");
  return [...out.slice(0, MAX_DIFF_LINES), `... (${out.length - MAX_DIFF_LINES} more diff lines)`].join("\n");
}
