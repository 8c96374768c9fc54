/**
 * `edit_file`: replace exact text in a file.
 *
 * @module
 */

import * as v from "valibot";
import { ToolError } from "@toolfence/core";
import { type Tool, tool } from "@toolfence/core";
import { fileOpError, hashConflict, notFound } from "../_shared/fs_errors.ts";
import { sha256Of } from "../_shared/fs_hash.ts";
import { currentSha256, sha256Argument } from "../fs/write_file.ts";
import { shortDiff } from "./_short_diff.ts";
import { withChangeReport } from "../_shared/fs_changes.ts";
import { encodeText, loadTextFile, type TextFile } from "./_text.ts";
import { EDIT_FILE_OUTPUT } from "./_outputs.ts";

/** The arguments of `edit_file`, defaults applied. */
export interface EditFileArgs {
  /** File to edit, relative to the workspace or absolute inside it. */
  path: string;
  /** The exact text to replace, including indentation; it must occur exactly once unless `replace_all`. */
  old_text: string;
  /** The text to put in its place, taken literally. */
  new_text: string;
  /** Whether to replace every occurrence instead of requiring exactly one. */
  replace_all: boolean;
  /** Edit only if the file's sha256 is still this (from read_file). */
  expected_sha256?: string;
}

const input = v.object({
  path: v.pipe(v.string(), v.description("File to edit, relative to the workspace or absolute inside it")),
  old_text: v.pipe(
    v.string(),
    v.description("The exact text to replace, including indentation; it must occur exactly once unless replace_all"),
  ),
  new_text: v.pipe(v.string(), v.description("The text to put in its place, taken literally")),
  replace_all: v.optional(
    v.pipe(v.boolean(), v.description("Replace every occurrence instead of requiring exactly one. Default false")),
    false,
  ),
  expected_sha256: v.optional(
    v.pipe(
      sha256Argument,
      v.description("Edit only if the file's sha256 is still this (from read_file)"),
    ),
  ),
});

