// Applying hunks to a text in memory. A hunk's old lines (context and
// removals) are looked for exactly first, then ignoring trailing whitespace,
// then ignoring surrounding whitespace; unified hunks prefer the place nearest
// their line number, `*** Begin Patch` hunks the first place after the
// previous hunk (and after their `@@` anchors). Context lines keep the file's
// own text. Nothing here touches the disk.

import { ToolError } from "@toolfence/core";
import type { FilePatch, Hunk } from "./_patch_parse.ts";

const MATCHERS: ((a: string, b: string) => boolean)[] = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
];

function matchesAt(lines: string[], at: number, wanted: string[], same: (a: string, b: string) => boolean): boolean {
  if (at < 0 || at + wanted.length > lines.length) return false;
  for (let k = 0; k < wanted.length; k++) if (!same(lines[at + k], wanted[k])) return false;
  return true;
}

function conflict(shown: string, hunk: Hunk, index: number, why: string): ToolError {
  return new ToolError(`Hunk ${index + 1} for ${shown} does not apply: ${why}; no file was changed`, {
    code: "patch_conflict",
    recoveryHint: "Read the file again and make the hunk's context and - lines match it exactly.",
    details: { path: shown, hunk: index + 1, patchLine: hunk.patchLine },
  });
}

function preview(lines: string[]): string {
  const shown = lines.slice(0, 3).map((l) => JSON.stringify(l)).join(", ");
  return lines.length > 3 ? `${shown}, ...` : shown;
}

/** The lines of `text` and how they end. */
export interface SplitText {
  lines: string[];
  finalNewline: boolean;
}

/** Splits `text` at `eol`, noting whether it ends with one. */
export function splitText(text: string, eol: string): SplitText {
  if (text === "") return { lines: [], finalNewline: false };
  const lines = text.split(eol);
  const finalNewline = lines.at(-1) === "";
  if (finalNewline) lines.pop();
  return { lines, finalNewline };
}

/** Line counts of a file change, for the summary. */
export interface LineCounts {
  added: number;
  removed: number;
}

/** Counts the `+` and `-` lines of a file's hunks. */
export function lineCounts(file: FilePatch): LineCounts {
  let added = 0;
  let removed = 0;
  for (const hunk of file.hunks) {
    for (const line of hunk.lines) {
      if (line.op === "+") added++;
      else if (line.op === "-") removed++;
    }
  }
  return { added, removed };
}

/**
 * Applies `hunks` to `source` (text with `eol` line breaks) and returns the
 * new text, or throws `patch_conflict` naming the first hunk that does not fit.
 */
export function applyHunks(source: string, eol: "\n" | "\r\n", hunks: Hunk[], shown: string): string {
  const { lines, finalNewline } = splitText(source, eol);
  let newFinal = finalNewline;
  let cursor = 0;
  let drift = 0;
  hunks.forEach((hunk, index) => {
    for (const anchor of hunk.anchors) {
      let found = -1;
      for (const same of MATCHERS) {
        for (let at = cursor; at < lines.length && found === -1; at++) if (same(lines[at], anchor)) found = at;
        if (found !== -1) break;
      }
      if (found === -1) {
        throw conflict(shown, hunk, index, `the line ${JSON.stringify(anchor)} (after @@) was not found`);
      }
      cursor = found + 1;
    }
    const old = hunk.lines.filter((l) => l.op !== "+").map((l) => l.text);
    const expected = hunk.oldStart !== undefined ? hunk.oldStart - 1 + drift : cursor;
    let at = -1;
    if (old.length === 0) {
      at = hunk.oldStart !== undefined
        ? Math.min(Math.max(expected, cursor), lines.length)
        : hunk.anchors.length > 0 && !hunk.atEnd
        ? cursor
        : lines.length;
    } else {
      for (const matcher of MATCHERS) {
        if (hunk.atEnd) {
          if (matchesAt(lines, lines.length - old.length, old, matcher)) at = lines.length - old.length;
        } else if (hunk.oldStart !== undefined) {
          // Nearest to the header's line number, not before the previous hunk.
          for (let d = 0; at === -1 && (expected - d >= cursor || expected + d < lines.length); d++) {
            if (expected - d >= cursor && matchesAt(lines, expected - d, old, matcher)) at = expected - d;
            else if (d > 0 && matchesAt(lines, expected + d, old, matcher)) at = expected + d;
          }
        } else {
          for (let p = cursor; at === -1 && p + old.length <= lines.length; p++) {
            if (matchesAt(lines, p, old, matcher)) at = p;
          }
        }
        if (at !== -1) break;
      }
      if (at === -1) throw conflict(shown, hunk, index, `these lines were not found: ${preview(old)}`);
    }
    const reachesEnd = at + old.length === lines.length;
    const replacement: string[] = [];
    let k = at;
    for (const line of hunk.lines) {
      if (line.op === " ") replacement.push(lines[k++]);
      else if (line.op === "-") k++;
      else replacement.push(line.text);
    }
    lines.splice(at, old.length, ...replacement);
    cursor = at + replacement.length;
    if (hunk.oldStart !== undefined) drift = cursor - (hunk.oldStart - 1 + old.length);
    if (reachesEnd) {
      // The hunk reaches the end of the file, so its new side decides: its last
      // line ends with a newline unless "\ No newline at end of file" says not.
      newFinal = !hunk.newNoNewline;
    }
  });
  if (lines.length === 0) return "";
  return lines.join(eol) + (newFinal ? eol : "");
}

/**
 * Checks that the `-` lines of a deletion are the whole file, as a unified
 * diff that deletes a file states them. `*** Delete File` has no lines and
 * always fits.
 */
export function checkDeletion(source: string, eol: "\n" | "\r\n", file: FilePatch, shown: string): void {
  if (file.hunks.length === 0) return;
  const removed = file.hunks.flatMap((h) => h.lines.filter((l) => l.op !== "+").map((l) => l.text));
  const { lines } = splitText(source, eol);
  if (removed.length !== lines.length || !matchesAt(lines, 0, removed, MATCHERS[1])) {
    throw conflict(shown, file.hunks[0], 0, "the file's content is not what the patch deletes");
  }
}