function occurrences(text: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

// Literal replacement: no `$&` or `$1` patterns, unlike String.prototype.replace.
function replaceAt(text: string, positions: number[], oldLength: number, replacement: string): string {
  let out = "";
  let last = 0;
  for (const p of positions) {
    out += text.slice(last, p) + replacement;
    last = p + oldLength;
  }
  return out + text.slice(last);
}

// Where old_text would match if whitespace at line ends and starts were ignored.
function nearMiss(text: string, oldText: string): string | undefined {
  const wanted = oldText.split("\n").map((l) => l.trim());
  while (wanted.length && wanted[0] === "") wanted.shift();
  while (wanted.length && wanted.at(-1) === "") wanted.pop();
  if (wanted.length === 0) return undefined;
  const lines = text.split("\n").map((l) => l.trim());
  for (let i = 0; i + wanted.length <= lines.length; i++) {
    if (wanted.every((w, k) => lines[i + k] === w)) {
      return `It matches lines ${i + 1}-${i + wanted.length} if indentation and trailing spaces are ignored; ` +
        "copy the text exactly as read_file shows it.";
    }
  }
  const first = lines.indexOf(wanted[0]);
  if (first !== -1) {
    return `Its first line occurs at line ${first + 1}, but the lines after it differ; read the file again.`;
  }
  return undefined;
}

/** An edit worked out in memory. */
interface Planned {
  /** The file's new text (its own line endings, no byte-order mark). */
  text: string;
  /** The text before and after in the view the model reads (\n line breaks), for the diff. */
  before: string;
  after: string;
  /** Where old_text was found. */
  positions: number[];
}

function plan(
  file: TextFile,
  oldText: string,
  newText: string,
  replaceAll: boolean,
  shown: string,
  real: string,
): Planned {
  // A CRLF file is edited in the view the model reads (read_file joins lines
  // with \n), so that old_text never matches half of a CRLF; the result gets
  // CRLF back, new lines included.
  const crlf = file.eol === "\r\n";
  const view = crlf ? file.text.replaceAll("\r\n", "\n") : file.text;
  let from = crlf ? oldText.replaceAll("\r\n", "\n") : oldText;
  let to = crlf ? newText.replaceAll("\r\n", "\n") : newText;
  let positions = occurrences(view, from);
  if (positions.length === 0 && !crlf && file.hasCrlf && oldText.includes("\n")) {
    // Mixed line endings: the lines to replace may be among the CRLF ones.
    from = oldText.replace(/\r?\n/g, "\r\n");
    to = newText.replace(/\r?\n/g, "\r\n");
    positions = occurrences(view, from);
  }
  if (positions.length === 0) {
    throw new ToolError(`old_text was not found in ${shown}; the file is unchanged`, {
      code: "no_match",
      recoveryHint: nearMiss(view.replaceAll("\r\n", "\n"), oldText.replaceAll("\r\n", "\n")) ??
        "Read the file again and copy the exact text to replace.",
      details: { path: real },
    });
  }
  if (positions.length > 1 && !replaceAll) {
    const lines = positions.slice(0, 10).map((p) => lineOf(view, p));
    throw new ToolError(
      `old_text occurs ${positions.length} times in ${shown} (lines ${lines.join(", ")}${
        positions.length > 10 ? ", ..." : ""
      }); the file is unchanged`,
      {
        code: "ambiguous_match",
        recoveryHint: "Include more surrounding lines in old_text to make it unique, or pass replace_all: true.",
        details: { path: real, count: positions.length, lines },
      },
    );
  }
  let after = replaceAt(view, positions, from.length, to);
  // The presence of a final newline is kept: restored when the edit removed
  // it, and not added when new_text ends with one at the very end.
  const endedWithNewline = view.endsWith("\n");
  const touchesEnd = positions.at(-1)! + from.length === view.length;
  if (endedWithNewline && after !== "" && !after.endsWith("\n")) after += crlf ? "\n" : file.eol;
  else if (!endedWithNewline && touchesEnd && after.endsWith("\n")) {
    after = after.slice(0, after.endsWith("\r\n") && !crlf ? -2 : -1);
  }
  return {
    text: crlf ? after.replaceAll("\n", "\r\n") : after,
    before: view.replaceAll("\r\n", "\n"),
    after: after.replaceAll("\r\n", "\n"),
    positions,
  };
}

/**
 * Replaces `old_text` with `new_text` in a UTF-8 text file. `old_text` must
 * occur exactly once unless `replace_all`; the replacement is literal (`$&`
 * stays `$&`). The file's line endings (text given with `\n` also matches a
 * CRLF file), byte-order mark, final newline and mode are kept, and the write
 * is atomic. No match, several matches (with their count and lines), identical
 * texts, a stale `expected_sha256`, a denied permission, a binary or non-UTF-8
 * file: each leaves the file byte-for-byte unchanged and says which.
 *
 * Requires `--allow-read` and `--allow-write` for the file.
 *
 * @example
 * ```ts
 * import { ToolBox, Session } from "@toolfence/toolfence";
 * import { editFileTool } from "@toolfence/tools";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/a.txt`, "hello world\n");
 * const box = new ToolBox().register(editFileTool);
 * const session = new Session({ workspace: dir, autoConfirm: true });
 * const result = await box.call(session, "edit_file", { path: "a.txt", old_text: "world", new_text: "there" });
 * console.log(result.output);
 * await session.close();
 * ```
 */
export const editFileTool: Tool<EditFileArgs> = tool({
  name: "edit_file",
  description: "Replace exact text in a file.\n" +
    "old_text must match the file exactly (including indentation) and occur exactly once, unless replace_all is " +
    "true. new_text is inserted literally. Line endings, a byte-order mark and the final newline are kept. Returns " +
    "the number of replacements, the new sha256 and a short diff. On any failure the file is left unchanged.",
  input,
  output: EDIT_FILE_OUTPUT,
  destructive: true,
  idempotent: false,
  recordsFileChanges: true,
  needs: { read: ["workspace"], write: ["workspace"] },
  async run({ path, old_text, new_text, replace_all, expected_sha256 }, ctx) {
    const target = await ctx.policy.files.resolve(path, { access: "write" });
    const real = target.path;
    if (!target.existed) throw notFound(path, real, "To create a new file, use write_file.");
    if (old_text === "") {
      throw new ToolError("old_text is empty; edit_file replaces existing text", {
        code: "empty_old_text",
        kind: "semantic",
        recoveryHint: "Give the exact text to replace, or use write_file to write a whole file.",
      });
    }
    if (old_text === new_text) {
      throw new ToolError("old_text and new_text are identical; there is nothing to change", {
        code: "identical_texts",
        kind: "semantic",
        recoveryHint: "Give the new text that should replace old_text.",
      });
    }
    const file = await loadTextFile(ctx.policy.files, target, path);
    if (expected_sha256 !== undefined && file.sha256 !== expected_sha256.toLowerCase()) {
      throw hashConflict(path, real, expected_sha256.toLowerCase(), file.sha256);
    }
    const planned = plan(file, old_text, new_text, replace_all, path, real);
    await ctx.policy.files.authorize(target, "overwrite", ctx.signal);
    const bytes = encodeText(planned.text, file.bom);
    await ctx.policy.files.locked([target], async () => {
      // The file must still be what was planned on (a prompt may have taken a while,
      // and another edit of this file may have landed meanwhile).
      const now = await currentSha256(ctx.policy.files, target, path);
      if (now !== file.sha256) throw hashConflict(path, real, file.sha256, now);
      await withChangeReport(ctx, [real], async () => {
        try {
          await ctx.policy.files.write(target, bytes, { mode: file.mode });
        } catch (error) {
          throw fileOpError(error, path, real, "writing");
        }
      });
    });
    return {
      path: real,
      replacements: planned.positions.length,
      sha256: sha256Of(bytes),
      diff: shortDiff(path, planned.before, planned.after),
    };
  },
});
